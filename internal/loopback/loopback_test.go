package loopback_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentbox/agentbox/internal/loopback"
)

func TestAddr(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"localhost", true},
		{"localhost:8080", true},
		{"127.0.0.1", true},
		{"127.0.0.2:80", true},
		{"[::1]:80", true},
		{"[::1]", true},
		{"::1", true},
		{"::ffff:127.0.0.1", true},
		{"example.com", false},
		{"example.com:80", false},
		{"10.0.0.1:80", false},
		{"[2001:db8::1]:443", false},
		{"", false},
		{"localhost.example.com", false},
	} {
		if got := loopback.Addr(tc.addr); got != tc.want {
			t.Errorf("Addr(%q) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}

func TestRebinding(t *testing.T) {
	t.Parallel()
	on := func(local, host string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Host = host
		if local != "" {
			addr, err := net.ResolveTCPAddr("tcp", local)
			if err != nil {
				t.Fatal(err)
			}
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.Addr(addr)))
		}
		return r
	}
	for _, tc := range []struct {
		local, host    string
		listener, want bool
	}{
		{"127.0.0.1:8080", "evil.example:8080", true, true},
		{"127.0.0.1:8080", "localhost:8080", true, false},
		{"127.0.0.1:8080", "127.0.0.1:8080", true, false},
		{"[::1]:8080", "[::1]:8080", true, false},
		{"10.0.0.5:443", "agentbox.example", false, false},
		{"", "evil.example", false, false},
	} {
		r := on(tc.local, tc.host)
		if got := loopback.Listener(r); got != tc.listener {
			t.Errorf("Listener(local %q) = %v, want %v", tc.local, got, tc.listener)
		}
		if got := loopback.Rebinding(r); got != tc.want {
			t.Errorf("Rebinding(local %q, Host %q) = %v, want %v", tc.local, tc.host, got, tc.want)
		}
	}
}
