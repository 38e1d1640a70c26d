package opview_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestOwnerKeyMatrix: only the box's live owner key sees the box; every
// other credential gets the same refusal, and nothing of the box.
func TestOwnerKeyMatrix(t *testing.T) {
	w := newWorld(t)
	_, refused := w.do("", "", "GET", "/ui/api/box", nil)
	for _, tc := range []struct {
		name, key string
		want      int
	}{
		{"owner key", w.owner, http.StatusOK},
		{"no key", "", http.StatusUnauthorized},
		{"revoked owner key", w.revkd, http.StatusUnauthorized},
		{"agent key", w.alice.BoxKey, http.StatusUnauthorized},
		{"read-only agent key", w.rita.BoxKey, http.StatusUnauthorized},
		{"garbage", "abo_nope", http.StatusUnauthorized},
	} {
		resp, body := w.do(tc.key, "", "GET", "/ui/api/box", nil)
		if resp.StatusCode != tc.want {
			t.Errorf("GET /ui/api/box with %s = %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
		if tc.want != http.StatusOK && string(body) != string(refused) {
			t.Errorf("GET /ui/api/box with %s answered %q, want the same refusal as no key (%q)", tc.name, body, refused)
		}
		if tc.want != http.StatusOK && strings.Contains(string(body), "alice") {
			t.Errorf("GET /ui/api/box with %s shows the box's agents", tc.name)
		}
	}
	// The other box's owner key sees its own box, not this one's room or agents.
	resp, body := w.do(w.ownerB, "", "GET", "/ui/api/box", nil)
	if resp.StatusCode != http.StatusOK || strings.Contains(string(body), "alice") || !strings.Contains(string(body), "carol") {
		t.Errorf("GET /ui/api/box with the other box's key = %d; want 200 with carol and without alice", resp.StatusCode)
	}
	for _, path := range []string{"/ui/api/room/" + w.room.RoomID, "/ui/api/agent/" + w.alice.AgentID} {
		resp, body := w.do(w.ownerB, "", "GET", path, nil)
		resp2, body2 := w.do(w.ownerB, "", "GET", strings.Replace(path, w.room.RoomID, "00000000-0000-4000-8000-000000000000", 1), nil)
		if resp.StatusCode != http.StatusNotFound || (strings.Contains(path, "room") && (resp2.StatusCode != 404 || string(body) != string(body2))) {
			t.Errorf("GET %s with the other box's key = %d %q; want 404 like a room that does not exist", path, resp.StatusCode, body)
		}
	}
	// An owner key is no agent key: a tool refuses it.
	resp, _ = w.do(w.owner, "", "POST", "/v1/agent/prime", nil)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST /v1/agent/prime with an owner key = %d, want 401", resp.StatusCode)
	}
}

func TestHeadersAndOrigin(t *testing.T) {
	w := newWorld(t)
	for _, path := range []string{"/ui/", "/ui/app.js", "/ui/api/box"} {
		resp, _ := w.do(w.owner, "", "GET", path, nil)
		h := resp.Header
		if !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'self'") ||
			!strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") ||
			strings.Contains(h.Get("Content-Security-Policy"), "unsafe-inline") ||
			h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("GET %s headers = %v, want the strict CSP, nosniff and no-referrer", path, h)
		}
	}
	req, _ := http.NewRequest("GET", w.srv.URL+"/ui/api/box", nil)
	req.Header.Set("Authorization", "Bearer "+w.owner)
	req.Header.Set("Origin", "https://evil.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET /ui/api/box with a foreign Origin = %d, want 403", resp.StatusCode)
	}
	req, _ = http.NewRequest("GET", w.srv.URL+"/ui/", nil)
	req.Host = "evil.example"
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET /ui/ with Host evil.example on a loopback listener = %d, want 403", resp.StatusCode)
	}
}

func TestFragmentsSanitized(t *testing.T) {
	w := newWorld(t)
	for _, path := range []string{"/ui/api/box", "/ui/api/room/" + w.room.RoomID, "/ui/api/agent/" + w.bob.AgentID, "/ui/api/requests",
		"/ui/api/agent/" + w.alice.AgentID, "/ui/api/dm/" + w.alice.AgentID + "/" + w.bob.AgentID,
		"/ui/api/activity", "/ui/api/files", "/ui/api/message/" + w.reqID, "/ui/api/requests?to=" + w.bob.AgentID,
		"/ui/api/requests?from=" + w.alice.AgentID, "/ui/api/requests?room=" + w.room.RoomID} {
		resp, b := w.do(w.owner, "", "GET", path, nil)
		// The activity chart is the view's own SVG.
		body := strings.ReplaceAll(string(b), `<svg class="chart"`, "")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d %s, want 200", path, resp.StatusCode, body)
		}
		for _, bad := range []string{"<script", "<img", "<svg", "<style", "<iframe", ` style="`, ` onerror="`, `href="javascript`, `href="data`, "\u202e"} {
			if strings.Contains(strings.ToLower(body), bad) {
				t.Errorf("GET %s contains %q; want agent text escaped or dropped", path, bad)
			}
		}
	}
	_, b := w.do(w.owner, "", "GET", "/ui/api/room/"+w.room.RoomID, nil)
	for _, want := range []string{`rel="nofollow noreferrer noopener"`, "request → 1", "mentions 1", "1 reply<", "https://example.com/f.md"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("room fragment lacks %q", want)
		}
	}
	if strings.Contains(string(b), "1 replies") {
		t.Errorf("room fragment says \"1 replies\", want \"1 reply\"")
	}
}

// TestRequestChart: the box and room fragments draw requests opened and
// answered per hour as two series with the seeded counts; the box's count
// the DM request too.
func TestRequestChart(t *testing.T) {
	w := newWorld(t)
	// The world holds two requests in the room, alice's answered, and bob's
	// DM request to alice (needs_context: not answered).
	series := func(path string, opened, answered int) {
		t.Helper()
		_, b := w.do(w.owner, "", "GET", path, nil)
		for _, want := range []string{fmt.Sprintf(`<g data-series="opened" data-total="%d">`, opened),
			fmt.Sprintf(`<g data-series="answered" data-total="%d">`, answered), fmt.Sprintf("<title>opened %d · ", opened),
			fmt.Sprintf("<title>answered %d · ", answered)} {
			if !strings.Contains(string(b), want) {
				t.Errorf("GET %s with %d opened and %d answered: the chart lacks %s", path, opened, answered, want)
			}
		}
	}
	box, room := "/ui/api/box", "/ui/api/room/"+w.room.RoomID
	series(box, 3, 1)
	series(room, 2, 1)
	w.rest(w.bob, "POST", "/v1/requests/"+w.reqID+"/respond", map[string]any{"idempotency_key": "done",
		"expected_revision": "0", "status": "result_ready", "body_md": "Done."}, http.StatusOK, nil)
	series(box, 3, 2)
	series(room, 2, 2)
}

// TestCursorInQuery: the lists' cursors travel in the query string; a bad
// one is a 400 CURSOR_INVALID with nothing of the box.
func TestCursorInQuery(t *testing.T) {
	w := newWorld(t)
	for _, path := range []string{"/ui/api/box?agents=x", "/ui/api/requests?cursor=x", "/ui/api/requests?to=" + w.bob.AgentID + "&cursor=x", "/ui/api/activity?older=x", "/ui/api/files?older=x", "/ui/api/room/" + w.room.RoomID + "?older=x",
		"/ui/api/agent/" + w.bob.AgentID + "?inbox=x"} {
		resp, body := w.do(w.owner, "", "GET", path, nil)
		if resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(string(body), "CURSOR_INVALID") || strings.Contains(string(body), "alice") {
			t.Errorf("GET %s = %d %q, want 400 CURSOR_INVALID without box data", path, resp.StatusCode, body)
		}
	}
}

// TestPrivateSpacesAndDMs: the box's owner sees a private space and a DM
// on their members' agent pages (metadata) and the DM's messages on its
// page; another box's owner key sees nothing of them, with the refusal a
// nonexistent agent gets.
func TestPrivateSpacesAndDMs(t *testing.T) {
	w := newWorld(t)
	dm := "/ui/api/dm/" + w.alice.AgentID + "/" + w.bob.AgentID
	for path, want := range map[string][]string{
		"/ui/api/agent/" + w.alice.AgentID: {"hush space", `href="#dm/` + w.alice.AgentID + "/" + w.bob.AgentID + `"`, "Private spaces", "Direct messages"},
		"/ui/api/agent/" + w.bob.AgentID:   {"hush space", `href="#dm/` + w.bob.AgentID + "/" + w.alice.AgentID + `"`},
		dm:                                 {"just between us", "DM body"},
		"/ui/api/dm/" + w.bob.AgentID + "/" + w.alice.AgentID: {"just between us"},
	} {
		resp, b := w.do(w.owner, "", "GET", path, nil)
		for _, s := range want {
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), s) {
				t.Errorf("GET %s with the box's owner key = %d, lacks %q", path, resp.StatusCode, s)
			}
		}
	}
	if _, b := w.do(w.owner, "", "GET", "/ui/api/box", nil); strings.Contains(string(b), "hush space") || strings.Contains(string(b), "just between us") {
		t.Errorf("the box page lists the private space or the DM's text; want them on the agent and DM pages only")
	}
	none := "00000000-0000-4000-8000-000000000000"
	_, missing := w.do(w.ownerB, "", "GET", "/ui/api/dm/"+w.carol.AgentID+"/"+none, nil)
	for _, path := range []string{dm, "/ui/api/dm/" + w.carol.AgentID + "/" + w.alice.AgentID, "/ui/api/agent/" + w.alice.AgentID} {
		resp, b := w.do(w.ownerB, "", "GET", path, nil)
		if resp.StatusCode != http.StatusNotFound || string(b) != string(missing) {
			t.Errorf("GET %s with the other box's key = %d %q; want 404 like a DM with no such agent (%q)", path, resp.StatusCode, b, missing)
		}
	}
	for _, path := range []string{"/ui/api/box", "/ui/api/agent/" + w.carol.AgentID, "/ui/api/requests"} {
		if _, b := w.do(w.ownerB, "", "GET", path, nil); strings.Contains(string(b), "hush space") || strings.Contains(string(b), "just between us") ||
			strings.Contains(string(b), w.alice.AgentID) {
			t.Errorf("GET %s with the other box's key shows this box's private space, DM or agents", path)
		}
	}
}
