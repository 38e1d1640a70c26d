package hub_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

func saveNote(f *fixture, cr hub.Credentials, name string, version int64, content, opKey string) (*hub.MemoryMutationOutput, error) {
	return f.h.SaveMemory(f.ctx, cr, hub.SaveMemoryInput{NoteRef: hub.NoteRef{ID: name}, Data: hub.SaveMemoryData{
		ExpectedVersion: version, Content: content, OpKey: hub.OpKey{OperationKey: opKey}}})
}

func getNote(f *fixture, cr hub.Credentials, name string) (*hub.MemoryOutput, error) {
	return f.h.GetMemory(f.ctx, cr, hub.GetMemoryInput{NoteRef: hub.NoteRef{ID: name}})
}

func deleteNote(f *fixture, cr hub.Credentials, name string, version int64, opKey string) (*hub.DeleteMemoryOutput, error) {
	return f.h.DeleteMemory(f.ctx, cr, hub.DeleteMemoryInput{NoteRef: hub.NoteRef{ID: name}, Data: hub.DeleteMemoryData{
		ExpectedVersion: version, OpKey: hub.OpKey{OperationKey: opKey}}})
}

func listNotes(f *fixture, cr hub.Credentials, limit int) ([]string, *hub.ListMemoryOutput) {
	f.t.Helper()
	var names []string
	var last *hub.ListMemoryOutput
	cur := ""
	pages := loopLimit(f.t, "ListMemory pages", 1000, time.Minute)
	for {
		pages.must()
		out, err := f.h.ListMemory(f.ctx, cr, hub.ListMemoryInput{Data: hub.ListMemoryData{Cursor: cur, Limit: limit}})
		if err != nil {
			f.t.Fatalf("ListMemory(cursor %q, limit %d): %v", cur, limit, err)
		}
		for _, it := range out.Items {
			names = append(names, it.Name)
		}
		last = out
		if out.NextCursor == "" {
			return names, last
		}
		cur = out.NextCursor
	}
}

// mustCreateNote saves a new note (version 0) of cr's agent.
func mustCreateNote(f *fixture, cr hub.Credentials, name, content string) {
	f.t.Helper()
	if _, err := saveNote(f, cr, name, 0, content, ""); err != nil {
		f.t.Fatalf("SaveMemory(%s, 0): %v", name, err)
	}
}

// wantNoteCount checks the note count list_memory reports to cr.
func wantNoteCount(f *fixture, cr hub.Credentials, want int64, why string) {
	f.t.Helper()
	if _, last := listNotes(f, cr, 10); last.Total != want {
		f.t.Errorf("ListMemory total = %d, want %d (%s)", last.Total, want, why)
	}
}

func TestMemoryLifecycle(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		cr := f.prime(f.a)
		_, err := getNote(f, cr, "working-context")
		wantCode(t, "GetMemory(never saved)", err, apperr.NotFoundOrForbidden)

		out, err := saveNote(f, cr, "working-context", 0, "first", "")
		if err != nil || out.Note.Version != 1 || out.Note.Content != "first" || out.Operation.Tool != "save_memory" ||
			out.Operation.ResourceID != "working-context" || out.Operation.Version != 1 {
			t.Fatalf("SaveMemory(0) = %+v, %v; want version 1", out, err)
		}
		out, err = saveNote(f, cr, "working-context", 1, "second", "")
		if err != nil || out.Note.Version != 2 {
			t.Fatalf("SaveMemory(1) = %+v, %v; want version 2", out, err)
		}
		got, err := getNote(f, cr, "working-context")
		if err != nil || got.Note.Content != "second" || got.Note.Version != 2 || got.Note.CreatedAt == "" {
			t.Fatalf("GetMemory = %+v, %v; want 'second' at version 2", got, err)
		}
		mustCreateNote(f, cr, "todo", "a list")
		names, last := listNotes(f, cr, 10)
		if !slices.Equal(names, []string{"todo", "working-context"}) || last.Total != 2 || last.MaxNotes != hub.MaxMemoryNotes {
			t.Fatalf("ListMemory = %v (total %d of %d), want [todo working-context] total 2", names, last.Total, last.MaxNotes)
		}
		if it := last.Items[1]; it.Version != 2 || it.ContentBytes != len("second") {
			t.Errorf("ListMemory item = %+v, want version 2 of %d bytes", it, len("second"))
		}

		_, err = deleteNote(f, cr, "working-context", 1, "")
		if e := wantCode(t, "DeleteMemory(stale)", err, apperr.RevisionConflict); e.CurrentRevision == nil || *e.CurrentRevision != 2 {
			t.Errorf("REVISION_CONFLICT current = %v, want 2", e.CurrentRevision)
		}
		del, err := deleteNote(f, cr, "working-context", 2, "")
		if err != nil || del.Deleted.Name != "working-context" || del.Deleted.Version != 2 {
			t.Fatalf("DeleteMemory(2) = %+v, %v; want version 2 deleted", del, err)
		}
		_, err = getNote(f, cr, "working-context")
		wantCode(t, "GetMemory(deleted)", err, apperr.NotFoundOrForbidden)
		_, err = deleteNote(f, cr, "working-context", 2, "")
		wantCode(t, "DeleteMemory(deleted)", err, apperr.NotFoundOrForbidden)
		// A deleted name can be created again from version 0, above every
		// version it had (TestStaleVersionOfDeletedNote).
		if out, err := saveNote(f, cr, "working-context", 0, "reborn", ""); err != nil || out.Note.Version != 3 {
			t.Fatalf("SaveMemory(0) after delete = %+v, %v; want version 3", out, err)
		}
		wantNoteCount(f, cr, 2, "the deleted name created again")
	})
}

func TestSaveMemoryCAS(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		cr := f.prime(f.a)
		mustCreateNote(f, cr, "plan", "v1")
		cases := []struct {
			name    string
			version int64
		}{{"CreateExisting", 0}, {"Future", 2}, {"FarFuture", 9}}
		for _, tc := range cases {
			_, err := saveNote(f, cr, "plan", tc.version, "overwrite", "")
			e := wantCode(t, fmt.Sprintf("SaveMemory(%s, %d)", tc.name, tc.version), err, apperr.RevisionConflict)
			if e.CurrentRevision == nil || *e.CurrentRevision != 1 {
				t.Errorf("%s: current = %v, want 1", tc.name, e.CurrentRevision)
			}
		}
		_, err := saveNote(f, cr, "missing", 1, "x", "")
		if e := wantCode(t, "SaveMemory(missing, 1)", err, apperr.RevisionConflict); e.CurrentRevision == nil || *e.CurrentRevision != 0 {
			t.Errorf("current = %v, want 0 for a missing name", e.CurrentRevision)
		}
		got, _ := getNote(f, cr, "plan")
		if got.Note.Content != "v1" || got.Note.Version != 1 {
			t.Fatalf("after stale saves: %+v, want v1 at version 1", got.Note)
		}
	})
}

// TestCreateOnlyUnderConcurrentCreators: version 0 creates a missing name
// only, also when the creators arrive together.
func TestCreateOnlyUnderConcurrentCreators(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var b *writeBarrier
		f := newFixture(t, ad, withBarrier(&b))
		cr := f.prime(f.a)
		w := race(t, b, 8, 1, func(i int) error {
			_, err := saveNote(f, cr, "fresh", 0, fmt.Sprintf("creator %d", i), "")
			return err
		})
		got, _ := getNote(f, cr, "fresh")
		if want := fmt.Sprintf("creator %d", w); got.Note.Content != want || got.Note.Version != 1 {
			t.Fatalf("after concurrent creates: %+v, want the winner's %q at version 1", got.Note, want)
		}
		wantNoteCount(f, cr, 1, "one create won")
		// Creators of different names all succeed, and the count is exact.
		const n = 6
		b.arm(n) // every creator reads the same count
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = saveNote(f, cr, fmt.Sprintf("note-%d", i), 0, "x", "")
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("SaveMemory(note-%d): %v", i, err)
			}
		}
		names, last := listNotes(f, cr, 100)
		if len(names) != n+1 || last.Total != int64(n+1) {
			t.Fatalf("after %d concurrent creates: %d notes listed, count %d; want %d", n, len(names), last.Total, n+1)
		}
	})
}

func TestMemoryOperationKey(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var b *writeBarrier
		f := newFixture(t, ad, withBarrier(&b))
		cr := f.prime(f.a)
		first, err := saveNote(f, cr, "plan", 0, "v1", "save-plan-1")
		if err != nil {
			t.Fatalf("SaveMemory: %v", err)
		}
		again, err := saveNote(f, cr, "plan", 0, "v1", "save-plan-1")
		if err != nil {
			t.Fatalf("SaveMemory(replay): %v", err)
		}
		raw, _ := json.Marshal(again)
		want, _ := json.Marshal(map[string]any{"operation": first.Operation, "replayed": true})
		if string(raw) != string(want) {
			t.Fatalf("replay = %s, want the compact receipt %s", raw, want)
		}
		_, err = saveNote(f, cr, "plan", 0, "v1 changed", "save-plan-1")
		wantCode(t, "SaveMemory(same key, other content)", err, apperr.IdempotencyConflict)
		_, err = saveNote(f, cr, "other", 0, "v1", "save-plan-1")
		wantCode(t, "SaveMemory(same key, other name)", err, apperr.IdempotencyConflict)

		// Concurrent replays of a delete, all reading before any writes:
		// one deletes, the rest replay.
		duplicates(t, b, 8, func() (bool, error) {
			out, err := deleteNote(f, cr, "plan", 1, "delete-plan")
			if err != nil {
				return false, err
			}
			if out.Operation.Version != 1 || out.Operation.ResourceID != "plan" {
				t.Errorf("delete duplicate: receipt %+v, want plan version 1", out.Operation)
			}
			return out.Replayed, nil
		})
		// Even after the name is created again, the key answers its receipt.
		mustCreateNote(f, cr, "plan", "new plan")
		late, err := deleteNote(f, cr, "plan", 1, "delete-plan")
		if err != nil || !late.Replayed || late.Deleted != nil {
			t.Fatalf("late delete replay = %+v, %v; want the receipt only", late, err)
		}
		if got, err := getNote(f, cr, "plan"); err != nil || got.Note.Content != "new plan" {
			t.Fatalf("GetMemory = %+v, %v; want the recreated note untouched by the replay", got, err)
		}
		wantNoteCount(f, cr, 1, "the recreated note")
	})
}

// TestMemoryIsPrivate: another agent, of this box or another, cannot read,
// list or touch a note; it gets the bytes an unknown name gets.
func TestMemoryIsPrivate(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		crA := f.prime(f.a)
		mustCreateNote(f, crA, "secret", "alice's secret")
		_, err := getNote(f, crA, "never-saved")
		unknown := envelopeJSON(t, err)
		for name, cr := range map[string]hub.Credentials{"SameBox": f.prime(f.b), "OtherBox": f.prime(f.other)} {
			t.Run(name, func(t *testing.T) {
				_, err := getNote(f, cr, "secret")
				wantCode(t, "GetMemory(alice's note)", err, apperr.NotFoundOrForbidden)
				if got := envelopeJSON(t, err); got != unknown {
					t.Errorf("GetMemory(alice's note) envelope = %s, want the unknown name's %s", got, unknown)
				}
				_, err = deleteNote(f, cr, "secret", 1, "")
				if got := envelopeJSON(t, err); got != unknown {
					t.Errorf("DeleteMemory(alice's note) envelope = %s, want the unknown name's %s", got, unknown)
				}
				_, err = saveNote(f, cr, "secret", 1, "overwrite", "")
				wantCode(t, "SaveMemory(alice's note, version 1)", err, apperr.RevisionConflict)
				if names, _ := listNotes(f, cr, 10); len(names) != 0 {
					t.Errorf("ListMemory = %v, want nothing of alice's", names)
				}
			})
		}
		got, err := getNote(f, crA, "secret")
		if err != nil || got.Note.Content != "alice's secret" || got.Note.Version != 1 {
			t.Fatalf("alice's note = %+v, %v; want it untouched", got, err)
		}
	})
}

func TestMemoryLimits(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		cr := f.prime(f.a)
		cases := []struct {
			name, note, content string
			want                apperr.Code
		}{
			{"Content1Byte", "a", "x", ""},
			{"Content16KiB", "b", strings.Repeat("é", 8192), ""},
			{"Content16KiBPlus1", "c", strings.Repeat("é", 8192) + "x", apperr.LimitExceeded},
			{"ContentEmpty", "d", "", apperr.InvalidArgument},
			{"ContentInvalidUTF8", "e", "\xff", apperr.InvalidArgument},
			{"Name80", strings.Repeat("n", 80), "x", ""},
			{"Name81", strings.Repeat("n", 81), "x", apperr.LimitExceeded},
			{"NameUpper", "Working", "x", apperr.InvalidArgument},
			{"NameDoubleHyphen", "a--b", "x", apperr.InvalidArgument},
			{"NameSlash", "a/b", "x", apperr.InvalidArgument},
			{"NameEmpty", "", "x", apperr.InvalidArgument},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				_, err := saveNote(f, cr, tc.note, 0, tc.content, "")
				wantLimit(t, "SaveMemory", err, tc.want, "éé", "nnnn")
			})
		}
		t.Run("Count", func(t *testing.T) {
			_, last := listNotes(f, cr, 100)
			for i := last.Total; i < hub.MaxMemoryNotes; i++ {
				if _, err := saveNote(f, cr, fmt.Sprintf("fill-%03d", i), 0, "x", ""); err != nil {
					t.Fatalf("SaveMemory(note %d): %v", i+1, err)
				}
			}
			names, last := listNotes(f, cr, 100)
			if len(names) != hub.MaxMemoryNotes || last.Total != hub.MaxMemoryNotes {
				t.Fatalf("%d notes (count %d), want %d", len(names), last.Total, hub.MaxMemoryNotes)
			}
			_, err := saveNote(f, cr, "one-too-many", 0, "x", "")
			wantCode(t, "SaveMemory(note 201)", err, apperr.LimitExceeded)
			// Replacing an existing note is not a new one.
			if _, err := saveNote(f, cr, "a", 1, "replaced", ""); err != nil {
				t.Fatalf("SaveMemory(replace at the limit): %v", err)
			}
			if _, err := deleteNote(f, cr, "a", 2, ""); err != nil {
				t.Fatalf("DeleteMemory: %v", err)
			}
			if _, err := saveNote(f, cr, "one-too-many", 0, "x", ""); err != nil {
				t.Fatalf("SaveMemory(note 200 after a delete): %v", err)
			}
		})
		t.Run("Versions", func(t *testing.T) {
			_, err := saveNote(f, cr, "a", -1, "x", "")
			wantCode(t, "SaveMemory(version -1)", err, apperr.InvalidArgument)
			_, err = deleteNote(f, cr, "a", 0, "")
			wantCode(t, "DeleteMemory(version 0)", err, apperr.InvalidArgument)
			// The page size is every list's rule (TestPageSizeOneText).
		})
	})
}

func TestListMemoryPaging(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		crA, crB := f.prime(f.a), f.prime(f.b)
		var want []string
		for i := range 7 {
			name := fmt.Sprintf("note-%d", i)
			want = append(want, name)
			mustCreateNote(f, crA, name, "x")
		}
		mustCreateNote(f, crB, "bobs", "x")
		for _, limit := range []int{1, 2, 7, 100} {
			if got, _ := listNotes(f, crA, limit); !slices.Equal(got, want) {
				t.Errorf("ListMemory(limit %d) = %v, want %v", limit, got, want)
			}
		}
		first, err := f.h.ListMemory(f.ctx, crA, hub.ListMemoryInput{Data: hub.ListMemoryData{Limit: 2}})
		if err != nil || first.NextCursor == "" {
			t.Fatalf("ListMemory(limit 2) = %+v, %v; want a next_cursor", first, err)
		}
		_, err = f.h.ListMemory(f.ctx, crB, hub.ListMemoryInput{Data: hub.ListMemoryData{Cursor: first.NextCursor}})
		wantCode(t, "ListMemory(alice's cursor, by bob)", err, apperr.CursorInvalid)
		_, err = f.h.ListMemory(f.ctx, crA, hub.ListMemoryInput{Data: hub.ListMemoryData{Cursor: "bogus"}})
		wantCode(t, "ListMemory(bogus cursor)", err, apperr.CursorInvalid)
	})
}

// TestStaleVersionOfDeletedNote: a version read before a note was deleted
// stays stale after the name is created again. Were the new note to start
// again at version 1, a client still holding the old incarnation's version
// would overwrite (or delete) the new note: the ABA case of CAS.
func TestStaleVersionOfDeletedNote(t *testing.T) {
	cases := []struct {
		name    string
		updates int // saves after the create, before the delete
	}{
		{"DeletedAtVersion1", 0},
		{"DeletedAtVersion3", 2},
	}
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				f := newFixture(t, ad)
				cr := f.prime(f.a)
				// Other notes come and go too: the new note must also
				// start above their versions' reuse.
				mustCreateNote(f, cr, "other", "x")
				out, err := saveNote(f, cr, "plan", 0, "old incarnation", "")
				if err != nil {
					t.Fatalf("SaveMemory(plan, 0): %v", err)
				}
				stale := int64(out.Note.Version)
				for i := range tc.updates {
					if out, err = saveNote(f, cr, "plan", stale, fmt.Sprintf("old %d", i), ""); err != nil {
						t.Fatalf("SaveMemory(plan, %d): %v", stale, err)
					}
					stale = int64(out.Note.Version)
				}
				if _, err := deleteNote(f, cr, "plan", stale, ""); err != nil {
					t.Fatalf("DeleteMemory(plan, %d): %v", stale, err)
				}
				reborn, err := saveNote(f, cr, "plan", 0, "new incarnation", "")
				if err != nil {
					t.Fatalf("SaveMemory(plan, 0) after delete: %v", err)
				}
				// Every version the old incarnation ever had is stale now.
				for v := int64(1); v <= stale; v++ {
					_, err = saveNote(f, cr, "plan", v, "written from a stale read", "")
					e := wantCode(t, fmt.Sprintf("SaveMemory(plan, old version %d)", v), err, apperr.RevisionConflict)
					if e.CurrentRevision == nil || *e.CurrentRevision != reborn.Note.Version {
						t.Errorf("SaveMemory(plan, old version %d): current = %v, want %d", v, e.CurrentRevision, reborn.Note.Version)
					}
					_, err = deleteNote(f, cr, "plan", v, "")
					wantCode(t, fmt.Sprintf("DeleteMemory(plan, old version %d)", v), err, apperr.RevisionConflict)
				}
				got, err := getNote(f, cr, "plan")
				if err != nil || got.Note.Content != "new incarnation" || got.Note.Version != reborn.Note.Version {
					t.Fatalf("GetMemory(plan) = %+v, %v; want the new incarnation at version %d untouched", got, err, reborn.Note.Version)
				}
				wantNoteCount(f, cr, 2, "other and the new incarnation")
			})
		}
	})
}
