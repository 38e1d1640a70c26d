package hub_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// TestTamperedCursor: a cursor whose position a client edited is
// CURSOR_INVALID, even though it still decodes and names the caller.
func TestTamperedCursor(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		cr := f.prime(f.a)
		for i := range 3 {
			mustCreateNote(f, cr, fmt.Sprintf("note-%d", i), "x")
		}
		page, err := f.h.ListMemory(f.ctx, cr, hub.ListMemoryInput{Data: hub.ListMemoryData{Limit: 1}})
		if err != nil || page.NextCursor == "" {
			t.Fatalf("ListMemory(limit 1) = %+v, %v; want a next cursor", page, err)
		}
		raw, err := base64.RawURLEncoding.DecodeString(page.NextCursor)
		if err != nil {
			t.Fatalf("cursor is not base64url: %v", err)
		}
		edited := strings.Replace(string(raw), "note-0", "note-1", 1)
		if edited == string(raw) {
			t.Fatalf("cursor %s does not carry the position in clear", raw)
		}
		_, err = f.h.ListMemory(f.ctx, cr, hub.ListMemoryInput{Data: hub.ListMemoryData{
			Cursor: base64.RawURLEncoding.EncodeToString([]byte(edited)), Limit: 1}})
		wantCode(t, "ListMemory(tampered cursor)", err, apperr.CursorInvalid)

		// The untouched cursor still works, also from a second hub on the
		// same store (another Lambda instance): the key is shared.
		other := hub.New(f.st, hub.Options{Now: f.clock.Now})
		next, err := other.ListMemory(f.ctx, cr, hub.ListMemoryInput{Data: hub.ListMemoryData{Cursor: page.NextCursor, Limit: 1}})
		if err != nil || len(next.Items) != 1 {
			t.Fatalf("ListMemory(cursor, other instance) = %+v, %v; want the next note", next, err)
		}
	})
}
