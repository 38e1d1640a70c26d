package server

import "testing"

// TestFramerSplitReads: the framer follows a stream however the reads
// split it — here one byte at a time — and marks only the header block
// that carries both Content-Length and Transfer-Encoding.
func TestFramerSplitReads(t *testing.T) {
	const get = "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
	for _, tc := range []struct {
		name   string
		stream string
		want   bool
	}{
		{"chunked, then a GET", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n10;e=1\r\n0123456789abcdef\r\n0\r\nT: 1\r\n\r\n" + get, false},
		{"length, then a GET", "POST / HTTP/1.1\r\nContent-Length: 12\r\n\r\nTransfer-Enc" + get, false},
		{"a body that looks like headers", "POST / HTTP/1.1\r\nContent-Length: 44\r\n\r\nGET / HTTP/1.1\r\nContent-Length: 1\r\nTE: x\r\n\r\n" + get, false},
		{"both, after a GET", get + "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n", true},
	} {
		var f framer
		got := false
		for i := range len(tc.stream) {
			got = f.feed([]byte{tc.stream[i]}) || got
		}
		if got != tc.want || (!tc.want && (f.state != inHeader || f.started)) {
			t.Errorf("framer over %s (byte by byte): ambiguous %v, state %d; want %v, back at a header block", tc.name, got, f.state, tc.want)
		}
	}
}

// TestFramerUnfollowable: framing the framer cannot follow marks the
// connection.
func TestFramerUnfollowable(t *testing.T) {
	for _, stream := range []string{
		"POST / HTTP/1.1\r\nContent-Length:\r\n 5\r\n\r\nhello",
		"POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n",
		"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX\r\n",
	} {
		var f framer
		if !f.feed([]byte(stream)) {
			t.Errorf("framer over %q: not marked, want marked", stream)
		}
	}
}
