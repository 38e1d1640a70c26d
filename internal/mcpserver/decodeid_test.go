package mcpserver_test

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/agentbox/agentbox/internal/mcpserver"
)

// TestDecodeIDMatchesUnmarshal: the integer fast path gives the id
// json.Unmarshal and jsonrpc.MakeID give, and refuses what they refuse.
func TestDecodeIDMatchesUnmarshal(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"0", "-0", "1", "42", "-7", "999999999999999", "-999999999999999",
		"1234567890123456", "9007199254740993", "01", "-01", "-", "1.5", "1e3", "2E1", "1.0", `"7"`, "true", "1 ", " 1"} {
		t.Run(raw, func(t *testing.T) {
			t.Parallel()
			got, gotErr := mcpserver.DecodeID(json.RawMessage(raw))
			var v any
			want, wantErr := jsonrpc.ID{}, json.Unmarshal([]byte(raw), &v)
			if wantErr == nil {
				want, wantErr = jsonrpc.MakeID(v)
			}
			if (gotErr != nil) != (wantErr != nil) || got != want {
				t.Errorf("decodeID(%s) = %#v, %v; want %#v, %v", raw, got, gotErr, want, wantErr)
			}
		})
	}
}
