package admincli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/strictjson"
)

// The admin socket protocol is HTTP/1.1 over a unix socket: one
// POST /admin with a JSON Request, answered by one JSON Response. HTTP
// rather than a bespoke framing buys request size limits, timeouts and
// graceful shutdown from net/http on both ends for free.
//
// Authority. Whoever can connect to the socket is the owner: it is created
// mode 0600 inside the data directory (0700), the same protection as the
// database file it stands in for. Nothing else authenticates a request.

// SocketName is the admin socket's file name inside the data directory.
const SocketName = "admin.sock"

// socketPath is the URL path of the one admin endpoint.
const socketPath = "/admin"

// maxRequestBytes bounds one socket request: a File flag's contents plus
// the envelope.
const maxRequestBytes = maxFileBytes + 64<<10

// Response is the socket's answer: exactly one of Result and Error is set.
type Response struct {
	Result json.RawMessage  `json:"result,omitempty"`
	Error  *apperr.Envelope `json:"error,omitempty"`
	// Cause is internal detail for the owner (see failure).
	Cause string `json:"cause,omitempty"`
}

// SocketHandler serves admin commands over the socket; the local server
// mounts it on <data>/admin.sock. Each command is logged with its name and
// outcome code only: arguments (profile documents) and results (keys) never
// reach the log.
func SocketHandler(a *hub.Admin, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+socketPath, func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		var req Request
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequestBytes))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			writeResponse(w, http.StatusBadRequest, failure(apperr.Invalid("", "admin request must be a JSON object {command, args}")))
			return
		}
		res := run(r.Context(), a, req)
		status := http.StatusOK
		code := "OK"
		if res.Error != nil {
			status, code = http.StatusUnprocessableEntity, string(res.Error.Code)
			if res.Error.Code == apperr.StorageFailure || res.Error.Code == apperr.TemporarilyUnavailable {
				status = http.StatusServiceUnavailable
				log.ErrorContext(r.Context(), "admin command failed", "command", req.Command, "cause", res.Cause)
			}
		}
		log.InfoContext(r.Context(), "admin command", "command", req.Command, "code", code,
			"duration_ms", time.Since(start).Milliseconds())
		writeResponse(w, status, res)
	})
	return mux
}

func writeResponse(w http.ResponseWriter, status int, res Response) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // the result must print the same on both paths
	_ = enc.Encode(res)
}

// run executes req and renders its outcome as a Response.
func run(ctx context.Context, a *hub.Admin, req Request) Response {
	out, err := Execute(ctx, a, req)
	if err != nil {
		return failure(err)
	}
	b, err := strictjson.Marshal(out)
	if err != nil {
		return failure(fmt.Errorf("admincli: render result: %w", err))
	}
	return Response{Result: b}
}

// failure renders err. The cause, which the envelope deliberately hides from
// agents, is kept for the owner: the admin plane is trusted, and "could not
// be completed" alone would leave them guessing (wrong region, no
// credentials, unreadable file).
func failure(err error) Response {
	e := apperr.Normalize(err)
	env := e.Envelope()
	res := Response{Error: &env}
	if cause := errors.Unwrap(e); cause != nil {
		res.Cause = cause.Error()
	}
	return res
}

// Listen creates the admin socket in dataDir, replacing a stale one, and
// restricts it to the owner. The caller must already hold the store's
// exclusive lock: that is what proves no other server is using the socket,
// so removing an existing file cannot cut off a live server.
func Listen(dataDir string) (net.Listener, error) {
	path := filepath.Join(dataDir, SocketName)
	// sockaddr_un holds 108 bytes including the terminating NUL; the kernel
	// error for a longer path ("invalid argument") names no cause.
	if len(path) > 107 {
		return nil, fmt.Errorf("admincli: socket path %s is longer than 107 bytes; use a shorter --data directory", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("admincli: remove stale socket: %w", err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("admincli: listen on %s: %w", path, err)
	}
	// The data directory is 0700 already; 0600 keeps the socket private
	// even when someone loosens the directory.
	if err := os.Chmod(path, 0o600); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("admincli: chmod socket: %w", err)
	}
	return ln, nil
}

// errNoServer reports that the database is locked but nobody answers on
// the socket: another CLI command holds it, or a server is starting or
// stopping.
var errNoServer = errors.New("admincli: the database is locked by another process and no server answers on its admin socket")

// sendSocket delivers req to the server listening on sock and returns its
// Response.
func sendSocket(ctx context.Context, sock string, req Request) (Response, error) {
	client := &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", sock)
			},
			DisableKeepAlives: true,
		},
	}
	body, err := json.Marshal(req)
	if err != nil {
		return Response{}, fmt.Errorf("admincli: encode request: %w", err)
	}
	// The host is ignored by the unix dialer; it only names the peer in
	// errors.
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://agentbox-admin"+socketPath, bytes.NewReader(body))
	if err != nil {
		return Response{}, fmt.Errorf("admincli: build request: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(hreq)
	if err != nil {
		return Response{}, fmt.Errorf("%w: %w", errNoServer, err)
	}
	defer resp.Body.Close()
	var res Response
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&res); err != nil {
		return Response{}, fmt.Errorf("admincli: read socket response (HTTP %d): %w", resp.StatusCode, err)
	}
	if (res.Result == nil) == (res.Error == nil) {
		return Response{}, fmt.Errorf("admincli: malformed socket response (HTTP %d)", resp.StatusCode)
	}
	return res, nil
}
