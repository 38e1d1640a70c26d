package hub_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/limits"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// BenchmarkCheckpointSaveLimiter measures checkpoint_save with the
// limiter off and on. "on" counts every write in the agent's and the box's
// store-kept buckets and every call in the per-instance ones, at rates too
// high to refuse anything, so what is measured is the limiter's cost.
func BenchmarkCheckpointSaveLimiter(b *testing.B) {
	huge := limits.Rate{PerSecond: 1e9, Burst: 1e9}
	on := limits.Config{AgentMutations: huge, BoxMutations: huge, AgentCalls: huge, BoxCalls: huge}
	for _, ad := range teststores.All() {
		for _, mode := range []struct {
			name string
			cfg  *limits.Config
		}{{"off", nil}, {"on", &on}} {
			b.Run(ad.Name+"/"+mode.name, func(b *testing.B) {
				ctx := context.Background()
				h := hub.New(ad.Open(b, nil), hub.Options{Limits: mode.cfg})
				box, err := h.Admin().CreateBox(ctx, "bench")
				if err != nil {
					b.Fatal(err)
				}
				ag, err := h.Admin().CreateAgent(ctx, box.BoxID, "bencher", "")
				if err != nil {
					b.Fatal(err)
				}
				out, err := h.Prime(ctx, hub.Credentials{Bearer: ag.BoxKey}, hub.PrimeInput{})
				if err != nil {
					b.Fatalf("Prime: %v", err)
				}
				cr := hub.Credentials{Bearer: ag.BoxKey, SessionID: out.SessionID}
				rev, i := hub.Revision(0), 0
				for b.Loop() {
					i++
					res, err := h.CheckpointSave(ctx, cr, hub.CheckpointSaveInput{
						Mutation:         hub.Mutation{IdempotencyKey: fmt.Sprintf("bench-%d", i)},
						ExpectedRevision: rev, BodyMD: "checkpoint body",
					})
					if err != nil {
						b.Fatalf("CheckpointSave: %v", err)
					}
					rev = res.Checkpoint.Revision
				}
			})
		}
	}
}
