package server_test

import (
	"context"
	"io"
	"net"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

var statusLine = regexp.MustCompile(`HTTP/1\.1 \d{3} `)

// TestAmbiguousFramingRefused sends requests over one raw connection: a
// POST with both Content-Length and Transfer-Encoding, with a second
// request smuggled behind its chunked body, is answered 400 and the
// connection is closed, so the smuggled GET is never answered. Plain
// chunked and Content-Length bodies keep the connection and its pipelined
// requests working.
func TestAmbiguousFramingRefused(t *testing.T) {
	s := start(t, t.TempDir())
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	u, err := url.Parse(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	const healthz = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
	// The last request of each connection asks to close it, so that every
	// answer is read when the connection ends.
	const lastHealthz = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	body := "{}"
	for _, tc := range []struct {
		name    string
		request string
		want    []string // status lines, in order, then the connection ends
	}{
		{"ContentLengthAndChunked",
			"POST /v1/agent/prime HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 44\r\nTransfer-Encoding: chunked\r\n\r\n" +
				"0\r\n\r\n" + lastHealthz,
			[]string{"HTTP/1.1 400 "}},
		{"ChunkedThenContentLength",
			"POST /v1/agent/prime HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\ncontent-length: 5\r\n\r\n" +
				"0\r\n\r\n" + lastHealthz,
			[]string{"HTTP/1.1 400 "}},
		{"ChunkedAlone",
			"POST /v1/agent/prime HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
				"2;x=y\r\n" + body + "\r\n0\r\nX-Trailer: t\r\n\r\n" + healthz + lastHealthz,
			[]string{"HTTP/1.1 401 ", "HTTP/1.1 200 ", "HTTP/1.1 200 "}},
		{"ContentLengthAlone",
			"POST /v1/agent/prime HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n" + body + lastHealthz,
			[]string{"HTTP/1.1 401 ", "HTTP/1.1 200 "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", u.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := io.WriteString(c, tc.request); err != nil {
				t.Fatal(err)
			}
			_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
			// The server closes the connection after the last answer:
			// reading to the end returns, every answer read.
			got, err := io.ReadAll(c)
			if err != nil {
				t.Fatalf("reading the answers: %v (read %q)", err, got)
			}
			status := statusLine.FindAllString(string(got), -1)
			if strings.Join(status, "|") != strings.Join(tc.want, "|") {
				t.Errorf("answers on one connection = %q, want %q", status, tc.want)
			}
		})
	}
}
