package webhook_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentbox/agentbox/internal/webhook"
)

// systemLike resolves as the C library does: numeric hosts in every
// inet_aton notation (127.1, 0x7f.1, 017700000001, 2130706433) are
// addresses; names are answered from names (a rebinding DNS's private
// answers for a public name). It never touches the network.
type systemLike struct {
	names   map[string][]netip.Addr
	lookups atomic.Int64
}

func (r *systemLike) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.lookups.Add(1)
	host = strings.TrimSuffix(host, ".")
	if a, ok := inetAton(host); ok {
		return []netip.Addr{a}, nil
	}
	if a, ok := r.names[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func inetAton(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 0, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, false
			}
			v |= n << (8 * (3 - i))
		} else {
			if n >= 1<<(8*(4-i)) {
				return netip.Addr{}, false
			}
			v |= n
		}
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// corpusCases are the file-URL corpus's loopback, private, link-local,
// metadata, unspecified and mapped address cases.
func corpusCases(t *testing.T) []string {
	f, err := os.Open("../hub/testdata/file_urls.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line := regexp.MustCompile(`^bad ("[^"]*") (.*)$`)
	want := regexp.MustCompile(`loopback|private|link-local|metadata|unspecified|IPv4-mapped`)
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil || !want.MatchString(m[2]) {
			continue
		}
		u, err := strconv.Unquote(m[1])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, u)
	}
	if len(out) < 25 {
		t.Fatalf("found %d address cases in the corpus, want the 25+ it holds", len(out))
	}
	return out
}

// TestEgressRefusesPrivate: every corpus address form, and a public name
// whose DNS answers a private address in any notation, is refused at
// dial time: nothing connects.
func TestEgressRefusesPrivate(t *testing.T) {
	// A listener on loopback that counts connections: any dial that gets
	// past the guard to 127.0.0.1 would reach it on port 443 only as
	// root, so the guard is also checked through the error.
	res := &systemLike{names: map[string][]netip.Addr{}}
	private := []string{"10.0.0.5", "172.31.255.1", "192.168.0.1", "127.0.0.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
		"::1", "::", "::ffff:127.0.0.1", "::ffff:169.254.169.254", "fd00::1", "fd00:ec2::254", "fe80::1", "fe80::1%eth0",
		"64:ff9b::a9fe:a9fe", "2002:7f00:1::1", "::127.0.0.1", "ff02::1", "224.0.0.1", "255.255.255.255"}
	urls := corpusCases(t)
	for i, p := range private {
		name := "hooks" + strconv.Itoa(i) + ".example.com"
		res.names[name] = []netip.Addr{netip.MustParseAddr(p)}
		urls = append(urls, "https://"+name+"/wake")
	}
	// Rebinding: a public answer first, then a private one: each dialed
	// address is judged, so the second is refused too.
	res.names["rebind.example.com"] = []netip.Addr{netip.MustParseAddr("203.0.113.9"), netip.MustParseAddr("127.0.0.1")}
	urls = append(urls, "https://rebind.example.com/")
	c := webhook.NewClient(webhook.ClientOptions{Resolver: res})
	for _, u := range urls {
		status, err := c.Post(context.Background(), u, http.Header{}, []byte(`{}`))
		if status != 0 || !errors.Is(err, webhook.ErrForbiddenAddress) && !errors.Is(err, webhook.ErrNotHTTPS) {
			t.Errorf("Post %s = %d, %v; want it refused (forbidden address)", u, status, err)
		}
		if errors.Is(err, webhook.ErrNotHTTPS) && !strings.HasPrefix(u, "https://::") {
			t.Errorf("Post %s refused as not https; want the dial-time guard to refuse it", u)
		}
	}
}

// TestForbidden: public unicast passes; the blocked ranges in every form fail.
func TestForbidden(t *testing.T) {
	for _, a := range []string{"8.8.8.8", "1.1.1.1", "2606:4700::1111", "2a00:1450::1", "::ffff:8.8.8.8", "64:ff9b::808:808"} {
		if webhook.Forbidden(netip.MustParseAddr(a)) {
			t.Errorf("Forbidden(%s) = true, want a public address allowed", a)
		}
	}
	for _, a := range []string{"127.0.0.1", "10.1.2.3", "169.254.169.254", "::ffff:10.0.0.1", "fc00::1", "fe80::1%lo", "::", "0.1.2.3", "2002:a00:1::"} {
		if !webhook.Forbidden(netip.MustParseAddr(a)) {
			t.Errorf("Forbidden(%s) = false", a)
		}
	}
}

// TestEgressNoRedirect: a redirect is answered as its status; its target
// is never requested. Plain http is refused before any dial.
func TestEgressNoRedirect(t *testing.T) {
	var followed atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			followed.Add(1)
		}
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	}))
	defer srv.Close()
	o := webhook.ClientOptions{TLSConfig: srv.Client().Transport.(*http.Transport).TLSClientConfig}
	o.AllowForTest(netip.MustParseAddrPort(srv.Listener.Addr().String()))
	c := webhook.NewClient(o)
	status, err := c.Post(context.Background(), srv.URL+"/hook", http.Header{}, []byte(`{}`))
	if err != nil || status != http.StatusFound || followed.Load() != 0 {
		t.Errorf("Post to a redirect = %d, %v, followed %d; want 302 and no request to its target", status, err, followed.Load())
	}
	if _, err := c.Post(context.Background(), "http://example.com/", http.Header{}, nil); !errors.Is(err, webhook.ErrNotHTTPS) {
		t.Errorf("Post http:// = %v, want ErrNotHTTPS", err)
	}
}
