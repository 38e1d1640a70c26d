package dynamo

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentbox/agentbox/internal/store"
)

// TestItemWireForm pins what the adapter stores: the attribute names and
// types of store.Definition's table, index keys and ttl absent when empty
// (sparse indexes, no expiry), data absent when empty and read back as
// nil, ver and n always present. Tables written by earlier versions hold
// exactly these shapes, so a change here is a migration.
func TestItemWireForm(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	cases := []struct {
		name string
		item store.Item
		want map[string]types.AttributeValue
	}{
		{"Full", store.Item{PK: "agent#a", SK: "inbox", GSI1PK: "g1", GSI1SK: "s1", GSI2PK: "g2", GSI2SK: "s2",
			Version: 18446744073709551615, Count: -3, ExpiresAt: 1764627000, Data: []byte{0, 1, 2}},
			map[string]types.AttributeValue{"pk": s("agent#a"), "sk": s("inbox"), "gsi1pk": s("g1"), "gsi1sk": s("s1"),
				"gsi2pk": s("g2"), "gsi2sk": s("s2"), "ver": n("18446744073709551615"), "n": n("-3"),
				"ttl": n("1764627000"), "data": &types.AttributeValueMemberB{Value: []byte{0, 1, 2}}}},
		{"Bare", store.Item{PK: "box#b", SK: "profile"},
			map[string]types.AttributeValue{"pk": s("box#b"), "sk": s("profile"), "ver": n("0"), "n": n("0")}},
		{"EmptyData", store.Item{PK: "p", SK: "s", Version: 2, Data: []byte{}},
			map[string]types.AttributeValue{"pk": s("p"), "sk": s("s"), "ver": n("2"), "n": n("0")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := encodeItem(&c.item)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("encodeItem(%+v) =\n%s\nwant\n%s", c.item, avString(got), avString(c.want))
			}
			back, err := decodeItem(got)
			if err != nil {
				t.Fatalf("decodeItem(encodeItem(%+v)): %v", c.item, err)
			}
			want := c.item
			if len(want.Data) == 0 {
				want.Data = nil
			}
			if !reflect.DeepEqual(*back, want) {
				t.Errorf("decodeItem(encodeItem(%+v)) = %+v", c.item, *back)
			}
		})
	}
}

// TestDecodeItemMalformed: an item the adapter did not write (wrong type,
// out of range, no key) is errMalformed, never a half-read item. An
// empty binary, which another writer may store, reads as no data; an item
// without ver (a counter's OpAdd created it) reads as version 0.
func TestDecodeItemMalformed(t *testing.T) {
	key := func() map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "p"}, "sk": &types.AttributeValueMemberS{Value: "s"}}
	}
	with := func(name string, av types.AttributeValue) map[string]types.AttributeValue {
		m := key()
		if av == nil {
			delete(m, name)
		} else {
			m[name] = av
		}
		return m
	}
	bad := map[string]map[string]types.AttributeValue{
		"PKNumber":      with("pk", &types.AttributeValueMemberN{Value: "1"}),
		"NoSK":          with("sk", nil),
		"EmptyPK":       with("pk", &types.AttributeValueMemberS{Value: ""}),
		"GSIBinary":     with("gsi1pk", &types.AttributeValueMemberB{Value: []byte("x")}),
		"VersionString": with("ver", &types.AttributeValueMemberS{Value: "1"}),
		"VersionNeg":    with("ver", &types.AttributeValueMemberN{Value: "-1"}),
		"VersionFrac":   with("ver", &types.AttributeValueMemberN{Value: "1.5"}),
		"CountHuge":     with("n", &types.AttributeValueMemberN{Value: "9223372036854775808"}),
		"TTLString":     with("ttl", &types.AttributeValueMemberS{Value: "1"}),
		"DataString":    with("data", &types.AttributeValueMemberS{Value: "x"}),
	}
	for name, m := range bad {
		t.Run(name, func(t *testing.T) {
			if it, err := decodeItem(m); !errors.Is(err, errMalformed) {
				t.Errorf("decodeItem(%s) = %+v, %v; want errMalformed", avString(m), it, err)
			}
		})
	}
	it, err := decodeItem(with("data", &types.AttributeValueMemberB{Value: []byte{}}))
	if err != nil || it.Data != nil || it.Version != 0 {
		t.Errorf("decodeItem(empty data, no ver) = %+v, %v; want no data, version 0", it, err)
	}
}

// TestItemTags: the item struct's attribute names are store's.
func TestItemTags(t *testing.T) {
	want := map[string]string{"PK": store.AttrPK, "SK": store.AttrSK, "GSI1PK": store.AttrGSI1PK, "GSI1SK": store.AttrGSI1SK,
		"GSI2PK": store.AttrGSI2PK, "GSI2SK": store.AttrGSI2SK, "Version": store.AttrVersion, "Count": store.AttrCount,
		"ExpiresAt": store.AttrTTL, "Data": store.AttrData}
	typ := reflect.TypeFor[item]()
	if typ.NumField() != len(want) {
		t.Fatalf("item has %d fields, want %d", typ.NumField(), len(want))
	}
	for f := range typ.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("dynamodbav"), ",")
		if name != want[f.Name] {
			t.Errorf("item.%s is stored as %q, want %q", f.Name, name, want[f.Name])
		}
	}
}

func avString(m map[string]types.AttributeValue) string {
	var b strings.Builder
	for _, k := range []string{"pk", "sk", "gsi1pk", "gsi1sk", "gsi2pk", "gsi2sk", "ver", "n", "ttl", "data"} {
		switch v := m[k].(type) {
		case nil:
		case *types.AttributeValueMemberS:
			b.WriteString(k + "=S:" + v.Value + " ")
		case *types.AttributeValueMemberN:
			b.WriteString(k + "=N:" + v.Value + " ")
		case *types.AttributeValueMemberB:
			b.WriteString(k + "=B:" + string(v.Value) + " ")
		default:
			b.WriteString(k + "=? ")
		}
	}
	return b.String()
}

// benchItem is a typical stored item: a message row with one index entry
// and a body of a few hundred bytes.
var benchItem = store.Item{PK: "agent#6f1c2a52-3b0e-4c8e-9d4a-0b7f0e2c1a11", SK: "inbox#000000000042",
	GSI1PK: "msg#01JD8Y8K3Q4W6X2Z", GSI1SK: "000000000042", Version: 3, Count: 1, ExpiresAt: 1764627000,
	Data: []byte(strings.Repeat("x", 400))}

func BenchmarkEncodeItem(b *testing.B) {
	for b.Loop() {
		_ = encodeItem(&benchItem)
	}
}

func BenchmarkDecodeItem(b *testing.B) {
	m := encodeItem(&benchItem)
	for b.Loop() {
		if _, err := decodeItem(m); err != nil {
			b.Fatal(err)
		}
	}
}
