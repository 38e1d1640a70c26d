package table

import (
	"context"
	"testing"

	"github.com/agentbox/agentbox/internal/cursor"
	"github.com/agentbox/agentbox/internal/store"
)

func TestFit(t *testing.T) {
	for _, tc := range []struct {
		sizes  []int
		budget int
		want   int
	}{
		{nil, 10, 0},
		{[]int{20}, 10, 1},       // one row over the budget is shown alone
		{[]int{4, 4, 4}, 10, 2},  // the third does not fit
		{[]int{4, 9, 1}, 10, 1},  // never past a dropped row, though the third would fit
		{[]int{5, 5}, 10, 2},     // exactly the budget
		{[]int{1, 1, 1}, 100, 3}, // all
	} {
		if got := Fit(len(tc.sizes), tc.budget, func(i int) int { return tc.sizes[i] }); got != tc.want {
			t.Errorf("Fit(%v, %d) = %d, want %d", tc.sizes, tc.budget, got, tc.want)
		}
	}
}

// rows is a sorted partition a pager reads.
type rows []*store.Item

func (r rows) Query(_ context.Context, q store.Query) ([]*store.Item, error) {
	var out []*store.Item
	for _, it := range r {
		if it.SK >= q.From && (q.To == "" || it.SK <= q.To) && len(out) < q.Limit {
			out = append(out, it)
		}
	}
	return out, nil
}

type pos struct {
	K string `json:"k"`
}

func TestPageWalksEveryEntryOnce(t *testing.T) {
	var st rows
	for _, sk := range []string{"a", "b", "c", "d", "e"} {
		st = append(st, &store.Item{PK: "p", SK: sk})
	}
	ks := Keyset[pos]{
		Scope: cursor.Scope{Agent: "a", Stream: "s", Key: []byte("k")},
		Key:   func(p pos) (string, bool) { return p.K, true },
		Pos:   func(sk string) pos { return pos{K: sk} },
	}
	var got string
	cur := ""
	for range 4 { // 5 entries, 2 a page: 3 pages
		items, next, err := Page(context.Background(), st, store.Query{PK: "p"}, ks, cur, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			got += it.SK
		}
		if next == "" {
			break
		}
		cur = next
	}
	if got != "abcde" {
		t.Fatalf("pages read %q, want abcde", got)
	}
	other := ks
	other.Scope.Stream = "t"
	if _, _, err := Page(context.Background(), st, store.Query{PK: "p"}, other, cur, 2); err == nil {
		t.Fatal("a cursor of another list was accepted")
	}
}
