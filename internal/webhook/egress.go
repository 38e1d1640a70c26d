package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Egress limits.
const (
	ConnectTimeout = 5 * time.Second
	TotalTimeout   = 10 * time.Second
	// MaxResponseBytes is how much of a response body is read (then
	// discarded): only the status is kept.
	MaxResponseBytes = 4 << 10
)

// ErrForbiddenAddress is a dial to an address the guard refuses.
var ErrForbiddenAddress = errors.New("webhook: the endpoint's address is not a public unicast address")

// ErrNotHTTPS is an endpoint URL that is not https.
var ErrNotHTTPS = errors.New("webhook: the endpoint is not an https:// URL")

// blocked are the ranges no delivery may reach, beyond what netip's
// predicates name (loopback, private, link-local, multicast, unspecified).
var blocked = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
	netip.MustParsePrefix("fd00:ec2::254/128"),
	netip.MustParsePrefix("100::/64"),      // discard
	netip.MustParsePrefix("2001:db8::/32"), // documentation
	netip.MustParsePrefix("fec0::/10"),     // deprecated site-local
}

// embedded are IPv6 forms that carry an IPv4 address in their low 32
// bits (IPv4-compatible, NAT64, 6to4 handled apart): a v6 dial to one
// reaches the v4 address, so the v4 address is judged too.
var embedded = []netip.Prefix{
	netip.MustParsePrefix("::/96"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
}

// Forbidden reports whether a delivery must not connect to a: anything
// but a public unicast address, in any notation the socket sees
// (IPv4-mapped, IPv4-compatible, NAT64, 6to4 and zoned forms judged by
// the address they reach).
func Forbidden(a netip.Addr) bool {
	a = a.WithZone("").Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return true
	}
	for _, p := range blocked {
		if p.Contains(a) {
			return true
		}
	}
	if a.Is6() {
		b := a.As16()
		for _, p := range embedded {
			if p.Contains(a) {
				return Forbidden(netip.AddrFrom4([4]byte(b[12:16])))
			}
		}
		if b[0] == 0x20 && b[1] == 0x02 { // 6to4 2002:V4ADDR::/48
			return Forbidden(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	return false
}

// Resolver looks up a host's addresses (net.DefaultResolver in service).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Client posts deliveries through the guard. The zero value is not
// usable; use NewClient.
type Client struct {
	http *http.Client
}

// ClientOptions are for tests: a resolver, a TLS root pool and addresses
// the guard lets through (the test receiver's loopback address). The
// zero value is the production guard; no flag or environment variable
// sets them, only code that builds a dispatcher.
type ClientOptions struct {
	Resolver  Resolver
	TLSConfig *tls.Config
	// Allow lets exactly these address:port pairs through the guard, so a
	// test receiver on loopback can be reached (tests only).
	Allow []netip.AddrPort
}

// NewClient returns the guarded client.
func NewClient(o ClientOptions) *Client {
	res := o.Resolver
	if res == nil {
		res = net.DefaultResolver
	}
	d := &net.Dialer{Timeout: ConnectTimeout, Control: func(_, address string, _ syscall.RawConn) error {
		// The address the socket is about to connect to: what counts.
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return ErrForbiddenAddress
		}
		for _, ok := range o.Allow {
			if ok == ap {
				return nil
			}
		}
		if Forbidden(ap.Addr()) {
			return ErrForbiddenAddress
		}
		return nil
	}}
	tr := &http.Transport{
		Proxy: nil, // never a proxy from the environment
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			var ips []netip.Addr
			if ip, err := netip.ParseAddr(host); err == nil {
				ips = []netip.Addr{ip}
			} else if ips, err = res.LookupNetIP(ctx, "ip", host); err != nil {
				return nil, fmt.Errorf("webhook: resolving the endpoint's host: %w", err)
			}
			var last error = ErrForbiddenAddress
			for _, ip := range ips {
				c, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
				if err == nil {
					return c, nil
				}
				last = err
			}
			return nil, last
		},
		TLSClientConfig:       o.TLSConfig,
		TLSHandshakeTimeout:   ConnectTimeout,
		ResponseHeaderTimeout: TotalTimeout,
		MaxIdleConnsPerHost:   1,
		ForceAttemptHTTP2:     true,
	}
	return &Client{http: &http.Client{Transport: tr, Timeout: TotalTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Post sends body to rawURL with headers and returns the response status
// (a redirect is returned as its status, never followed). Nothing of the
// response but its status leaves this function.
func (c *Client) Post(ctx context.Context, rawURL string, header http.Header, body []byte) (int, error) {
	u, err := url.Parse(rawURL)
	if err != nil || !strings.EqualFold(u.Scheme, "https") || u.Host == "" {
		return 0, ErrNotHTTPS
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return 0, ErrNotHTTPS
	}
	req.Header = header.Clone()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "agentbox-webhook/1")
	resp, err := c.http.Do(req)
	if err != nil {
		if errors.Is(err, ErrForbiddenAddress) {
			return 0, ErrForbiddenAddress
		}
		return 0, errors.New("webhook: the endpoint did not answer")
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, MaxResponseBytes))
	resp.Body.Close()
	return resp.StatusCode, nil
}
