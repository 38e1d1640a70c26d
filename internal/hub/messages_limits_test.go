package hub_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
	"github.com/google/uuid"
)

// TestMessageLimits sends at every bound and one past it.
func TestMessageLimits(t *testing.T) {
	deep := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	file := func(i int) hub.FileRefInput {
		return hub.FileRefInput{URL: fmt.Sprintf("https://github.com/acme/repo/blob/main/f%d.md", i), DisplayName: fmt.Sprintf("f%d.md", i)}
	}
	files := func(n int) []hub.FileRefInput {
		out := make([]hub.FileRefInput, n)
		for i := range out {
			out[i] = file(i)
		}
		return out
	}
	envelopePad := 0 // found by the first adapter's bisection
	// The adapters one after the other: the second reuses the first's
	// bisection (envelopePad); the test itself runs alongside others.
	t.Parallel()
	forEachAdapterSerial(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		room := f.roomOf("limits", f.a)
		cards := make([]hub.SeedCard, 21)
		for i := range cards {
			cards[i] = hub.SeedCard{Name: fmt.Sprintf("member-%02d", i)}
		}
		members, err := f.h.Admin().SeedListedAgents(f.ctx, f.box, cards)
		if err != nil {
			t.Fatalf("SeedListedAgents: %v", err)
		}
		for _, id := range members {
			if _, err := f.h.Admin().AddMember(f.ctx, room.RoomID, id); err != nil {
				t.Fatalf("AddMember: %v", err)
			}
		}
		cr := f.prime(f.a)
		dest := toRoom(room.RoomID)
		cases := []struct {
			name string
			in   hub.MessageSendInput
			want apperr.Code // "" = success
		}{
			{"BodyOneByte", hub.MessageSendInput{BodyMD: "x"}, ""},
			{"BodyEmpty", hub.MessageSendInput{BodyMD: ""}, apperr.InvalidArgument},
			{"BodyAtLimit", hub.MessageSendInput{BodyMD: strings.Repeat("é", 8192)}, ""},
			{"BodyOverLimit", hub.MessageSendInput{BodyMD: strings.Repeat("é", 8192) + "x"}, apperr.LimitExceeded},
			{"BodyInvalidUTF8", hub.MessageSendInput{BodyMD: "a\xffb"}, apperr.InvalidArgument},
			{"PayloadAtLimit", hub.MessageSendInput{BodyMD: "x", Payload: hub.Object(`{"s":"` + strings.Repeat("a", 8192-8) + `"}`)}, ""},
			{"PayloadOverLimit", hub.MessageSendInput{BodyMD: "x", Payload: hub.Object(`{"s":"` + strings.Repeat("a", 8192-7) + `"}`)}, apperr.LimitExceeded},
			{"PayloadDepth8", hub.MessageSendInput{BodyMD: "x", Payload: hub.Object(deep(8))}, ""},
			{"PayloadDepth9", hub.MessageSendInput{BodyMD: "x", Payload: hub.Object(deep(9))}, apperr.LimitExceeded},
			{"PayloadNotObject", hub.MessageSendInput{BodyMD: "x", Payload: hub.Object(`[1]`)}, apperr.InvalidArgument},
			{"Mentions20", hub.MessageSendInput{BodyMD: "x", Mentions: members[:20]}, ""},
			{"Mentions21", hub.MessageSendInput{BodyMD: "x", Mentions: members}, apperr.LimitExceeded},
			{"Requests20", hub.MessageSendInput{BodyMD: "x", Mentions: members[:20], Requests: members[:20]}, ""},
			{"Requests21", hub.MessageSendInput{BodyMD: "x", Mentions: members[:20], Requests: members}, apperr.LimitExceeded},
			{"MentionRepeated", hub.MessageSendInput{BodyMD: "x", Mentions: []string{members[0], strings.ToUpper(members[0])}}, apperr.InvalidArgument},
			{"MentionSelf", hub.MessageSendInput{BodyMD: "x", Mentions: []string{f.a.AgentID}}, apperr.InvalidArgument},
			{"MentionNonMember", hub.MessageSendInput{BodyMD: "x", Mentions: []string{f.b.AgentID}}, apperr.InvalidArgument},
			{"MentionNotUUID", hub.MessageSendInput{BodyMD: "x", Mentions: []string{"bob"}}, apperr.InvalidArgument},
			{"RequestNotMentioned", hub.MessageSendInput{BodyMD: "x", Mentions: members[:1], Requests: members[1:2]}, apperr.InvalidArgument},
			{"Files20", hub.MessageSendInput{BodyMD: "x", Files: files(20)}, ""},
			{"Files21", hub.MessageSendInput{BodyMD: "x", Files: files(21)}, apperr.LimitExceeded},
			{"DestinationBoth", hub.MessageSendInput{BodyMD: "x", Destination: hub.Destination{Kind: "room", RoomID: room.RoomID, RecipientAgentID: f.b.AgentID}}, apperr.InvalidArgument},
			{"DestinationKind", hub.MessageSendInput{BodyMD: "x", Destination: hub.Destination{Kind: "channel", RoomID: room.RoomID}}, apperr.InvalidArgument},
		}
		for i, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				if tc.in.Destination.Kind == "" {
					tc.in.Destination = dest
				}
				out, err := send(f, cr, fmt.Sprintf("lim-%d", i), tc.in)
				if wantLimit(t, "MessageSend", err, tc.want, "aaaa", "éé") && len(tc.in.Requests) > 0 && out.RequestCount != len(tc.in.Requests) {
					t.Errorf("request_count %d, want %d", out.RequestCount, len(tc.in.Requests))
				}
			})
		}

		t.Run("Envelope", func(t *testing.T) {
			// The largest message: a full body and payload, and 20 files
			// whose URLs grow until the whole message passes 64 KiB.
			big := func(pad int) hub.MessageSendInput {
				in := hub.MessageSendInput{Destination: dest, BodyMD: strings.Repeat("b", hub.MaxBodyMDBytes),
					Payload: hub.Object(`{"s":"` + strings.Repeat("p", 8192-8) + `"}`)}
				for i := range 20 {
					seg := strings.Repeat("u", 1700)
					if i == 0 {
						seg = strings.Repeat("u", pad)
					}
					in.Files = append(in.Files, hub.FileRefInput{URL: fmt.Sprintf("https://github.com/%02d/%s", i, seg),
						DisplayName: strings.Repeat("n", 200), MediaType: "text/markdown", SHA256: strings.Repeat("a", 64)})
				}
				return in
			}
			// Find the boundary: lo fits, hi does not. The bound is checked
			// before any store call, so the first adapter bisects and the
			// next checks the same boundary; both store the message at it.
			lo, hi := 1, 2000
			if envelopePad > 0 {
				lo, hi = envelopePad, envelopePad+1 // the first adapter's bisection
			}
			if _, err := send(f, cr, uuid.NewString(), big(lo)); err != nil {
				t.Fatalf("MessageSend well under the envelope: %v", err)
			}
			_, err := send(f, cr, uuid.NewString(), big(hi))
			wantCode(t, "MessageSend over the envelope", err, apperr.LimitExceeded)
			for hi-lo > 1 {
				mid := (lo + hi) / 2
				if _, err := send(f, cr, uuid.NewString(), big(mid)); err == nil {
					lo = mid
				} else {
					wantCode(t, "MessageSend near the envelope", err, apperr.LimitExceeded)
					hi = mid
				}
			}
			// The message at the boundary, as stored, is within a little of
			// 64 KiB: the bound is the envelope's, not another limit's.
			out, err := send(f, cr, "envelope-at-limit", big(lo))
			if err != nil {
				t.Fatalf("MessageSend at the envelope: %v", err)
			}
			got, err := f.h.MessageGet(f.ctx, cr, hub.MessageGetInput{MessageID: out.MessageID})
			if err != nil {
				t.Fatalf("MessageGet: %v", err)
			}
			if n := len(encodeJSON(t, got.Message)); n < hub.MaxEnvelopeBytes-2048 || n > hub.MaxEnvelopeBytes+2048 {
				t.Errorf("message at the envelope boundary is %d bytes as a DTO, want about %d", n, hub.MaxEnvelopeBytes)
			}
			envelopePad = lo
			t.Logf("envelope boundary: URL padding %d fits, %d does not", lo, hi)
		})
	})
}

// TestMessageSecretsRejected checks every credential-like payload key and
// token-like value, at any depth and in any case, is refused without
// echoing it, in payloads, file URLs and file names.
func TestMessageSecretsRejected(t *testing.T) {
	const sentinel = "s3ntinel-value-do-not-echo"
	keys := []string{"password", "PASSWORD", "secret", "client_secret", "token", "GitHub-Token", "api_key", "API_KEY", "apiKey",
		"authorization", "Authorization", "private_key", "privateKey", "file_base64", "passwd", "access_key", "cookie", "credentials"}
	tokens := []string{
		"ghp_" + strings.Repeat("A1b2", 9),
		"github_pat_" + strings.Repeat("A1b2_", 6),
		"AKIA" + "IOSFODNN7EXAMPLE",
		"xoxb-" + "123456789012-abcdefghij",
		"sk-" + strings.Repeat("abcd1234", 4),
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----",
		"-----BEGIN PRIVATE KEY-----",
	}
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		cr := f.prime(f.a)
		dest := toDM(f.b.AgentID)
		refuse := func(t *testing.T, what string, in hub.MessageSendInput, secret string) {
			t.Helper()
			in.Destination = dest
			if in.BodyMD == "" {
				in.BodyMD = "x"
			}
			_, err := send(f, cr, uuid.NewString(), in)
			e := wantCode(t, what, err, apperr.InvalidArgument)
			env := envelope(t, e)
			for _, s := range []string{secret, sentinel} {
				if strings.Contains(env, s) {
					t.Errorf("%s: error %s echoes the rejected value", what, env)
				}
			}
		}
		for _, k := range keys {
			t.Run("Key/"+k, func(t *testing.T) {
				for depth, p := range []string{
					`{%q:%q}`,
					`{"a":{"b":{"c":{"d":{"e":{%q:%q}}}}}}`,
					`{"list":[1,{"x":[{%q:%q}]}]}`,
				} {
					refuse(t, fmt.Sprintf("payload key %q (form %d)", k, depth), hub.MessageSendInput{Payload: hub.Object(fmt.Sprintf(p, k, sentinel))}, sentinel)
				}
			})
		}
		for i, tok := range tokens {
			t.Run(fmt.Sprintf("Token%d", i), func(t *testing.T) {
				refuse(t, "token in a payload value", hub.MessageSendInput{Payload: hub.Object(fmt.Sprintf(`{"note":{"deep":[%q]}}`, "see "+tok))}, tok)
				refuse(t, "token in a file name", hub.MessageSendInput{Files: []hub.FileRefInput{{URL: "https://github.com/acme/r", DisplayName: strings.ReplaceAll(tok, "\n", " ")}}}, tok)
				if !strings.Contains(tok, "\n") && !strings.Contains(tok, " ") {
					refuse(t, "token in a file URL", hub.MessageSendInput{Files: []hub.FileRefInput{{URL: "https://github.com/acme/" + tok, DisplayName: "f"}}}, tok)
				}
			})
		}
		// Near misses pass: a field that only contains a credential word
		// elsewhere, and ordinary values.
		in := hub.MessageSendInput{Destination: dest, BodyMD: "x", Payload: hub.Object(`{"max_tokens":5,"token_count":3,"secretary":"Ann","note":"sk-short"}`)}
		if _, err := send(f, cr, "near-miss", in); err != nil {
			t.Errorf("MessageSend with harmless names: %v", err)
		}
	})
}

// TestMessageFileURLs checks the URL rules' basics (BRIEF §4) on
// message_send; the full corpus belongs to the requests/files issue.
func TestMessageFileURLs(t *testing.T) {
	cases := []struct {
		url string
		ok  bool
	}{
		{"https://github.com/acme/repo/blob/main/README.md", true},
		{"HTTPS://github.com/acme/repo", true},
		{"https://xn--bcher-kva.example/doc", true},
		{"https://docs.example.com:8443/a/b", true},
		{"http://github.com/acme/repo", false},
		{"https:/github.com/acme", false},
		{"ftp://github.com/acme", false},
		{"https://user:pw@github.com/acme", false},
		{"https://user@github.com/acme", false},
		{"https://github.com/acme?x=1", false},
		{"https://github.com/acme?", false},
		{"https://github.com/acme#frag", false},
		{"https://localhost/x", false},
		{"https://app.localhost/x", false},
		{"https://printer.local/x", false},
		{"https://svc.internal/x", false},
		{"https://127.0.0.1/x", false},
		{"https://10.0.0.1/x", false},
		{"https://2130706433/x", false},
		{"https://0177.0.0.1/x", false},
		{"https://0x7f.1/x", false},
		{"https://127.1/x", false},
		{"https://[::1]/x", false},
		{"https://gith%75b.com/x", false},
		{"https://github.com\\@evil.com/x", false},
		{"https://github.com/a b", false},
		{"https://github.com/a\tb", false},
		{"https://github.com/a\u0085b", false},
		{"https://github.com:/x", false},
		{"https://github.com:99999999/x", false},
		{"https://github.com/" + strings.Repeat("a", 2048), false},
		{"https://github.com/aK9xQ2mZ7pL4vR8tW1nB6yC3hF5jD0sG", false}, // a capability-like segment
	}
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		cr := f.prime(f.a)
		for i, tc := range cases {
			_, err := send(f, cr, fmt.Sprintf("url-%d", i), hub.MessageSendInput{Destination: toDM(f.b.AgentID), BodyMD: "x",
				Files: []hub.FileRefInput{{URL: tc.url, DisplayName: "f"}}})
			switch {
			case tc.ok && err != nil:
				t.Errorf("URL %q: %v, want accepted", tc.url, err)
			case !tc.ok && err == nil:
				t.Errorf("URL %q accepted, want refused", tc.url)
			case !tc.ok:
				e, _ := apperr.As(err)
				if e == nil || (e.Code != apperr.InvalidArgument && e.Code != apperr.LimitExceeded) {
					t.Errorf("URL %q: %v, want INVALID_ARGUMENT or LIMIT_EXCEEDED", tc.url, err)
				} else if env := envelope(t, err); strings.Contains(env, tc.url) || (len(tc.url) > 20 && strings.Contains(env, tc.url[8:])) {
					t.Errorf("URL %q: error %s echoes it", tc.url, env)
				}
			}
		}
	})
}

// TestMessageIdempotency: a replay answers the original receipt marked
// replayed; another request or another tool under the key conflicts;
// concurrent duplicates send one message.
func TestMessageIdempotency(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var b *writeBarrier
		f := newFixture(t, ad, withBarrier(&b))
		room := f.roomOf("idem", f.a, f.b)
		cr := f.prime(f.a)
		in := hub.MessageSendInput{Destination: toRoom(room.RoomID), BodyMD: "once", Mentions: []string{f.b.AgentID},
			Payload: hub.Object(`{"a":1,"b":[1,2]}`)}
		first := f.mustSend(cr, "k1", in)
		// The same request, spelled differently (payload member order,
		// id case), is the same request.
		respelled := in
		respelled.Payload = hub.Object(`{ "b":[1,2], "a":1 }`)
		respelled.Mentions = []string{strings.ToUpper(f.b.AgentID)}
		again, err := send(f, cr, "k1", respelled)
		if err != nil {
			t.Fatalf("replay: %v", err)
		}
		want := *first
		want.Replayed = true
		if *again != want {
			t.Fatalf("replay = %+v, want %+v", *again, want)
		}
		other := in
		other.BodyMD = "twice"
		_, err = send(f, cr, "k1", other)
		wantCode(t, "MessageSend with a used key and another body", err, apperr.IdempotencyConflict)
		_, err = save(f, cr, "k1", 0, "checkpoint")
		wantCode(t, "CheckpointSave with message_send's key", err, apperr.IdempotencyConflict)
		// The key is the agent's: bob may use it.
		if _, err := send(f, f.prime(f.b), "k1", hub.MessageSendInput{Destination: toRoom(room.RoomID), BodyMD: "bob"}); err != nil {
			t.Fatalf("another agent's use of the key: %v", err)
		}
		if rows := f.attention(f.b.AgentID); len(rows) != 1 {
			t.Fatalf("bob has %d rows after a send and its replay, want 1", len(rows))
		}

		// Concurrent duplicates, all reading before any writes.
		const n = 5
		outs := make([]*hub.MessageSendOutput, n)
		errs := make([]error, n)
		b.arm(n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				outs[i], errs[i] = send(f, cr, "dup", hub.MessageSendInput{Destination: toRoom(room.RoomID), BodyMD: "dup"})
			}()
		}
		wg.Wait()
		fresh, id := 0, ""
		for i := range n {
			if errs[i] != nil {
				wantCode(t, fmt.Sprintf("duplicate %d", i), errs[i], apperr.TemporarilyUnavailable)
				continue
			}
			if !outs[i].Replayed {
				fresh++
			}
			if id != "" && outs[i].MessageID != id {
				t.Fatalf("duplicates answered messages %s and %s, want one", id, outs[i].MessageID)
			}
			id = outs[i].MessageID
		}
		if fresh != 1 {
			t.Fatalf("%d duplicates took effect, want exactly 1", fresh)
		}
		page, err := f.read(cr, toRoom(room.RoomID), "", 0, 0)
		if err != nil {
			t.Fatalf("ConversationRead: %v", err)
		}
		dups := 0
		for _, m := range page.Messages {
			if m.BodyMD == "dup" {
				dups++
			}
		}
		if dups != 1 {
			t.Fatalf("the room holds %d copies of the duplicated message, want 1", dups)
		}
		head, err := f.raw.Get(f.ctx, store.Key{PK: "room#" + room.RoomID, SK: "head"})
		if err != nil || head == nil || head.Version != 3 {
			t.Fatalf("room head = %+v, %v; want 3 messages", head, err)
		}
	})
}
