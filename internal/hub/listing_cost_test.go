package hub_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/dynamo"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// meteredFixture is a fixture whose store adds up DynamoDB request units
// (see TestCostPerTool): the units follow from item sizes, so the fast
// embedded engine proves what a call would read on DynamoDB.
func meteredFixture(t *testing.T) (*fixture, *teststores.Metered) {
	var m *teststores.Metered
	f := newFixture(t, teststores.All()[0], func(s store.Store) store.Store { m = teststores.NewMetered(s); return m })
	return f, m
}

// readUnits runs call on a reset meter and returns the read units it cost.
func readUnits(t *testing.T, m *teststores.Metered, call func() error) float64 {
	t.Helper()
	m.Reset()
	if err := call(); err != nil {
		t.Fatal(err)
	}
	tb, ix := m.Reset()
	return tb.Read + ix.Read
}

// TestListSpacesReadsListingItems: a page of 100 spaces whose goals are
// 20 KiB each (50 public from the index, 50 private by key) costs what
// 100 small listing items cost. Reading the spaces themselves, from the
// index or by key, would cost several times the bound.
func TestListSpacesReadsListingItems(t *testing.T) {
	t.Parallel()
	f, m := meteredFixture(t)
	cr := f.prime(f.a)
	goal := strings.Repeat("g", hub.MaxGoalBytes)
	for i := range 100 {
		vis := "public"
		if i%2 == 1 {
			vis = "private"
		}
		_, err := f.h.CreateSpace(f.ctx, cr, hub.CreateSpaceInput{Data: hub.CreateSpaceData{
			RequestID: "req-1", Title: fmt.Sprintf("Space %03d", i), Goal: goal, Visibility: vis}})
		if err != nil {
			t.Fatalf("CreateSpace(%d): %v", i, err)
		}
	}
	var page *hub.ListSpacesOutput
	got := readUnits(t, m, func() (err error) {
		page, err = f.h.ListSpaces(f.ctx, cr, hub.ListSpacesInput{Data: hub.ListSpacesData{Limit: 100}})
		return err
	})
	if len(page.Items) != 100 {
		t.Fatalf("ListSpaces(limit 100) = %d items, want 100", len(page.Items))
	}
	// Whole spaces: 50 × 20 KiB on the index (eventually consistent) plus
	// 50 consistent reads of 6 units each, besides the listing's own work.
	whole := dynamo.QueryCost(repeatItem(50, hub.MaxGoalBytes), true).Read + 50*6
	const bound = 80
	t.Logf("list_spaces, 100 spaces with 20 KiB goals: %g read units (whole spaces would add about %g)", got, whole)
	if got > bound {
		t.Errorf("ListSpaces(100 spaces, 20 KiB goals) read %g units, want at most %g", got, float64(bound))
	}
}

// TestDirectorySearchReadBounded: on a directory of 1,000 cards of about
// 5 KiB each (4 KiB description, 1 KiB contact notes), a search that
// matches nothing scans the index entries one call may read and costs the
// listing items' units, not the cards'; a search that matches everything
// reads whole cards only for its page.
func TestDirectorySearchReadBounded(t *testing.T) {
	t.Parallel()
	f, m := meteredFixture(t)
	cards := make([]hub.SeedCard, 1000)
	for i := range cards {
		cards[i] = hub.SeedCard{Name: fmt.Sprintf("agent %04d", i), Role: "worker",
			DescriptionMD: strings.Repeat("d", hub.MaxCardDescBytes), ContactNotes: strings.Repeat("c", hub.MaxCardContactBytes)}
	}
	if _, err := f.h.Admin().SeedListedAgents(f.ctx, f.box, cards); err != nil {
		t.Fatalf("SeedListedAgents: %v", err)
	}
	cr := f.prime(f.a)
	// The cost of authenticating alone, so the bounds below are the
	// search's own.
	base := readUnits(t, m, func() error {
		_, err := f.h.ProfileGet(f.ctx, cr, hub.ProfileInput{})
		return err
	})

	var out *hub.DirectorySearchOutput
	none := readUnits(t, m, func() (err error) { out, err = search(f, cr, "no such agent", "", 0); return err })
	if len(out.Cards) != 0 || out.NextCursor == "" {
		t.Fatalf("DirectorySearch(no match) = %d cards, cursor %q; want none and a cursor (the scan is bounded)", len(out.Cards), out.NextCursor)
	}
	whole := dynamo.QueryCost(repeatItem(1000, hub.MaxCardDescBytes+hub.MaxCardContactBytes), true).Read
	t.Logf("directory_search, no match over 1,000 cards: %g read units besides %g for auth (whole cards: about %g)", none-base, base, whole)
	if scan := none - base; scan > 50 {
		t.Errorf("DirectorySearch(no match, 1,000 cards of 5 KiB) read %g units for its scan, want at most 50", scan)
	}

	all := readUnits(t, m, func() (err error) { out, err = search(f, cr, "", "", hub.MaxDirectoryPage); return err })
	if len(out.Cards) != hub.MaxDirectoryPage || out.Cards[0].DescriptionMD == "" {
		t.Fatalf("DirectorySearch(all, limit 100) = %d cards, want 100 whole cards", len(out.Cards))
	}
	// The page's cards, read whole by key (2 units each), plus a small scan.
	bound := 2.0*hub.MaxDirectoryPage + 10
	t.Logf("directory_search, page of 100 whole cards: %g read units besides auth", all-base)
	if all-base > bound {
		t.Errorf("DirectorySearch(all, limit 100) read %g units besides auth, want at most %g", all-base, bound)
	}
}

// repeatItem returns n items with data of size bytes, for the cost of
// reading them.
func repeatItem(n, size int) []*store.Item {
	it := &store.Item{PK: "p", SK: "s", Data: make([]byte, size)}
	out := make([]*store.Item, n)
	for i := range out {
		out[i] = it
	}
	return out
}

// TestListingsFindItemsOfTheOldShape: spaces and cards written before
// listing items existed carry the index keys on the whole item and have no
// listing item. Listings still find them, and their next write moves them
// to the new shape: one index entry, the listing item.
func TestListingsFindItemsOfTheOldShape(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		cr := f.prime(f.a)
		pub := writeOldShape(t, f)
		page, err := f.h.ListSpaces(f.ctx, cr, hub.ListSpacesInput{})
		if err != nil || len(page.Items) != 2 || page.Items[0].Title != "Old public" && page.Items[1].Title != "Old public" {
			t.Fatalf("ListSpaces(old spaces) = %+v, %v; want both old spaces", page, err)
		}
		found, err := search(f, cr, "old role", "", 0)
		if err != nil || len(found.Cards) != 1 || found.Cards[0].DescriptionMD != "An old card." {
			t.Fatalf("DirectorySearch(old card) = %+v, %v; want bob's old card", found, err)
		}

		if _, err := f.h.UpdateSpace(f.ctx, cr, hub.UpdateSpaceInput{SpaceRef: hub.SpaceRef{ID: pub},
			Data: hub.UpdateSpaceData{ExpectedVersion: 1, Title: "New public", Goal: "A new goal.", Status: "active"}}); err != nil {
			t.Fatalf("UpdateSpace(old public): %v", err)
		}
		crB := f.prime(f.b)
		role := "new role"
		if _, err := f.h.DirectoryUpdateSelf(f.ctx, crB, hub.DirectoryUpdateSelfInput{Mutation: hub.Mutation{IdempotencyKey: "k1"},
			ExpectedRevision: 1, Role: &role}); err != nil {
			t.Fatalf("DirectoryUpdateSelf(old card): %v", err)
		}
		wantOneListingEach(f, "after the rewrite", 0)
		page, err = f.h.ListSpaces(f.ctx, cr, hub.ListSpacesInput{})
		if err != nil || len(page.Items) != 2 || page.Items[0].Title != "New public" || page.Items[0].Version != 2 {
			t.Fatalf("ListSpaces(after update) = %+v, %v; want New public at version 2 first", page, err)
		}
		found, err = search(f, cr, "new role", "", 0)
		if err != nil || len(found.Cards) != 1 || found.Cards[0].DescriptionMD != "An old card." {
			t.Fatalf("DirectorySearch(after update) = %+v, %v; want bob's card with its old description", found, err)
		}
	})
}

// TestDirectorySearchByteBudget: listing entries as large as names and
// roles allow (80 four-byte characters each) fill the byte budget before
// the entry budget, so a search that matches only the last card answers
// short pages with cursors, each call reading a bounded number of units,
// and the card is found once at the end.
func TestDirectorySearchByteBudget(t *testing.T) {
	t.Parallel()
	f, m := meteredFixture(t)
	wide := strings.Repeat("😀", 76)
	cards := make([]hub.SeedCard, 1000)
	for i := range cards {
		cards[i] = hub.SeedCard{Name: fmt.Sprintf("%s%04d", wide, i), Role: strings.Repeat("🙂", 80)}
	}
	cards[len(cards)-1].Role = "needle"
	if _, err := f.h.Admin().SeedListedAgents(f.ctx, f.box, cards); err != nil {
		t.Fatalf("SeedListedAgents: %v", err)
	}
	cr := f.prime(f.a)
	var calls, found int
	most := 0.0
	for cur := ""; ; {
		if calls++; calls > 20 {
			t.Fatalf("no end after %d calls", calls)
		}
		var out *hub.DirectorySearchOutput
		units := readUnits(t, m, func() (err error) { out, err = search(f, cr, "needle", cur, 0); return err })
		most = max(most, units)
		// Auth, then 256 KiB of entries plus one chunk of 250 at most.
		if units > 60 {
			t.Errorf("DirectorySearch call %d read %g units, want at most 60", calls, units)
		}
		found += len(out.Cards)
		if cur = out.NextCursor; cur == "" {
			break
		}
	}
	t.Logf("directory_search over 1,000 widest listing entries: %d calls, at most %g read units each", calls, most)
	if found != 1 || calls < 3 {
		t.Fatalf("DirectorySearch(needle) found %d cards in %d calls, want 1, past at least two short pages", found, calls)
	}
}

// writeOldShape writes what a box held before listing items existed: a
// public space (in the index itself), a private space of alice's (both
// with 20 KiB goals), and
// bob's listed card (in the index itself, no listing item). It returns the
// public space's id.
func writeOldShape(t *testing.T, f *fixture) string {
	t.Helper()
	now := f.clock.Now().UTC()
	created := now.Format("2006-01-02T15:04:05.000000000Z")
	pub, priv := "00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-00000000000b"
	space := func(id, vis string) []byte {
		b, _ := json.Marshal(map[string]any{"id": id, "box_id": f.box, "creator_id": f.a.AgentID, "request_id": "req-1",
			"title": "Old " + vis, "goal": strings.Repeat("g", hub.MaxGoalBytes), "status": "active", "visibility": vis,
			"created_at": now, "updated_at": now, "updated_by": f.a.AgentID})
		return b
	}
	member, _ := json.Marshal(map[string]any{"space_id": priv, "agent_id": f.a.AgentID, "added_by": f.a.AgentID, "added_at": now})
	card, _ := json.Marshal(map[string]any{"agent_id": f.b.AgentID, "box_id": f.box, "name": "bob", "listed": true,
		"role": "old role", "description_md": "An old card."})
	old := []store.Op{
		store.Put(&store.Item{PK: "space#" + pub, SK: "space", Version: 1, Data: space(pub, "public"),
			GSI1PK: "box#" + f.box + "#spaces", GSI1SK: created + "#" + pub}, store.Absent),
		store.Put(&store.Item{PK: "space#" + priv, SK: "space", Version: 1, Data: space(priv, "private")}, store.Absent),
		store.Put(&store.Item{PK: "space#" + priv, SK: "member#" + f.a.AgentID, Version: 1, Data: member}, store.Absent),
		store.Put(&store.Item{PK: "space#" + priv, SK: "members", Version: 1, Count: 1}, store.Absent),
		store.Put(&store.Item{PK: "agent#" + f.a.AgentID, SK: "space#" + created + "#" + priv, Version: 1, Data: member}, store.Absent),
	}
	if err := f.raw.Write(f.ctx, old); err != nil {
		t.Fatalf("writing old spaces: %v", err)
	}
	// bob listed the new way, then his card rewritten the old way.
	if _, err := f.h.Admin().SetDirectoryListed(f.ctx, f.b.AgentID, true); err != nil {
		t.Fatalf("SetDirectoryListed(bob): %v", err)
	}
	if err := f.raw.Write(f.ctx, []store.Op{
		store.Put(&store.Item{PK: "agent#" + f.b.AgentID, SK: "card", Version: 1, Data: card,
			GSI2PK: "box#" + f.box + "#directory", GSI2SK: "bob\x01" + f.b.AgentID}, store.Unconditional),
		store.Delete(store.Key{PK: "agent#" + f.b.AgentID, SK: "card#listing"}, store.Unconditional),
	}); err != nil {
		t.Fatalf("writing bob's old card: %v", err)
	}
	return pub
}

// TestMigrateListings: the owner's migration moves every space and card of
// the old shape at once (the index then holds listing items only, and
// list_spaces reads no whole space), a second run finds nothing to move,
// and the listings show the same as before.
func TestMigrateListings(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var m *teststores.Metered
		f := newFixture(t, ad, func(s store.Store) store.Store { m = teststores.NewMetered(s); return m })
		writeOldShape(t, f)
		mustCreateSpace(f, f.prime(f.b), "public", "New shape")
		cr := f.prime(f.a)
		before, err := f.h.ListSpaces(f.ctx, cr, hub.ListSpacesInput{})
		if err != nil || len(before.Items) != 3 {
			t.Fatalf("ListSpaces(before) = %+v, %v; want 3 spaces", before, err)
		}

		adm := f.h.Admin()
		for run, want := range []hub.ListingsMigration{{BoxID: f.box, Spaces: 2, Cards: 1}, {BoxID: f.box}} {
			got, err := adm.MigrateListings(f.ctx, f.box)
			if err != nil || *got != want {
				t.Fatalf("MigrateListings(run %d) = %+v, %v; want %+v", run+1, got, err, want)
			}
		}
		for _, ix := range []struct {
			index  store.Index
			pk, sk string
			n      int
		}{{store.GSI1, "box#" + f.box + "#spaces", "listing", 2}, {store.GSI2, "box#" + f.box + "#directory", "card#listing", 1}} {
			entries, err := f.raw.Query(f.ctx, store.Query{Index: ix.index, PK: ix.pk})
			if err != nil || len(entries) != ix.n {
				t.Fatalf("%s %s after the migration = %d entries, %v; want %d", ix.index, ix.pk, len(entries), err, ix.n)
			}
			for _, e := range entries {
				if e.SK != ix.sk {
					t.Errorf("%s %s holds %s, want only %s items", ix.index, ix.pk, e.Key(), ix.sk)
				}
			}
		}

		m.Reset()
		after, err := f.h.ListSpaces(f.ctx, cr, hub.ListSpacesInput{})
		tb, _ := m.Reset()
		if err != nil || !reflect.DeepEqual(after, before) {
			t.Fatalf("ListSpaces(after) = %+v, %v; want %+v as before", after, err, before)
		}
		t.Logf("list_spaces after the migration: %g table units", tb.Read)
		// Auth (about 7 units), the member rows and one listing item: the
		// private space read whole would add 5.
		if tb.Read > 11 {
			t.Errorf("ListSpaces(after) read %g table units, want at most 11", tb.Read)
		}
		found, err := search(f, cr, "old role", "", 0)
		if err != nil || len(found.Cards) != 1 || found.Cards[0].DescriptionMD != "An old card." || found.Cards[0].Revision != 1 {
			t.Fatalf("DirectorySearch(after) = %+v, %v; want bob's card at revision 1", found, err)
		}
	})
}

// wantOneListingEach checks that the box's space and directory listing
// indexes each hold one entry, the listing item, at version (any version
// when version is 0).
func wantOneListingEach(f *fixture, when string, version uint64) {
	f.t.Helper()
	for _, ix := range []struct {
		index  store.Index
		pk, sk string
	}{{store.GSI1, "box#" + f.box + "#spaces", "listing"}, {store.GSI2, "box#" + f.box + "#directory", "card#listing"}} {
		entries, err := f.raw.Query(f.ctx, store.Query{Index: ix.index, PK: ix.pk})
		if err != nil || len(entries) != 1 || entries[0].SK != ix.sk || (version != 0 && entries[0].Version != version) {
			f.t.Fatalf("%s %s %s = %d entries, %v; want one, the %s item (at version %d; 0: any)", ix.index, ix.pk, when, len(entries), err, ix.sk, version)
		}
	}
}

// TestMigrateListingsRacingUpdates: the owner migrates while alice updates
// the old public space and bob his old card. Every update lands, and each
// index holds one entry afterwards, the listing item at the last version.
func TestMigrateListingsRacingUpdates(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		pub := writeOldShape(t, f)
		crA, crB := f.prime(f.a), f.prime(f.b)
		const updates = 5
		var wg sync.WaitGroup
		wg.Go(func() {
			for i := range updates {
				_, err := f.h.UpdateSpace(f.ctx, crA, hub.UpdateSpaceInput{SpaceRef: hub.SpaceRef{ID: pub},
					Data: hub.UpdateSpaceData{ExpectedVersion: int64(i + 1), Title: fmt.Sprintf("Title %d", i+1), Goal: "g", Status: "active"}})
				if err != nil {
					t.Errorf("UpdateSpace(%d): %v", i+1, err)
					return
				}
			}
		})
		wg.Go(func() {
			for i := range updates {
				role := fmt.Sprintf("role %d", i+1)
				_, err := f.h.DirectoryUpdateSelf(f.ctx, crB, hub.DirectoryUpdateSelfInput{
					Mutation: hub.Mutation{IdempotencyKey: fmt.Sprintf("k%d", i)}, ExpectedRevision: hub.Revision(i + 1), Role: &role})
				if err != nil {
					t.Errorf("DirectoryUpdateSelf(%d): %v", i+1, err)
					return
				}
			}
		})
		wg.Go(func() {
			for range 3 {
				if _, err := f.h.Admin().MigrateListings(f.ctx, f.box); err != nil {
					t.Errorf("MigrateListings: %v", err)
					return
				}
			}
		})
		wg.Wait()
		if _, err := f.h.Admin().MigrateListings(f.ctx, f.box); err != nil {
			t.Fatalf("MigrateListings(after): %v", err)
		}
		wantOneListingEach(f, "after the race", updates+1)
		page, err := f.h.ListSpaces(f.ctx, crA, hub.ListSpacesInput{})
		if err != nil || len(page.Items) != 2 || page.Items[0].Title != fmt.Sprintf("Title %d", updates) {
			t.Fatalf("ListSpaces = %+v, %v; want the last title first", page, err)
		}
	})
}
