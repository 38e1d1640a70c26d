package hub_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/hub/table"
	"github.com/agentbox/agentbox/internal/limits"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// opKey creates an owner key of f's box, with the write scope when write.
func opKey(f *fixture, write bool) *hub.OwnerKeyInfo {
	f.t.Helper()
	create := f.h.Admin().CreateOwnerKey
	if write {
		create = f.h.Admin().CreateWriteOwnerKey
	}
	k, err := create(f.ctx, f.box)
	if err != nil {
		f.t.Fatalf("create owner key: %v", err)
	}
	return k
}

func opPost(f *fixture, key, idem string, dest hub.Destination, body string, mentions, requests []string) (*hub.MessageSendOutput, error) {
	return f.h.OperatorPost(f.ctx, key, hub.OperatorPostInput{Destination: dest, BodyMD: body,
		Mentions: mentions, Requests: requests, IdempotencyKey: idem})
}

// opStored reads the stored message of a send from the raw table.
func opStored(f *fixture, dest hub.Destination, seq hub.Revision) *table.Message {
	f.t.Helper()
	pk := table.RoomStreamPK(dest.RoomID)
	if dest.Kind == hub.KindDM {
		a, b := f.box, dest.RecipientAgentID
		if b < a {
			a, b = b, a
		}
		pk = table.DMStreamPK(a, b)
	}
	it, err := f.raw.Get(f.ctx, table.StreamMsgKey(pk, uint64(seq)))
	if err != nil || it == nil {
		f.t.Fatalf("stored message %s/%d: %v, %v", pk, seq, it, err)
	}
	m, err := table.Decode[table.Message](it)
	if err != nil {
		f.t.Fatal(err)
	}
	return m
}

// TestOperatorDM: an operator's DM with a request reaches the agent's
// inbox with reasons DM|request and author_kind operator, the agent
// answers it with request_respond in the operator's DM, a retry with the
// same idempotency key is a replay, and the message records the owner
// key's id.
func TestOperatorDM(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		key := opKey(f, true)
		dest := toDM(f.b.AgentID)
		out, err := opPost(f, key.Key, "op-1", dest, "Please ship the notes.", nil, []string{f.b.AgentID})
		if err != nil {
			t.Fatalf("OperatorPost: %v", err)
		}
		again, err := opPost(f, key.Key, "op-1", dest, "Please ship the notes.", nil, []string{f.b.AgentID})
		if err != nil || !again.Replayed || again.MessageID != out.MessageID {
			t.Fatalf("retry = %+v, %v; want a replay of %s", again, err, out.MessageID)
		}
		if _, err := opPost(f, key.Key, "op-1", dest, "Something else.", nil, nil); err == nil {
			t.Fatalf("same key, other post: no error, want IDEMPOTENCY_CONFLICT")
		} else {
			wantCode(t, "same key, other post", err, apperr.IdempotencyConflict)
		}
		if got := opStored(f, dest, out.StreamSeq); got.Via != key.KeyID || got.AuthorKind != hub.AuthorOperator {
			t.Errorf("stored via=%q kind=%q, want the owner key id %s and operator", got.Via, got.AuthorKind, key.KeyID)
		}

		crB := f.prime(f.b)
		rows := ibListAll(f, crB, hub.FilterUnread)
		if len(rows) != 1 || rows[0].Message == nil {
			t.Fatalf("bob's inbox = %+v; want the operator's one DM", rows)
		}
		if r := rows[0]; r.Reasons != hub.ReasonDM|hub.ReasonRequest || r.Message.AuthorKind != hub.AuthorOperator ||
			r.Message.AuthorAgentID != f.box || r.Message.AuthorName != hub.OperatorName {
			t.Errorf("row reasons=%d kind=%q author=%q/%q; want %d, operator, the box id and %q",
				r.Reasons, r.Message.AuthorKind, r.Message.AuthorAgentID, r.Message.AuthorName,
				hub.ReasonDM|hub.ReasonRequest, hub.OperatorName)
		}
		reqs, err := f.h.RequestsList(f.ctx, crB, hub.RequestsListInput{Direction: hub.DirectionIncoming})
		if err != nil || len(reqs.Requests) != 1 || reqs.Requests[0].AuthorKind != hub.AuthorOperator {
			t.Fatalf("requests_list = %+v, %v; want the operator's request", reqs, err)
		}
		resp, err := f.h.RequestRespond(f.ctx, crB, hub.RequestRespondInput{Mutation: hub.Mutation{IdempotencyKey: "ans"},
			RequestMessageID: out.MessageID, Status: hub.StatusAccepted, BodyMD: "On it."})
		if err != nil {
			t.Fatalf("RequestRespond to the operator: %v", err)
		}
		if resp.Request.Status != hub.StatusAccepted || resp.Reply.AttentionCount != 0 {
			t.Errorf("respond = %+v; want accepted, and no attention row (the operator has no inbox)", resp)
		}
		conv, err := f.h.ConversationRead(f.ctx, crB, hub.ConversationReadInput{Conversation: toDM(f.box)})
		if err != nil || len(conv.Messages) != 2 {
			t.Fatalf("bob's DM with the operator = %+v, %v; want the request and the reply", conv, err)
		}
		if k0, k1 := conv.Messages[0].AuthorKind, conv.Messages[1].AuthorKind; k0 != hub.AuthorOperator || k1 != hub.AuthorAgent {
			t.Errorf("author kinds %q, %q; want operator, agent", k0, k1)
		}
		// Exports say who wrote what, in both formats.
		for format, want := range map[string][]string{
			hub.FormatJSON:     {`"author_kind":"operator"`, `"author_kind":"agent"`},
			hub.FormatMarkdown: {"- author: operator `" + f.box + "` (the box's operator)"},
		} {
			exp, err := f.h.ThreadExport(f.ctx, crB, hub.ThreadExportInput{MessageID: out.MessageID, Format: format})
			if err != nil {
				t.Fatalf("ThreadExport(%s): %v", format, err)
			}
			for _, w := range want {
				if !strings.Contains(exp.Chunk, w) {
					t.Errorf("the %s export lacks %q:\n%s", format, w, exp.Chunk)
				}
			}
		}
	})
}

// TestOperatorRoomPost: a room post by the operator gives members the
// seed's reasons (a mention 4, a request 16 with its implied mention,
// follow-all 2), a member answers the request in the room, and the
// operator reaches only rooms and agents of its box.
func TestOperatorRoomPost(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		key := opKey(f, true).Key
		carol := f.mustAgent(f.box, "carol")
		room := f.mustRoom("ops", "", f.a, f.b)
		mc := f.mustAdd(room.RoomID, carol)
		crA, crB, crC := f.prime(f.a), f.prime(f.b), f.prime(carol)
		if _, err := follow(f, crC, "all", room.RoomID, mc.FollowRevision, hub.FollowAll); err != nil {
			t.Fatalf("RoomFollow: %v", err)
		}
		out, err := opPost(f, key, "room-1", toRoom(room.RoomID), "Status, please.", []string{f.a.AgentID}, []string{f.b.AgentID})
		if err != nil {
			t.Fatalf("OperatorPost(room): %v", err)
		}
		if out.AttentionCount != 3 || out.RequestCount != 1 {
			t.Errorf("post = %+v; want 3 attention rows and 1 request", out)
		}
		for _, tc := range []struct {
			name string
			cr   hub.Credentials
			want int
		}{{"alice", crA, hub.ReasonMention}, {"bob", crB, hub.ReasonMention | hub.ReasonRequest}, {"carol", crC, hub.ReasonFollowAll}} {
			rows := ibListAll(f, tc.cr, hub.FilterUnread)
			if len(rows) != 1 || rows[0].Reasons != tc.want || rows[0].Message.AuthorKind != hub.AuthorOperator {
				t.Errorf("%s's inbox = %+v; want one operator row with reasons %d", tc.name, rows, tc.want)
			}
		}
		if _, err := f.h.RequestRespond(f.ctx, crB, hub.RequestRespondInput{Mutation: hub.Mutation{IdempotencyKey: "ans"},
			RequestMessageID: out.MessageID, Status: hub.StatusResultReady, BodyMD: "All green."}); err != nil {
			t.Fatalf("RequestRespond in the room: %v", err)
		}

		theirs, err := f.h.Admin().CreateRoom(f.ctx, f.w.OtherBox, "theirs", "")
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			dest hub.Destination
			want apperr.Code
		}{
			{"an agent of another box", toDM(f.other.AgentID), apperr.NotFoundOrForbidden},
			{"a room of another box", toRoom(theirs.RoomID), apperr.NotFoundOrForbidden},
			{"the operator itself", toDM(f.box), apperr.InvalidArgument},
		} {
			_, err := opPost(f, key, "bad-"+tc.dest.Kind+tc.dest.RoomID+tc.dest.RecipientAgentID, tc.dest, "x", nil, nil)
			wantCode(t, "post to "+tc.name, err, tc.want)
		}
		if _, err := opPost(f, key, "not-member", toRoom(room.RoomID), "x", []string{f.other.AgentID}, nil); err == nil {
			t.Errorf("mentioning a non-member: no error")
		}
		if _, err := f.h.Admin().ArchiveRoom(f.ctx, room.RoomID); err != nil {
			t.Fatal(err)
		}
		_, err = opPost(f, key, "archived", toRoom(room.RoomID), "x", nil, nil)
		wantCode(t, "post in an archived room", err, apperr.RoomArchived)
	})
}

// TestOperatorAuthority: only an owner key with the write scope, or the
// admin plane, posts as the operator. A read-only owner key is refused
// exactly as an unknown one (and as any owner key's write was before
// operators existed); a revoked write key and agent keys are refused; an
// agent's own messages, even to the operator, are author_kind agent.
func TestOperatorAuthority(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		ro, rw := opKey(f, false), opKey(f, true)
		if ro.Scope != hub.OwnerRead || rw.Scope != hub.OwnerWrite {
			t.Errorf("scopes %q, %q; want read, write", ro.Scope, rw.Scope)
		}
		dest := toDM(f.b.AgentID)
		envelope := func(err error) string {
			b, _ := json.Marshal(apperr.Normalize(err).Envelope())
			return string(b)
		}
		// An unknown key: the read-only key with its key id changed
		// (characters 26-47 encode it).
		swap := byte('A')
		if ro.Key[30] == swap {
			swap = 'B'
		}
		_, unknownErr := f.h.OwnerBox(f.ctx, ro.Key[:30]+string(swap)+ro.Key[31:])
		if unknownErr == nil {
			t.Fatal("OwnerBox accepted a key with another key id")
		}
		want := envelope(unknownErr)
		crA := f.prime(f.a)
		for _, tc := range []struct{ name, key string }{
			{"read-only owner key", ro.Key},
			{"garbage", "abo_nope"},
			{"alice's agent key", f.a.BoxKey},
		} {
			_, err := opPost(f, tc.key, "k", dest, "hello", nil, nil)
			if got := envelope(err); got != want {
				t.Errorf("%s: %s, want the unknown key's %s", tc.name, got, want)
			}
		}
		if _, err := f.h.Admin().RevokeOwnerKey(f.ctx, rw.KeyID); err != nil {
			t.Fatal(err)
		}
		_, err := opPost(f, rw.Key, "k", dest, "hello", nil, nil)
		wantCode(t, "revoked write key", err, apperr.AuthFailed)
		if n := len(ibListAll(f, f.prime(f.b), hub.FilterUnread)); n != 0 {
			t.Fatalf("bob has %d rows after refused posts, want 0", n)
		}

		admin, err := f.h.Admin().OperatorPost(f.ctx, f.box, hub.OperatorPostInput{Destination: dest, BodyMD: "from the CLI", IdempotencyKey: "cli"})
		if err != nil {
			t.Fatalf("Admin.OperatorPost: %v", err)
		}
		if got := opStored(f, dest, admin.StreamSeq); got.Via != "admin" {
			t.Errorf("admin post via %q, want admin", got.Via)
		}
		_, err = f.h.Admin().OperatorPost(f.ctx, f.w.OtherBox, hub.OperatorPostInput{Destination: dest, BodyMD: "x", IdempotencyKey: "cli"})
		wantCode(t, "admin post to an agent of another box", err, apperr.NotFoundOrForbidden)

		// Agents: their messages are theirs, even in the operator's DM,
		// which takes no mentions or requests.
		mine, err := send(f, crA, "to-op", hub.MessageSendInput{Destination: toDM(f.box), BodyMD: "hi operator"})
		if err != nil {
			t.Fatalf("alice DMs the operator: %v", err)
		}
		got, err := f.h.MessageGet(f.ctx, crA, hub.MessageGetInput{MessageID: mine.MessageID})
		if err != nil || got.Message.AuthorKind != hub.AuthorAgent || got.Message.AuthorAgentID != f.a.AgentID {
			t.Errorf("alice's DM to the operator = %+v, %v; want author_kind agent by alice", got, err)
		}
		_, err = send(f, crA, "to-op-req", hub.MessageSendInput{Destination: toDM(f.box), BodyMD: "x", Requests: []string{f.box}})
		wantCode(t, "a request of the operator", err, apperr.InvalidArgument)
	})
}

// TestOperatorRateLimited: the operator's posts spend its own write
// bucket; a post over it is RATE_LIMITED and writes nothing.
func TestOperatorRateLimited(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		key := opKey(f, true).Key
		f = f.limited(limits.Config{AgentMutations: limits.Rate{PerSecond: 0.5, Burst: 2}})
		dest := toDM(f.b.AgentID)
		for _, k := range []string{"one", "two"} {
			if _, err := opPost(f, key, k, dest, k, nil, nil); err != nil {
				t.Fatalf("post %s: %v", k, err)
			}
		}
		_, err := opPost(f, key, "three", dest, "three", nil, nil)
		wantCode(t, "third post", err, apperr.RateLimited)
		if n := len(ibListAll(f, f.prime(f.b), hub.FilterUnread)); n != 2 {
			t.Errorf("bob has %d rows, want 2: the limited post wrote nothing", n)
		}
	})
}

// TestOperatorConcurrentRetries: the same post sent at once from several
// goroutines (a person double-clicking, a retry racing the original)
// stores one message and answers every caller its receipt.
func TestOperatorConcurrentRetries(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		key := opKey(f, true).Key
		const n = 8
		ids := make([]string, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				var out *hub.MessageSendOutput
				for attempt := 0; attempt < 20; attempt++ {
					out, errs[i] = opPost(f, key, "same", toDM(f.b.AgentID), "once", nil, nil)
					if e, ok := apperr.As(errs[i]); !ok || e.Code != apperr.TemporarilyUnavailable {
						break
					}
				}
				if errs[i] == nil {
					ids[i] = out.MessageID
				}
			})
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil || ids[i] != ids[0] {
				t.Fatalf("post %d = %q, %v; want every post to answer message %s", i, ids[i], errs[i], ids[0])
			}
		}
		if rows := ibListAll(f, f.prime(f.b), hub.FilterUnread); len(rows) != 1 {
			t.Errorf("bob has %d rows, want the one message", len(rows))
		}
	})
}
