package server

// Refusing ambiguous request framing.
//
// A request with both Content-Length and Transfer-Encoding can be framed
// two ways: a proxy in front that trusts Content-Length and net/http,
// which follows Transfer-Encoding (RFC 9112 §6.3) and drops the
// Content-Length header before a handler sees it, disagree on where the
// body ends, and what one takes for body the other answers as a second,
// smuggled request. RFC 9112 lets a server refuse such a message and
// close the connection, and agentbox serve, which teams may put behind
// their own proxy, does.
//
// A handler cannot tell (the header is gone), so each accepted connection
// is read through a framer that follows the HTTP/1.1 message framing of
// what the server reads — header block, then a body of Content-Length
// bytes or of chunks — and marks the connection once a header block
// carries both. The server reads ahead, so by the time a request's handler
// runs its header block has passed the framer; a marked connection's
// request is answered 400 with Connection: close, and net/http closes the
// connection after that answer, so nothing read behind it is served.
// Framing the framer cannot follow (a malformed length or chunk, an
// oversized line, a folded header line) marks the connection too: net/http
// refuses most of it anyway, and what it would accept (a folded
// Content-Length) is exactly what could hide a second framing.

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/rest"
)

// framedListener wraps each accepted connection in a framedConn.
type framedListener struct{ net.Listener }

func (l framedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &framedConn{Conn: c}, nil
}

// framedConn follows the framing of what is read from it.
type framedConn struct {
	net.Conn
	f framer
	// ambiguous is set once a header block carried both Content-Length
	// and Transfer-Encoding.
	ambiguous atomic.Bool
}

func (c *framedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && c.f.feed(p[:n]) {
		c.ambiguous.Store(true)
	}
	return n, err
}

type framingState int

const (
	inHeader framingState = iota
	inBody
	inChunkSize
	inChunkData
	inChunkEnd
	inTrailer
	lost
)

// maxFramingLine bounds a line the framer holds: past net/http's own bound
// on a header block, the server refuses the request itself.
const maxFramingLine = maxHeaderBytes + 4096

// framer is the framing state of one connection's byte stream.
type framer struct {
	state   framingState
	line    []byte
	started bool // the request line of the current header block was read
	cl, te  bool
	clValue int64
	left    int64 // bytes left of a body or chunk
}

// feed advances over b and reports whether a header block that ended in
// it carried both Content-Length and Transfer-Encoding, or the framing
// could no longer be followed.
func (f *framer) feed(b []byte) (ambiguous bool) {
	defer func() { ambiguous = ambiguous || f.state == lost }()
	for len(b) > 0 && f.state != lost {
		switch f.state {
		case inBody, inChunkData:
			n := min(int64(len(b)), f.left)
			f.left -= n
			b = b[n:]
			if f.left == 0 {
				if f.state == inBody {
					f.state = inHeader
				} else {
					f.state = inChunkEnd
				}
			}
			continue
		}
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			f.line = append(f.line, b...)
			b = nil
		} else {
			f.line = append(f.line, b[:i]...)
			b = b[i+1:]
		}
		if len(f.line) > maxFramingLine {
			f.state = lost
			return ambiguous
		}
		if i < 0 {
			return ambiguous
		}
		line := bytes.TrimSuffix(f.line, []byte("\r"))
		if f.takeLine(line) {
			ambiguous = true
		}
		f.line = f.line[:0]
	}
	return ambiguous
}

// takeLine takes one complete line (without its end) in the current state,
// and reports an ambiguous header block when it ends one.
func (f *framer) takeLine(l []byte) bool {
	switch f.state {
	case inHeader:
		if !f.started {
			// An empty line before the request line frames nothing.
			f.started = len(l) > 0
			return false
		}
		if len(l) > 0 {
			name, value, ok := bytes.Cut(l, []byte(":"))
			if l[0] == ' ' || l[0] == '\t' || !ok {
				// A folded or malformed header line.
				f.state = lost
				return false
			}
			switch string(bytes.ToLower(bytes.TrimSpace(name))) {
			case "content-length":
				f.cl = true
				v, err := strconv.ParseInt(string(bytes.TrimSpace(value)), 10, 64)
				if err != nil || v < 0 {
					f.state = lost
				}
				f.clValue = v
			case "transfer-encoding":
				f.te = true
			}
			return false
		}
		both := f.cl && f.te
		switch {
		case f.state == lost:
		case both:
			// The server refuses it and closes: nothing after it is
			// framed again.
			f.state = lost
		case f.te:
			f.state = inChunkSize
		case f.cl && f.clValue > 0:
			f.state, f.left = inBody, f.clValue
		}
		f.started, f.cl, f.te, f.clValue = false, false, false, 0
		return both
	case inChunkSize:
		size, _, _ := bytes.Cut(l, []byte(";"))
		n, err := strconv.ParseInt(string(bytes.TrimSpace(size)), 16, 64)
		switch {
		case err != nil || n < 0:
			f.state = lost
		case n == 0:
			f.state = inTrailer
		default:
			f.state, f.left = inChunkData, n
		}
	case inChunkEnd:
		if len(l) != 0 {
			f.state = lost
			return false
		}
		f.state = inChunkSize
	case inTrailer:
		if len(l) == 0 {
			f.state = inHeader
		}
	}
	return false
}

type framedConnKey struct{}

// framedConnContext is the http.Server's ConnContext: it makes the
// connection's framer known to refuseAmbiguous.
func framedConnContext(ctx context.Context, c net.Conn) context.Context {
	if fc, ok := c.(*framedConn); ok {
		return context.WithValue(ctx, framedConnKey{}, fc)
	}
	return ctx
}

// refuseAmbiguous answers a request on a connection whose framing became
// ambiguous with 400 and closes the connection after it.
func refuseAmbiguous(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fc, ok := r.Context().Value(framedConnKey{}).(*framedConn); ok && fc.ambiguous.Load() {
			w.Header().Set("Connection", "close")
			rest.WriteError(w, http.StatusBadRequest, apperr.New(apperr.InvalidArgument,
				"A request may not carry both Content-Length and Transfer-Encoding."))
			return
		}
		next.ServeHTTP(w, r)
	})
}
