// Package reqlog carries a request id through a call and gives every
// transport the same structured JSON logger. Nothing secret is ever a log
// attribute: transports log the tool, the outcome code and timings, never
// arguments, keys or session ids.
package reqlog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"regexp"
)

type ctxKey struct{}

// IDKey is the log attribute that carries the request id.
const IDKey = "request_id"

// NewLogger returns the JSON logger every entry point uses. Every line
// logged with a context that carries a request id (With) gets it as
// request_id, so that code deep in a call (the domain, the store) needs no
// id of its own to be joined with its request's other lines; a line that
// sets request_id itself keeps its own.
func NewLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(idHandler{inner: slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})})
}

// idHandler adds the context's request id to every record that lacks one.
type idHandler struct {
	inner slog.Handler
	// hasID: a WithAttrs above already set request_id.
	hasID bool
}

func (h idHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h idHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := ID(ctx); id != "" && !h.hasID {
		has := false
		r.Attrs(func(a slog.Attr) bool {
			has = a.Key == IDKey
			return !has
		})
		if !has {
			r = r.Clone()
			r.AddAttrs(slog.String(IDKey, id))
		}
	}
	return h.inner.Handle(ctx, r)
}

func (h idHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	has := h.hasID
	for _, a := range attrs {
		has = has || a.Key == IDKey
	}
	return idHandler{inner: h.inner.WithAttrs(attrs), hasID: has}
}

func (h idHandler) WithGroup(name string) slog.Handler {
	return idHandler{inner: h.inner.WithGroup(name), hasID: h.hasID}
}

// NewID returns a fresh request id.
func NewID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

var safeID = regexp.MustCompile(`^[A-Za-z0-9._:=+/-]{1,64}$`)

// IDFrom keeps an upstream id (API Gateway's, or a client's X-Request-Id)
// when it is short and plain, so logs can be joined; otherwise it mints
// one. A hostile header cannot inject into logs.
func IDFrom(upstream string) string {
	if safeID.MatchString(upstream) {
		return upstream
	}
	return NewID()
}

// With returns ctx carrying the request id.
func With(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// ID returns the request id in ctx, or "".
func ID(ctx context.Context) string {
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}
