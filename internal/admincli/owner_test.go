package admincli_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/admincli"
	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// TestOwnerKeysAndScopes runs the owner-key commands and --scope through
// the CLI against the embedded store, then checks what the keys can do.
func TestOwnerKeysAndScopes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	data := []string{"--data", dir}
	var box hub.BoxInfo
	ok(t, &box, append([]string{"create-box", "--name", "b"}, data...)...)
	var ok1, ok2 hub.OwnerKeyInfo
	out := ok(t, &ok1, append([]string{"create-owner-key", "--box", box.BoxID}, data...)...)
	if !strings.HasPrefix(ok1.Key, "abo_") || ok1.KeyID == "" {
		t.Fatalf("create-owner-key printed %s; want an abo_ key and its id", out)
	}
	ok(t, &ok2, append([]string{"create-owner-key", "--box", box.BoxID}, data...)...)
	var list struct {
		Keys []hub.OwnerKeyInfo `json:"owner_keys"`
	}
	out = ok(t, &list, append([]string{"list-owner-keys", "--box", box.BoxID}, data...)...)
	if len(list.Keys) != 2 || strings.Contains(out, "abo_") {
		t.Errorf("list-owner-keys = %s; want two ids and no key", out)
	}
	var revoked hub.OwnerKeyInfo
	ok(t, &revoked, append([]string{"revoke-owner-key", "--key", ok1.KeyID}, data...)...)
	fails(t, admincli.ExitError, apperr.NotFoundOrForbidden, append([]string{"revoke-owner-key", "--key", ok1.KeyID}, data...)...)

	var reader, rotated hub.AgentInfo
	ok(t, &reader, append([]string{"create-agent", "--box", box.BoxID, "--name", "r", "--scope", "coordination:read"}, data...)...)
	fails(t, admincli.ExitError, apperr.InvalidArgument, append([]string{"create-agent", "--box", box.BoxID, "--name", "x", "--scope", "admin"}, data...)...)
	ok(t, &rotated, append([]string{"rotate-key", "--agent", reader.AgentID, "--scope", "coordination:write"}, data...)...)

	st := openData(t, dir)
	defer st.Close()
	h := hub.New(st, hub.Options{Logger: slog.New(slog.DiscardHandler)})
	ctx := context.Background()
	if _, err := h.OwnerBox(ctx, ok1.Key); apperr.Normalize(err).Code != apperr.AuthFailed {
		t.Errorf("OwnerBox(revoked key) = %v, want AUTH_FAILED", err)
	}
	if got, err := h.OwnerBox(ctx, ok2.Key); err != nil || got != box.BoxID {
		t.Errorf("OwnerBox(live key) = %q, %v; want the box", got, err)
	}
	cr := hub.Credentials{Bearer: rotated.BoxKey, Transport: "rest"}
	p, err := h.Prime(ctx, cr, hub.PrimeInput{})
	if err != nil {
		t.Fatal(err)
	}
	cr.SessionID = p.SessionID
	_, err = h.CheckpointSave(ctx, cr, hub.CheckpointSaveInput{BodyMD: "x"})
	if err != nil {
		t.Errorf("checkpoint_save after rotate-key --scope coordination:write: %v, want success", err)
	}
}
