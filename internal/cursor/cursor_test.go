package cursor_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/cursor"
)

type pos struct {
	Seq  uint64 `json:"seq"`
	Name string `json:"name"`
}

func TestRoundTripAndBinding(t *testing.T) {
	key := []byte("test-key-0123456789abcdef")
	scope := cursor.Scope{Agent: "a1", Stream: "rooms", Epoch: 3, Key: key}
	c := cursor.Encode(scope, pos{Seq: 18446744073709551615, Name: "zoë"})
	var got pos
	if err := cursor.Decode(c, scope, &got); err != nil || got.Seq != 18446744073709551615 || got.Name != "zoë" {
		t.Fatalf("Decode(Encode(p)) = %+v, %v; want the position back", got, err)
	}
	raw := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	bad := []struct {
		name, cursor string
		scope        cursor.Scope
	}{
		{"OtherAgent", c, cursor.Scope{Agent: "a2", Stream: "rooms", Epoch: 3, Key: key}},
		{"OtherStream", c, cursor.Scope{Agent: "a1", Stream: "inbox", Epoch: 3, Key: key}},
		{"OtherEpoch", c, cursor.Scope{Agent: "a1", Stream: "rooms", Epoch: 4, Key: key}},
		{"OtherKey", c, cursor.Scope{Agent: "a1", Stream: "rooms", Epoch: 3, Key: []byte("another deployment")}},
		{"TamperedPosition", tamper(t, c, `"seq":18446744073709551615`, `"seq":18446744073709551614`), scope},
		{"TamperedAgent", tamper(t, c, `"a":"a1"`, `"a":"a2"`), cursor.Scope{Agent: "a2", Stream: "rooms", Epoch: 3, Key: key}},
		{"TagStripped", stripTag(t, c), scope},
		{"Empty", "", scope},
		{"NotBase64", "!!!", scope},
		{"Padded", c + "=", scope},
		{"Truncated", c[:len(c)-3], scope},
		{"UnknownField", raw(`{"v":1,"a":"a1","s":"rooms","e":3,"p":{"seq":1,"name":"x"},"x":1}`), scope},
		{"DuplicateKey", raw(`{"v":1,"a":"a1","a":"a1","s":"rooms","e":3,"p":{"seq":1,"name":"x"}}`), scope},
		{"UnknownPosField", raw(`{"v":1,"a":"a1","s":"rooms","e":3,"p":{"seq":1,"evil":true}}`), scope},
		{"WrongVersion", raw(`{"v":2,"a":"a1","s":"rooms","e":3,"p":{"seq":1,"name":"x"}}`), scope},
		{"Trailing", raw(`{"v":1,"a":"a1","s":"rooms","e":3,"p":{"seq":1,"name":"x"}}x`), scope},
		{"NoPosition", raw(`{"v":1,"a":"a1","s":"rooms","e":3}`), scope},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			var p pos
			err := cursor.Decode(tc.cursor, tc.scope, &p)
			if e, ok := apperr.As(err); !ok || e.Code != apperr.CursorInvalid {
				t.Fatalf("Decode(%s) = %v, want CURSOR_INVALID", tc.name, err)
			}
		})
	}
}

// tamper rewrites part of a cursor's JSON and re-encodes it, as a client
// editing its cursor would.
func tamper(t *testing.T, c, from, to string) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	s := strings.Replace(string(b), from, to, 1)
	if s == string(b) {
		t.Fatalf("tamper: %q not in %s", from, b)
	}
	return base64.RawURLEncoding.EncodeToString([]byte(s))
}

func stripTag(t *testing.T, c string) string {
	t.Helper()
	b, _ := base64.RawURLEncoding.DecodeString(c)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	delete(m, "m")
	out, _ := json.Marshal(m)
	return base64.RawURLEncoding.EncodeToString(out)
}

// TestStrictParsingBehindAValidTag: every strictness case carries a tag
// that verifies, so that it is the strict parse (not the tag check) that
// must reject it. Replacing the strict parse with json.Unmarshal, or
// dropping the version check, fails these cases. The first case is the
// control: the same construction, well formed, decodes.
func TestStrictParsingBehindAValidTag(t *testing.T) {
	key := []byte("test-key-0123456789abcdef")
	scope := cursor.Scope{Agent: "a1", Stream: "rooms", Epoch: 3, Key: key}
	const p = `{"seq":1,"name":"x"}`
	cases := []struct {
		name   string
		cursor string
		valid  bool
	}{
		{"Control", signed(key, 1, "a1", p, `{"v":1,"a":"a1","s":"rooms","e":3,"p":`+p+`,"m":%s}`), true},
		{"UnknownField", signed(key, 1, "a1", p, `{"v":1,"a":"a1","s":"rooms","e":3,"p":`+p+`,"m":%s,"x":1}`), false},
		{"DuplicateKey", signed(key, 1, "a1", p, `{"v":1,"a":"a2","a":"a1","s":"rooms","e":3,"p":`+p+`,"m":%s}`), false},
		{"DuplicateKeyInPosition", signed(key, 1, "a1", `{"seq":1,"seq":2,"name":"x"}`, `{"v":1,"a":"a1","s":"rooms","e":3,"p":{"seq":1,"seq":2,"name":"x"},"m":%s}`), false},
		{"UnknownPositionField", signed(key, 1, "a1", `{"seq":1,"evil":true}`, `{"v":1,"a":"a1","s":"rooms","e":3,"p":{"seq":1,"evil":true},"m":%s}`), false},
		{"TrailingData", signed(key, 1, "a1", p, `{"v":1,"a":"a1","s":"rooms","e":3,"p":`+p+`,"m":%s} {}`), false},
		{"WrongVersion", signed(key, 2, "a1", p, `{"v":2,"a":"a1","s":"rooms","e":3,"p":`+p+`,"m":%s}`), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got pos
			err := cursor.Decode(tc.cursor, scope, &got)
			if tc.valid {
				if err != nil || got.Seq != 1 || got.Name != "x" {
					t.Fatalf("Decode(well-formed signed cursor) = %+v, %v; want seq 1 name x", got, err)
				}
				return
			}
			if e, ok := apperr.As(err); !ok || e.Code != apperr.CursorInvalid {
				t.Fatalf("Decode(%s with a valid tag) = %+v, %v; want CURSOR_INVALID", tc.name, got, err)
			}
		})
	}
}

// signed renders layout (with %s where the tag goes) as a cursor whose tag
// is the valid HMAC of the envelope {v, agent, "rooms", 3, p}: the same
// computation as the package's, written out independently.
func signed(key []byte, v int, agent, p, layout string) string {
	env := struct {
		V int             `json:"v"`
		A string          `json:"a"`
		S string          `json:"s"`
		E uint64          `json:"e"`
		P json.RawMessage `json:"p"`
	}{v, agent, "rooms", 3, json.RawMessage(p)}
	b, err := json.Marshal(env)
	if err != nil {
		panic(err)
	}
	m := hmac.New(sha256.New, key)
	m.Write(b)
	tag, _ := json.Marshal(m.Sum(nil)[:16])
	return base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf(layout, tag)))
}

// TestMaxLenBoundary: a cursor of exactly MaxLen characters is accepted;
// one character more is refused before any decoding.
func TestMaxLenBoundary(t *testing.T) {
	key := []byte("test-key-0123456789abcdef")
	scope := cursor.Scope{Agent: "a1", Stream: "rooms", Epoch: 3, Key: key}
	var atMax, over string
	for n := 1; n < cursor.MaxLen && (atMax == "" || over == ""); n++ {
		c := cursor.Encode(scope, pos{Name: strings.Repeat("x", n)})
		switch {
		case len(c) == cursor.MaxLen:
			atMax = c
		case len(c) > cursor.MaxLen && over == "":
			over = c
		}
	}
	if atMax == "" || over == "" {
		t.Fatalf("could not build cursors of exactly %d and over %d characters", cursor.MaxLen, cursor.MaxLen)
	}
	var got pos
	if err := cursor.Decode(atMax, scope, &got); err != nil {
		t.Errorf("Decode(cursor of exactly MaxLen=%d characters) = %v, want it accepted", cursor.MaxLen, err)
	}
	if err := cursor.Decode(over, scope, &got); err == nil {
		t.Errorf("Decode(cursor of %d characters) accepted, want CURSOR_INVALID over MaxLen=%d", len(over), cursor.MaxLen)
	}
}
