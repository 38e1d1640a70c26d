package opview_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browser starts headless Chromium for one test. A machine without it
// fails with the command that installs it: never a silent skip.
func browser(t *testing.T) (context.Context, func() []string) {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium not found: install it with 'apt-get update && apt-get install -y chromium' (or run 'make test-deps')")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 30*time.Second)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	var mu sync.Mutex
	var errs []string
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning || m.IsException() {
				mu.Lock()
				errs = append(errs, m.String())
				mu.Unlock()
			}
		}
	}()
	return ctx, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), errs...) }
}

// TestBrowser uses the view as a person would: log in with an owner key,
// open every page, see the seeded agents, rooms, requests and chips, and
// see a message sent after the page loaded arrive without a reload — while
// nothing of the XSS corpus runs and the CSP reports nothing. With
// SCREENSHOTS_DIR set it also writes the pages as PNGs (make screenshots).
func TestBrowser(t *testing.T) {
	w := newWorld(t)
	ctx, consoleErrs := browser(t)
	shots := os.Getenv("SCREENSHOTS_DIR")
	shot := func(name string) {
		t.Helper()
		if shots == "" {
			return
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err == nil {
			err = os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644)
		}
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.WaitVisible(sel)); err != nil {
			t.Fatalf("waiting for %s: %v", sel, err)
		}
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("reading %s: %v", sel, err)
		}
		return s
	}
	wantAll := func(page, got string, want ...string) {
		t.Helper()
		for _, s := range want {
			if !strings.Contains(got, s) {
				t.Errorf("%s page lacks %q", page, s)
			}
		}
	}
	open := func(hash, sel string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`location.hash = `+jsString(hash)), chromedp.WaitVisible(sel)); err != nil {
			t.Fatalf("opening %s: %v", hash, err)
		}
	}

	err := chromedp.Do(ctx,
		chromedp.Navigate(w.srv.URL+"/ui/"),
		chromedp.WaitVisible("#key"),
		chromedp.SendKeys("#key", w.owner),
		chromedp.Click(`#login button[type="submit"]`),
		chromedp.WaitVisible(`section[data-page="box"]`),
	)
	if err != nil {
		html, _ := chromedp.Run(context.WithoutCancel(ctx), chromedp.Evaluate[string](`document.documentElement.outerHTML`))
		t.Fatalf("logging in: %v; console %q; page %.2000s", err, consoleErrs(), html)
	}
	stored, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`sessionStorage.getItem("agentbox-owner-key")`))
	url, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + document.cookie`))
	if stored != w.owner || strings.Contains(url, "abo_") {
		t.Errorf("after login: sessionStorage holds the key %t, URL or cookie shows it %t; want the key in sessionStorage only", stored == w.owner, strings.Contains(url, "abo_"))
	}
	box := text(`section[data-page="box"]`)
	wantAll("box", box, "alice", "rita", "bob <img", "planning <svg", "planner", "release space", "Open requests in")
	shot("box")

	open("#room/"+w.room.RoomID, `section[data-page="room"]`)
	room := text(`section[data-page="room"]`)
	wantAll("room", room, "Plan the release.", "Please review the parser", "request → 1", "mentions 1", "1 reply", "follows", "https://example.com/f.md",
		": open")

	// A message sent after the page loaded appears on refresh.
	w.rest(w.bob, "POST", "/v1/messages", map[string]any{"idempotency_key": "late", "body_md": "fresh news from bob",
		"destination": map[string]any{"kind": "room", "room_id": w.room.RoomID}}, 200, nil)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.body.innerText.includes("fresh news from bob")`,
		chromedp.WithPollingTimeout(15*time.Second))); err != nil {
		t.Errorf("the room page did not show a message sent after it loaded: %v", err)
	}
	// Bob accepts alice's request: the recipient's chip shows the
	// declaration (status and revision) on refresh.
	w.rest(w.bob, "POST", "/v1/requests/"+w.reqID+"/respond", map[string]any{"idempotency_key": "acc",
		"expected_revision": "0", "status": "accepted", "body_md": "Accepted."}, 200, nil)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`[...document.querySelectorAll(".chip.decl.status-accepted")].some(e => e.innerText.includes("accepted r1"))`,
		chromedp.WithPollingTimeout(15*time.Second))); err != nil {
		t.Errorf("the room page did not show bob's accepted declaration chip: %v", err)
	}
	shot("room")

	open("#agent/"+w.bob.AgentID, `section[data-page="agent"]`)
	agent := text(`section[data-page="agent"]`)
	wantAll("agent", agent, "Inbox backlog", "request", "mention", "unread", "Requests in", "Please review the **parser**", "accepted r1",
		"hush space", "Direct messages", "alice")
	shot("agent")
	if err := chromedp.Do(ctx, chromedp.Click(`table.dms a`), chromedp.WaitVisible(`section[data-page="dm"]`)); err != nil {
		t.Fatalf("opening the DM from bob's page: %v", err)
	}
	wantAll("dm", text(`section[data-page="dm"]`), "just between us", "alice", "bob")

	open("#requests", `section[data-page="requests"]`)
	board := text(`section[data-page="requests"]`)
	wantAll("requests", board, "open", "accepted", "needs_context", "declined", "result_ready", "alice", "Please review the **parser**", "accepted r1")
	shot("requests")

	_ = chromedp.Do(ctx, chromedp.Sleep(500*time.Millisecond))
	pwned, err := chromedp.Run(ctx, chromedp.Evaluate[string](`typeof window.__pwned`))
	if err != nil {
		t.Fatal(err)
	}
	if pwned != "undefined" {
		t.Errorf("typeof window.__pwned = %q, want undefined: agent text ran in the page", pwned)
	}
	if n := w.csp.Load(); n != 0 {
		t.Errorf("CSP reports = %d, want 0", n)
	}
	if logs := w.logs.String(); strings.Contains(logs, "abo_") || !strings.Contains(logs, "/ui/api/box") {
		t.Errorf("server log holds an owner key %t, logs the view's requests %t; want no key and the requests",
			strings.Contains(logs, "abo_"), strings.Contains(logs, "/ui/api/box"))
	}
	if errs := consoleErrs(); len(errs) != 0 {
		t.Errorf("console errors: %q, want none", errs)
	}
}

func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
