package hub_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/docgen"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/limits"
	"github.com/agentbox/agentbox/internal/oauth"
	"github.com/agentbox/agentbox/internal/oauth/oauthtest"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// TestCostPerTool measures what one typical call of each tool costs on
// DynamoDB in request units (teststores.Metered applies DynamoDB's
// documented rules to every store call), prints the table the README
// shows, and fails when a call grows past its bound: a cost regression is
// a test failure, not a surprise on the bill. The embedded store is used
// only as a fast, deterministic engine; the units are DynamoDB's.
//
// The scenario runs twice: as deployed, with the rate limiter's default
// figures (limits.Default(), which every entry point enforces unless told
// otherwise), and with the limiter off. The rows marked "OAuth token" are
// calls on an access token of a real provider (oauthtest) checked by the
// real verifier (internal/oauth); checkTokenRows pins what the token adds
// to the same call on a key. The README's table is the one this test
// computes: it fails when the README differs (fix with
// go test ./internal/hub -run TestCostPerTool -update).
func TestCostPerTool(t *testing.T) {
	t.Parallel()
	var (
		m        *teststores.Metered
		f        *fixture
		room     *hub.RoomInfo
		crA, crB hub.Credentials
		opKeyW   string
		// alice's and bob's sessions on their OAuth tokens.
		tokA, tokB hub.Credentials
	)
	app := oauthtest.Client{ID: "app", RedirectURI: "http://localhost/cb", Audience: []string{tokenAudience}}
	op := oauthtest.Start(t, app)
	verifier, err := oauth.New(oauth.Config{Issuer: op.URL, Audience: tokenAudience})
	if err != nil {
		t.Fatal(err)
	}
	bearerA, bearerB := mustToken(t, op, app, oauthtest.Subject1), mustToken(t, op, app, oauthtest.Subject2)
	onToken := func(ag *hub.AgentInfo, subject, bearer string) hub.Credentials {
		if _, err := f.h.Admin().LinkOAuth(f.ctx, hub.NewOAuthLink{Issuer: op.URL, Subject: subject, Agent: ag.AgentID}); err != nil {
			t.Fatal(err)
		}
		cr := hub.Credentials{Bearer: bearer, Transport: "rest"}
		p, err := f.h.Prime(f.ctx, cr, hub.PrimeInput{})
		if err != nil {
			t.Fatal(err)
		}
		cr.SessionID = p.SessionID
		return cr
	}
	setup := func(deployed bool) {
		f = newFixtureWith(t, teststores.All()[0], hub.Options{Tokens: verifier},
			func(s store.Store) store.Store { m = teststores.NewMetered(s); return m })
		if deployed {
			f = f.limited(limits.Default())
		}
		room = f.mustRoom("general", "The brief.")
		f.mustAdd(room.RoomID, f.a)
		f.mustAdd(room.RoomID, f.b)
		crA, crB = f.prime(f.a), f.prime(f.b)
		opKeyW = opKey(f, true).Key
		tokA, tokB = onToken(f.a, oauthtest.Subject1, bearerA), onToken(f.b, oauthtest.Subject2, bearerB)
	}
	body := strings.Repeat("x", 1000)
	var sent, sentOnToken *hub.MessageSendOutput
	var tokSeq hub.Revision // the inbox row of sentOnToken, as bob's token session listed it
	calls := []costCall{
		{"agent_prime", 14, 3, nil, func() error {
			_, err := f.h.Prime(f.ctx, hub.Credentials{Bearer: f.a.BoxKey, SessionID: crA.SessionID}, hub.PrimeInput{})
			return err
		}},
		{"agent_prime (binding a new MCP session)", 14, 5, nil, func() error {
			id, err := f.h.OpenSession(f.ctx, "")
			if err != nil {
				return err
			}
			_, err = f.h.Prime(f.ctx, hub.Credentials{Bearer: f.a.BoxKey, SessionID: id, Transport: "mcp"}, hub.PrimeInput{})
			return err
		}},
		{"profile_get", 9, 1, nil, func() error { _, err := f.h.ProfileGet(f.ctx, crA, hub.ProfileInput{}); return err }},
		{"checkpoint_get", 10, 1, nil, func() error { _, err := f.h.CheckpointGet(f.ctx, crA, hub.CheckpointGetInput{}); return err }},
		{"checkpoint_save (1 KB)", 11, 12, nil, func() error { _, err := save(f, crA, "cost-cp", 0, body); return err }},
		{"room_get", 14, 1, nil, func() error { _, err := f.h.RoomGet(f.ctx, crA, hub.RoomIDInput{RoomID: room.RoomID}); return err }},
		{"message_send (DM, 1 KB)", 13, 27, nil, func() error {
			var err error
			sent, err = ibDM(f, crA, "cost-dm", f.b.AgentID, body)
			return err
		}},
		{"message_send (room of 2, 1 KB)", 14, 24, nil, func() error { _, err := ibPost(f, crA, "cost-post", room.RoomID, body); return err }},
		{"inbox_list (1 row)", 11, 3, nil, func() error { _, err := f.h.InboxList(f.ctx, crB, hub.InboxListInput{}); return err }},
		{"inbox_ack (1 row)", 13, 15, nil, func() error {
			_, err := f.h.InboxAck(f.ctx, crB, hub.InboxAckInput{Mutation: hub.Mutation{IdempotencyKey: "cost-ack"},
				InboxSeqs: []hub.Revision{1}})
			return err
		}},
		{"message_get", 11, 3, nil, func() error {
			_, err := f.h.MessageGet(f.ctx, crB, hub.MessageGetInput{MessageID: sent.MessageID})
			return err
		}},
		{"conversation_read (1 message)", 11, 3, nil, func() error {
			_, err := f.h.ConversationRead(f.ctx, crB, hub.ConversationReadInput{
				Conversation: hub.Destination{Kind: hub.KindDM, RecipientAgentID: f.a.AgentID}})
			return err
		}},
		{"create_space", 10, 13, nil, func() error { _, err := createSpace(f, crA, "public", "Cost", "cost-space"); return err }},
		// The box's operator (operate.go): a post from the view or the
		// admin CLI, after the calls above so their inboxes are as they
		// were.
		{"operator post (DM, 1 KB)", 5, 22, nil, func() error {
			_, err := opPost(f, opKeyW, "cost-op-dm", toDM(f.b.AgentID), body, nil, nil)
			return err
		}},
		{"operator post (room of 2, 1 KB)", 6, 17, nil, func() error {
			_, err := opPost(f, opKeyW, "cost-op-post", toRoom(room.RoomID), body, nil, nil)
			return err
		}},
		// The same calls on OAuth tokens, after the calls above so the
		// inboxes they read are as they were.
		{"profile_get (OAuth token)", 10, 1, nil, func() error { _, err := f.h.ProfileGet(f.ctx, tokA, hub.ProfileInput{}); return err }},
		{"message_send (DM, 1 KB, OAuth token)", 14, 29, nil, func() error {
			var err error
			sentOnToken, err = ibDM(f, tokA, "cost-dm-token", f.b.AgentID, body)
			return err
		}},
		{"inbox_ack (1 row, OAuth token)", 14, 17, func() error {
			l, err := f.h.InboxList(f.ctx, tokB, hub.InboxListInput{})
			if err != nil {
				return err
			}
			for _, r := range l.Rows {
				if r.Message != nil && r.Message.MessageID == sentOnToken.MessageID {
					tokSeq = r.InboxSeq
					return nil
				}
			}
			return fmt.Errorf("bob's token session does not list message %s", sentOnToken.MessageID)
		}, func() error {
			out, err := f.h.InboxAck(f.ctx, tokB, hub.InboxAckInput{Mutation: hub.Mutation{IdempotencyKey: "cost-ack-token"},
				InboxSeqs: []hub.Revision{tokSeq}})
			if err == nil && out.Acked != 1 {
				err = fmt.Errorf("acknowledged %d rows, want 1", out.Acked)
			}
			return err
		}},
	}
	// measured[deployed][i] is call i's read and write units.
	var measured [2][][2]float64
	for mode, deployed := range []bool{false, true} {
		setup(deployed)
		for _, c := range calls {
			if c.before != nil {
				if err := c.before(); err != nil {
					t.Fatalf("before %s (deployed %v): %v", c.name, deployed, err)
				}
			}
			m.Reset()
			if err := c.call(); err != nil {
				t.Fatalf("%s (deployed %v): %v", c.name, deployed, err)
			}
			tb, ix := m.Reset()
			measured[mode] = append(measured[mode], [2]float64{tb.Read + ix.Read, tb.Write + ix.Write})
		}
	}
	checkTokenRows(t, calls, measured[0])
	var table strings.Builder
	table.WriteString("| call | read units | write units | read units, limiter off | write units, limiter off |\n|---|---|---|---|---|\n")
	for i, c := range calls {
		off, on := measured[0][i], measured[1][i]
		fmt.Fprintf(&table, "| %s | %g | %g | %g | %g |\n", c.name, on[0], on[1], off[0], off[1])
		if off[0] > c.read || off[1] > c.write {
			t.Errorf("%s costs %g read and %g write units, want at most %g and %g", c.name, off[0], off[1], c.read, c.write)
		}
		// The limiter's store buckets: what it adds to any call.
		if on[0]-off[0] > limiterRead || on[1]-off[1] > limiterWrite {
			t.Errorf("%s: the rate limiter adds %g read and %g write units, want at most %g and %g",
				c.name, on[0]-off[0], on[1]-off[1], limiterRead, limiterWrite)
		}
	}
	t.Logf("cost per call on DynamoDB (request units):\n%s", table.String())
	checkReadmeSection(t, "costs", table.String())
}

// onKey names, for each row on an OAuth token, the row of the same call on
// a key.
var onKey = map[string]string{
	"profile_get (OAuth token)":            "profile_get",
	"message_send (DM, 1 KB, OAuth token)": "message_send (DM, 1 KB)",
	"inbox_ack (1 row, OAuth token)":       "inbox_ack (1 row)",
}

// tokenRead is exactly what a token adds to a call's reads: its link
// records (one batch of one or two items, resolveToken). tokenWrite is
// exactly what it adds to a change's write: the link's and the agent
// record's condition checks where a key's is its key record's (authChecks).
// Exact, not bounds: the token rows' own bounds have the key rows' slack,
// so a read or a check added to the token path alone shows only here.
const tokenRead, tokenWrite = 1.0, 2.0

// checkTokenRows fails when a token row (onKey) costs other than its key
// row plus tokenRead, and, when the call writes, tokenWrite; units are the
// rows' measured read and write units, limiter off.
func checkTokenRows(t *testing.T, calls []costCall, units [][2]float64) {
	t.Helper()
	row := map[string]int{}
	for i, c := range calls {
		row[c.name] = i
	}
	for tok, key := range onKey {
		ti, ok1 := row[tok]
		ki, ok2 := row[key]
		if !ok1 || !ok2 {
			t.Errorf("onKey pairs %q with %q: no such rows", tok, key)
			continue
		}
		wantR, wantW := units[ki][0]+tokenRead, units[ki][1]
		if wantW > 0 {
			wantW += tokenWrite
		}
		if got := units[ti]; got[0] != wantR || got[1] != wantW {
			t.Errorf("%s costs %g read and %g write units, want %g and %g (%s plus the token's link read and checks)",
				tok, got[0], got[1], wantR, wantW, key)
		}
	}
}

// costCall is one row of the cost table: a call, measured alone, and the
// units it may cost at most (limiter off).
type costCall struct {
	name        string
	read, write float64      // bounds, in units
	before      func() error // unmeasured: what the call needs first
	call        func() error
}

// limiterRead and limiterWrite bound what the default limits add to one
// call: the rate limiter's bucket shards, read in the call's batch and
// moved in its write, and the quota counter a call moves (agent_prime's
// sessions, create_space's spaces).
const limiterRead, limiterWrite = 7.0, 6.0

var update = flag.Bool("update", false, "rewrite the README's sections this package's tests compute")

// checkReadmeSection fails when the README's section name (between
// <!-- name:begin --> and <!-- name:end -->) is not content; -update
// rewrites it.
func checkReadmeSection(t *testing.T, name, content string) {
	t.Helper()
	const path = "../../README.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := docgen.Splice(doc, name, content)
	if err != nil {
		t.Fatalf("README section %s: %v", name, err)
	}
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(doc, want) {
		t.Errorf("the README's %s table is not what this test computes; run go test ./internal/hub -run %s -update", name, t.Name())
	}
}
