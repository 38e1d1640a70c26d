package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/hub/hubtest"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/registry/registrytest"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// world is hubtest's world (box main with alice and bob and their room,
// box other with mallory), called through the registry, with what every
// tool needs to succeed besides: carol in box main, bob listed, an
// archived room of alice's, bob's request to alice in a DM with a file,
// alice's message in the room, and alice's private space.
type world struct {
	t     testing.TB
	ctx   context.Context
	h     *hub.Hub
	r     *registry.Registry
	rec   *registrytest.Recorder
	st    *teststores.Counting
	fault *teststores.Faults
	clock *teststores.Clock

	alice, bob, carol, mallory *hub.AgentInfo
	session                    map[string]string // agent id → primed session

	room, archived  string
	request, fileID string // bob's DM to alice
	message         string // alice's message in room
	space           string // alice's private space
}

func newWorld(t testing.TB, ad teststores.Adapter) *world {
	t.Helper()
	w := &world{t: t, ctx: context.Background(), rec: registrytest.NewRecorder(), session: map[string]string{}}
	hw := hubtest.New(t, ad, hubtest.Config{Room: true, Wrap: []func(store.Store) store.Store{
		func(s store.Store) store.Store { w.fault = teststores.NewFaults(s); return w.fault },
	}})
	w.h, w.st, w.clock = hw.Hub, hw.Store, hw.Clock
	w.r = registry.New(w.rec.Option())
	w.alice, w.bob, w.mallory, w.room = hw.Alice, hw.Bob, hw.Mallory, hw.Room.RoomID
	w.carol = hw.MustAgent(hw.Box, "carol")
	w.archived = hw.MustRoom(hw.Box, "old", w.alice).RoomID
	if _, err := hw.Admin.SetDirectoryListed(w.ctx, w.bob.AgentID, true); err != nil {
		t.Fatalf("SetDirectoryListed: %v", err)
	}
	if _, err := hw.Admin.ArchiveRoom(w.ctx, w.archived); err != nil {
		t.Fatalf("ArchiveRoom: %v", err)
	}
	for _, ag := range []*hub.AgentInfo{w.alice, w.bob, w.carol, w.mallory} {
		w.session[ag.AgentID] = w.prime(ag)
	}
	w.request = w.str(w.mustCall("message_send", w.bob, fmt.Sprintf(`{"idempotency_key":"world-ask","destination":{"kind":"dm","recipient_agent_id":%q},"body_md":"Please check the spec.","requests":[%[1]q],"files":[{"url":"https://example.com/spec.md","display_name":"spec.md","version_label":"v1"}]}`, w.alice.AgentID)), "message_id")
	w.fileID = w.str(w.mustCall("message_get", w.bob, fmt.Sprintf(`{"message_id":%q}`, w.request)), "message", "files", "0", "file_id")
	w.message = w.str(w.mustCall("message_send", w.alice, fmt.Sprintf(`{"idempotency_key":"world-post","destination":{"kind":"room","room_id":%q},"body_md":"Hello room."}`, w.room)), "message_id")
	w.space = w.str(w.mustCall("create_space", w.alice, `{"data":{"request_id":"world-space","title":"Plans","goal":"Plan.","visibility":"private"}}`), "space", "id")
	return w
}

// prime opens a session for ag through agent_prime.
func (w *world) prime(ag *hub.AgentInfo) string {
	w.t.Helper()
	out, err := w.invoke("agent_prime", hub.Credentials{Bearer: ag.BoxKey, Transport: "rest"}, `{}`)
	if err != nil {
		w.t.Fatalf("agent_prime(%s): %v", ag.Name, err)
	}
	return w.str(out, "session_id")
}

// creds are ag's credentials with its primed session.
func (w *world) creds(ag *hub.AgentInfo) hub.Credentials {
	return hub.Credentials{Bearer: ag.BoxKey, SessionID: w.session[ag.AgentID], Transport: "rest"}
}

// invoke calls tool through the registry and returns its result as JSON
// values. Every answer passes the registry's contract check; an
// undeclared code fails the test.
func (w *world) invoke(tool string, cr hub.Credentials, args string) (map[string]any, error) {
	w.t.Helper()
	return w.invokeOn(w.h, tool, cr, args)
}

// invokeOn is invoke on another hub over the world's store.
func (w *world) invokeOn(h *hub.Hub, tool string, cr hub.Credentials, args string) (map[string]any, error) {
	w.t.Helper()
	tl, ok := w.r.Tool(tool)
	if !ok {
		w.t.Fatalf("no tool %s", tool)
	}
	out, err := tl.Invoke(w.ctx, h, cr, []byte(args))
	for _, u := range w.rec.TakeUndeclared() {
		w.t.Errorf("%s(%s): %s, which its contract does not list (%v)", tool, args, u, tl.Errors)
	}
	if err != nil {
		return nil, err
	}
	return registrytest.AsJSON[map[string]any](w.t, out), nil
}

// call invokes tool as ag with its session.
func (w *world) call(tool string, ag *hub.AgentInfo, args string) (map[string]any, error) {
	w.t.Helper()
	return w.invoke(tool, w.creds(ag), args)
}

// mustCall is call that must succeed.
func (w *world) mustCall(tool string, ag *hub.AgentInfo, args string) map[string]any {
	w.t.Helper()
	out, err := w.call(tool, ag, args)
	if err != nil {
		w.t.Fatalf("%s(%s) as %s: %v", tool, args, ag.Name, err)
	}
	return out
}

// value returns the field at path of a result ("0" indexes an array).
func (w *world) value(v map[string]any, path ...string) any {
	w.t.Helper()
	var cur any = v
	for _, p := range path {
		switch x := cur.(type) {
		case map[string]any:
			cur = x[p]
		case []any:
			var i int
			if _, err := fmt.Sscan(p, &i); err != nil || i >= len(x) {
				cur = nil
			} else {
				cur = x[i]
			}
		default:
			cur = nil
		}
	}
	if cur == nil {
		b, _ := json.Marshal(v)
		w.t.Fatalf("no %s in %s", strings.Join(path, "."), b)
	}
	return cur
}

// str is value for a string field.
func (w *world) str(v map[string]any, path ...string) string {
	w.t.Helper()
	s, ok := w.value(v, path...).(string)
	if !ok {
		w.t.Fatalf("%s is not a string", strings.Join(path, "."))
	}
	return s
}

// num is value for a number field, as JSON.
func (w *world) num(v map[string]any, path ...string) string {
	w.t.Helper()
	return fmt.Sprint(w.value(v, path...))
}

// errStorage is a store failure that is neither load nor a timeout: its
// outcome is unknown.
var errStorage = errors.New("the disk is on fire")
