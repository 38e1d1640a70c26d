package hub_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/store/teststores"
	"github.com/google/uuid"
)

func cardNames(cards []hub.DirectoryCard) []string {
	out := make([]string, len(cards))
	for i, c := range cards {
		out[i] = c.Name
	}
	return out
}

func TestDirectoryVisibility(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		f.mustList(f.a, true)
		f.mustList(f.other, true) // listed, but in another box
		crA, crB := f.prime(f.a), f.prime(f.b)

		for _, c := range []struct {
			name string
			cr   hub.Credentials
		}{{"Listed", crA}, {"Unlisted", crB}} {
			got, err := search(f, c.cr, "", "", 0)
			if err != nil {
				t.Fatalf("DirectorySearch by %s caller: %v", c.name, err)
			}
			if names := cardNames(got.Cards); !slices.Equal(names, []string{"alice"}) || got.NextCursor != "" {
				t.Errorf("DirectorySearch by %s caller = %v (cursor %q), want only alice", c.name, names, got.NextCursor)
			}
		}

		reference := envelope(t, func() error {
			_, err := f.h.DirectoryGet(f.ctx, crA, hub.DirectoryGetInput{AgentID: uuid.NewString()})
			return err
		}())
		for _, c := range []struct {
			name   string
			target *hub.AgentInfo
		}{{"Unlisted", f.b}, {"OtherBox", f.other}} {
			_, err := f.h.DirectoryGet(f.ctx, crA, hub.DirectoryGetInput{AgentID: c.target.AgentID})
			wantSameError(t, "DirectoryGet("+c.name+")", err, reference, c.target.AgentID, c.target.Name)
		}
		got, err := f.h.DirectoryGet(f.ctx, crB, hub.DirectoryGetInput{AgentID: f.a.AgentID})
		if err != nil || got.Card.Name != "alice" || got.Card.Revision != 0 || !got.DirectoryListed {
			t.Errorf("DirectoryGet(alice) = %+v, %v; want alice's listed card at revision 0", got, err)
		}
		self, err := f.h.DirectoryGet(f.ctx, crB, hub.DirectoryGetInput{AgentID: f.b.AgentID})
		if err != nil || self.DirectoryListed || self.Card.Name != "bob" {
			t.Errorf("DirectoryGet(self, unlisted) = %+v, %v; want bob's own card, not listed", self, err)
		}

		f.mustList(f.a, false)
		gone, err := search(f, crB, "", "", 0)
		if err != nil || len(gone.Cards) != 0 {
			t.Errorf("DirectorySearch after unlisting = %+v, %v; want nothing", gone, err)
		}
		_, err = f.h.DirectoryGet(f.ctx, crB, hub.DirectoryGetInput{AgentID: f.a.AgentID})
		wantSameError(t, "DirectoryGet(unlisted again)", err, reference, f.a.AgentID, "alice")
		_, err = f.h.DirectoryGet(f.ctx, crB, hub.DirectoryGetInput{AgentID: "not-a-uuid"})
		wantCode(t, "DirectoryGet(malformed id)", err, apperr.InvalidArgument)
	})
}

func TestDirectoryUpdateSelf(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		crA, crB := f.prime(f.a), f.prime(f.b)
		role, desc := "Reviewer", "I review *Go*."
		skills := hub.SkillList{"go", "  review  "}
		out, err := f.h.DirectoryUpdateSelf(f.ctx, crA, hub.DirectoryUpdateSelfInput{
			Mutation: hub.Mutation{IdempotencyKey: "c1"}, ExpectedRevision: 0,
			Role: &role, DescriptionMD: &desc, Skills: &skills,
		})
		if err != nil {
			t.Fatalf("DirectoryUpdateSelf: %v", err)
		}
		c := out.Card
		if c.Revision != 1 || c.Name != "alice" || c.Role != "Reviewer" || c.DescriptionMD != desc ||
			!slices.Equal(c.Skills, []string{"go", "review"}) || out.DirectoryListed || c.UpdatedAt == "" {
			t.Fatalf("DirectoryUpdateSelf = %+v listed=%v, want revision 1 with the fields, not listed", c, out.DirectoryListed)
		}
		// Not listed yet: nobody else sees it.
		_, err = f.h.DirectoryGet(f.ctx, crB, hub.DirectoryGetInput{AgentID: f.a.AgentID})
		wantCode(t, "DirectoryGet(unlisted card)", err, apperr.NotFoundOrForbidden)

		f.mustList(f.a, true)
		got, err := f.h.DirectoryGet(f.ctx, crB, hub.DirectoryGetInput{AgentID: f.a.AgentID})
		if err != nil || got.Card.Revision != 1 || got.Card.Role != "Reviewer" {
			t.Fatalf("DirectoryGet after listing = %+v, %v; want revision 1 (listing is not a card change)", got, err)
		}
		byRole, err := search(f, crB, "REVIEW", "", 0)
		if err != nil || !slices.Equal(cardNames(byRole.Cards), []string{"alice"}) {
			t.Errorf("DirectorySearch(REVIEW) = %+v, %v; want alice by role", byRole, err)
		}

		notes := "ping me in #design"
		out, err = f.h.DirectoryUpdateSelf(f.ctx, crA, hub.DirectoryUpdateSelfInput{
			Mutation: hub.Mutation{IdempotencyKey: "c2"}, ExpectedRevision: 1, ContactNotes: &notes,
		})
		if err != nil || out.Card.Revision != 2 || out.Card.Role != "Reviewer" || out.Card.ContactNotes != notes || !out.DirectoryListed {
			t.Fatalf("DirectoryUpdateSelf(contact only) = %+v, %v; want revision 2 keeping the role", out, err)
		}
		_, err = updateCard(f, crA, "c3", 1, "stale")
		e := wantCode(t, "DirectoryUpdateSelf(stale revision)", err, apperr.RevisionConflict)
		if e.CurrentRevision == nil || *e.CurrentRevision != 2 {
			t.Errorf("REVISION_CONFLICT current = %v, want 2", e.CurrentRevision)
		}
		empty := hub.SkillList{}
		out, err = f.h.DirectoryUpdateSelf(f.ctx, crA, hub.DirectoryUpdateSelfInput{
			Mutation: hub.Mutation{IdempotencyKey: "c4"}, ExpectedRevision: 2, Skills: &empty,
		})
		if err != nil || len(out.Card.Skills) != 0 || out.Card.Role != "Reviewer" {
			t.Errorf("DirectoryUpdateSelf(clear skills) = %+v, %v; want no skills, role kept", out, err)
		}
	})
}

func TestDirectoryUpdateSelfLimits(t *testing.T) {
	str := func(s string) *string { return &s }
	skills := func(s ...string) *hub.SkillList { l := hub.SkillList(s); return &l }
	many := make([]string, hub.MaxCardSkills+1)
	for i := range many {
		many[i] = fmt.Sprintf("skill-%d", i)
	}
	cases := []struct {
		name string
		in   hub.DirectoryUpdateSelfInput
		want apperr.Code
	}{
		{"NothingToChange", hub.DirectoryUpdateSelfInput{}, apperr.InvalidArgument},
		{"RoleAtLimit", hub.DirectoryUpdateSelfInput{Role: str(strings.Repeat("é", 80))}, ""},
		{"RoleOverLimit", hub.DirectoryUpdateSelfInput{Role: str(strings.Repeat("é", 81))}, apperr.LimitExceeded},
		{"RoleTwoLines", hub.DirectoryUpdateSelfInput{Role: str("a\nb")}, apperr.InvalidArgument},
		{"DescriptionOverLimit", hub.DirectoryUpdateSelfInput{DescriptionMD: str(strings.Repeat("a", hub.MaxCardDescBytes+1))}, apperr.LimitExceeded},
		{"DescriptionControl", hub.DirectoryUpdateSelfInput{DescriptionMD: str("a\x00b")}, apperr.InvalidArgument},
		{"ContactOverLimit", hub.DirectoryUpdateSelfInput{ContactNotes: str(strings.Repeat("a", hub.MaxCardContactBytes+1))}, apperr.LimitExceeded},
		{"TooManySkills", hub.DirectoryUpdateSelfInput{Skills: skills(many...)}, apperr.LimitExceeded},
		{"SkillTooLong", hub.DirectoryUpdateSelfInput{Skills: skills(strings.Repeat("s", 41))}, apperr.LimitExceeded},
		{"SkillEmpty", hub.DirectoryUpdateSelfInput{Skills: skills(" ")}, apperr.InvalidArgument},
		{"SkillsDuplicateAfterFolding", hub.DirectoryUpdateSelfInput{Skills: skills("Go", "GO")}, apperr.InvalidArgument},
	}
	revisionCases(t, len(cases), func(i int) string { return cases[i].name }, func(t *testing.T, f *fixture, cr hub.Credentials, i int, rev *hub.Revision) {
		tc := cases[i]
		tc.in.IdempotencyKey, tc.in.ExpectedRevision = fmt.Sprintf("lim-%d", i), *rev
		out, err := f.h.DirectoryUpdateSelf(f.ctx, cr, tc.in)
		if wantLimit(t, "DirectoryUpdateSelf", err, tc.want, "ééé", "aaa") {
			*rev = out.Card.Revision
		}
	})
}

// TestDirectoryUpdateSelfOwnerFieldsRefused: the owner's fields (name,
// opt-in) and another agent's id are not part of the tool's arguments, so
// the registry refuses them before the domain runs.
func TestDirectoryUpdateSelfOwnerFieldsRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, teststores.All()[0])
	cr := f.prime(f.a)
	tool, ok := registry.New().Tool("directory_update_self")
	if !ok {
		t.Fatal("registry has no directory_update_self")
	}
	for _, field := range []string{`"name":"root"`, `"directory_listed":true`, `"agent_id":"` + f.b.AgentID + `"`, `"profile":{}`} {
		args := `{"idempotency_key":"k","expected_revision":"0","role":"x",` + field + `}`
		_, err := tool.Invoke(f.ctx, f.h, cr, []byte(args))
		wantCode(t, "directory_update_self with "+field, err, apperr.InvalidArgument)
	}
	got, err := f.h.DirectoryGet(f.ctx, cr, hub.DirectoryGetInput{AgentID: f.a.AgentID})
	if err != nil || got.Card.Revision != 0 || got.Card.Name != "alice" {
		t.Errorf("card after refused calls = %+v, %v; want alice at revision 0", got, err)
	}
}

// TestDirectoryListingChangeBetweenReadAndWrite forces the owner to unlist
// the agent after directory_update_self read the agent record and before it
// writes: the write must not put a listed card back in the index.
func TestDirectoryListingChangeBetweenReadAndWrite(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var hook onceHook
		f := newFixture(t, ad, withOnceHook(&hook))
		f.mustList(f.a, true)
		crA, crB := f.prime(f.a), f.prime(f.b)
		unlist := func() { f.mustList(f.a, false) }
		hook.set(unlist)
		// The kernel runs the call again on the owner's new record: the
		// update succeeds, and the card it writes is unlisted.
		_, err := updateCard(f, crA, "k", 0, "sneaky")
		hook.raced(t, "DirectoryUpdateSelf racing an unlisting")
		if err != nil {
			t.Fatalf("DirectoryUpdateSelf racing an unlisting: %v", err)
		}
		got, err := search(f, crB, "", "", 0)
		if err != nil || len(got.Cards) != 0 {
			t.Errorf("DirectorySearch after the race = %+v, %v; want no card", got, err)
		}
		out, err := updateCard(f, crA, "k", 0, "sneaky")
		if err != nil || out.DirectoryListed || out.Card.Revision != 1 {
			t.Errorf("retry with the same key = %+v, %v; want revision 1, not listed", out, err)
		}
		got, err = search(f, crB, "", "", 0)
		if err != nil || len(got.Cards) != 0 {
			t.Errorf("DirectorySearch after the retry = %+v, %v; want no card", got, err)
		}
	})
}

func TestDirectorySearchMatching(t *testing.T) {
	names := []string{
		"100% done", "a_b", "star*", "what?", "[x] box", `back\slash`, "dot.name", "caret^dollar$",
		"Straße", "ΣΊΣΥΦΟΣ", "José", "Jose", "Zoq\u0303", "Zoqa", "ＡＬＩＣＥ", "ﬁnder", "plain",
	}
	cases := []struct {
		name, query string
		want        []string
	}{
		{"Percent", "%", []string{"100% done"}},
		{"Underscore", "_", []string{"a_b"}},
		{"Star", "*", []string{"star*"}},
		{"Question", "?", []string{"what?"}},
		{"Bracket", "[x]", []string{"[x] box"}},
		{"Backslash", `\`, []string{`back\slash`}},
		{"Dot", ".", []string{"dot.name"}},
		{"RegexAnchors", "^dollar$", []string{"caret^dollar$"}},
		{"PercentIsNotAWildcard", "a%", nil},
		{"SQLLikeAll", "%%", nil},
		{"CaseFoldingSharpS", "STRASSE", []string{"Straße"}},
		{"CaseFoldingSharpSQuery", "straße", []string{"Straße"}},
		{"FinalSigma", "σίσυφος", []string{"ΣΊΣΥΦΟΣ"}},
		{"ComposedQueryDecomposedName", "jos\u00e9", []string{"José"}},
		{"DecomposedQueryComposedName", "JOSE\u0301", []string{"José"}},
		{"MarksAreSignificant", "jose", []string{"Jose"}},
		{"NoMatchInsideACharacter", "zoq", []string{"Zoqa"}},
		{"WholeCharacterWithMark", "zoq\u0303", []string{"Zoq\u0303"}},
		{"LoneCombiningMark", "\u0303", nil},
		{"FullwidthLetters", "alice", []string{"ＡＬＩＣＥ"}},
		{"Ligature", "FIND", []string{"ﬁnder"}},
		{"SurroundingSpacesIgnored", "  plain  ", []string{"plain"}},
		{"SpaceInside", "% d", []string{"100% done"}},
	}
	eachWorld(t, func(t *testing.T, f *fixture) {
		if _, err := f.h.Admin().SeedListedAgents(f.ctx, f.box, func() []hub.SeedCard {
			out := make([]hub.SeedCard, len(names))
			for i, n := range names {
				out[i] = hub.SeedCard{Name: n}
			}
			return out
		}()); err != nil {
			t.Fatalf("SeedListedAgents: %v", err)
		}
		cr := f.prime(f.a)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				got, err := search(f, cr, tc.query, "", 100)
				if err != nil {
					t.Fatalf("DirectorySearch(%q): %v", tc.query, err)
				}
				gotNames := cardNames(got.Cards)
				slices.Sort(gotNames)
				want := slices.Clone(tc.want)
				slices.Sort(want)
				if !slices.Equal(gotNames, want) && !(len(gotNames) == 0 && len(want) == 0) {
					t.Errorf("DirectorySearch(%q) = %q, want %q", tc.query, gotNames, want)
				}
			})
		}
		t.Run("EmptyQueryBrowsesAll", func(t *testing.T) {
			got, err := search(f, cr, "", "", 100)
			if err != nil || len(got.Cards) != len(names) {
				t.Errorf("DirectorySearch(\"\") = %d cards, %v; want %d", len(got.Cards), err, len(names))
			}
		})
	})
}

func TestDirectorySearchArguments(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		if _, err := f.h.Admin().SeedListedAgents(f.ctx, f.box, []hub.SeedCard{{Name: "n1"}, {Name: "n2"}, {Name: "n3"}}); err != nil {
			t.Fatalf("SeedListedAgents: %v", err)
		}
		cr, crB := f.prime(f.a), f.prime(f.b)
		page, err := search(f, cr, "n", "", 1)
		if err != nil || page.NextCursor == "" {
			t.Fatalf("DirectorySearch(n, limit 1) = %+v, %v; want a cursor", page, err)
		}
		cases := []struct {
			name   string
			cr     hub.Credentials
			query  string
			cursor string
			limit  int
			want   apperr.Code
		}{
			{"QueryAtLimit", cr, strings.Repeat("é", hub.MaxQueryChars), "", 0, ""},
			{"QueryOverLimit", cr, strings.Repeat("é", hub.MaxQueryChars+1), "", 0, apperr.LimitExceeded},
			{"LimitOverMax", cr, "", "", hub.MaxDirectoryPage + 1, apperr.LimitExceeded},
			{"NegativeLimit", cr, "", "", -1, apperr.InvalidArgument},
			{"CursorOfAnotherQuery", cr, "x", page.NextCursor, 1, apperr.CursorInvalid},
			{"CursorOfAnotherAgent", crB, "n", page.NextCursor, 1, apperr.CursorInvalid},
			{"TamperedCursor", cr, "n", "x" + page.NextCursor[1:], 1, apperr.CursorInvalid},
			{"CursorOfSameQueryDifferentSpelling", cr, " N ", page.NextCursor, 1, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				_, err := search(f, tc.cr, tc.query, tc.cursor, tc.limit)
				wantLimit(t, "DirectorySearch", err, tc.want)
			})
		}
	})
}

// TestDirectoryThousandCards pages through a thousand cards, with equal
// and case-variant names, and checks that no card is missed or repeated
// and the order is (folded name, id).
func TestDirectoryThousandCards(t *testing.T) {
	const n = 1000
	rng := rand.New(rand.NewPCG(3, 1))
	cards := make([]hub.SeedCard, n)
	for i := range cards {
		name := fmt.Sprintf("agent-%03d", rng.IntN(400)) // many duplicates
		if rng.IntN(2) == 0 {
			name = strings.ToUpper(name)
		}
		role := ""
		if i%10 == 0 {
			role = "needle role"
		}
		cards[i] = hub.SeedCard{Name: name, Role: role}
	}
	eachWorld(t, func(t *testing.T, f *fixture) {
		ids, err := f.h.Admin().SeedListedAgents(f.ctx, f.box, cards)
		if err != nil {
			t.Fatalf("SeedListedAgents: %v", err)
		}
		cr := f.prime(f.a)
		for _, tc := range []struct {
			query string
			limit int
			want  int
		}{{"", 37, n}, {"", 100, n}, {"NEEDLE", 7, n / 10}, {"agent-1", 50, -1}} {
			t.Run(fmt.Sprintf("%q/%d", tc.query, tc.limit), func(t *testing.T) {
				seen := map[string]bool{}
				var order []hub.DirectoryCard
				cur := ""
				for pages := 0; ; pages++ {
					if pages > 2*n {
						t.Fatalf("no end after %d pages", pages)
					}
					page, err := search(f, cr, tc.query, cur, tc.limit)
					if err != nil {
						t.Fatalf("DirectorySearch(%q, page %d): %v", tc.query, pages, err)
					}
					if len(page.Cards) > tc.limit {
						t.Fatalf("page %d has %d cards, want at most %d", pages, len(page.Cards), tc.limit)
					}
					for _, c := range page.Cards {
						if seen[c.AgentID] {
							t.Fatalf("card %s (%s) repeated on page %d", c.AgentID, c.Name, pages)
						}
						seen[c.AgentID] = true
						order = append(order, c)
					}
					if cur = page.NextCursor; cur == "" {
						break
					}
				}
				want := tc.want
				if want < 0 {
					want = 0
					for _, c := range cards {
						if strings.Contains(strings.ToLower(c.Name), "agent-1") {
							want++
						}
					}
				}
				if len(seen) != want {
					t.Fatalf("paged through %d cards, want %d", len(seen), want)
				}
				if tc.query == "" {
					for _, id := range ids {
						if !seen[id] {
							t.Fatalf("card %s missed", id)
						}
					}
				}
				sorted := slices.IsSortedFunc(order, func(a, b hub.DirectoryCard) int {
					if c := strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)); c != 0 {
						return c
					}
					return strings.Compare(a.AgentID, b.AgentID)
				})
				if !sorted {
					t.Errorf("cards are not ordered by folded name, then id")
				}
			})
		}
	})
}
