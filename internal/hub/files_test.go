package hub_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// urlCase is one line of testdata/file_urls.txt.
type urlCase struct {
	ok   bool
	url  string
	why  string
	line int
}

func loadURLCorpus(t *testing.T) []urlCase {
	t.Helper()
	fh, err := os.Open("testdata/file_urls.txt")
	if err != nil {
		t.Fatalf("open corpus: %v", err)
	}
	defer fh.Close()
	var out []urlCase
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		verdict, rest, _ := strings.Cut(line, " ")
		quoted, err := strconv.QuotedPrefix(rest)
		if err != nil || (verdict != "ok" && verdict != "bad") {
			t.Fatalf("corpus line %d: malformed", n)
		}
		u, err := strconv.Unquote(quoted)
		if err != nil {
			t.Fatalf("corpus line %d: %v", n, err)
		}
		out = append(out, urlCase{ok: verdict == "ok", url: u, why: strings.TrimSpace(rest[len(quoted):]), line: n})
	}
	if len(out) < 120 {
		t.Fatalf("corpus has %d cases, want at least 120", len(out))
	}
	return out
}

// blockNetwork replaces the process's resolver with one that reaches no
// DNS server and counts the attempts: the hub then runs with no resolver
// reachable, and a validator (or anything else) that resolved a file URL's
// host shows up in the count. Loopback connections by IP literal (the
// DynamoDB emulator) need no resolver. The trap is checked to spring.
func blockNetwork(t *testing.T) (attempts func() int64) {
	t.Helper()
	var n atomic.Int64
	saved := net.DefaultResolver
	net.DefaultResolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
		n.Add(1)
		return nil, errors.New("no network in this test")
	}}
	t.Cleanup(func() { net.DefaultResolver = saved })
	if _, err := net.DefaultResolver.LookupHost(context.Background(), "trap-check.example.com"); err == nil || n.Load() == 0 {
		t.Fatalf("resolver trap did not catch a lookup (err %v)", err)
	}
	n.Store(0)
	return n.Load
}

// wantNoEcho fails when an error envelope repeats the rejected URL.
func wantNoEcho(t *testing.T, call string, err error, u string) {
	t.Helper()
	env := envelope(t, err)
	_, rest, _ := strings.Cut(u, "://")
	if (len(u) >= 6 && strings.Contains(env, u)) || (len(rest) >= 6 && strings.Contains(env, rest)) {
		t.Errorf("%s: error %s echoes the rejected URL", call, env)
	}
}

// TestFileURLCorpus runs every URL of the corpus through message_send,
// request_respond and file_access_report, on both adapters, with no
// resolver reachable: each gets its expected verdict, accepted references
// can be reported on, and no rejection echoes the URL.
func TestFileURLCorpus(t *testing.T) {
	corpus := loadURLCorpus(t)
	attempts := blockNetwork(t)
	defer func() {
		if n := attempts(); n != 0 {
			t.Errorf("the service attempted %d DNS lookups; want none", n)
		}
	}()
	// Serial: blockNetwork swaps net.DefaultResolver, which every test of
	// the process shares; run alongside parallel tests, the swap raced
	// under -race with their lookups (and would count theirs as ours).
	forEachAdapterSerial(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		crA, crB := f.prime(f.a), f.prime(f.b)
		dm := hub.Destination{Kind: hub.KindDM, RecipientAgentID: f.b.AgentID}
		req, err := f.h.MessageSend(f.ctx, crA, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: "req"},
			Destination: dm, BodyMD: "please", Mentions: []string{f.b.AgentID}, Requests: []string{f.b.AgentID}})
		if err != nil {
			t.Fatalf("MessageSend(request): %v", err)
		}
		rev := hub.Revision(0)
		for i, tc := range corpus {
			file := []hub.FileRefInput{{URL: tc.url, DisplayName: "ref", Commit: "0123abc"}}
			key := "u" + strconv.Itoa(i)
			sent, err := f.h.MessageSend(f.ctx, crA, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: key},
				Destination: dm, BodyMD: "see file", Files: file})
			resp, rerr := f.h.RequestRespond(f.ctx, crB, hub.RequestRespondInput{Mutation: hub.Mutation{IdempotencyKey: key},
				RequestMessageID: req.MessageID, ExpectedRevision: rev, Status: hub.StatusResultReady, BodyMD: "done", Files: file})
			if !tc.ok {
				for _, got := range []struct {
					call string
					err  error
				}{{"MessageSend", err}, {"RequestRespond", rerr}} {
					if got.err == nil {
						t.Errorf("line %d (%s): %s accepted %q, want rejected", tc.line, tc.why, got.call, tc.url)
						continue
					}
					if e, _ := apperr.As(got.err); e == nil || (e.Code != apperr.InvalidArgument && e.Code != apperr.LimitExceeded) {
						t.Errorf("line %d (%s): %s = %v, want INVALID_ARGUMENT or LIMIT_EXCEEDED", tc.line, tc.why, got.call, got.err)
					}
					wantNoEcho(t, got.call, got.err, tc.url)
				}
				if rerr == nil {
					rev = resp.Request.Revision
				}
				continue
			}
			if err != nil || rerr != nil {
				t.Errorf("line %d (%s): MessageSend err %v, RequestRespond err %v; want %q accepted", tc.line, tc.why, err, rerr, tc.url)
				continue
			}
			rev = resp.Request.Revision
			got, err := f.h.MessageGet(f.ctx, crB, hub.MessageGetInput{MessageID: sent.MessageID})
			if err != nil || len(got.Message.Files) != 1 || got.Message.Files[0].URL != tc.url || got.Message.Files[0].Versioning != "commit" {
				t.Errorf("line %d: MessageGet = %+v, %v; want the reference stored verbatim, versioning commit", tc.line, got, err)
				continue
			}
			if _, err := f.h.FileAccessReport(f.ctx, crB, hub.FileAccessReportInput{Mutation: hub.Mutation{IdempotencyKey: "f" + key},
				MessageID: sent.MessageID, FileID: got.Message.Files[0].FileID, State: hub.AccessAccessible}); err != nil {
				t.Errorf("line %d: FileAccessReport on an accepted reference: %v", tc.line, err)
			}
		}
	})
}

// TestSendWithFilesReplays: file ids are minted per call, so they must not
// be part of what a retry is compared on — a retry of a send with files is
// a replay, not IDEMPOTENCY_CONFLICT.
func TestSendWithFilesReplays(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		cr := f.prime(f.a)
		in := hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: "files-1"},
			Destination: hub.Destination{Kind: hub.KindDM, RecipientAgentID: f.b.AgentID}, BodyMD: "spec",
			Files: []hub.FileRefInput{{URL: "https://example.com/spec.md", DisplayName: "spec"}}}
		first, err := f.h.MessageSend(f.ctx, cr, in)
		if err != nil {
			t.Fatalf("MessageSend: %v", err)
		}
		again, err := f.h.MessageSend(f.ctx, cr, in)
		if err != nil || !again.Replayed || again.MessageID != first.MessageID {
			t.Errorf("MessageSend retried = %+v, %v; want the original receipt, replayed", again, err)
		}
	})
}
