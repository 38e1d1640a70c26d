package rest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub/hubtest"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// The seed-002 tools over REST: the body is the data object itself, the id
// is the path, GET data travels in the query, and a wrapped {"data": ...}
// body is refused with the seed's own rule.

type spaceOut struct {
	Space struct {
		ID      string `json:"id"`
		Version int64  `json:"version"`
		Title   string `json:"title"`
		Status  string `json:"status"`
	} `json:"space"`
	Operation *struct {
		Tool       string `json:"tool"`
		ResourceID string `json:"resource_id"`
		Version    int64  `json:"version"`
	} `json:"operation"`
	Replayed bool `json:"replayed"`
}

func TestSpacesAndMemoryOverREST(t *testing.T) {
	hubtest.ForEachAdapterSerial(t, func(t *testing.T, ad teststores.Adapter) {
		e := newEnv(t, ad.Open(t, nil), nil)
		sA, sB := e.prime(e.alice.BoxKey), e.prime(e.bob.BoxKey)
		alice := e.as(t, e.alice.BoxKey, sA)

		var created spaceOut
		alice("POST", "/v1/spaces", `{"request_id":"req-1","title":"PDF extraction checkpoint","goal":"Verify.","visibility":"public","operation_key":"create-1"}`).
			wantOK(t, "POST /v1/spaces", &created)
		id := created.Space.ID
		if id == "" || created.Space.Version != 1 || created.Operation == nil || created.Operation.ResourceID != id {
			t.Fatalf("POST /v1/spaces = %+v, want version 1 with its receipt", created)
		}
		// The replay is the compact receipt only.
		r := alice("POST", "/v1/spaces", `{"request_id":"req-2","title":"PDF extraction checkpoint","goal":"Verify.","visibility":"public","operation_key":"create-1"}`)
		var replay map[string]json.RawMessage
		r.wantOK(t, "POST /v1/spaces (replay)", &replay)
		delete(replay, "attention") // on every authenticated result
		if len(replay) != 2 || string(replay["replayed"]) != "true" || replay["operation"] == nil {
			t.Fatalf("POST /v1/spaces (replay) = %s, want exactly {operation, replayed: true}", r.body)
		}

		var got spaceOut
		alice("GET", "/v1/spaces/"+id, "").wantOK(t, "GET /v1/spaces/{id}", &got)
		if got.Space.Title != "PDF extraction checkpoint" {
			t.Fatalf("GET /v1/spaces/{id} = %s", alice("GET", "/v1/spaces/"+id, "").body)
		}

		// update_space exactly as the seed's example_body, with an
		// integer expected_version.
		body := `{"expected_version":1,"goal":"Verify document extraction quality.","status":"active","title":"Renamed"}`
		var upd spaceOut
		alice("POST", "/v1/spaces/"+id, body).wantOK(t, "POST /v1/spaces/{id}", &upd)
		if upd.Space.Version != 2 || upd.Space.Title != "Renamed" {
			t.Fatalf("POST /v1/spaces/{id} = %+v, want version 2", upd)
		}
		// Seed-002 envelopes carry current_revision as an integer, like
		// expected_version (apperr.Envelope's string form does not apply).
		r = alice("POST", "/v1/spaces/"+id, body)
		var conflict struct {
			Error struct {
				Code            apperr.Code     `json:"code"`
				CurrentRevision json.RawMessage `json:"current_revision"`
			} `json:"error"`
		}
		r.decode(t, &conflict)
		if r.status != http.StatusConflict || conflict.Error.Code != apperr.RevisionConflict || string(conflict.Error.CurrentRevision) != "2" {
			t.Errorf("stale update: got HTTP %d %s, want 409 REVISION_CONFLICT with current_revision 2", r.status, r.body)
		}

		// GET data in the query string; the cursor continues.
		var page struct {
			Items      []struct{ ID string } `json:"items"`
			NextCursor string                `json:"next_cursor"`
		}
		alice("POST", "/v1/spaces", `{"request_id":"req-3","title":"Second","goal":"g","visibility":"private"}`).wantOK(t, "POST /v1/spaces", nil)
		alice("GET", "/v1/spaces?limit=1", "").wantOK(t, "GET /v1/spaces?limit=1", &page)
		if len(page.Items) != 1 || page.NextCursor == "" {
			t.Fatalf("GET /v1/spaces?limit=1 = %+v, want one item and a next_cursor", page)
		}
		cursor := page.NextCursor
		page.Items, page.NextCursor = nil, "" // decoding into page keeps absent fields
		alice("GET", "/v1/spaces?limit=1&cursor="+cursor, "").wantOK(t, "GET /v1/spaces?cursor=...", &page)
		if len(page.Items) != 1 || page.NextCursor != "" {
			t.Fatalf("GET /v1/spaces (second page) = %+v, want the last item", page)
		}
		alice("GET", "/v1/spaces?limit=101", "").wantError(t, "GET /v1/spaces?limit=101", http.StatusUnprocessableEntity, apperr.LimitExceeded)

		// Another box's agent gets 404, as for an unknown id.
		sC := e.prime(e.carol.BoxKey)
		e.do(t, req{method: "GET", path: "/v1/spaces/" + id, key: e.carol.BoxKey, session: sC}).
			wantError(t, "GET another box's space", http.StatusNotFound, apperr.NotFoundOrForbidden)

		// Memory: PUT creates from version 0, DELETE carries its CAS in a body.
		var note struct {
			Note struct {
				Version int64  `json:"version"`
				Content string `json:"content"`
			} `json:"note"`
		}
		alice("PUT", "/v1/memory/working-context", `{"expected_version":0,"content":"Parsing done."}`).wantOK(t, "PUT /v1/memory/{id}", &note)
		if note.Note.Version != 1 {
			t.Fatalf("PUT /v1/memory/{id}: version %d, want 1", note.Note.Version)
		}
		alice("GET", "/v1/memory/working-context", "").wantOK(t, "GET /v1/memory/{id}", &note)
		var notes struct {
			Items []struct{ Name string } `json:"items"`
			Total int                     `json:"total"`
		}
		alice("GET", "/v1/memory?limit=10", "").wantOK(t, "GET /v1/memory", &notes)
		if len(notes.Items) != 1 || notes.Items[0].Name != "working-context" || notes.Total != 1 {
			t.Fatalf("GET /v1/memory = %+v, want working-context", notes)
		}
		e.do(t, req{method: "GET", path: "/v1/memory/working-context", key: e.bob.BoxKey, session: sB}).
			wantError(t, "GET another agent's note", http.StatusNotFound, apperr.NotFoundOrForbidden)
		alice("DELETE", "/v1/memory/working-context", `{"expected_version":1}`).wantOK(t, "DELETE /v1/memory/{id}", nil)
		alice("GET", "/v1/memory/working-context", "").wantError(t, "GET a deleted note", http.StatusNotFound, apperr.NotFoundOrForbidden)
		alice("PUT", "/v1/memory/Not_A_Name", `{"expected_version":0,"content":"x"}`).
			wantError(t, "PUT /v1/memory/{bad name}", http.StatusBadRequest, apperr.InvalidArgument)
	})
}

// TestWrappedDataBodyRejected: seed 002 says a literal top-level data
// property is invalid in REST, with a message that says so.
func TestWrappedDataBodyRejected(t *testing.T) {
	e := newEnv(t, boltStore(t), nil)
	s := e.prime(e.alice.BoxKey)
	cases := []struct{ method, path, body string }{
		{"POST", "/v1/spaces", `{"data":{"request_id":"r","title":"t","goal":"g","visibility":"public"}}`},
		{"POST", "/v1/spaces/00000000-0000-4000-8000-000000000001", `{"data":{"expected_version":1,"title":"t","goal":"g","status":"active"}}`},
		{"POST", "/v1/spaces/00000000-0000-4000-8000-000000000001", `{"expected_version":1,"title":"t","goal":"g","status":"active","data":{}}`},
		{"PUT", "/v1/memory/working-context", `{"data":{"expected_version":0,"content":"x"}}`},
		{"DELETE", "/v1/memory/working-context", `{"data":{"expected_version":1}}`},
	}
	for _, tc := range cases {
		r := e.do(t, req{method: tc.method, path: tc.path, key: e.alice.BoxKey, session: s, body: tc.body})
		env := r.wantError(t, tc.method+" "+tc.path+" with a wrapped body", http.StatusBadRequest, apperr.InvalidArgument)
		if !strings.Contains(env.Message, "top-level data property is invalid in REST") {
			t.Errorf("%s %s: message %q, want the seed's rule about the data property", tc.method, tc.path, env.Message)
		}
	}
	// The id is the path's, never a body field.
	e.do(t, req{method: "POST", path: "/v1/spaces/00000000-0000-4000-8000-000000000001", key: e.alice.BoxKey, session: s,
		body: `{"id":"x","expected_version":1,"title":"t","goal":"g","status":"active"}`}).
		wantError(t, "POST /v1/spaces/{id} with an id body field", http.StatusBadRequest, apperr.InvalidArgument)
	var out spaceOut
	e.do(t, req{method: "POST", path: "/v1/spaces", key: e.alice.BoxKey, session: s,
		body: `{"request_id":"r","title":"t","goal":"g","visibility":"public"}`}).wantOK(t, "POST /v1/spaces unwrapped", &out)
}
