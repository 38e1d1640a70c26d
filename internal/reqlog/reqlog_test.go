package reqlog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/reqlog"
)

// TestLoggerAddsRequestID: a line logged with a request's context carries
// its id exactly once, whoever logs it; without an id in the context no
// id is made up.
func TestLoggerAddsRequestID(t *testing.T) {
	ctx := reqlog.With(context.Background(), "req-1")
	for _, tc := range []struct {
		name   string
		log    func(*slog.Logger)
		wantID string
	}{
		{"FromContext", func(l *slog.Logger) { l.WarnContext(ctx, "session touch failed", "err", "x") }, "req-1"},
		{"OwnAttrWins", func(l *slog.Logger) { l.InfoContext(ctx, "request", reqlog.IDKey, "own") }, "own"},
		{"WithAttrsWins", func(l *slog.Logger) { l.With(reqlog.IDKey, "pre").InfoContext(ctx, "request") }, "pre"},
		{"InGroupLogger", func(l *slog.Logger) { l.WithGroup("g").InfoContext(ctx, "request", "k", "v") }, "req-1"},
		{"NoContextID", func(l *slog.Logger) { l.InfoContext(context.Background(), "startup") }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			tc.log(reqlog.NewLogger(&buf, slog.LevelInfo))
			line := strings.TrimSpace(buf.String())
			if n := strings.Count(line, `"`+reqlog.IDKey+`"`); tc.wantID != "" && n != 1 {
				t.Errorf("line %s has request_id %d times, want once", line, n)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(line), &got); err != nil {
				t.Fatalf("line %q is not JSON: %v", line, err)
			}
			id, _ := got[reqlog.IDKey].(string)
			if g, ok := got["g"].(map[string]any); ok && id == "" {
				id, _ = g[reqlog.IDKey].(string)
			}
			if id != tc.wantID {
				t.Errorf("line %s: request_id = %q, want %q", line, id, tc.wantID)
			}
		})
	}
}
