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

// NewLogger returns the JSON logger every entry point uses.
func NewLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
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
