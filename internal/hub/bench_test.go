package hub_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

func benchFixture(b *testing.B, ad teststores.Adapter) (*hub.Hub, *hub.AgentInfo) {
	b.Helper()
	return benchFixtureOpts(b, ad, hub.Options{})
}

// benchFixtureOpts is benchFixture with a hub configured by opts.
func benchFixtureOpts(b *testing.B, ad teststores.Adapter, opts hub.Options) (*hub.Hub, *hub.AgentInfo) {
	b.Helper()
	st := ad.Open(b, nil)
	h := hub.New(st, opts)
	ctx := context.Background()
	box, err := h.Admin().CreateBox(ctx, "bench")
	if err != nil {
		b.Fatalf("CreateBox: %v", err)
	}
	ag, err := h.Admin().CreateAgent(ctx, box.BoxID, "bencher", "")
	if err != nil {
		b.Fatalf("CreateAgent: %v", err)
	}
	return h, ag
}

// BenchmarkPrime measures agent_prime resuming one session.
func BenchmarkPrime(b *testing.B) {
	for _, ad := range teststores.All() {
		b.Run(ad.Name, func(b *testing.B) {
			h, ag := benchFixture(b, ad)
			ctx := context.Background()
			out, err := h.Prime(ctx, hub.Credentials{Bearer: ag.BoxKey}, hub.PrimeInput{})
			if err != nil {
				b.Fatalf("Prime: %v", err)
			}
			cr := hub.Credentials{Bearer: ag.BoxKey, SessionID: out.SessionID}
			b.ResetTimer()
			for b.Loop() {
				if _, err := h.Prime(ctx, cr, hub.PrimeInput{}); err != nil {
					b.Fatalf("Prime: %v", err)
				}
			}
		})
	}
}

// BenchmarkCheckpointSave measures a CAS checkpoint save with a fresh
// mutation ID each time.
func BenchmarkCheckpointSave(b *testing.B) {
	for _, ad := range teststores.All() {
		b.Run(ad.Name, func(b *testing.B) {
			h, ag := benchFixture(b, ad)
			benchSaves(b, h, ag)
		})
	}
}

// benchSaves primes ag and times checkpoint saves, each with a fresh
// mutation ID.
func benchSaves(b *testing.B, h *hub.Hub, ag *hub.AgentInfo) {
	b.Helper()
	ctx := context.Background()
	out, err := h.Prime(ctx, hub.Credentials{Bearer: ag.BoxKey}, hub.PrimeInput{})
	if err != nil {
		b.Fatalf("Prime: %v", err)
	}
	cr := hub.Credentials{Bearer: ag.BoxKey, SessionID: out.SessionID}
	rev := hub.Revision(0)
	i := 0
	b.ResetTimer()
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
}
