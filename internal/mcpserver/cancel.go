package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/agentbox/agentbox/internal/strictjson"
)

// methodCancelled is the 2025 revisions' cancellation notification.
const methodCancelled = "notifications/cancelled"

// inflight is the 2025-era registry of running tools/call requests, so
// that notifications/cancelled can stop one (an inbox_list waiting for
// arrivals, above all). A request is identified as the 2025 revisions
// identify it: its session and JSON-RPC id; the key it was sent with is
// part of the identity too, so that only the caller that can use the
// session can cancel in it. The registry is in memory: a notification
// that reaches another instance (Lambda) finds nothing and is ignored, as
// the spec allows.
type inflight struct {
	mu    sync.Mutex
	calls map[inflightKey]*inflightCall
}

type inflightKey struct{ session, bearer, id string }

type inflightCall struct{ cancel context.CancelFunc }

// track registers the call and returns its request with a cancellable
// context, and the function that unregisters it.
func (f *inflight) track(r *http.Request, session, bearer string, id jsonrpc.ID) (*http.Request, func()) {
	key := inflightKey{session, bearer, idKey(id)}
	ctx, cancel := context.WithCancel(r.Context())
	c := &inflightCall{cancel: cancel}
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[inflightKey]*inflightCall{}
	}
	f.calls[key] = c
	f.mu.Unlock()
	return r.WithContext(ctx), func() {
		f.mu.Lock()
		if f.calls[key] == c {
			delete(f.calls, key)
		}
		f.mu.Unlock()
		cancel()
	}
}

// cancelled cancels the call a notifications/cancelled names; an unknown
// or finished one, or a malformed notification, is ignored (cancellation.mdx).
func (f *inflight) cancelled(session, bearer string, params json.RawMessage) {
	var requestID json.RawMessage
	if !strictjson.Members(params, func(key, value []byte) bool {
		if string(key) == "requestId" {
			requestID = value
		}
		return true
	}) {
		return
	}
	id, err := decodeID(requestID)
	if err != nil || !id.IsValid() {
		return
	}
	key := inflightKey{session, bearer, idKey(id)}
	f.mu.Lock()
	c := f.calls[key]
	f.mu.Unlock()
	if c != nil {
		c.cancel()
	}
}

// idKey is a JSON-RPC id as a map key: numbers and strings never collide.
func idKey(id jsonrpc.ID) string {
	switch v := id.Raw().(type) {
	case int64:
		return "n" + strconv.FormatInt(v, 10)
	case string:
		return "s" + v
	default:
		return ""
	}
}
