package strictjson_test

import (
	"reflect"
	"testing"

	"github.com/agentbox/agentbox/internal/strictjson"
)

func TestMembers(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  string
		want []string // key=value pairs, in order
		ok   bool
	}{
		{"empty object", ` { } `, nil, true},
		{"scalars", `{"a":1,"b":"x","c":true,"d":null,"e":-1.5e3}`, []string{"a=1", `b="x"`, "c=true", "d=null", "e=-1.5e3"}, true},
		{"nested values", `{"a":{"x":[1,{"y":"}"}]},"b":[[],{}],"c":"]"}`, []string{`a={"x":[1,{"y":"}"}]}`, "b=[[],{}]", `c="]"`}, true},
		{"escapes in strings", `{"a":"q\"}\\","b":1}`, []string{`a="q\"}\\"`, "b=1"}, true},
		{"escaped key", `{"\u006dethod":"ping"}`, []string{`method="ping"`}, true},
		{"key case is kept", `{"Method":"ping"}`, []string{`Method="ping"`}, true},
		{"whitespace", "{\n\t\"a\" :\r 1 ,\"b\": [ 1 , 2 ] }", []string{"a=1", "b=[ 1 , 2 ]"}, true},
		{"not an object", `[1]`, nil, false},
		{"empty", ``, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			ok := strictjson.Members([]byte(tc.raw), func(k, v []byte) bool {
				got = append(got, string(k)+"="+string(v))
				return true
			})
			if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Members(%s) = %q, %v; want %q, %v", tc.raw, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestMembersStops(t *testing.T) {
	n := 0
	ok := strictjson.Members([]byte(`{"a":1,"b":2,"c":3}`), func(k, v []byte) bool { n++; return string(k) != "b" })
	if !ok || n != 2 {
		t.Errorf("Members stopping at b: ok %v after %d members, want true after 2", ok, n)
	}
}
