// Package opview is the operator view: a read-only web page, served at
// /ui/, where a team watches one box's agents coordinate (issue 15).
//
// # Design note
//
// The page is a static shell (index.html, app.js, app.css) plus HTML
// fragments rendered on the server with html/template from the view's read
// model (Model, readmodel.go), which reads the table through the owner's
// read scope (hub.OwnerScope). The shell holds no data: app.js asks for the
// owner key once, keeps it in sessionStorage (this tab only), and fetches
// fragments from /ui/api/... with 'Authorization: Bearer <key>' every few
// seconds; the key is never in a URL or a cookie, and nothing logs it.
//
// Everything agents write is untrusted. Text goes through html/template's
// escaping; Markdown (bodies, briefs) through goldmark with raw HTML off,
// then bluemonday with a policy that keeps text formatting and links only
// (no images, styles or scripts; links get rel="nofollow noreferrer
// noopener"); bidi override characters are removed everywhere, so a name
// cannot reorder the text around it. The server never fetches a URL an
// agent wrote: file references are shown as text links. A strict CSP
// (no inline script or style, default-src 'self', frame-ancestors 'none')
// stands behind all of this, and its violation reports are counted at
// /ui/csp-report so tests can prove none occur.
//
// The Host rule is the one of /mcp (a loopback listener answers only to a
// loopback Host: no DNS rebinding), re-implemented here because
// internal/mcpserver keeps it unexported; an Origin header, when present,
// must be the page's own origin.
package opview

import (
	"context"
	"embed"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/bearer"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/limits"
	"github.com/agentbox/agentbox/internal/loopback"
	"github.com/agentbox/agentbox/internal/rest"
)

//go:embed static
var static embed.FS

// Prefix is where the view is mounted.
const Prefix = "/ui/"

// CSP is the view's Content-Security-Policy.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; object-src 'none'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'; report-uri /ui/csp-report"

// Routes are the view's API Gateway routes, for the template generator:
// one function serves them all with New's handler (wrapped by lambdahttp).
// A greedy {proxy+} needs at least one segment, so on the stack the page's
// address is /ui/index.html; /ui/ serves the same shell locally.
var Routes = []string{"GET /ui/{proxy+}", "POST /ui/csp-report"}

// Handler serves the operator view.
type Handler struct {
	h          *hub.Hub
	log        *slog.Logger
	mux        *http.ServeMux
	cspReports atomic.Int64
	// authFail counts failed owner-key authentications per source, and
	// cspLimit CSP reports per client address, both like the REST
	// transport's failed authentications (rest/authlimit.go): in memory,
	// per instance; nil when the hub runs without limits.
	authFail, cspLimit *limits.Local
	// cspLogged is when a CSP report was last logged (Unix ns).
	cspLogged atomic.Int64
}

// cspReportMaxBytes bounds a CSP report's body; cspLogEvery bounds how
// often reports are logged (they are anonymous: one line each would let
// anyone write the log).
const (
	cspReportMaxBytes = 8 << 10
	cspLogEvery       = time.Minute
)

// New returns the view's handler over h, to be mounted at Prefix.
func New(h *hub.Hub, log *slog.Logger) *Handler {
	v := &Handler{h: h, log: log, mux: http.NewServeMux()}
	if cfg := h.LimitConfig(); cfg != nil {
		v.authFail, v.cspLimit = limits.NewLocal(cfg.AuthFailures), limits.NewLocal(cfg.AuthFailures)
	}
	v.mux.HandleFunc("GET /ui/{$}", v.file("static/index.html", "text/html; charset=utf-8"))
	v.mux.HandleFunc("GET /ui/index.html", v.file("static/index.html", "text/html; charset=utf-8"))
	v.mux.HandleFunc("GET /ui/app.js", v.file("static/app.js", "text/javascript; charset=utf-8"))
	v.mux.HandleFunc("GET /ui/compose.js", v.file("static/compose.js", "text/javascript; charset=utf-8"))
	v.mux.HandleFunc("GET /ui/app.css", v.file("static/app.css", "text/css; charset=utf-8"))
	v.mux.HandleFunc("GET /ui/favicon.svg", v.file("static/favicon.svg", "image/svg+xml"))
	v.mux.HandleFunc("POST /ui/csp-report", v.report)
	v.mux.HandleFunc("GET /ui/api/box", v.api(v.box))
	v.mux.HandleFunc("GET /ui/api/requests", v.api(v.requests))
	v.mux.HandleFunc("GET /ui/api/room/{id}", v.api(v.room))
	v.mux.HandleFunc("GET /ui/api/agent/{id}", v.api(v.agent))
	v.mux.HandleFunc("GET /ui/api/dm/{a}/{b}", v.api(v.dm))
	v.mux.HandleFunc("GET /ui/api/activity", v.api(v.activity))
	v.mux.HandleFunc("GET /ui/api/files", v.api(v.files))
	v.mux.HandleFunc("GET /ui/api/message/{id}", v.api(v.message))
	v.mux.HandleFunc(PostRoute, v.post) // compose.go
	return v
}

// CSPReports is how many CSP violation reports the view has received.
func (v *Handler) CSPReports() int64 { return v.cspReports.Load() }

func (v *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	h := sw.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	switch {
	case loopback.Rebinding(r):
		http.Error(sw, "Forbidden: invalid Host header.", http.StatusForbidden)
	case !sameOrigin(r):
		http.Error(sw, "Forbidden: cross-origin request.", http.StatusForbidden)
	default:
		v.mux.ServeHTTP(sw, r)
	}
	// The path only: never the query, a header or the key.
	v.log.InfoContext(r.Context(), "ui", "method", r.Method, "path", r.URL.Path, "status", sw.status,
		"duration_ms", time.Since(start).Milliseconds())
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) { s.status = code; s.ResponseWriter.WriteHeader(code) }

func (v *Handler) file(name, ctype string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		b, err := static.ReadFile(name)
		if err != nil {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", ctype)
		_, _ = w.Write(b)
	}
}

// report counts a CSP violation report. Anyone may send one: each client
// address is limited like failed authentications, the body is read to at
// most cspReportMaxBytes and never logged (it may quote page content), and
// reports are logged at most once per cspLogEvery, with the count so far.
func (v *Handler) report(w http.ResponseWriter, r *http.Request) {
	if v.cspLimit != nil {
		if ok, wait := v.cspLimit.Allow(limits.AuthSources(r.RemoteAddr, "")[0], time.Now()); !ok {
			tooMany(w, wait, "Too many CSP reports from this address.")
			return
		}
	}
	if _, err := io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, cspReportMaxBytes)); err != nil {
		http.Error(w, "Report too large.", http.StatusRequestEntityTooLarge)
		return
	}
	n := v.cspReports.Add(1)
	now := time.Now().UnixNano()
	if last := v.cspLogged.Load(); now-last >= int64(cspLogEvery) && v.cspLogged.CompareAndSwap(last, now) {
		v.log.WarnContext(r.Context(), "ui csp violation report", "reports", n)
	}
	w.WriteHeader(http.StatusNoContent)
}

// tooMany answers 429 with Retry-After.
func tooMany(w http.ResponseWriter, wait time.Duration, msg string) {
	w.Header().Set("Retry-After", strconv.Itoa(limits.RetryAfter(wait)))
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write([]byte(string(apperr.RateLimited) + ": " + msg))
}

// api wraps a fragment renderer with owner-key authentication.
func (v *Handler) api(render func(ctx context.Context, ov *Model, r *http.Request) (string, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var ov *Model
		err := v.authenticated(w, r, func(key string) (err error) {
			ov, err = Open(r.Context(), v.h, key)
			return err
		})
		if errors.Is(err, errAnswered) {
			return
		}
		var out string
		if err == nil {
			out, err = render(r.Context(), ov, r)
		}
		if err != nil {
			v.refuse(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(out))
	}
}

// errAnswered is authenticated's report that it answered the request
// itself (429).
var errAnswered = errors.New("opview: answered")

// authenticated presents the request's Bearer owner key to use. A guessed
// owner key costs a store read: failures are limited per source before the
// hub is asked (rest/authlimit.go), and every AUTH_FAILED is charged.
func (v *Handler) authenticated(w http.ResponseWriter, r *http.Request, use func(key string) error) error {
	key, err := bearer.Key(r.Header)
	ok := err == nil && key != ""
	sources := limits.AuthSources(r.RemoteAddr, hub.PresentedOwnerKeyID(key))
	if v.authFail != nil {
		now := time.Now()
		for _, src := range sources {
			if blocked, wait := v.authFail.Blocked(src, now); blocked {
				tooMany(w, wait, "Too many failed authentications from this source; nothing was done.")
				return errAnswered
			}
		}
	}
	if !ok {
		err = apperr.New(apperr.AuthFailed, "Authentication failed.")
	} else {
		err = use(key)
	}
	if e, isApp := apperr.As(err); isApp && e.Code == apperr.AuthFailed && v.authFail != nil {
		now := time.Now()
		for _, src := range sources {
			v.authFail.Charge(src, now)
		}
	}
	return err
}

// refuse answers a failed request: its code and message as plain text,
// never the rejected value.
func (v *Handler) refuse(w http.ResponseWriter, r *http.Request, err error) {
	e := apperr.Normalize(err)
	status := http.StatusInternalServerError
	switch e.Code {
	case apperr.AuthFailed:
		status = http.StatusUnauthorized
		w.Header().Set("WWW-Authenticate", "Bearer")
	case apperr.NotFoundOrForbidden:
		status = http.StatusNotFound
	case apperr.CursorInvalid:
		status = http.StatusBadRequest
	default: // the post's refusals (compose.go), as REST answers them
		status = rest.Status(e.Code)
	}
	if status == http.StatusInternalServerError {
		v.log.ErrorContext(r.Context(), "ui request failed", "err", err)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(string(e.Code) + ": " + e.Message))
}

// sameOrigin accepts a request without Origin (a navigation, a same-origin
// GET) or with the page's own origin.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}

// The lists' cursors travel in the query string (opaque, bound to the box
// and list by the hub; they grant nothing without the owner key).

func (v *Handler) box(ctx context.Context, ov *Model, r *http.Request) (string, error) {
	q := r.URL.Query()
	b, err := ov.Box(ctx, BoxCursors{Agents: q.Get("agents"), Rooms: q.Get("rooms"), Spaces: q.Get("spaces")})
	if err != nil {
		return "", err
	}
	return render("box", b)
}

func (v *Handler) requests(ctx context.Context, ov *Model, r *http.Request) (string, error) {
	q := r.URL.Query()
	b, err := ov.Requests(ctx, BoardFilter{Cursor: q.Get("cursor"), To: q.Get("to"), From: q.Get("from"), Room: q.Get("room")})
	if err != nil {
		return "", err
	}
	return render("requests", b)
}

func (v *Handler) room(ctx context.Context, ov *Model, r *http.Request) (string, error) {
	q := r.URL.Query()
	p, err := ov.Room(ctx, r.PathValue("id"), RoomCursors{Older: q.Get("older"), Members: q.Get("members")})
	if err != nil {
		return "", err
	}
	return render("room", p)
}

func (v *Handler) agent(ctx context.Context, ov *Model, r *http.Request) (string, error) {
	q := r.URL.Query()
	p, err := ov.Agent(ctx, r.PathValue("id"), AgentCursors{Inbox: q.Get("inbox"), In: q.Get("in"), Out: q.Get("out"),
		Private: q.Get("private"), Peers: q.Get("peers"), AllRows: q.Get("rows") == "all"})
	if err != nil {
		return "", err
	}
	return render("agent", p)
}

func (v *Handler) dm(ctx context.Context, ov *Model, r *http.Request) (string, error) {
	p, err := ov.DM(ctx, r.PathValue("a"), r.PathValue("b"), r.URL.Query().Get("older"))
	if err != nil {
		return "", err
	}
	return render("dm", p)
}

func (v *Handler) activity(ctx context.Context, ov *Model, r *http.Request) (string, error) {
	a, err := ov.Activity(ctx, r.URL.Query().Get("older"))
	if err != nil {
		return "", err
	}
	return render("activity", a)
}

func (v *Handler) files(ctx context.Context, ov *Model, r *http.Request) (string, error) {
	f, err := ov.Files(ctx, r.URL.Query().Get("older"))
	if err != nil {
		return "", err
	}
	return render("files", f)
}

func (v *Handler) message(ctx context.Context, ov *Model, r *http.Request) (string, error) {
	m, err := ov.Message(ctx, r.PathValue("id"))
	if err != nil {
		return "", err
	}
	return render("messagepage", m)
}

var errTemplate = errors.New("opview: template")
