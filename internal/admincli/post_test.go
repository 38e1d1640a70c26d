package admincli_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/agentbox/agentbox/internal/admincli"
	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// TestPostCommand runs agentbox admin post against every target: a DM
// with a request and a room post, a retry with the same idempotency key
// (a replay), the flag rules, and create-owner-key --write.
func TestPostCommand(t *testing.T) {
	for _, tc := range targets {
		t.Run(tc.name, func(t *testing.T) { postScenario(t, tc.env(t)) })
	}
}

// postScenario is TestPostCommand on one target.
func postScenario(t *testing.T, e env) {
	with := func(args ...string) []string { return append(args, e.flags...) }
	var box hub.BoxInfo
	var bob hub.AgentInfo
	var room hub.RoomInfo
	ok(t, &box, with("create-box", "--name", "posts")...)
	ok(t, &bob, with("create-agent", "--box", box.BoxID, "--name", "bob")...)
	ok(t, &room, with("create-room", "--box", box.BoxID, "--name", "ops")...)
	ok(t, &hub.MembershipInfo{}, with("add-member", "--room", room.RoomID, "--agent", bob.AgentID)...)
	var dm, again, post hub.MessageSendOutput
	dmArgs := with("post", "--box", box.BoxID, "--to", bob.AgentID, "--text", "Ship it?", "--request", bob.AgentID,
		"--idempotency-key", "cli-1")
	ok(t, &dm, dmArgs...)
	if dm.AttentionCount != 1 || dm.RequestCount != 1 || dm.Replayed {
		t.Errorf("post --to = %+v; want one attention row and one request", dm)
	}
	ok(t, &again, dmArgs...)
	if !again.Replayed || again.MessageID != dm.MessageID {
		t.Errorf("the same post again = %+v; want a replay of %s", again, dm.MessageID)
	}
	ok(t, &post, with("post", "--box", box.BoxID, "--room", room.RoomID, "--text", "Hello", "--mention", bob.AgentID)...)
	if post.AttentionCount != 1 || post.RequestCount != 0 {
		t.Errorf("post --room = %+v; want bob's attention", post)
	}
	fails(t, admincli.ExitUsage, apperr.InvalidArgument, with("post", "--box", box.BoxID, "--room", room.RoomID,
		"--to", bob.AgentID, "--text", "x")...)
	fails(t, admincli.ExitUsage, apperr.InvalidArgument, with("post", "--box", box.BoxID, "--text", "x")...)
	fails(t, admincli.ExitError, apperr.NotFoundOrForbidden, with("post", "--box", box.BoxID, "--to", "00000000-0000-4000-8000-000000000000",
		"--text", "x")...)

	var ro, rw hub.OwnerKeyInfo
	ok(t, &ro, with("create-owner-key", "--box", box.BoxID)...)
	ok(t, &rw, with("create-owner-key", "--box", box.BoxID, "--write")...)
	if ro.Scope != hub.OwnerRead || rw.Scope != hub.OwnerWrite {
		t.Errorf("create-owner-key scopes %q and --write %q; want read and write", ro.Scope, rw.Scope)
	}
	e.after(t)
}

// TestPostReachesTheAgent: what admin post wrote is in the agent's inbox
// as the operator's, with the request's reasons.
func TestPostReachesTheAgent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	data := []string{"--data", dir}
	var box hub.BoxInfo
	ok(t, &box, append([]string{"create-box", "--name", "b"}, data...)...)
	var bob hub.AgentInfo
	ok(t, &bob, append([]string{"create-agent", "--box", box.BoxID, "--name", "bob"}, data...)...)
	ok(t, &hub.MessageSendOutput{}, append([]string{"post", "--box", box.BoxID, "--to", bob.AgentID, "--text", "Status?",
		"--request", bob.AgentID}, data...)...)

	st := openData(t, dir)
	defer st.Close()
	h := hub.New(st, hub.Options{Logger: slog.New(slog.DiscardHandler)})
	ctx := context.Background()
	cr := hub.Credentials{Bearer: bob.BoxKey, Transport: "rest"}
	p, err := h.Prime(ctx, cr, hub.PrimeInput{})
	if err != nil {
		t.Fatal(err)
	}
	cr.SessionID = p.SessionID
	out, err := h.InboxList(ctx, cr, hub.InboxListInput{})
	if err != nil || len(out.Rows) != 1 {
		t.Fatalf("InboxList = %+v, %v; want the operator's DM", out, err)
	}
	if r := out.Rows[0]; r.Reasons != hub.ReasonDM|hub.ReasonRequest || r.Message.AuthorKind != hub.AuthorOperator || r.Message.BodyMD != "Status?" {
		t.Errorf("row = %+v (message %+v); want reasons DM|request by the operator", r, r.Message)
	}
}
