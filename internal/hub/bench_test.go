package hub_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/hub/hubtest"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

func benchFixture(b *testing.B, ad teststores.Adapter) (*hub.Hub, *hub.AgentInfo) {
	b.Helper()
	return benchFixtureOpts(b, ad, hub.Options{})
}

// benchFixtureOpts is the shared world on ad with a hub configured by opts,
// and its agent alice.
func benchFixtureOpts(b *testing.B, ad teststores.Adapter, opts hub.Options) (*hub.Hub, *hub.AgentInfo) {
	b.Helper()
	w := hubtest.New(b, ad, hubtest.Config{Options: opts})
	return w.Hub, w.Alice
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

// briefBench is a room with a brief of about briefBytes (escaped-heavy
// Markdown, as decoding it is the cost at stake) and w members.
func briefBench(b *testing.B, w, briefBytes int) (*hub.Hub, string, []hub.Credentials) {
	b.Helper()
	world := hubtest.New(b, teststores.All()[0], hubtest.Config{}) // bolt
	brief := strings.Repeat("- \"quoted\" <tag> & line\n", briefBytes/25)
	room, err := world.Admin.CreateRoom(world.Ctx, world.Box, "hot", brief)
	if err != nil {
		b.Fatalf("CreateRoom: %v", err)
	}
	var crs []hub.Credentials
	for i := range w {
		ag := world.MustAgent(world.Box, fmt.Sprintf("writer-%d", i))
		if _, err := world.Admin.AddMember(world.Ctx, room.RoomID, ag.AgentID); err != nil {
			b.Fatalf("AddMember: %v", err)
		}
		crs = append(crs, world.Prime(ag))
	}
	return world.Hub, room.RoomID, crs
}

// BenchmarkBriefConflict compares a room_brief_update at a stale revision
// on a 60 KiB brief with room_get, which reads the brief's revision: a
// losing CAS attempt should cost no more than reading the revision.
func BenchmarkBriefConflict(b *testing.B) {
	b.Run("stale_update", func(b *testing.B) {
		h, room, crs := briefBench(b, 1, 60<<10)
		ctx := context.Background()
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			i++
			_, err := h.RoomBriefUpdate(ctx, crs[0], hub.RoomBriefUpdateInput{
				Mutation: hub.Mutation{IdempotencyKey: fmt.Sprintf("stale-%d", i)},
				RoomID:   room, ExpectedRevision: 7, AppendMD: "late",
			})
			if e, ok := apperr.As(err); !ok || e.Code != apperr.RevisionConflict {
				b.Fatalf("RoomBriefUpdate(stale) = %v, want REVISION_CONFLICT", err)
			}
		}
	})
	b.Run("room_get", func(b *testing.B) {
		h, room, crs := briefBench(b, 1, 60<<10)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := h.RoomGet(ctx, crs[0], hub.RoomIDInput{RoomID: room}); err != nil {
				b.Fatalf("RoomGet: %v", err)
			}
		}
	})
}

// BenchmarkBriefHotCAS has 16 members append to one 48 KiB brief at once,
// each retrying a lost CAS at the revision the conflict reports. An op is
// one successful append; it reports lost attempts and process CPU per
// append.
func BenchmarkBriefHotCAS(b *testing.B) {
	const w = 16
	h, room, crs := briefBench(b, w, 48<<10)
	ctx := context.Background()
	var appended, lost atomic.Int64
	cpu := cpuTime(b)
	b.ResetTimer()
	var wg sync.WaitGroup
	for i, cr := range crs {
		wg.Go(func() {
			rev := hub.Revision(1)
			for n := 0; appended.Load() < int64(b.N); n++ {
				out, err := h.RoomBriefUpdate(ctx, cr, hub.RoomBriefUpdateInput{
					Mutation: hub.Mutation{IdempotencyKey: fmt.Sprintf("w%d-%d", i, n)},
					RoomID:   room, ExpectedRevision: rev, AppendMD: "x",
				})
				if e, ok := apperr.As(err); ok && e.Code == apperr.RevisionConflict {
					lost.Add(1)
					rev = hub.Revision(*e.CurrentRevision)
					continue
				}
				if err != nil {
					b.Errorf("RoomBriefUpdate: %v", err)
					return
				}
				appended.Add(1)
				rev = out.Brief.Revision
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(lost.Load())/float64(appended.Load()), "conflicts/append")
	b.ReportMetric(float64(cpuTime(b)-cpu)/float64(appended.Load()), "cpu-ns/append")
}

// cpuTime is the CPU time (user and system) the process has used so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
