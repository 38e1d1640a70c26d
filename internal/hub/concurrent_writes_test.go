package hub_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// barrierCases runs run as one subtest per case, named by name, on every
// adapter, each on a fresh fixture whose writes b can hold.
func barrierCases[C any](t *testing.T, cases []C, name func(C) string, run func(t *testing.T, f *fixture, b *writeBarrier, tc C)) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		for _, tc := range cases {
			t.Run(name(tc), func(t *testing.T) {
				var b *writeBarrier
				f := newFixture(t, ad, withBarrier(&b))
				run(t, f, b, tc)
			})
		}
	})
}

// TestCASRace: writers of one revisioned record, all reading before any
// writes (race), race to replace the same revision: exactly one wins and
// every loser is REVISION_CONFLICT naming the current revision; the record
// then holds the winner's write.
func TestCASRace(t *testing.T) {
	type casCase struct {
		tool    string
		current uint64 // the revision a loser is told
		// setup seeds f and returns racer i's write and the check of the
		// record after winner won.
		setup func(t *testing.T, f *fixture) (racer func(i int) error, check func(winner int))
	}
	cases := []casCase{
		{"checkpoint_save", 2, func(t *testing.T, f *fixture) (func(int) error, func(int)) {
			cr := f.prime(f.a)
			if _, err := save(f, cr, "seed", 0, "v1"); err != nil {
				t.Fatalf("CheckpointSave: %v", err)
			}
			return func(i int) error {
					_, err := save(f, cr, fmt.Sprintf("racer-%d", i), 1, fmt.Sprintf("from racer %d", i))
					return err
				}, func(winner int) {
					got, _ := f.h.CheckpointGet(f.ctx, cr, hub.CheckpointGetInput{})
					if want := fmt.Sprintf("from racer %d", winner); got.Checkpoint.Revision != 2 || got.Checkpoint.BodyMD != want {
						t.Fatalf("after race: %+v, want revision 2 with %q", got.Checkpoint, want)
					}
				}
		}},
		{"directory_update_self", 1, func(t *testing.T, f *fixture) (func(int) error, func(int)) {
			cr := f.prime(f.a)
			return func(i int) error {
					_, err := updateCard(f, cr, fmt.Sprintf("racer-%d", i), 0, fmt.Sprintf("role of racer %d", i))
					return err
				}, func(winner int) {
					got, err := f.h.DirectoryGet(f.ctx, cr, hub.DirectoryGetInput{AgentID: f.a.AgentID})
					if err != nil || got.Card.Revision != 1 || got.Card.Role != fmt.Sprintf("role of racer %d", winner) {
						t.Errorf("card after race = %+v, %v; want racer %d's role at revision 1", got, err, winner)
					}
				}
		}},
		{"save_memory", 2, func(t *testing.T, f *fixture) (func(int) error, func(int)) {
			cr := f.prime(f.a)
			cr2 := f.prime(f.a) // a second session of the same agent
			mustCreateNote(f, cr, "plan", "v1")
			return func(i int) error {
					c := cr
					if i%2 == 1 {
						c = cr2
					}
					_, err := saveNote(f, c, "plan", 1, fmt.Sprintf("racer %d", i), "")
					return err
				}, func(winner int) {
					got, _ := getNote(f, cr, "plan")
					if want := fmt.Sprintf("racer %d", winner); got.Note.Content != want || got.Note.Version != 2 {
						t.Fatalf("after race: %+v, want the winner's %q at version 2", got.Note, want)
					}
				}
		}},
		{"update_space", 2, func(t *testing.T, f *fixture) (func(int) error, func(int)) {
			crA, crB := f.prime(f.a), f.prime(f.b)
			sp := mustCreateSpace(f, crA, "public", "v1")
			return func(i int) error {
					cr := crA
					if i%2 == 1 {
						cr = crB
					}
					_, err := updateSpace(f, cr, sp.ID, 1, fmt.Sprintf("racer %d", i), "paused", "")
					return err
				}, func(winner int) {
					got, _ := getSpace(f, crA, sp.ID)
					if want := fmt.Sprintf("racer %d", winner); got.Space.Title != want || got.Space.Version != 2 {
						t.Fatalf("after race: %+v, want the winner's %q at version 2", got.Space, want)
					}
				}
		}},
	}
	barrierCases(t, cases, func(tc casCase) string { return tc.tool }, func(t *testing.T, f *fixture, b *writeBarrier, tc casCase) {
		racer, check := tc.setup(t, f)
		check(race(t, b, 8, tc.current, racer))
	})
}

// TestConcurrentDuplicates forces the interleaving in which every
// duplicate has read (and found no record) before any writes: the losers
// must answer the winner's receipt from the failed write, not run twice.
func TestConcurrentDuplicates(t *testing.T) {
	type dupCase struct {
		tool string
		// setup returns one duplicate's call (is its answer a replay?) and
		// the check after all have answered.
		setup func(t *testing.T, f *fixture) (call func() (bool, error), after func())
	}
	cases := []dupCase{
		{"checkpoint_save", func(t *testing.T, f *fixture) (func() (bool, error), func()) {
			cr := f.prime(f.a)
			return func() (bool, error) {
					out, err := save(f, cr, "dup", 0, "once")
					if err != nil {
						return false, err
					}
					if out.Checkpoint.Revision != 1 {
						return false, fmt.Errorf("revision %d, want 1", out.Checkpoint.Revision)
					}
					return out.Replayed, nil
				}, func() {
					retry, err := save(f, cr, "dup", 0, "once")
					if err != nil || !retry.Replayed || retry.Checkpoint.Revision != 1 {
						t.Fatalf("retry = %+v, %v; want replay of revision 1", retry, err)
					}
				}
		}},
		{"create_space", func(t *testing.T, f *fixture) (func() (bool, error), func()) {
			cr := f.prime(f.a)
			var mu sync.Mutex
			var outs []*hub.SpaceMutationOutput
			return func() (bool, error) {
					out, err := createSpace(f, cr, "private", "Once", "dup-create")
					if err != nil {
						return false, err
					}
					mu.Lock()
					outs = append(outs, out)
					mu.Unlock()
					return out.Replayed, nil
				}, func() {
					resource := outs[0].Operation.ResourceID
					for i, out := range outs {
						if out.Operation.ResourceID != resource {
							t.Errorf("duplicate %d: resource %s, want %s (one space)", i, out.Operation.ResourceID, resource)
						}
						if out.Replayed && out.Space != nil {
							t.Errorf("duplicate %d: a replay carries the space body; want only the receipt", i)
						}
					}
					if got := ids(mustList(f, cr)); !slices.Equal(got, []string{resource}) {
						t.Fatalf("spaces after duplicates = %v, want only %s", got, resource)
					}
				}
		}},
	}
	barrierCases(t, cases, func(tc dupCase) string { return tc.tool }, func(t *testing.T, f *fixture, b *writeBarrier, tc dupCase) {
		call, after := tc.setup(t, f)
		duplicates(t, b, 10, call)
		after()
	})
}
