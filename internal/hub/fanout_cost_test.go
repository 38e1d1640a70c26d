package hub_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
	"github.com/google/uuid"
)

// growRoom makes room hold n members following all: alice and bob, and
// n-2 more members cloned by store edit from bob's membership (their agents
// need no records for a fan-out, which only numbers rows in their inboxes).
// It returns every member but alice, the author of the posts. Earlier
// clones (from a smaller n) are kept.
func (f *fixture) growRoom(room string, n int, have []string) []string {
	f.t.Helper()
	bk := store.Key{PK: "room#" + room, SK: "member#" + f.b.AgentID}
	bob, err := f.raw.Get(f.ctx, bk)
	if err != nil || bob == nil {
		f.t.Fatalf("Get(bob's membership) = %v, %v", bob, err)
	}
	var m map[string]any
	if err := json.Unmarshal(bob.Data, &m); err != nil {
		f.t.Fatalf("decoding bob's membership: %v", err)
	}
	m["follow"] = hub.FollowAll
	if len(have) == 0 {
		have = []string{f.b.AgentID}
		next := *bob
		next.Version++
		next.Data, _ = json.Marshal(m)
		if err := f.raw.Write(f.ctx, []store.Op{store.Put(&next, store.AtVersion(bob.Version))}); err != nil {
			f.t.Fatalf("Write(bob follows all): %v", err)
		}
	}
	var ops []store.Op
	flush := func() {
		if err := f.raw.Write(f.ctx, ops); err != nil {
			f.t.Fatalf("Write(members): %v", err)
		}
		ops = ops[:0]
	}
	for len(have) < n-1 {
		id := uuid.NewString()
		m["agent_id"], m["agent_name"] = id, "member-"+id[:8]
		data, _ := json.Marshal(m)
		ops = append(ops, store.Put(&store.Item{PK: bk.PK, SK: "member#" + id, Version: bob.Version, Data: data}, store.Absent))
		have = append(have, id)
		if len(ops) == store.MaxWriteItems {
			flush()
		}
	}
	if len(ops) > 0 {
		flush()
	}
	return have
}

// inboxHeads reads the inbox heads of agents (0 where none).
func (f *fixture) inboxHeads(agents []string) []uint64 {
	f.t.Helper()
	out := make([]uint64, 0, len(agents))
	for lo := 0; lo < len(agents); lo += store.MaxWriteItems {
		chunk := agents[lo:min(lo+store.MaxWriteItems, len(agents))]
		keys := make([]store.Key, len(chunk))
		for i, a := range chunk {
			keys[i] = store.Key{PK: "agent#" + a, SK: "inbox"}
		}
		items, err := f.raw.BatchGet(f.ctx, keys)
		if err != nil {
			f.t.Fatalf("BatchGet(inbox heads): %v", err)
		}
		for _, it := range items {
			v := uint64(0)
			if it != nil {
				v = it.Version
			}
			out = append(out, v)
		}
	}
	return out
}

// TestFanoutCostIsLinear prices a 1 KB post to rooms of 100, 1,000 and
// 10,000 members all following all, on DynamoDB's rules (teststores.Metered):
// the write units per recipient stay within a small constant of a DM's —
// the whole DM costs more than one room recipient does — and do not grow
// with the room: the recipient list is written once, and each fan-out step
// moves only a small progress record. Every recipient gets exactly one row.
// On the DynamoDB emulator, many times slower, the largest room has 2,000
// members (the units are the same code's, priced on the embedded store).
func TestFanoutCostIsLinear(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		sizes := []int{100, 1000, 10000}
		if ad.Name != teststores.All()[0].Name {
			sizes = []int{100, 2000}
		}
		var m *teststores.Metered
		f := newFixture(t, ad, func(s store.Store) store.Store { m = teststores.NewMetered(s); return m })
		room := f.mustRoom("town", "", f.a, f.b)
		cr := f.prime(f.a)
		body := strings.Repeat("x", 1000)

		m.Reset()
		if _, err := ibDM(f, cr, "dm", f.b.AgentID, body); err != nil {
			t.Fatalf("DM: %v", err)
		}
		dmT, dmI := m.Reset()
		dm := dmT.Write + dmI.Write

		var members []string
		perRecipient := make([]float64, len(sizes))
		total := make([]float64, len(sizes))
		var report strings.Builder
		fmt.Fprintf(&report, "DM: %g write units\n", dm)
		for i, n := range sizes {
			members = f.growRoom(room.RoomID, n, members)
			before := f.inboxHeads(members)
			m.Reset()
			out, err := ibPost(f, cr, fmt.Sprintf("post-%d", n), room.RoomID, body)
			if err != nil {
				t.Fatalf("post to %d members: %v", n, err)
			}
			tb, ix := m.Reset()
			if out.AttentionCount != n-1 {
				t.Fatalf("post to %d members: attention_count %d, want %d", n, out.AttentionCount, n-1)
			}
			for j, h := range f.inboxHeads(members) {
				if h != before[j]+1 {
					t.Fatalf("post to %d members: recipient %d's inbox head %d → %d, want exactly one row", n, j, before[j], h)
				}
			}
			total[i] = tb.Write + ix.Write
			perRecipient[i] = total[i] / float64(n-1)
			fmt.Fprintf(&report, "room of %d: %g write units (%.2f per recipient), %g read units\n",
				n, total[i], perRecipient[i], tb.Read+ix.Read)
			if perRecipient[i] > dm {
				t.Errorf("room of %d: %.2f write units per recipient, more than a whole DM (%g)", n, perRecipient[i], dm)
			}
		}
		t.Logf("1 KB post, every member following all:\n%s", report.String())
		// Linear: what one more recipient costs is the same between every
		// two sizes (within a unit), and the average never grows.
		marginal := func(i int) float64 { return (total[i] - total[i-1]) / float64(sizes[i]-sizes[i-1]) }
		for i := 1; i < len(sizes); i++ {
			if perRecipient[i] > perRecipient[i-1]+0.01 {
				t.Errorf("write units per recipient grow with the room: %.2f at %d, %.2f at %d",
					perRecipient[i-1], sizes[i-1], perRecipient[i], sizes[i])
			}
			if i > 1 && (marginal(i) > marginal(i-1)+1 || marginal(i) < marginal(i-1)-1) {
				t.Errorf("one more recipient costs %.2f write units from %d to %d members, %.2f from %d to %d: not linear",
					marginal(i-1), sizes[i-2], sizes[i-1], marginal(i), sizes[i-1], sizes[i])
			}
		}
	})
}
