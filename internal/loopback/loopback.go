// Package loopback holds the DNS-rebinding rule the MCP endpoint and the
// operator view share: a browser page on another origin can resolve its
// own name to 127.0.0.1 and reach a listener on this machine, but its
// requests still carry that name as their Host.
package loopback

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Rebinding reports a request that reached a loopback listener under a
// non-loopback Host: a DNS-rebinding attack from a browser. It is the MCP
// SDK's own rule, applied before anything touches the store.
func Rebinding(r *http.Request) bool {
	return Listener(r) && !Addr(r.Host)
}

// Listener reports whether r reached a loopback listener.
func Listener(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && local != nil && Addr(local.String())
}

// Addr reports whether addr, a host with or without a port, is
// "localhost" or a loopback IP address.
func Addr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
