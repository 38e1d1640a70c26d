package opview_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

// TestBrowserPanels opens every panel issue 26 added, in headless
// Chromium, on the world whose names, bodies, file names, declaration and
// access note carry the XSS corpus: the box page's needs-attention panel,
// last activity and last message columns and 24 h / 7 day charts with
// axes, labels and hover values; the activity feed (rooms and DMs, newest
// first); the board's declaration text, DM excerpt and agent and room
// filters; the message page; the files page with versioning and reports;
// backlog rows with from, where and first words; a newest-first room
// timeline with exact times on hover, sorted members and brief headings no
// larger than the page's; and a not-found page with the navigation for a
// wrong id and a wrong address. Nothing of the corpus runs, the CSP
// reports nothing and the console stays quiet.
func TestBrowserPanels(t *testing.T) {
	s := login(t)
	w := s.w

	// Box: needs attention, last activity, charts.
	box := s.text(`section[data-page="box"]`)
	s.wantAll("box", s.text(`.attention`), "Needs attention", "needs context from bob <img", "Which quarter?", "DM ask",
		"Oldest open request", "unread (not ACKed)", "never shown")
	s.wantAll("box", box, "Last message", "Last activity", "Messages per hour, last 24 h", "Messages per day, last 7 days",
		"Requests per day")
	if n := eval[int](s, `document.querySelectorAll('svg.chart[data-span="24h"]').length * 10 + document.querySelectorAll('svg.chart[data-span="7d"]').length`); n != 22 {
		t.Errorf("box charts: %d (24 h × 10 + 7 d), want two of each", n)
	}
	// The messages chart counts the DMs too: the box's total is the
	// feed's. Axis labels and a value on hover on every bar.
	total := eval[string](s, `document.querySelector('svg.chart[data-span="24h"] g[data-series="messages"]').dataset.total`)
	if total == "0" || total == "" {
		t.Errorf("box 24 h messages total = %q, want the seeded messages", total)
	}
	if got := eval[int](s, `document.querySelector('svg.chart[data-span="24h"]').querySelectorAll("text").length`); got < 6 {
		t.Errorf("24 h chart has %d axis labels, want the peak, 0 and four hour labels", got)
	}
	if got := eval[string](s, `document.querySelector('svg.chart[data-span="24h"] rect:last-of-type title').textContent`); !strings.HasPrefix(got, "messages ") || !strings.Contains(got, "h") {
		t.Errorf("hover value of the last hour = %q, want \"messages N · HHh\"", got)
	}
	if got := eval[string](s, `document.querySelector("td.last-activity time").getAttribute("title")`); !strings.HasSuffix(got, "UTC") {
		t.Errorf("room last activity title = %q, want the exact time", got)
	}
	if got := eval[int](s, `document.querySelectorAll("td.last-message time[datetime]").length`); got < 2 {
		t.Errorf("agents with a last message time: %d, want alice and bob", got)
	}

	// Activity: rooms and DMs, newest first.
	s.open("#activity", `section[data-page="activity"]`)
	feed := s.text(`section[data-page="activity"]`)
	s.wantAll("activity", feed, "DM", "alice", "bob <img", "planning <svg", "Which quarter?", "just between us", "Please review the **parser**")
	if ok := eval[bool](s, `(() => { const t = [...document.querySelectorAll("li.event > time")].map(e => e.getAttribute("datetime")); return t.length > 3 && t.every((x, i) => i == 0 || t[i-1] >= x); })()`); !ok {
		t.Errorf("the activity feed is not newest first")
	}
	if first := eval[string](s, `document.querySelector("li.event").innerText`); !strings.Contains(first, "Which quarter?") {
		t.Errorf("newest event = %q, want alice's needs_context reply", first)
	}
	s.shot("activity")

	// Requests board: declaration text, DM excerpt, filters.
	s.open("#requests", `section[data-page="requests"]`)
	board := s.text(`section[data-page="requests"]`)
	s.wantAll("requests", board, "DM ask <img", "Which quarter? <script>", "Numbers checked.", "Open requests older than 4 h are marked stale", "Filter:")
	s.open("#requests?to="+w.alice.AgentID, `section[data-page="requests"] h2`)
	if h := s.text(`section[data-page="requests"] h2`); h != "Requests board: to alice" {
		t.Errorf("filtered board heading = %q, want \"Requests board: to alice\"", h)
	}
	if got := eval[int](s, `document.querySelectorAll("li.req").length`); got != 2 {
		t.Errorf("requests to alice: %d, want 2 (the numbers and the DM ask)", got)
	}
	s.open("#requests?room="+w.room.RoomID, `section[data-page="requests"] h2`)
	if got := s.text(`section[data-page="requests"]`); strings.Contains(got, "DM ask") || !strings.Contains(got, "Please review") {
		t.Errorf("board filtered by room lists the DM request or lacks the room's: %.300s", got)
	}
	// The excerpt links to the message itself.
	s.open("#requests?to="+w.alice.AgentID, `a.excerpt`)
	s.open("#message/"+w.dmAsk, `section[data-page="message"]`)
	s.wantAll("message", s.text(`section[data-page="message"]`), "DM", "bob <img", "alice", "DM ask")
	s.shot("message")

	// Files: versioning and access reports.
	s.open("#files", `section[data-page="files"]`)
	files := s.text(`section[data-page="files"]`)
	if got := eval[string](s, `document.querySelector("td.version .hash").title`); got != "sha256 "+strings.Repeat("0f", 32) {
		t.Errorf("file hash title = %q, want the whole sha256", got)
	}
	s.wantAll("files", files, "sha256 0f0f0f0f0f0f…", "unversioned", "denied", "403 from the host", "<img src=x", "No reports.")
	s.shot("files")

	// Backlog rows: from, where, first words, link.
	s.open("#agent/"+w.bob.AgentID, `section[data-page="agent"]`)
	row := eval[string](s, `[...document.querySelectorAll("table.backlog tr.row")].map(r => r.innerText).join("\n")`)
	s.wantAll("agent backlog", row, "alice", "planning <svg", "Please review the **parser**", "DM with alice", "just between us")
	if got := eval[int](s, `document.querySelectorAll('table.backlog td.excerpt a[href^="#message/"]').length`); got == 0 {
		t.Errorf("backlog rows link to no message")
	}

	// Room: newest first, exact times, one reply, sorted members, headings.
	s.open("#room/"+w.room.RoomID, `section[data-page="room"]`)
	if ok := eval[bool](s, `(() => { const t = [...document.querySelectorAll("ol.timeline > li.message > .meta > a.when > time")].map(e => e.getAttribute("datetime")); return t.length > 3 && t.every((x, i) => i == 0 || t[i-1] >= x); })()`); !ok {
		t.Errorf("the room timeline is not newest first")
	}
	if got := eval[string](s, `document.querySelector("li.message .meta time").title`); !strings.HasSuffix(got, "UTC") {
		t.Errorf("message time title = %q, want the exact time", got)
	}
	members := eval[[]string](s, `[...document.querySelectorAll("ul.members li bdi")].map(e => e.textContent.toLowerCase())`)
	for i := 1; i < len(members); i++ {
		if members[i-1] > members[i] {
			t.Errorf("members %q are not sorted by name", members)
			break
		}
	}
	if ok := eval[bool](s, `parseFloat(getComputedStyle(document.querySelector(".brief h1")).fontSize) <= parseFloat(getComputedStyle(document.querySelector('section[data-page="room"] h3')).fontSize)`); !ok {
		t.Errorf("the brief's h1 is larger than the page's own headings")
	}

	// A wrong id and a wrong address: not found, with the navigation.
	for _, hash := range []string{"#room/" + uuid.NewString(), "#agent/not-an-id", "#message/" + uuid.NewString(), "#nowhere"} {
		s.open(hash, `section[data-page="notfound"]`)
		if nav := eval[bool](s, `!document.getElementById("nav").hidden && !!document.querySelector('section[data-page="notfound"] a[href="#box"]')`); !nav {
			t.Errorf("%s: the not-found page lacks the navigation", hash)
		}
	}
	s.shot("notfound")
	// Three of the four asked the server, which answered 404.
	s.safe(3)
}
