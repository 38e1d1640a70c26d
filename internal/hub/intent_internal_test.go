package hub

import (
	"context"
	"fmt"
	"github.com/agentbox/agentbox/internal/hub/table"
	"slices"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
	"github.com/google/uuid"
)

// TestIntentShards: boxes spread over the open-intent index shards, and the
// sweep reads every shard (and the unsharded partition of earlier
// versions).
func TestIntentShards(t *testing.T) {
	parts := table.IntentPartitions()
	seen := map[string]bool{}
	for range 200 {
		s := table.IntentShard(uuid.NewString())
		if !slices.Contains(parts, s) {
			t.Fatalf("shard %q is not among the partitions the sweep reads", s)
		}
		seen[s] = true
	}
	if len(seen) < table.IntentShards*3/4 {
		t.Errorf("200 boxes use %d of %d shards, want them spread", len(seen), table.IntentShards)
	}
	if !slices.Contains(parts, table.IntentIndex) {
		t.Errorf("the sweep does not read the unsharded partition of earlier versions")
	}
}

// TestSweepFinishesEveryShard: the sweep finishes intents of many boxes in
// their shards, oldest first within its limit, and a fan-out intent of an
// earlier version (its recipients in the intent, listed on the unsharded
// partition) too.
func TestSweepFinishesEveryShard(t *testing.T) {
	for _, ad := range teststores.All() {
		t.Run(ad.Name, func(t *testing.T) {
			clock := teststores.NewClock()
			st := ad.Open(t, clock.Now)
			h := New(st, Options{Now: clock.Now})
			ctx := context.Background()
			open := func(it *store.Item) {
				t.Helper()
				if err := st.Write(ctx, []store.Op{store.Put(it, store.Absent)}); err != nil {
					t.Fatalf("Write(intent): %v", err)
				}
			}
			var agents []string
			for i := range 12 {
				agent := uuid.NewString()
				agents = append(agents, agent)
				fan := fanoutPayload{MessageID: uuid.NewString(), Stream: "room#r" + fmt.Sprint(i), Seq: 1, At: clock.Now(),
					To: []recipient{{Agent: agent, Reasons: ReasonFollowAll}}}
				rec := newIntent(intentFanout, 1, fan, clock.Now().Add(time.Duration(i)*time.Millisecond), uuid.NewString())
				it := rec.Item()
				if i == 0 {
					// As an earlier version wrote it: one partition for all.
					it.GSI1PK = table.IntentIndex
				}
				open(it)
			}
			clock.Advance(time.Second)
			heads := func(swept int) {
				t.Helper()
				for i, a := range agents {
					it, err := st.Get(ctx, table.InboxHeadKey(a))
					if want := uint64(min(1, max(swept-i, 0))); err != nil || version(it) != want {
						t.Fatalf("recipient %d's inbox head = %d, %v; want %d", i, version(it), err, want)
					}
				}
			}
			if n, err := h.Sweep(ctx, 0, 5); err != nil || n != 5 {
				t.Fatalf("Sweep(limit 5) = %d, %v; want 5", n, err)
			}
			heads(5) // the oldest five, across shards
			if n, err := h.Sweep(ctx, 0, 100); err != nil || n != 7 {
				t.Fatalf("Sweep = %d, %v; want the other 7", n, err)
			}
			heads(len(agents))
			if n, err := h.Sweep(ctx, 0, 100); err != nil || n != 0 {
				t.Fatalf("Sweep after all = %d, %v; want 0", n, err)
			}
		})
	}
}
