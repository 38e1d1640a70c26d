package hub_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/hub/hubtest"
	"github.com/agentbox/agentbox/internal/store"
)

// Helpers for the message tests, on top of hub_test.go's fixture and
// rooms_helpers_test.go.

func toRoom(room string) hub.Destination { return hubtest.ToRoom(room) }
func toDM(agent string) hub.Destination  { return hubtest.ToDM(agent) }

// send calls message_send with key as its idempotency key.
func send(f *fixture, cr hub.Credentials, key string, in hub.MessageSendInput) (*hub.MessageSendOutput, error) {
	return f.world().Send(cr, key, in)
}

// mustSend sends a plain message and fails the test on error.
func (f *fixture) mustSend(cr hub.Credentials, key string, in hub.MessageSendInput) *hub.MessageSendOutput {
	f.t.Helper()
	return f.world().MustSend(cr, key, in)
}

// roomOf creates a room of box main with members.
func (f *fixture) roomOf(name string, members ...*hub.AgentInfo) *hub.RoomInfo {
	f.t.Helper()
	return f.world().MustRoom(f.box, name, members...)
}

func (f *fixture) read(cr hub.Credentials, conv hub.Destination, cur string, limit, maxBytes int) (*hub.ConversationReadOutput, error) {
	return f.h.ConversationRead(f.ctx, cr, hub.ConversationReadInput{Conversation: conv, Cursor: cur, Limit: limit, MaxBytes: maxBytes})
}

// attRow is an attention row as stored (messages.go's attentionRecord),
// read straight from the store: inbox_list is the next issue's.
type attRow struct {
	Seq       uint64 `json:"seq"`
	MessageID string `json:"message_id"`
	Stream    string `json:"stream"`
	StreamSeq uint64 `json:"stream_seq"`
	Reasons   int    `json:"reasons"`
	AckedBy   string `json:"acked_by"`
}

// attention returns agent's attention rows in inbox order.
func (f *fixture) attention(agent string) []attRow {
	f.t.Helper()
	return f.inboxes([]string{agent})[agent]
}

// inboxes reads the attention rows of agents by key — the inbox head, then
// rows 1..head — in a few batched reads (a query per agent is slow on the
// DynamoDB emulator), and checks the inbox invariants on the way: every row
// 1..head present (hole-free) and numbered as its key says.
func (f *fixture) inboxes(agents []string) map[string][]attRow {
	f.t.Helper()
	batchGet := func(keys []store.Key) []*store.Item {
		var out []*store.Item
		for len(keys) > 0 {
			n := min(len(keys), store.MaxBatchGetKeys)
			items, err := f.raw.BatchGet(f.ctx, keys[:n])
			if err != nil {
				f.t.Fatalf("BatchGet(%d keys): %v", n, err)
			}
			out, keys = append(out, items...), keys[n:]
		}
		return out
	}
	heads := make([]store.Key, len(agents))
	for i, ag := range agents {
		heads[i] = store.Key{PK: "agent#" + ag, SK: "inbox"}
	}
	var keys []store.Key
	var owner []string
	for i, it := range batchGet(heads) {
		if it == nil {
			continue
		}
		for n := uint64(1); n <= it.Version; n++ {
			keys = append(keys, store.Key{PK: "agent#" + agents[i], SK: fmt.Sprintf("inbox#%020d", n)})
			owner = append(owner, agents[i])
		}
	}
	out := make(map[string][]attRow, len(agents))
	for i, it := range batchGet(keys) {
		if it == nil {
			f.t.Fatalf("inbox of %s: no row at %s below the head (a hole)", owner[i], keys[i].SK)
		}
		var r attRow
		if err := json.Unmarshal(it.Data, &r); err != nil {
			f.t.Fatalf("decoding attention row %s: %v", it.SK, err)
		}
		if want := uint64(len(out[owner[i]]) + 1); r.Seq != want {
			f.t.Fatalf("inbox of %s: row %s has seq %d, want %d", owner[i], it.SK, r.Seq, want)
		}
		out[owner[i]] = append(out[owner[i]], r)
	}
	return out
}

// editRecord rewrites the JSON record at k in place (a store edit for
// states no tool or admin command produces yet, such as a deactivated
// agent), keeping its Version.
func (f *fixture) editRecord(k store.Key, change func(m map[string]any)) {
	f.t.Helper()
	it, err := f.raw.Get(f.ctx, k)
	if err != nil || it == nil {
		f.t.Fatalf("Get(%v) = %v, %v", k, it, err)
	}
	var m map[string]any
	if err := json.Unmarshal(it.Data, &m); err != nil {
		f.t.Fatalf("decoding %v: %v", k, err)
	}
	change(m)
	next := *it
	next.Version++
	if next.Data, err = json.Marshal(m); err != nil {
		f.t.Fatalf("encoding %v: %v", k, err)
	}
	if err := f.raw.Write(f.ctx, []store.Op{store.Put(&next, store.AtVersion(it.Version))}); err != nil {
		f.t.Fatalf("Write(%v): %v", k, err)
	}
}

// bigRoom makes a room of alice, bob and n seeded agents (no keys), every
// member following all, so that a plain post by alice needs a row for
// everyone else. It returns the room and the seeded agents' ids.
func (f *fixture) bigRoom(name string, n int) (*hub.RoomInfo, []string) {
	f.t.Helper()
	room := f.mustRoom(name, "")
	cards := make([]hub.SeedCard, n)
	for i := range cards {
		cards[i] = hub.SeedCard{Name: fmt.Sprintf("%s-%04d", name, i), Role: "member"}
	}
	ids, err := f.h.Admin().SeedListedAgents(f.ctx, f.box, cards)
	if err != nil {
		f.t.Fatalf("SeedListedAgents: %v", err)
	}
	members := append([]string{f.a.AgentID, f.b.AgentID}, ids...)
	for _, id := range members {
		if _, err := f.h.Admin().AddMember(f.ctx, room.RoomID, id); err != nil {
			f.t.Fatalf("AddMember(%s): %v", id, err)
		}
	}
	// Follow all, by store edit in a few writes (one edit per member is
	// slow on the DynamoDB emulator).
	keys := make([]store.Key, len(members))
	for i, id := range members {
		keys[i] = store.Key{PK: "room#" + room.RoomID, SK: "member#" + id}
	}
	var ops []store.Op
	for len(keys) > 0 {
		k := keys[:min(len(keys), store.MaxWriteItems)]
		keys = keys[len(k):]
		items, err := f.raw.BatchGet(f.ctx, k)
		if err != nil {
			f.t.Fatalf("BatchGet(members): %v", err)
		}
		ops = ops[:0]
		for _, it := range items {
			var m map[string]any
			if err := json.Unmarshal(it.Data, &m); err != nil {
				f.t.Fatalf("decoding %s: %v", it.SK, err)
			}
			m["follow"] = hub.FollowAll
			next := *it
			next.Version++
			if next.Data, err = json.Marshal(m); err != nil {
				f.t.Fatalf("encoding %s: %v", it.SK, err)
			}
			ops = append(ops, store.Put(&next, store.AtVersion(it.Version)))
		}
		if err := f.raw.Write(f.ctx, ops); err != nil {
			f.t.Fatalf("Write(follow all): %v", err)
		}
	}
	return room, ids
}

// rowsFor counts, per agent, the rows for message id.
func (f *fixture) rowsFor(agents []string, id string) map[string][]attRow {
	f.t.Helper()
	out := map[string][]attRow{}
	for ag, rows := range f.inboxes(agents) {
		for _, r := range rows {
			if r.MessageID == id {
				out[ag] = append(out[ag], r)
			}
		}
	}
	return out
}

// wantOneRowEach checks that each agent has exactly one attention row for
// message id, with reasons.
func (f *fixture) wantOneRowEach(agents []string, id string, reasons int) {
	f.t.Helper()
	got := f.rowsFor(agents, id)
	for _, ag := range agents {
		if rows := got[ag]; len(rows) != 1 || rows[0].Reasons != reasons {
			f.t.Fatalf("agent %s: rows %+v for message %s; want exactly 1 with reasons %d", ag, rows, id, reasons)
		}
	}
}

// countRows counts the agents that have a row for message id, failing on
// any agent with more than one.
func (f *fixture) countRows(agents []string, id string) int {
	f.t.Helper()
	have := 0
	for ag, rows := range f.rowsFor(agents, id) {
		if len(rows) > 1 {
			f.t.Fatalf("agent %s: %d rows for message %s, want at most 1", ag, len(rows), id)
		}
		have += len(rows)
	}
	return have
}

// seqs returns the stream sequences of a page.
func seqs(msgs []hub.MessageDTO) []uint64 {
	out := make([]uint64, len(msgs))
	for i, m := range msgs {
		out[i] = uint64(m.StreamSeq)
	}
	return out
}

// reasonsFor returns the reasons of agent's row for message id, and how
// many rows there are for it.
func (f *fixture) reasonsFor(agent, id string) (reasons, rows int) {
	f.t.Helper()
	for _, r := range f.attention(agent) {
		if r.MessageID == id {
			reasons, rows = r.Reasons, rows+1
		}
	}
	return reasons, rows
}

func encodeJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	return b
}
