package opview_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/limits"
	"github.com/agentbox/agentbox/internal/opview"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/bolt"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// limitedView is the view over a hub with the default limits but a burst
// of 3 failed authentications, and what its store and log saw.
func limitedView(t *testing.T) (srv *httptest.Server, st *teststores.Counting, warns *atomic.Int64, owner string) {
	t.Helper()
	raw, err := bolt.Open(filepath.Join(t.TempDir(), "db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = raw.Close() })
	st = teststores.NewCounting(raw)
	cfg := limits.Default()
	cfg.AuthFailures = limits.Rate{PerSecond: 0.001, Burst: 3}
	warns = &atomic.Int64{}
	log := slog.New(countingHandler{Handler: slog.DiscardHandler, n: warns, log: &lockedLog{}})
	h := hub.New(store.Store(st), hub.Options{Logger: log, Limits: &cfg})
	box, err := h.Admin().CreateBox(context.Background(), "b")
	if err != nil {
		t.Fatal(err)
	}
	k, err := h.Admin().CreateOwnerKey(context.Background(), box.BoxID)
	if err != nil {
		t.Fatal(err)
	}
	srv = httptest.NewServer(opview.New(h, log))
	t.Cleanup(srv.Close)
	return srv, st, warns, k.Key
}

func get(t *testing.T, url, key string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// TestOwnerKeyFailuresLimited: wrong owner keys are answered 401 up to the
// failed-authentication burst, then 429 with Retry-After before the store
// is read: for that key id, and (for keys that do not parse) for that
// address.
func TestOwnerKeyFailuresLimited(t *testing.T) {
	srv, st, _, owner := limitedView(t)
	wrong := owner[:len(owner)-4] + "AAAA" // the right key id, a wrong secret
	for i := range 3 {
		if resp := get(t, srv.URL+"/ui/api/box", wrong); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("GET /ui/api/box with wrong owner key #%d = %d, want 401", i+1, resp.StatusCode)
		}
	}
	st.Reset()
	resp := get(t, srv.URL+"/ui/api/box", wrong)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("GET /ui/api/box after 3 failures = %d (Retry-After %q), want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if n := st.Reset(); n != 0 {
		t.Errorf("a refused owner key cost %d store round trips, want none", n)
	}
	// A well-formed key's failures count against its key id only; keys
	// that do not parse count against the address.
	for i := range 3 {
		if resp := get(t, srv.URL+"/ui/api/box", "abo_garbage"); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("GET /ui/api/box with a malformed key #%d = %d, want 401", i+1, resp.StatusCode)
		}
	}
	if resp := get(t, srv.URL+"/ui/api/box", "abo_garbage"); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("GET /ui/api/box with a malformed key after 3 from this address = %d, want 429", resp.StatusCode)
	}
}

// TestCSPReportsBounded: anonymous CSP reports are limited per address
// like failed authentications, their bodies are bounded, and they are not
// logged one line each.
func TestCSPReportsBounded(t *testing.T) {
	srv, _, warns, _ := limitedView(t)
	post := func(body string) int {
		resp, err := http.Post(srv.URL+"/ui/csp-report", "application/csp-report", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(strings.Repeat("x", 64<<10)); code != http.StatusRequestEntityTooLarge {
		t.Errorf("POST /ui/csp-report with 64 KiB = %d, want 413", code)
	}
	for i := range 2 {
		if code := post(`{"csp-report":{}}`); code != http.StatusNoContent {
			t.Fatalf("POST /ui/csp-report #%d = %d, want 204", i+2, code)
		}
	}
	for i := range 5 {
		if code := post(`{"csp-report":{}}`); code != http.StatusTooManyRequests {
			t.Errorf("POST /ui/csp-report #%d past the burst = %d, want 429", i+4, code)
		}
	}
	if n := warns.Load(); n != 1 {
		t.Errorf("8 CSP reports logged %d warning lines, want 1", n)
	}
}
