package strictjson_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/strictjson"
)

// secret marks input that must never appear in an error's text.
const secret = "SECRET-123"

func TestCheck(t *testing.T) {
	deep := func(open, close string, n int) string {
		return `{"a":` + strings.Repeat(open, n) + strings.Repeat(close, n) + `}`
	}
	manyKeys := func(n int, dupAt int) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			k := i
			if i == dupAt {
				k = 0
			}
			b.WriteString(`"k`)
			b.WriteString(strings.Repeat("x", k%7))
			b.WriteString(`_`)
			b.WriteString(strconv.Itoa(k))
			b.WriteString(`":1`)
		}
		b.WriteString("}")
		return b.String()
	}

	tests := []struct {
		name     string
		raw      string
		maxDepth int
		problem  string // "" means accepted; otherwise the Problem, or its prefix ending in "*"
		limit    bool
	}{
		// Accepted.
		{name: "empty object", raw: `{}`, maxDepth: 1},
		{name: "whitespace around", raw: " \t\r\n{ } \n\t ", maxDepth: 1},
		{name: "all value kinds", raw: `{"s":"x","n":-1.5e+3,"z":0,"t":true,"f":false,"u":null,"a":[1,[],{}],"o":{"p":"q"}}`, maxDepth: 3},
		{name: "depth exactly at limit", raw: `{"a":[{"b":[]}]}`, maxDepth: 4},
		{name: "same key in sibling objects", raw: `{"a":{"x":1},"b":{"x":2},"c":[{"x":1},{"x":2}]}`, maxDepth: 3},
		{name: "valid surrogate pair", raw: `{"k":"\ud83d\ude00"}`, maxDepth: 1},
		{name: "all simple escapes", raw: `{"k":"\"\\\/\b\f\n\r\t\u00e9"}`, maxDepth: 1},
		{name: "non-ASCII UTF-8 key and value", raw: `{"clé":"é😀"}`, maxDepth: 1},
		{name: "keys differing only after escape", raw: `{"a":1,"\u0062":2}`, maxDepth: 1},
		{name: "many distinct keys", raw: manyKeys(5000, -1), maxDepth: 1},
		{name: "deep nesting under a huge limit does not recurse", raw: deep("[", "]", 100_000), maxDepth: 200_000},

		// Empty or not an object.
		{name: "empty input", raw: ``, maxDepth: 8, problem: "request body is empty"},
		{name: "whitespace only", raw: " \n\t", maxDepth: 8, problem: "request body is empty"},
		{name: "top-level array", raw: `["` + secret + `"]`, maxDepth: 8, problem: "request body is not a JSON object"},
		{name: "top-level string", raw: `"` + secret + `"`, maxDepth: 8, problem: "request body is not a JSON object"},
		{name: "top-level number", raw: `12`, maxDepth: 8, problem: "request body is not a JSON object"},
		{name: "top-level null", raw: `null`, maxDepth: 8, problem: "request body is not a JSON object"},
		{name: "byte order mark", raw: "\ufeff{}", maxDepth: 8, problem: "request body is not a JSON object"},
		{name: "a megabyte of open brackets fails at once", raw: strings.Repeat("[", 1<<20), maxDepth: 8, problem: "request body is not a JSON object"},

		// Depth.
		{name: "depth one over limit", raw: `{"a":[{"b":[]}]}`, maxDepth: 3, problem: "nesting deeper than 3 levels", limit: true},
		{name: "100k arrays", raw: deep("[", "]", 100_000), maxDepth: 8, problem: "nesting deeper than 8 levels", limit: true},
		{name: "100k objects", raw: `{"a":` + strings.Repeat(`{"a":`, 100_000), maxDepth: 8, problem: "nesting deeper than 8 levels", limit: true},
		{name: "unclosed 1 MB of brackets in an object", raw: `{"a":` + strings.Repeat("[", 1<<20), maxDepth: 64, problem: "nesting deeper than 64 levels", limit: true},
		{name: "zero limit rejects the top-level object", raw: `{}`, maxDepth: 0, problem: "nesting deeper than 0 levels", limit: true},

		// Duplicate keys.
		{name: "duplicate at top level", raw: `{"a":1,"a":"` + secret + `"}`, maxDepth: 8, problem: "duplicate key in object"},
		{name: "duplicate nested in array", raw: `{"list":[{"x":1},{"y":1,"x":2,"y":3}]}`, maxDepth: 8, problem: "duplicate key in object"},
		{name: "escaped duplicate", raw: `{"a":1,"\u0061":2}`, maxDepth: 8, problem: "duplicate key in object"},
		{name: "escaped duplicate non-ASCII", raw: `{"é":1,"\u00e9":2}`, maxDepth: 8, problem: "duplicate key in object"},
		{name: "escaped duplicate surrogate pair", raw: `{"😀":1,"\ud83d\ude00":2}`, maxDepth: 8, problem: "duplicate key in object"},
		{name: "escaped slash duplicate", raw: `{"a/b":1,"a\/b":2}`, maxDepth: 8, problem: "duplicate key in object"},
		{name: "duplicate secret key", raw: `{"` + secret + `":1,"` + secret + `":2}`, maxDepth: 8, problem: "duplicate key in object"},
		{name: "duplicate in a large object", raw: manyKeys(5000, 4999), maxDepth: 8, problem: "duplicate key in object"},

		// UTF-8 and surrogates.
		{name: "invalid UTF-8 in value", raw: "{\"a\":\"" + secret + "\xff\"}", maxDepth: 8, problem: "invalid UTF-8"},
		{name: "invalid UTF-8 in key", raw: "{\"" + secret + "\xfe\":1}", maxDepth: 8, problem: "invalid UTF-8"},
		{name: "invalid UTF-8 outside strings", raw: "{\"a\":1}\xff", maxDepth: 8, problem: "invalid UTF-8"},
		{name: "truncated multibyte sequence", raw: "{\"a\":\"\xc3\"}", maxDepth: 8, problem: "invalid UTF-8"},
		{name: "overlong slash", raw: "{\"a\":\"\xc0\xaf\"}", maxDepth: 8, problem: "invalid UTF-8"},
		{name: "overlong NUL", raw: "{\"a\":\"\xe0\x80\x80\"}", maxDepth: 8, problem: "invalid UTF-8"},
		{name: "UTF-8 encoded surrogate", raw: "{\"a\":\"\xed\xa0\x80\"}", maxDepth: 8, problem: "invalid UTF-8"},
		{name: "beyond U+10FFFF", raw: "{\"a\":\"\xf4\x90\x80\x80\"}", maxDepth: 8, problem: "invalid UTF-8"},
		{name: "lone high surrogate escape", raw: `{"a":"\ud800"}`, maxDepth: 8, problem: "invalid UTF-8: lone surrogate escape"},
		{name: "lone low surrogate escape", raw: `{"a":"\udc00\ud800"}`, maxDepth: 8, problem: "invalid UTF-8: lone surrogate escape"},
		{name: "high surrogate then letter", raw: `{"a":"\ud800\u0041"}`, maxDepth: 8, problem: "invalid UTF-8: lone surrogate escape"},
		{name: "two high surrogates", raw: `{"a":"\ud800\udbff"}`, maxDepth: 8, problem: "invalid UTF-8: lone surrogate escape"},
		{name: "high surrogate at end of string", raw: `{"a":"x\uDBFF"}`, maxDepth: 8, problem: "invalid UTF-8: lone surrogate escape"},
		{name: "lone surrogate in key", raw: `{"\ud800":1}`, maxDepth: 8, problem: "invalid UTF-8: lone surrogate escape"},

		// Syntax.
		{name: "unterminated string", raw: `{"a":"` + secret, maxDepth: 8, problem: "malformed JSON: unexpected end of input"},
		{name: "unterminated object", raw: `{"a":1`, maxDepth: 8, problem: "malformed JSON: unexpected end of input"},
		{name: "missing value", raw: `{"a":}`, maxDepth: 8, problem: "malformed JSON"},
		{name: "missing colon", raw: `{"a" 1}`, maxDepth: 8, problem: "malformed JSON"},
		{name: "trailing comma in object", raw: `{"a":1,}`, maxDepth: 8, problem: "malformed JSON"},
		{name: "trailing comma in array", raw: `{"a":[1,]}`, maxDepth: 8, problem: "malformed JSON"},
		{name: "unquoted key", raw: `{` + secret + `:1}`, maxDepth: 8, problem: "malformed JSON"},
		{name: "single quotes", raw: `{'a':1}`, maxDepth: 8, problem: "malformed JSON"},
		{name: "mismatched close", raw: `{"a":[1}`, maxDepth: 8, problem: "malformed JSON"},
		{name: "bad literal", raw: `{"a":tru}`, maxDepth: 8, problem: "malformed JSON"},
		{name: "literal with suffix", raw: `{"a":truex}`, maxDepth: 8, problem: "malformed JSON"},
		{name: "NaN", raw: `{"a":NaN}`, maxDepth: 8, problem: "malformed JSON"},
		{name: "leading zero", raw: `{"a":01}`, maxDepth: 8, problem: "malformed JSON"},
		{name: "plus sign", raw: `{"a":+1}`, maxDepth: 8, problem: "malformed JSON"},
		{name: "bare minus", raw: `{"a":-}`, maxDepth: 8, problem: "malformed JSON: invalid number"},
		{name: "fraction without digits", raw: `{"a":1.}`, maxDepth: 8, problem: "malformed JSON: invalid number"},
		{name: "exponent without digits", raw: `{"a":1e+}`, maxDepth: 8, problem: "malformed JSON: invalid number"},
		{name: "raw newline in string", raw: "{\"a\":\"" + secret + "\n\"}", maxDepth: 8, problem: "malformed JSON: unescaped control character in string"},
		{name: "raw NUL in string", raw: "{\"a\":\"\x00\"}", maxDepth: 8, problem: "malformed JSON: unescaped control character in string"},
		{name: "unknown escape", raw: `{"a":"\x41"}`, maxDepth: 8, problem: "malformed JSON: invalid escape in string"},
		{name: "short unicode escape", raw: `{"a":"\u12"}`, maxDepth: 8, problem: "malformed JSON: invalid escape in string"},
		{name: "non-hex unicode escape", raw: `{"a":"\u12G4"}`, maxDepth: 8, problem: "malformed JSON: invalid escape in string"},
		{name: "comment", raw: `{"a":1 /* ` + secret + ` */}`, maxDepth: 8, problem: "malformed JSON"},
		{name: "vertical tab is not whitespace", raw: "{\v}", maxDepth: 8, problem: "malformed JSON"},

		// Trailing data.
		{name: "second object", raw: `{} {}`, maxDepth: 8, problem: "trailing data after the JSON value"},
		{name: "trailing garbage", raw: `{"a":1}` + secret, maxDepth: 8, problem: "trailing data after the JSON value"},
		{name: "trailing NUL", raw: "{}\x00", maxDepth: 8, problem: "trailing data after the JSON value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := strictjson.Check([]byte(tt.raw), tt.maxDepth)
			if tt.problem == "" {
				if err != nil {
					t.Fatalf("Check(%.40q, %d) = %v, want nil", tt.raw, tt.maxDepth, err)
				}
				return
			}
			var se *strictjson.Error
			if !errors.As(err, &se) {
				t.Fatalf("Check(%.40q, %d) = %v (%T), want *strictjson.Error %q", tt.raw, tt.maxDepth, err, err, tt.problem)
			}
			if se.Problem != tt.problem || se.Limit != tt.limit {
				t.Errorf("Check(%.40q, %d) = {Problem: %q, Limit: %v}, want {Problem: %q, Limit: %v}",
					tt.raw, tt.maxDepth, se.Problem, se.Limit, tt.problem, tt.limit)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "\\u") {
				t.Errorf("Check(%.40q, %d) error %q quotes its input", tt.raw, tt.maxDepth, err)
			}
			if se.Offset > len(tt.raw) {
				t.Errorf("Check(%.40q, %d) offset %d beyond input length %d", tt.raw, tt.maxDepth, se.Offset, len(tt.raw))
			}
		})
	}
}

func TestCheckOffsets(t *testing.T) {
	tests := []struct {
		raw    string
		offset int
	}{
		{`{"a":1,"a":2}`, 7},
		{"{\"a\":\"\xff\"}", 6},
		{`{"a":1} x`, 8},
		{`{"a":[[[`, 6},
	}
	for _, tt := range tests {
		err := strictjson.Check([]byte(tt.raw), 2)
		var se *strictjson.Error
		if !errors.As(err, &se) || se.Offset != tt.offset {
			t.Errorf("Check(%q, 2) = %v, want an error at byte %d", tt.raw, err, tt.offset)
		}
	}
}

type decodeTarget struct {
	Name    string         `json:"name"`
	Count   int            `json:"count"`
	Payload map[string]any `json:"payload,omitempty"`
}

type failingField struct{}

func (*failingField) UnmarshalJSON(b []byte) error {
	return errors.New("bad value " + string(b))
}

func TestDecode(t *testing.T) {
	t.Run("ok", func(t *testing.T) {
		var got decodeTarget
		if err := strictjson.Decode([]byte(" {\"name\":\"n\",\"count\":3,\"payload\":{\"big\":9007199254740993}} \n"), &got); err != nil {
			t.Fatalf("Decode = %v, want nil", err)
		}
		if got.Name != "n" || got.Count != 3 {
			t.Errorf("Decode = %+v, want name n and count 3", got)
		}
		if n, ok := got.Payload["big"].(json.Number); !ok || n.String() != "9007199254740993" {
			t.Errorf("Decode payload big = %#v, want json.Number 9007199254740993 (no float rounding)", got.Payload["big"])
		}
	})
	tests := []struct {
		name    string
		raw     string
		target  any
		problem string
	}{
		{"unknown field", `{"name":"n","count":1,"` + secret + `":1}`, &decodeTarget{}, "unknown field in object"},
		{"wrong type", `{"name":"n","count":"` + secret + `"}`, &decodeTarget{}, "a JSON value has the wrong type for its field"},
		{"trailing data", `{"name":"n","count":1} {"` + secret + `":1}`, &decodeTarget{}, "trailing data after the JSON value"},
		{"trailing garbage", `{"name":"n","count":1}` + secret, &decodeTarget{}, "trailing data after the JSON value"},
		{"syntax", `{"name":` + secret + `}`, &decodeTarget{}, "malformed JSON"},
		{"truncated", `{"name":"` + secret, &decodeTarget{}, "malformed JSON: unexpected end of input"},
		{"empty", ``, &decodeTarget{}, "request body is empty"},
		{"custom unmarshaler error", `{"f":"` + secret + `"}`, &struct {
			F failingField `json:"f"`
		}{}, "JSON value cannot be decoded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := strictjson.Decode([]byte(tt.raw), tt.target)
			var se *strictjson.Error
			if !errors.As(err, &se) || se.Problem != tt.problem {
				t.Fatalf("Decode(%q) = %v, want problem %q", tt.raw, err, tt.problem)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("Decode(%q) error %q quotes its input", tt.raw, err)
			}
		})
	}
	t.Run("not a pointer", func(t *testing.T) {
		var se *strictjson.Error
		err := strictjson.Decode([]byte(`{}`), decodeTarget{})
		if err == nil || errors.As(err, &se) {
			t.Errorf("Decode into a non-pointer = %v, want encoding/json's InvalidUnmarshalError", err)
		}
	})
}
