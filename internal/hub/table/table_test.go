package table_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/hub/table"
	"github.com/agentbox/agentbox/internal/store"
)

// probe is one key, range or index partition a builder produces.
type probe struct {
	pk, sk  string
	isRange bool
	gsi     store.Index
	index   string
}

func key(k store.Key) []probe       { return []probe{{pk: k.PK, sk: k.SK}} }
func rng(pk, prefix string) []probe { return []probe{{pk: pk, sk: prefix, isRange: true}} }
func ix(gsi store.Index, parts ...string) []probe {
	var out []probe
	for _, p := range parts {
		out = append(out, probe{gsi: gsi, index: p})
	}
	return out
}

// builders registers every exported builder of the package with what it
// builds for sample arguments, and the GSI an index partition is used on.
// TestEveryBuilderRegistered keeps the list complete.
var builders = map[string][]probe{
	"BoxKey":               key(table.BoxKey("B")),
	"BoxesIndex":           ix(store.GSI1, table.BoxesIndex),
	"AgentKey":             key(table.AgentKey("A")),
	"ProfileKey":           key(table.ProfileKey("A")),
	"CheckpointKey":        key(table.CheckpointKey("A")),
	"AckedCounterKey":      key(table.AckedCounterKey("A")),
	"AckSeqKey":            key(table.AckSeqKey("A")),
	"RequestCounterKey":    key(table.RequestCounterKey("A")),
	"SessionListKey":       key(table.SessionListKey("A")),
	"SpacesCreatedKey":     key(table.SpacesCreatedKey("A")),
	"CardKey":              key(table.CardKey("A")),
	"CardListingKey":       key(table.CardListingKey("A")),
	"MembershipGenKey":     key(table.MembershipGenKey("A")),
	"AgentMemberKey":       key(table.AgentMemberKey("A", "R")),
	"MembershipPrefix":     rng(table.MembershipPrefix("A")),
	"BoxAgentsIndex":       ix(store.GSI1, table.BoxAgentsIndex("B")),
	"DirectoryIndex":       ix(store.GSI2, table.DirectoryIndex("B")),
	"KeyRecordKey":         key(table.KeyRecordKey("K")),
	"OwnerKeyKey":          key(table.OwnerKeyKey("K")),
	"BoxOwnerKeysIndex":    ix(store.GSI1, table.BoxOwnerKeysIndex("B")),
	"OAuthLinkKey":         key(table.OAuthLinkKey(table.OAuthLinkID("https://issuer", "S", "C"))),
	"BoxOAuthLinksIndex":   ix(store.GSI1, table.BoxOAuthLinksIndex("B")),
	"SessionKey":           key(table.SessionKey("S")),
	"EndedSessionKey":      key(table.EndedSessionKey("S")),
	"ReceiptsKey":          key(table.ReceiptsKey("S")),
	"ReceiptKey":           key(table.ReceiptKey("S", 7)),
	"SeenIndex":            ix(store.GSI1, table.SeenIndex("A")),
	"IdemKey":              key(table.IdemKey("A", "k1")),
	"CursorSecretKey":      key(table.CursorSecretKey()),
	"RateShardKey":         key(table.RateShardKey("call", "A", 3)),
	"IntentKey":            key(table.IntentKey("I")),
	"IntentIndex":          ix(store.GSI1, table.IntentIndex),
	"IntentShard":          ix(store.GSI1, table.IntentShard("B")),
	"IntentPartitions":     ix(store.GSI1, table.IntentPartitions()...),
	"FanoutPartKey":        key(table.FanoutPartKey("F", 2)),
	"RoomKey":              key(table.RoomKey("R")),
	"BriefKey":             key(table.BriefKey("R")),
	"RoomMemberKey":        key(table.RoomMemberKey("R", "A")),
	"RosterPrefix":         rng(table.RosterPrefix("R")),
	"EpochKey":             key(table.EpochKey("R", "A")),
	"MemberCountKey":       key(table.MemberCountKey("R")),
	"BoxRoomsIndex":        ix(store.GSI1, table.BoxRoomsIndex("B")),
	"RoomStreamPK":         key(table.StreamHeadKey(table.RoomStreamPK("R"))),
	"RoomHeadKey":          key(table.RoomHeadKey("R")),
	"DMStreamPK":           key(table.StreamHeadKey(table.DMStreamPK("A", "B"))),
	"StreamHeadKey":        append(key(table.StreamHeadKey("room#R")), key(table.StreamHeadKey("dm#A#B"))...),
	"StreamMsgKey":         append(key(table.StreamMsgKey("room#R", 1)), key(table.StreamMsgKey("dm#A#B", 1))...),
	"StreamMsgPrefix":      append(rng("room#R", table.StreamMsgPrefix), rng("dm#A#B", table.StreamMsgPrefix)...),
	"MessagePointerKey":    key(table.MessagePointerKey("M")),
	"BoxRequestsIndex":     ix(store.GSI1, table.BoxRequestsIndex("B")),
	"BoxActivityIndex":     ix(store.GSI2, table.BoxActivityIndex("B")),
	"ThreadKey":            key(table.ThreadKey("M", 1)),
	"ThreadPrefix":         rng(table.ThreadPrefix("M")),
	"InboxHeadKey":         key(table.InboxHeadKey("A")),
	"InboxRowKey":          key(table.InboxRowKey("A", 1)),
	"InboxRowPrefix":       rng("agent#A", table.InboxRowPrefix),
	"AttentionIndex":       ix(store.GSI1, table.AttentionIndex("A")),
	"RequestKey":           key(table.RequestKey("M", "A")),
	"IncomingIndex":        ix(store.GSI1, table.IncomingIndex("A")),
	"OutgoingIndex":        ix(store.GSI2, table.OutgoingIndex("A")),
	"FileReportKey":        key(table.FileReportKey("M", "f.txt", "A")),
	"FileReportPrefix":     append(rng(table.FileReportPrefix("M", "")), rng(table.FileReportPrefix("M", "f.txt"))...),
	"SpaceKey":             key(table.SpaceKey("P")),
	"SpaceListingKey":      key(table.SpaceListingKey("P")),
	"SpaceMembersKey":      key(table.SpaceMembersKey("P")),
	"SpaceMemberKey":       key(table.SpaceMemberKey("P", "A")),
	"SpaceMemberPrefix":    rng(table.SpaceMemberPrefix("P")),
	"AgentSpaceKey":        key(table.AgentSpaceKey("A", table.SpaceSortKey(time.Unix(0, 0), "P"))),
	"AgentSpacePrefix":     rng(table.AgentSpacePrefix("A")),
	"BoxSpacesIndex":       ix(store.GSI1, table.BoxSpacesIndex("B")),
	"MemoryKey":            key(table.MemoryKey("A", "note")),
	"MemoryPrefix":         rng(table.MemoryPrefix("A")),
	"MemoryCounterKey":     key(table.MemoryCounterKey("A")),
	"WebhookPartition":     rng(table.WebhookPartition, table.WebhookPrefix),
	"WebhookPrefix":        rng(table.WebhookPartition, table.WebhookPrefix),
	"WebhookKey":           key(table.WebhookKey("W")),
	"WebhookCursorPrefix":  rng(table.WebhookPartition, table.WebhookCursorPrefix),
	"WebhookCursorKey":     key(table.WebhookCursorKey("W", "A")),
	"WebhookCursorsPrefix": rng(table.WebhookCursorsPrefix("W")),
}

// isBuilder says whether an exported name of the package builds a key, a
// range or an index partition: a function returning store.Key, or a name
// that ends like one.
func isBuilder(name string, fn *ast.FuncType) bool {
	for _, suffix := range []string{"Index", "Prefix", "Partition", "Partitions", "Shard", "PK"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	if fn == nil || fn.Results == nil {
		return false
	}
	for _, r := range fn.Results.List {
		if sel, ok := r.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Key" {
			return true
		}
	}
	return false
}

// TestEveryBuilderRegistered parses the package's own source, so a key
// builder added without its entry in builders (and so unchecked against
// Families) fails here.
func TestEveryBuilderRegistered(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	found := map[string]bool{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() && isBuilder(d.Name.Name, d.Type) {
					found[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if vs, ok := s.(*ast.ValueSpec); ok {
						for _, n := range vs.Names {
							if n.IsExported() && isBuilder(n.Name, nil) {
								found[n.Name] = true
							}
						}
					}
				}
			}
		}
	}
	if len(found) == 0 {
		t.Fatal("no builder found in the package source")
	}
	for name := range found {
		if _, ok := builders[name]; !ok {
			t.Errorf("%s builds keys but is not registered in builders, so Families is not checked against it", name)
		}
	}
	for name := range builders {
		if !found[name] {
			t.Errorf("builders lists %s, which the package does not declare", name)
		}
	}
}

// TestEveryFamilyListed checks what every builder builds against Families:
// a key's partition is one family's and its sort key one of that family's;
// an index partition is one index family's, on the GSI it is used on.
func TestEveryFamilyListed(t *testing.T) {
	for name, probes := range builders {
		for _, p := range probes {
			if p.index != "" {
				got := matchingIndexes(p.index)
				if len(got) != 1 {
					t.Errorf("%s: index partition %q matches %d index families, want 1", name, p.index, len(got))
					continue
				}
				if got[0].GSI != p.gsi {
					t.Errorf("%s: index partition %q is used on GSI %v, but its family %q is on %v", name, p.index, p.gsi, got[0].Name, got[0].GSI)
				}
				continue
			}
			fams := matchingFamilies(p.pk)
			if len(fams) != 1 {
				t.Errorf("%s: partition %q matches %d families, want 1", name, p.pk, len(fams))
				continue
			}
			if !skListed(fams[0], p.sk, p.isRange) {
				t.Errorf("%s: sort key %q (range %v) is not listed in family %q", name, p.sk, p.isRange, fams[0].Name)
			}
		}
	}
}

func matchingFamilies(pk string) []table.Family {
	var out []table.Family
	for _, f := range table.Families {
		if (f.Exact && pk == f.PK) || (!f.Exact && strings.HasPrefix(pk, f.PK) && len(pk) > len(f.PK)) {
			out = append(out, f)
		}
	}
	return out
}

func skListed(f table.Family, sk string, isRange bool) bool {
	for _, s := range f.SK {
		switch {
		case s.Exact && !isRange && sk == s.Prefix:
			return true
		case !s.Exact && strings.HasPrefix(sk, s.Prefix) && (isRange || len(sk) > len(s.Prefix)):
			return true
		}
	}
	return false
}

func indexFamilies() []table.IndexFamily {
	var out []table.IndexFamily
	for _, f := range table.Families {
		for _, i := range f.Indexes {
			if !slices.Contains(out, i) {
				out = append(out, i)
			}
		}
	}
	return out
}

func matchingIndexes(partition string) []table.IndexFamily {
	var out []table.IndexFamily
	for _, i := range indexFamilies() {
		if i.Exact {
			if partition == i.Prefix {
				out = append(out, i)
			}
			continue
		}
		if len(partition) > len(i.Prefix)+len(i.Suffix) && strings.HasPrefix(partition, i.Prefix) && strings.HasSuffix(partition, i.Suffix) {
			out = append(out, i)
		}
	}
	return out
}

// TestSortKeysDoNotNest checks that no sort key of a family is a prefix
// of another, so a range read returns its own items only, unless the pair
// is in Nested with its reason and the shorter key is exact (read by Get).
func TestSortKeysDoNotNest(t *testing.T) {
	used := map[[2]string]bool{}
	for _, f := range table.Families {
		for i, a := range f.SK {
			for j, b := range f.SK {
				if i == j {
					continue
				}
				if a.Prefix == b.Prefix {
					t.Errorf("family %q lists sort key %q twice", f.Name, a.Prefix)
					continue
				}
				if !strings.HasPrefix(b.Prefix, a.Prefix) {
					continue
				}
				pair := [2]string{a.Prefix, b.Prefix}
				if _, ok := table.Nested[pair]; !ok || !a.Exact {
					t.Errorf("family %q: sort key %q is a prefix of %q (a range read of one returns the other)", f.Name, a.Prefix, b.Prefix)
				}
				used[pair] = true
			}
		}
	}
	for pair := range table.Nested {
		if !used[pair] {
			t.Errorf("Nested lists %q, which no family holds", pair)
		}
	}
}

// TestPartitionsDoNotCollide checks that no family's partition keys can
// be another's: no PK prefix starts another.
func TestPartitionsDoNotCollide(t *testing.T) {
	for i, a := range table.Families {
		for j, b := range table.Families {
			if i == j {
				continue
			}
			if a.PK == b.PK || (!a.Exact && strings.HasPrefix(b.PK, a.PK)) {
				t.Errorf("families %q (%q) and %q (%q) can share a partition", a.Name, a.PK, b.Name, b.PK)
			}
		}
	}
}

// TestIndexFamiliesOneGSI checks that each index family has one
// definition, so one GSI, and that no two index families' partitions can
// meet, on one GSI or across them.
func TestIndexFamiliesOneGSI(t *testing.T) {
	byName := map[string]table.IndexFamily{}
	for _, f := range table.Families {
		for _, i := range f.Indexes {
			if prev, ok := byName[i.Name]; ok && prev != i {
				t.Errorf("index family %q has two definitions: %+v and %+v", i.Name, prev, i)
			}
			byName[i.Name] = i
		}
	}
	all := indexFamilies()
	for x, a := range all {
		for y, b := range all {
			if x >= y || a.Name == b.Name {
				continue
			}
			if indexesMeet(a, b) {
				t.Errorf("index families %q (%v %q…%q) and %q (%v %q…%q) can share a partition", a.Name, a.GSI, a.Prefix, a.Suffix, b.Name, b.GSI, b.Prefix, b.Suffix)
			}
		}
	}
}

func indexesMeet(a, b table.IndexFamily) bool {
	switch {
	case a.Exact && b.Exact:
		return a.Prefix == b.Prefix
	case a.Exact:
		return len(matchingIn(a.Prefix, b)) > 0
	case b.Exact:
		return len(matchingIn(b.Prefix, a)) > 0
	}
	prefixes := strings.HasPrefix(a.Prefix, b.Prefix) || strings.HasPrefix(b.Prefix, a.Prefix)
	suffixes := strings.HasSuffix(a.Suffix, b.Suffix) || strings.HasSuffix(b.Suffix, a.Suffix)
	return prefixes && suffixes
}

func matchingIn(partition string, i table.IndexFamily) []table.IndexFamily {
	if strings.HasPrefix(partition, i.Prefix) && strings.HasSuffix(partition, i.Suffix) && len(partition) > len(i.Prefix)+len(i.Suffix) {
		return []table.IndexFamily{i}
	}
	return nil
}
