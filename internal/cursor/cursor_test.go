package cursor_test

import (
	"encoding/base64"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/cursor"
)

type pos struct {
	Seq  uint64 `json:"seq"`
	Name string `json:"name"`
}

func TestRoundTripAndBinding(t *testing.T) {
	scope := cursor.Scope{Agent: "a1", Stream: "rooms", Epoch: 3}
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
		{"OtherAgent", c, cursor.Scope{Agent: "a2", Stream: "rooms", Epoch: 3}},
		{"OtherStream", c, cursor.Scope{Agent: "a1", Stream: "inbox", Epoch: 3}},
		{"OtherEpoch", c, cursor.Scope{Agent: "a1", Stream: "rooms", Epoch: 4}},
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
