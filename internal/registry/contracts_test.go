package registry_test

import (
	"fmt"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/hub/hubtest"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// The error contracts, held over the registry.
//
// toolCases has one row per tool: arguments that succeed for alice, for a
// mutation the same key with another payload, the bound on the success's
// store round trips, and a scenario for each code of the tool's own rules.
// The rules every tool of a kind shares (registry/errors.go) are one test
// each (rules_test.go), iterating over the registry, so a new tool is
// covered by them as soon as it has a row here; a tool without a row
// fails TestEveryToolHasACase.

// unknownID is a well-formed id nothing has.
const unknownID = "00000000-0000-4000-8000-00000000abcd"

// scenario provokes one code: the caller and the arguments.
type scenario func(w *world) (*hub.AgentInfo, string)

type toolCase struct {
	// ok returns arguments with which alice's call succeeds; key is a
	// fresh mutation key (reads ignore it). It may call other tools to
	// read what the arguments need.
	ok func(w *world, key string) string
	// again returns a mutation's arguments with the same key and another
	// payload (nil for a tool without a mutation key).
	again func(w *world, key string) string
	// roundTrips bounds ok's store round trips.
	roundTrips int64
	// codes provoke the tool's own codes.
	codes map[apperr.Code]scenario
}

func static(args string) func(*world, string) string {
	return func(*world, string) string { return args }
}

// as is a scenario of fixed arguments, formatted with the world's ids.
func as(who func(w *world) *hub.AgentInfo, format string, ids ...func(w *world) string) scenario {
	return func(w *world) (*hub.AgentInfo, string) {
		args := make([]any, len(ids))
		for i, id := range ids {
			args[i] = id(w)
		}
		return who(w), fmt.Sprintf(format, args...)
	}
}

func alice(w *world) *hub.AgentInfo { return w.alice }
func carol(w *world) *hub.AgentInfo { return w.carol }
func room(w *world) string          { return w.room }
func archived(w *world) string      { return w.archived }
func request(w *world) string       { return w.request }
func message(w *world) string       { return w.message }
func space(w *world) string         { return w.space }

// cursorInvalid and notFound are the two scenarios most tools share.
func cursorInvalid(format string) scenario { return as(alice, format) }
func notFound(format string) scenario {
	return as(alice, format, func(*world) string { return unknownID })
}

// note makes sure alice has the note name and returns its version.
func (w *world) note(name string) string {
	w.t.Helper()
	out, err := w.call("get_memory", w.alice, fmt.Sprintf(`{"id":%q}`, name))
	if err == nil {
		return w.num(out, "note", "version")
	}
	out = w.mustCall("save_memory", w.alice, fmt.Sprintf(`{"id":%q,"data":{"expected_version":0,"content":"remember"}}`, name))
	return w.num(out, "note", "version")
}

var toolCases = map[string]toolCase{
	"agent_prime": {ok: static(`{}`), roundTrips: 4,
		codes: map[apperr.Code]scenario{apperr.NotPrimed: func(w *world) (*hub.AgentInfo, string) {
			// A session whose MCP session was ended, presented as the
			// transport's session (not as a handle).
			dave, err := w.h.Admin().CreateAgent(w.ctx, w.alice.BoxID, "dave", "")
			if err != nil {
				w.t.Fatalf("CreateAgent: %v", err)
			}
			id, err := w.h.OpenSession(w.ctx, "")
			if err != nil {
				w.t.Fatalf("OpenSession: %v", err)
			}
			cr := hub.Credentials{Bearer: dave.BoxKey, SessionID: id, Transport: "mcp"}
			if _, err := w.invoke("agent_prime", cr, `{}`); err != nil {
				w.t.Fatalf("agent_prime: %v", err)
			}
			if err := w.h.CloseSession(w.ctx, id, cr); err != nil {
				w.t.Fatalf("CloseSession: %v", err)
			}
			w.session[dave.AgentID] = id
			return dave, `{}`
		}},
	},
	"profile_get":    {ok: static(`{}`), roundTrips: 2},
	"checkpoint_get": {ok: static(`{}`), roundTrips: 2},
	"checkpoint_save": {
		ok: func(w *world, k string) string {
			rev := w.str(w.mustCall("checkpoint_get", w.alice, `{}`), "checkpoint", "revision")
			return fmt.Sprintf(`{"idempotency_key":%q,"expected_revision":%q,"body_md":"x"}`, k, rev)
		},
		again: func(_ *world, k string) string {
			return fmt.Sprintf(`{"idempotency_key":%q,"expected_revision":"0","body_md":"y"}`, k)
		},
		roundTrips: 3,
		codes: map[apperr.Code]scenario{
			apperr.RevisionConflict: as(alice, `{"idempotency_key":"stale","expected_revision":"999","body_md":"x"}`),
		},
	},
	"get_help": {ok: static(`{"tool":"checkpoint_save"}`), roundTrips: 0},
	"directory_search": {ok: static(`{}`), roundTrips: 3,
		codes: map[apperr.Code]scenario{apperr.CursorInvalid: cursorInvalid(`{"cursor":"not-a-cursor"}`)}},
	"directory_get": {
		ok:         func(w *world, _ string) string { return fmt.Sprintf(`{"agent_id":%q}`, w.bob.AgentID) },
		roundTrips: 2,
		codes:      map[apperr.Code]scenario{apperr.NotFoundOrForbidden: notFound(`{"agent_id":%q}`)},
	},
	"directory_update_self": {
		ok: func(w *world, k string) string {
			rev := w.str(w.mustCall("directory_get", w.alice, fmt.Sprintf(`{"agent_id":%q}`, w.alice.AgentID)), "card", "revision")
			return fmt.Sprintf(`{"idempotency_key":%q,"expected_revision":%q,"role":"tester"}`, k, rev)
		},
		again: func(_ *world, k string) string {
			return fmt.Sprintf(`{"idempotency_key":%q,"expected_revision":"0","role":"other"}`, k)
		},
		roundTrips: 3,
		codes: map[apperr.Code]scenario{
			apperr.RevisionConflict: as(alice, `{"idempotency_key":"stale","expected_revision":"999","role":"x"}`),
		},
	},
	"rooms_list": {ok: static(`{}`), roundTrips: 3,
		codes: map[apperr.Code]scenario{apperr.CursorInvalid: cursorInvalid(`{"cursor":"not-a-cursor"}`)}},
	"room_get": {
		ok:         func(w *world, _ string) string { return fmt.Sprintf(`{"room_id":%q}`, w.room) },
		roundTrips: 2,
		codes:      map[apperr.Code]scenario{apperr.NotFoundOrForbidden: notFound(`{"room_id":%q}`)},
	},
	"room_follow": {
		ok: func(w *world, k string) string {
			rev := w.str(w.mustCall("room_get", w.alice, fmt.Sprintf(`{"room_id":%q}`, w.room)), "membership", "follow_revision")
			return fmt.Sprintf(`{"idempotency_key":%q,"room_id":%q,"expected_revision":%q,"follow":"mentions"}`, k, w.room, rev)
		},
		again: func(w *world, k string) string {
			return fmt.Sprintf(`{"idempotency_key":%q,"room_id":%q,"expected_revision":"1","follow":"mute"}`, k, w.room)
		},
		roundTrips: 2,
		codes: map[apperr.Code]scenario{
			apperr.NotFoundOrForbidden: notFound(`{"idempotency_key":"nf","room_id":%q,"expected_revision":"1","follow":"all"}`),
			apperr.RevisionConflict:    as(alice, `{"idempotency_key":"stale","room_id":%q,"expected_revision":"999","follow":"all"}`, room),
		},
	},
	"room_brief_get": {
		ok:         func(w *world, _ string) string { return fmt.Sprintf(`{"room_id":%q}`, w.room) },
		roundTrips: 1,
		codes:      map[apperr.Code]scenario{apperr.NotFoundOrForbidden: notFound(`{"room_id":%q}`)},
	},
	"room_brief_update": {
		ok: func(w *world, k string) string {
			rev := w.str(w.mustCall("room_brief_get", w.alice, fmt.Sprintf(`{"room_id":%q}`, w.room)), "brief", "revision")
			return fmt.Sprintf(`{"idempotency_key":%q,"room_id":%q,"expected_revision":%q,"append_md":"A line."}`, k, w.room, rev)
		},
		again: func(w *world, k string) string {
			return fmt.Sprintf(`{"idempotency_key":%q,"room_id":%q,"expected_revision":"1","append_md":"Another."}`, k, w.room)
		},
		roundTrips: 2,
		codes: map[apperr.Code]scenario{
			apperr.NotFoundOrForbidden: notFound(`{"idempotency_key":"nf","room_id":%q,"expected_revision":"1","append_md":"x"}`),
			apperr.RoomArchived:        as(alice, `{"idempotency_key":"arch","room_id":%q,"expected_revision":"1","append_md":"x"}`, archived),
			apperr.RevisionConflict:    as(alice, `{"idempotency_key":"stale","room_id":%q,"expected_revision":"999","append_md":"x"}`, room),
		},
	},
	"message_send": {
		ok: func(w *world, k string) string {
			return fmt.Sprintf(`{"idempotency_key":%q,"destination":{"kind":"room","room_id":%q},"body_md":"Hi."}`, k, w.room)
		},
		again: func(w *world, k string) string {
			return fmt.Sprintf(`{"idempotency_key":%q,"destination":{"kind":"room","room_id":%q},"body_md":"Bye."}`, k, w.room)
		},
		roundTrips: 4,
		codes: map[apperr.Code]scenario{
			apperr.NotFoundOrForbidden: notFound(`{"idempotency_key":"nf","destination":{"kind":"dm","recipient_agent_id":%q},"body_md":"x"}`),
			apperr.RoomArchived:        as(alice, `{"idempotency_key":"arch","destination":{"kind":"room","room_id":%q},"body_md":"x"}`, archived),
		},
	},
	"message_get": {
		ok:         func(w *world, _ string) string { return fmt.Sprintf(`{"message_id":%q}`, w.message) },
		roundTrips: 3,
		codes:      map[apperr.Code]scenario{apperr.NotFoundOrForbidden: notFound(`{"message_id":%q}`)},
	},
	"conversation_read": {
		ok: func(w *world, _ string) string {
			return fmt.Sprintf(`{"conversation":{"kind":"room","room_id":%q}}`, w.room)
		},
		roundTrips: 3,
		codes: map[apperr.Code]scenario{
			apperr.NotFoundOrForbidden: notFound(`{"conversation":{"kind":"room","room_id":%q}}`),
			apperr.CursorInvalid:       as(alice, `{"conversation":{"kind":"room","room_id":%q},"cursor":"not-a-cursor"}`, room),
		},
	},
	"thread_read": {
		ok:         func(w *world, _ string) string { return fmt.Sprintf(`{"message_id":%q}`, w.message) },
		roundTrips: 5,
		codes:      map[apperr.Code]scenario{apperr.NotFoundOrForbidden: notFound(`{"message_id":%q}`)},
	},
	"inbox_list": {ok: static(`{}`), roundTrips: 4,
		codes: map[apperr.Code]scenario{apperr.CursorInvalid: cursorInvalid(`{"cursor":"not-a-cursor"}`)}},
	"inbox_ack": {
		ok: func(w *world, k string) string {
			seq := w.str(w.mustCall("inbox_list", w.alice, `{"filter":"all"}`), "rows", "0", "inbox_seq")
			return fmt.Sprintf(`{"idempotency_key":%q,"inbox_seqs":[%q]}`, k, seq)
		},
		again:      func(_ *world, k string) string { return fmt.Sprintf(`{"idempotency_key":%q,"inbox_seqs":["998"]}`, k) },
		roundTrips: 3,
		codes: map[apperr.Code]scenario{
			apperr.NotFoundOrForbidden: as(alice, `{"idempotency_key":"nf","inbox_seqs":["999"]}`),
		},
	},
	"requests_list": {ok: static(`{"direction":"incoming"}`), roundTrips: 3,
		codes: map[apperr.Code]scenario{apperr.CursorInvalid: cursorInvalid(`{"direction":"incoming","cursor":"not-a-cursor"}`)}},
	"request_respond": {
		ok: func(w *world, k string) string {
			rev := w.str(w.mustCall("requests_list", w.alice, `{"direction":"incoming"}`), "requests", "0", "revision")
			return fmt.Sprintf(`{"idempotency_key":%q,"request_message_id":%q,"expected_revision":%q,"status":"accepted","body_md":"On it."}`, k, w.request, rev)
		},
		again: func(w *world, k string) string {
			return fmt.Sprintf(`{"idempotency_key":%q,"request_message_id":%q,"expected_revision":"0","status":"declined","body_md":"No."}`, k, w.request)
		},
		roundTrips: 4,
		codes: map[apperr.Code]scenario{
			apperr.NotFoundOrForbidden: notFound(`{"idempotency_key":"nf","request_message_id":%q,"expected_revision":"0","status":"accepted","body_md":"x"}`),
			apperr.RevisionConflict:    as(alice, `{"idempotency_key":"stale","request_message_id":%q,"expected_revision":"999","status":"accepted","body_md":"x"}`, request),
		},
	},
	"file_access_report": {
		ok: func(w *world, k string) string {
			rev := "0"
			if out := w.mustCall("file_reports_list", w.alice, fmt.Sprintf(`{"message_id":%q}`, w.request)); len(out["reports"].([]any)) > 0 {
				rev = w.str(out, "reports", "0", "revision")
			}
			return fmt.Sprintf(`{"idempotency_key":%q,"message_id":%q,"file_id":%q,"expected_revision":%q,"state":"accessible"}`, k, w.request, w.fileID, rev)
		},
		again: func(w *world, k string) string {
			return fmt.Sprintf(`{"idempotency_key":%q,"message_id":%q,"file_id":%q,"expected_revision":"0","state":"denied"}`, k, w.request, w.fileID)
		},
		roundTrips: 3,
		codes: map[apperr.Code]scenario{
			apperr.NotFoundOrForbidden: as(alice, `{"idempotency_key":"nf","message_id":%q,"file_id":%q,"expected_revision":"0","state":"denied"}`,
				func(*world) string { return unknownID }, func(w *world) string { return w.fileID }),
			apperr.RevisionConflict: as(alice, `{"idempotency_key":"stale","message_id":%q,"file_id":%q,"expected_revision":"999","state":"denied"}`,
				request, func(w *world) string { return w.fileID }),
		},
	},
	"file_reports_list": {
		ok:         func(w *world, _ string) string { return fmt.Sprintf(`{"message_id":%q}`, w.request) },
		roundTrips: 3,
		codes:      map[apperr.Code]scenario{apperr.NotFoundOrForbidden: notFound(`{"message_id":%q}`)},
	},
	"thread_export": {
		ok: func(w *world, _ string) string {
			return fmt.Sprintf(`{"message_id":%q,"format":"markdown"}`, w.message)
		},
		roundTrips: 6,
		codes: map[apperr.Code]scenario{
			apperr.NotFoundOrForbidden: notFound(`{"message_id":%q,"format":"json"}`),
			apperr.CursorInvalid:       as(alice, `{"message_id":%q,"format":"json","cursor":"not-a-cursor"}`, message),
		},
	},
	"create_space": {
		ok: func(_ *world, k string) string {
			return fmt.Sprintf(`{"data":{"operation_key":%q,"request_id":"r","title":"T","goal":"G","visibility":"private"}}`, k)
		},
		again: func(_ *world, k string) string {
			return fmt.Sprintf(`{"data":{"operation_key":%q,"request_id":"r","title":"U","goal":"G","visibility":"private"}}`, k)
		},
		roundTrips: 2,
	},
	"get_space": {
		ok:         func(w *world, _ string) string { return fmt.Sprintf(`{"id":%q}`, w.space) },
		roundTrips: 2,
		codes:      map[apperr.Code]scenario{apperr.NotFoundOrForbidden: notFound(`{"id":%q}`)},
	},
	"list_spaces": {ok: static(`{}`), roundTrips: 4,
		codes: map[apperr.Code]scenario{apperr.CursorInvalid: cursorInvalid(`{"data":{"cursor":"not-a-cursor"}}`)}},
	"update_space": {
		ok: func(w *world, k string) string {
			v := w.num(w.mustCall("get_space", w.alice, fmt.Sprintf(`{"id":%q}`, w.space)), "space", "version")
			return fmt.Sprintf(`{"id":%q,"data":{"operation_key":%q,"expected_version":%s,"title":"Plans","goal":"Plan more.","status":"active"}}`, w.space, k, v)
		},
		again: func(w *world, k string) string {
			return fmt.Sprintf(`{"id":%q,"data":{"operation_key":%q,"expected_version":1,"title":"Plans","goal":"Other.","status":"active"}}`, w.space, k)
		},
		roundTrips: 2,
		codes: map[apperr.Code]scenario{
			apperr.NotFoundOrForbidden: notFound(`{"id":%q,"data":{"expected_version":1,"title":"x","goal":"x","status":"active"}}`),
			apperr.RevisionConflict:    as(alice, `{"id":%q,"data":{"expected_version":999,"title":"x","goal":"x","status":"active"}}`, space),
		},
	},
	"add_space_member": {
		ok: func(w *world, k string) string {
			return fmt.Sprintf(`{"id":%q,"data":{"operation_key":%q,"agent_id":%q}}`, w.space, k, w.bob.AgentID)
		},
		again: func(w *world, k string) string {
			return fmt.Sprintf(`{"id":%q,"data":{"operation_key":%q,"agent_id":%q}}`, w.space, k, w.carol.AgentID)
		},
		roundTrips: 2,
		codes: map[apperr.Code]scenario{
			apperr.NotFoundOrForbidden: as(carol, `{"id":%q,"data":{"agent_id":%q}}`, space, func(w *world) string { return w.bob.AgentID }),
		},
	},
	"remove_space_member": {
		ok: func(w *world, k string) string {
			return fmt.Sprintf(`{"id":%q,"data":{"operation_key":%q,"agent_id":%q}}`, w.space, k, w.carol.AgentID)
		},
		again: func(w *world, k string) string {
			return fmt.Sprintf(`{"id":%q,"data":{"operation_key":%q,"agent_id":%q}}`, w.space, k, w.bob.AgentID)
		},
		roundTrips: 2,
		codes: map[apperr.Code]scenario{
			apperr.NotFoundOrForbidden: as(carol, `{"id":%q,"data":{"agent_id":%q}}`, space, func(w *world) string { return w.bob.AgentID }),
		},
	},
	"save_memory": {
		ok: func(w *world, k string) string {
			return fmt.Sprintf(`{"id":"plan","data":{"operation_key":%q,"expected_version":%s,"content":"remember more"}}`, k, w.note("plan"))
		},
		again: func(_ *world, k string) string {
			return fmt.Sprintf(`{"id":"plan","data":{"operation_key":%q,"expected_version":0,"content":"other"}}`, k)
		},
		roundTrips: 2,
		codes: map[apperr.Code]scenario{
			apperr.RevisionConflict: as(alice, `{"id":"plan","data":{"expected_version":999,"content":"x"}}`),
		},
	},
	"get_memory": {
		ok:         func(w *world, _ string) string { w.note("plan"); return `{"id":"plan"}` },
		roundTrips: 1,
		codes:      map[apperr.Code]scenario{apperr.NotFoundOrForbidden: as(alice, `{"id":"missing"}`)},
	},
	"list_memory": {ok: static(`{}`), roundTrips: 2,
		codes: map[apperr.Code]scenario{apperr.CursorInvalid: cursorInvalid(`{"data":{"cursor":"not-a-cursor"}}`)}},
	"delete_memory": {
		ok: func(w *world, k string) string {
			return fmt.Sprintf(`{"id":"scratch","data":{"operation_key":%q,"expected_version":%s}}`, k, w.note("scratch"))
		},
		again: func(_ *world, k string) string {
			return fmt.Sprintf(`{"id":"scratch","data":{"operation_key":%q,"expected_version":77}}`, k)
		},
		roundTrips: 2,
		codes: map[apperr.Code]scenario{
			apperr.NotFoundOrForbidden: as(alice, `{"id":"missing","data":{"expected_version":1}}`),
			apperr.RevisionConflict: func(w *world) (*hub.AgentInfo, string) {
				w.note("scratch")
				return w.alice, `{"id":"scratch","data":{"expected_version":999}}`
			},
		},
	},
}

// forEachAdapter runs fn on a fresh world per adapter.
func forEachAdapter(t *testing.T, fn func(t *testing.T, w *world)) {
	hubtest.ForEachAdapter(t, func(t *testing.T, ad teststores.Adapter) { fn(t, newWorld(t, ad)) })
}

// wantCode fails unless err carries want.
func wantCode(t *testing.T, call string, err error, want apperr.Code) {
	t.Helper()
	e, ok := apperr.As(err)
	switch {
	case err == nil:
		t.Errorf("%s: got success, want %s", call, want)
	case !ok:
		t.Errorf("%s: got untyped error %v, want %s", call, err, want)
	case e.Code != want:
		t.Errorf("%s: got %s (%s), want %s", call, e.Code, e.Message, want)
	}
}

// TestEveryToolHasACase: a tool the table does not know fails here, so a
// new tool cannot escape the contract tests.
func TestEveryToolHasACase(t *testing.T) {
	t.Parallel()
	r := registry.New()
	for _, tl := range r.Tools() {
		c, ok := toolCases[tl.Name]
		if !ok {
			t.Errorf("tool %s has no row in toolCases", tl.Name)
			continue
		}
		mutationKey := registry.ErrorContext(tl, apperr.MCP).MutationKey != ""
		if mutationKey != (c.again != nil) {
			t.Errorf("tool %s: mutation key %t, but again is set %t", tl.Name, mutationKey, c.again != nil)
		}
	}
	for name := range toolCases {
		if _, ok := r.Tool(name); !ok {
			t.Errorf("toolCases has a row for %s, which is not a tool", name)
		}
	}
}

// TestEveryToolAnswersItsOwnErrors provokes each code of every tool's own
// rules with its scenario, and fails for a listed code without one.
func TestEveryToolAnswersItsOwnErrors(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, w *world) {
		for _, tl := range w.r.Tools() {
			c := toolCases[tl.Name]
			for _, code := range tl.OwnErrors() {
				sc, ok := c.codes[code]
				if !ok {
					t.Errorf("tool %s lists %s, but no scenario in toolCases provokes it", tl.Name, code)
					continue
				}
				who, args := sc(w)
				_, err := w.call(tl.Name, who, args)
				wantCode(t, fmt.Sprintf("%s(%s) as %s", tl.Name, args, who.Name), err, code)
			}
			for code := range c.codes {
				if !tl.Declares(code) {
					t.Errorf("tool %s: toolCases provokes %s, which the tool does not list", tl.Name, code)
				}
			}
		}
	})
}
