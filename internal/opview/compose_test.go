package opview_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/opview"
	"github.com/chromedp/chromedp"
)

// inboxRow is what the compose tests read of an agent's inbox_list row.
type inboxRow struct {
	Reasons     int      `json:"reasons"`
	ReasonNames []string `json:"reason_names"`
	Message     struct {
		ID         string `json:"message_id"`
		AuthorKind string `json:"author_kind"`
		AuthorID   string `json:"author_agent_id"`
		BodyMD     string `json:"body_md"`
	} `json:"message"`
}

// unreadOf lists agent a's unread inbox over REST, as the agent sees it.
func (w *world) unreadOf(a *hub.AgentInfo) []inboxRow {
	w.t.Helper()
	var out struct {
		Rows []inboxRow `json:"rows"`
	}
	w.rest(a, "POST", "/v1/inbox/list", map[string]any{"filter": "unread", "limit": 100}, http.StatusOK, &out)
	return out.Rows
}

// operatorRow is the one row of rows whose message the operator wrote and
// whose body contains marker.
func operatorRow(t *testing.T, who string, rows []inboxRow, marker string) inboxRow {
	t.Helper()
	var found []inboxRow
	for _, r := range rows {
		if strings.Contains(r.Message.BodyMD, marker) {
			found = append(found, r)
		}
	}
	if len(found) != 1 || found[0].Message.AuthorKind != hub.AuthorOperator {
		t.Fatalf("%s's unread rows with %q = %+v; want one, by the operator", who, marker, found)
	}
	return found[0]
}

// TestComposeBrowser steps in as a person would: log in with a write
// owner key, post into the room with a mention and a request (and the XSS
// corpus in the text), see it on the timeline with the operator label,
// keep a half-typed message through a refresh, DM an agent from its page
// asking for a response, and watch the agents see the posts in inbox_list
// with the seed's reasons and author_kind operator and answer the
// requests with request_respond — while nothing of the corpus runs and the
// CSP reports nothing.
func TestComposeBrowser(t *testing.T) {
	w, writer := newWriterWorld(t)
	ctx, consoleErrs := browser(t)
	s := &session{t: t, w: w, ctx: ctx, consoleErrs: consoleErrs, shots: os.Getenv("SCREENSHOTS_DIR")}
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			html, _ := chromedp.Run(context.WithoutCancel(ctx), chromedp.Evaluate[string](`document.getElementById("view").outerHTML`))
			t.Fatalf("%s: %v; console %q; page %.3000s", what, err, consoleErrs(), html)
		}
	}
	poll := func(what, expr string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(15*time.Second))); err != nil {
			html, _ := chromedp.Run(context.WithoutCancel(ctx), chromedp.Evaluate[string](`document.getElementById("view").innerText`))
			t.Fatalf("%s: %v; console %q; page %.1500s", what, err, consoleErrs(), html)
		}
	}
	run("logging in", chromedp.Navigate(w.srv.URL+"/ui/"), chromedp.WaitVisible("#key"),
		chromedp.SendKeys("#key", writer.Key), chromedp.Click(`#login button[type="submit"]`),
		chromedp.WaitVisible(`section[data-page="box"]`))

	// A room post mentioning alice and requesting bob.
	body := "Operator here: ship on Friday. " + strings.Join(xss, " ")
	run("opening the room", chromedp.Evaluate[chromedp.Void](`location.hash = `+jsString("#room/"+w.room.RoomID)),
		chromedp.WaitVisible(`form.compose textarea`))
	run("composing in the room",
		chromedp.SetValue(`form.compose textarea`, body),
		chromedp.Click(`form.compose input[name="mention"][value="`+w.alice.AgentID+`"]`),
		chromedp.Click(`form.compose input[name="request"][value="`+w.bob.AgentID+`"]`),
		chromedp.Click(`form.compose button[type="submit"]`))
	poll("the post on the timeline", `[...document.querySelectorAll("li.message.by-operator")].some(e =>
		e.innerText.includes("Operator here: ship on Friday") && e.querySelector(".chip.operator"))`)
	poll("the compose box emptied and reporting", `document.querySelector("form.compose textarea").value === ""`)
	s.shot("compose")
	run("opening the activity feed", chromedp.Evaluate[chromedp.Void](`location.hash = "#activity"`),
		chromedp.WaitVisible(`section[data-page="activity"]`))
	poll("the post in the feed, by the operator", `[...document.querySelectorAll("ol.feed li.event")].some(e =>
		e.innerText.includes("Operator here: ship on Friday") && e.querySelector(".chip.operator") &&
		!e.querySelector('a[href="#agent/`+w.box+`"]'))`)
	run("back to the room", chromedp.Evaluate[chromedp.Void](`location.hash = `+jsString("#room/"+w.room.RoomID)),
		chromedp.WaitVisible(`form.compose textarea`))

	aliceRow := operatorRow(t, "alice", w.unreadOf(w.alice), "ship on Friday")
	bobRow := operatorRow(t, "bob", w.unreadOf(w.bob), "ship on Friday")
	if aliceRow.Reasons != hub.ReasonMention || bobRow.Reasons != hub.ReasonMention|hub.ReasonRequest ||
		bobRow.Message.AuthorID != w.box || bobRow.Message.BodyMD != body {
		t.Errorf("rows alice %+v, bob %+v; want mention, mention|request, by the box's operator, the text as typed", aliceRow, bobRow)
	}
	w.rest(w.bob, "POST", "/v1/requests/"+bobRow.Message.ID+"/respond", map[string]any{"idempotency_key": "op-ack",
		"expected_revision": "0", "status": "accepted", "body_md": "Accepted, operator."}, http.StatusOK, nil)
	poll("bob's declaration on the operator's request", `[...document.querySelectorAll("li.message.by-operator .chip.decl.status-accepted")].length > 0`)

	// Half a message survives the page's refresh.
	run("typing", chromedp.SetValue(`form.compose textarea`, "half a thought"))
	w.rest(w.alice, "POST", "/v1/messages", map[string]any{"idempotency_key": "during", "body_md": "alice meanwhile",
		"destination": map[string]any{"kind": "room", "room_id": w.room.RoomID}}, http.StatusOK, nil)
	poll("a refresh while typing", `document.body.innerText.includes("alice meanwhile")`)
	kept, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("form.compose textarea").value`))
	if err != nil || kept != "half a thought" {
		t.Errorf("the compose box after a refresh holds %q (%v), want the half-typed text", kept, err)
	}

	// A DM to alice from her page, asking for a response.
	run("opening alice's page", chromedp.Evaluate[chromedp.Void](`location.hash = `+jsString("#agent/"+w.alice.AgentID)),
		chromedp.WaitVisible(`section[data-page="agent"] form.compose textarea`))
	run("composing a DM", chromedp.SetValue(`form.compose textarea`, "Alice, a word about the numbers?"),
		chromedp.Click(`form.compose input[name="ask"]`), chromedp.Click(`form.compose button[type="submit"]`))
	poll("the DM posted", `document.querySelector(".compose-status").innerText === "posted"`)
	dm := operatorRow(t, "alice", w.unreadOf(w.alice), "a word about the numbers")
	if dm.Reasons != hub.ReasonDM|hub.ReasonRequest {
		t.Errorf("alice's DM row reasons %d %v, want dm|request", dm.Reasons, dm.ReasonNames)
	}
	w.rest(w.alice, "POST", "/v1/requests/"+dm.Message.ID+"/respond", map[string]any{"idempotency_key": "op-dm-ack",
		"expected_revision": "0", "status": "result_ready", "body_md": "Numbers are fine."}, http.StatusOK, nil)
	run("opening the DM with the operator", chromedp.Click(`p.operator-dm a`), chromedp.WaitVisible(`section[data-page="dm"]`))
	poll("the DM page", `document.querySelector('section[data-page="dm"]').innerText.includes("a word about the numbers") &&
		document.querySelector('section[data-page="dm"]').textContent.includes("Numbers are fine.") &&
		document.querySelector('section[data-page="dm"] li.message.by-operator .chip.operator') !== null`)

	s.safe(0)
	if logs := w.logs.String(); strings.Contains(logs, "abo_") || strings.Contains(logs, "ship on Friday") {
		t.Errorf("the server log holds an owner key or the composed text")
	}
}

// TestComposeRefusals: the post endpoint refuses what a cross-site page
// could send (a wrong or missing Origin, Sec-Fetch-Site cross-site, a form
// or text body), keys that may not write (none, read-only, revoked, an
// agent's, another box's for this box's room), and bad posts, without
// echoing what was sent and without writing anything; a read-only owner
// key gets exactly the refusal of an unknown key, as before the endpoint
// existed.
func TestComposeRefusals(t *testing.T) {
	w, writer := newWriterWorld(t)
	const marker = "SECRET-MARKER-7731"
	good := `{"destination":{"kind":"dm","recipient_agent_id":"` + w.bob.AgentID + `"},"body_md":"` + marker + `","idempotency_key":"k1"}`
	send := func(method, path, key, ctype, origin, site, body string) viewReply {
		return viewRequest(t, method, w.srv.URL+path, key, ctype, origin, site, body)
	}
	own := w.srv.URL
	post := func(key, ctype, origin, site, body string) viewReply {
		return send("POST", "/ui/api/post", key, ctype, origin, site, body)
	}
	unknown := post(w.revkd[:len(w.revkd)-2]+"AA", "application/json", own, "same-origin", good)
	readBefore := send("GET", "/ui/api/box", w.revkd[:len(w.revkd)-2]+"AA", "", "", "", "")
	if unknown.status != http.StatusUnauthorized || unknown != readBefore {
		t.Fatalf("an unknown key posting = %+v, reading = %+v; want one 401", unknown, readBefore)
	}
	for _, tc := range []struct {
		name                     string
		key, ctype, origin, site string
		body                     string
		status                   int
		sameAsUnknown            bool
	}{
		{"another origin", writer.Key, "application/json", "https://evil.example", "", good, http.StatusForbidden, false},
		{"no Origin", writer.Key, "application/json", "", "", good, http.StatusForbidden, false},
		{"Origin null", writer.Key, "application/json", "null", "", good, http.StatusForbidden, false},
		{"cross-site fetch metadata", writer.Key, "application/json", own, "cross-site", good, http.StatusForbidden, false},
		{"same-site fetch metadata", writer.Key, "application/json", own, "same-site", good, http.StatusForbidden, false},
		{"a form", writer.Key, "application/x-www-form-urlencoded", own, "same-origin", "body_md=" + marker, http.StatusUnsupportedMediaType, false},
		{"a multipart form", writer.Key, "multipart/form-data; boundary=x", own, "same-origin", good, http.StatusUnsupportedMediaType, false},
		{"text/plain", writer.Key, "text/plain", own, "same-origin", good, http.StatusUnsupportedMediaType, false},
		{"no content type", writer.Key, "", own, "same-origin", good, http.StatusUnsupportedMediaType, false},
		{"no key", "", "application/json", own, "same-origin", good, http.StatusUnauthorized, false},
		{"a read-only owner key", w.owner, "application/json", own, "same-origin", good, http.StatusUnauthorized, true},
		{"a revoked owner key", w.revkd, "application/json", own, "same-origin", good, http.StatusUnauthorized, true},
		{"an agent key", w.alice.BoxKey, "application/json", own, "same-origin", good, http.StatusUnauthorized, true},
		{"not JSON", writer.Key, "application/json", own, "same-origin", marker, http.StatusBadRequest, false},
		{"an unknown field", writer.Key, "application/json", own, "same-origin", `{"author_kind":"` + marker + `"}`, http.StatusBadRequest, false},
		{"an agent of another box", writer.Key, "application/json", own, "same-origin",
			`{"destination":{"kind":"dm","recipient_agent_id":"` + w.carol.AgentID + `"},"body_md":"` + marker + `","idempotency_key":"k2"}`, http.StatusNotFound, false},
		{"no idempotency key", writer.Key, "application/json", own, "same-origin",
			`{"destination":{"kind":"dm","recipient_agent_id":"` + w.bob.AgentID + `"},"body_md":"` + marker + `"}`, http.StatusBadRequest, false},
	} {
		got := post(tc.key, tc.ctype, tc.origin, tc.site, tc.body)
		if got.status != tc.status {
			t.Errorf("%s: status %d (%s), want %d", tc.name, got.status, got.body, tc.status)
		}
		if tc.sameAsUnknown && got != unknown {
			t.Errorf("%s: %+v, want exactly the unknown key's %+v", tc.name, got, unknown)
		}
		for _, secret := range []string{marker, "abo_", "abk_"} {
			if strings.Contains(got.body, secret) {
				t.Errorf("%s: the refusal %q echoes what was sent", tc.name, got.body)
			}
		}
	}
	for _, r := range w.unreadOf(w.bob) {
		if r.Message.AuthorKind == hub.AuthorOperator {
			t.Fatalf("bob has an operator row after refused posts: %+v", r)
		}
	}
	ok := post(writer.Key, "application/json; charset=utf-8", own, "", good)
	again := post(writer.Key, "application/json", own, "same-origin", good)
	if ok.status != http.StatusOK || again.status != http.StatusOK || !strings.Contains(again.body, `"replayed":true`) {
		t.Fatalf("the post = %+v, its retry = %+v; want 200 twice, the retry a replay", ok, again)
	}
	if n := len(w.unreadOf(w.bob)); n == 0 {
		t.Fatalf("bob's inbox is empty after the post")
	}
}

// TestPosterServesOnlyThePost: the stack's write function (NewPoster,
// with the writer role) answers the post and nothing of the read view,
// which keeps its read-only function.
func TestPosterServesOnlyThePost(t *testing.T) {
	w, writer := newWriterWorld(t)
	srv := httptest.NewServer(opview.NewPoster(w.h, slog.New(slog.DiscardHandler)))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		method, path, body string
		want               int
	}{
		{"GET", "/ui/api/box", "", http.StatusNotFound},
		{"GET", "/ui/index.html", "", http.StatusNotFound},
		{"POST", "/ui/api/post", `{"destination":{"kind":"dm","recipient_agent_id":"` + w.bob.AgentID + `"},"body_md":"via the poster","idempotency_key":"p1"}`, http.StatusOK},
	} {
		got := viewRequest(t, tc.method, srv.URL+tc.path, writer.Key, "application/json", srv.URL, "", tc.body)
		if got.status != tc.want {
			t.Errorf("%s %s on the poster = %d, want %d", tc.method, tc.path, got.status, tc.want)
		}
	}
	operatorRow(t, "bob", w.unreadOf(w.bob), "via the poster")
}

// newWriterWorld is the seeded world with an owner key of its box that
// may post.
func newWriterWorld(t *testing.T) (*world, *hub.OwnerKeyInfo) {
	t.Helper()
	w := newWorld(t)
	writer, err := w.admin.CreateWriteOwnerKey(context.Background(), w.box)
	if err != nil {
		t.Fatal(err)
	}
	return w, writer
}

// viewReply is what a test request to the view got.
type viewReply struct {
	status int
	auth   string
	body   string
}

// viewRequest sends a request to the view with the headers a browser
// (or a forger) would set; empty ones are left out.
func viewRequest(t *testing.T, method, url, key, ctype, origin, site, body string) viewReply {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	for h, v := range map[string]string{"Content-Type": ctype, "Origin": origin, "Sec-Fetch-Site": site} {
		if v != "" {
			req.Header.Set(h, v)
		}
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return viewReply{resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)}
}

// TestComposeOnlyForWriteKeys: the room, DM and agent pages offer the
// compose box to a key that may post, and to a read-only key only the
// way to get one.
func TestComposeOnlyForWriteKeys(t *testing.T) {
	w, writer := newWriterWorld(t)
	for _, path := range []string{"/ui/api/room/" + w.room.RoomID, "/ui/api/agent/" + w.bob.AgentID,
		"/ui/api/dm/" + w.alice.AgentID + "/" + w.bob.AgentID, "/ui/api/dm/" + w.box + "/" + w.bob.AgentID} {
		for _, tc := range []struct {
			name, key string
			form      bool
		}{{"write key", writer.Key, true}, {"read-only key", w.owner, false}} {
			got := viewRequest(t, "GET", w.srv.URL+path, tc.key, "", "", "", "")
			hasForm, hasNote := strings.Contains(got.body, `<form class="compose"`), strings.Contains(got.body, "create-owner-key --box BOX --write")
			if got.status != http.StatusOK || hasForm != tc.form || hasNote == tc.form {
				t.Errorf("%s with a %s: status %d, compose form %t, read-only note %t; want 200, form %t", path, tc.name,
					got.status, hasForm, hasNote, tc.form)
			}
		}
	}
}
