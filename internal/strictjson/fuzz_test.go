package strictjson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/strictjson"
)

// FuzzCheck asserts that Check never panics, that encoding/json accepts
// whatever Check accepts (and sees no duplicate key in it), that what Check
// calls malformed encoding/json also rejects, and that a duplicate Check
// reports is one encoding/json's own key decoding also sees. Plain `go test`
// runs only the seeds below; run
//
//	go test -run '^$' -fuzz FuzzCheck -fuzztime 20s ./internal/strictjson/
//
// to search.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		`{}`, ` {"a":1} `, `{"a":[1,2,{"b":null}],"c":{"d":"e"}}`,
		`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"x":[{"k":1,"k":2}]}`,
		`{"a":"\ud83d\ude00"}`, `{"a":"\ud800"}`, `{"a":"\udc00"}`, `{"\u00e9":1,"é":2}`,
		"{\"a\":\"\xff\"}", "{\"a\":\"\xc0\xaf\"}", "{\"a\":\"\xed\xa0\x80\"}",
		`{"a":-0.5e-7,"b":1E+2,"c":0}`, `{"a":01}`, `{"a":1.}`, `{"a":"\/\b\f\n\r\t\"\\"}`,
		`{"a":[[[[[[[[[[[[]]]]]]]]]]]]}`, `{"a":1}{}`, `[]`, ``, `{"a":tru}`, "{\"a\":\"\x1f\"}",
		strings.Repeat("[", 1000), `{"a":` + strings.Repeat(`{"b":`, 100),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		err := strictjson.Check(raw, 16)
		if err == nil {
			if !json.Valid(raw) {
				t.Fatalf("Check(%q) = nil but json.Valid is false", raw)
			}
			var m map[string]any
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if err := dec.Decode(&m); err != nil {
				t.Fatalf("Check(%q) = nil but json.Decode into map: %v", raw, err)
			}
			if dup, werr := duplicateKey(raw); dup || werr != nil {
				t.Fatalf("Check(%q) = nil but encoding/json tokens show duplicate=%v err=%v", raw, dup, werr)
			}
			return
		}
		var se *strictjson.Error
		if !errors.As(err, &se) {
			t.Fatalf("Check(%q) = %T, want *strictjson.Error", raw, err)
		}
		if se.Offset > len(raw) {
			t.Fatalf("Check(%q) offset %d beyond length %d", raw, se.Offset, len(raw))
		}
		switch {
		case strings.HasPrefix(se.Problem, "malformed JSON") && json.Valid(raw):
			t.Fatalf("Check(%q) = %v but json.Valid is true", raw, err)
		case se.Problem == "duplicate key in object":
			if dup, _ := duplicateKey(raw); !dup {
				t.Fatalf("Check(%q) = %v but encoding/json tokens show no duplicate", raw, err)
			}
		}
	})
}

// duplicateKey walks raw with encoding/json's tokenizer and reports whether
// some object repeats a key (as encoding/json decodes it) before any error.
func duplicateKey(raw []byte) (bool, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // Check does not bound numbers; 1e700 is valid JSON
	type obj struct {
		keys     map[string]bool
		wantsKey bool
	}
	var stack []*obj // nil entries are arrays
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		var top *obj
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.wantsKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1] != nil {
					stack[len(stack)-1].wantsKey = true
				}
				continue
			}
			k := tok.(string)
			if top.keys[k] {
				return true, nil
			}
			top.keys[k] = true
			top.wantsKey = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &obj{keys: map[string]bool{}, wantsKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, nil)
			continue
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended: the enclosing object wants its next key.
		if len(stack) > 0 && stack[len(stack)-1] != nil {
			stack[len(stack)-1].wantsKey = true
		}
	}
}
