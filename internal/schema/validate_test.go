package schema_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/agentbox/agentbox/internal/schema"
)

// secret marks a rejected value that must never appear in an error's text.
const secret = "SECRET-123"

// dataProps are the properties of the test schema's data object.
const dataProps = "at, count, flag, key, kind, level, payload, ratio, rev, small, targets, title, who"

type Target struct {
	AgentID string `json:"agent_id" schema:"format=uuid"`
}

type SendData struct {
	Title   string         `json:"title" schema:"minLength=1,maxLength=200"`
	Kind    string         `json:"kind" schema:"enum=dm|room"`
	Key     string         `json:"key,omitempty" schema:"maxLength=80,pattern=^[a-z0-9]+(-[a-z0-9]+)*$"`
	Count   int64          `json:"count,omitempty" schema:"minimum=1,maximum=100"`
	Ratio   float64        `json:"ratio,omitempty" schema:"minimum=0,maximum=1"`
	Flag    bool           `json:"flag,omitempty"`
	Targets []string       `json:"targets,omitempty" schema:"minItems=1,maxItems=3,uniqueItems"`
	Who     []Target       `json:"who,omitempty"`
	At      string         `json:"at,omitempty" schema:"format=date-time"`
	Payload map[string]any `json:"payload,omitempty"`
	Rev     *Revision      `json:"rev,omitempty"`
	Level   int            `json:"level,omitempty" schema:"enum=1|2"`
	Small   int8           `json:"small,omitempty"`
}

type SendArgs struct {
	ID   string   `json:"id" schema:"minLength=1,maxLength=80"`
	Data SendData `json:"data"`
}

var sendSchema = schema.Of[SendArgs]()

func TestValidate(t *testing.T) {
	const uuid = "0b8a5e4f-3ffa-4f88-81aa-00000000000a"
	withData := func(data string) string { return `{"id":"x","data":{"title":"t","kind":"dm"` + data + `}}` }
	tests := []struct {
		name  string
		raw   string
		path  string // "" with rule "" means valid
		rule  string
		limit bool
	}{
		{name: "minimal", raw: withData(``)},
		{name: "everything valid", raw: withData(`,"key":"a-b-1","count":100,"ratio":0.5,"flag":true,"targets":["a","b","c"],"who":[{"agent_id":"` + uuid + `"},{"agent_id":"0B8A5E4F-3FFA-4F88-81AA-00000000000A"}],"at":"2026-11-29T19:13:00.5+01:00","payload":{"any":[1,{"x":null}]},"rev":"18446744073709551615","level":2,"small":-128`)},
		{name: "integer boundary minimum", raw: withData(`,"count":1`)},
		{name: "payload is free-form", raw: withData(`,"payload":{"` + secret + `":{"deep":[true]}}`)},

		{name: "root not object", raw: `["` + secret + `"]`, path: "", rule: "must be an object"},
		{name: "missing root property", raw: `{"data":{"title":"t","kind":"dm"}}`, path: "id", rule: "is required"},
		{name: "missing nested property", raw: `{"id":"x","data":{"kind":"dm"}}`, path: "data.title", rule: "is required"},
		{name: "required before other rules", raw: `{"id":"` + strings.Repeat("x", 81) + `","data":{"kind":"dm"}}`, path: "data.title", rule: "is required"},
		{name: "unknown root property", raw: `{"id":"x","data":{"title":"t","kind":"dm"},"` + secret + `":1}`, path: "", rule: "has a property that is not allowed; allowed: data, id"},
		{name: "unknown nested property", raw: withData(`,"` + secret + `":"v"`), path: "data", rule: "has a property that is not allowed; allowed: " + dataProps},
		{name: "unknown property in array item", raw: withData(`,"who":[{"agent_id":"` + uuid + `","` + secret + `":1}]`), path: "data.who[0]", rule: "has a property that is not allowed; allowed: agent_id"},
		// A plain name is the contract's vocabulary, not a rejected value:
		// naming it tells the caller which of its properties to drop.
		{name: "unknown plain root property", raw: `{"id":"x","data":{"title":"t","kind":"dm"},"nope":1}`, path: "nope", rule: "is not a property of this object; allowed: data, id"},
		{name: "unknown plain nested property", raw: withData(`,"sesion_id":"v"`), path: "data.sesion_id", rule: "is not a property of this object; allowed: " + dataProps},
		{name: "first unknown in sorted order", raw: withData(`,"zz":1,"ab":2`), path: "data.ab", rule: "is not a property of this object; allowed: " + dataProps},
		{name: "long name not named", raw: withData(`,"` + strings.Repeat("a", 41) + `":1`), path: "data", rule: "has a property that is not allowed; allowed: " + dataProps},
		{name: "key-like name not named", raw: withData(`,"abk_AAAA-bbbb":1`), path: "data", rule: "has a property that is not allowed; allowed: " + dataProps},
		{name: "properties in sorted order", raw: `{"id":"","data":{"title":"","kind":"dm"}}`, path: "data.title", rule: "must be at least 1 character"},

		{name: "string type", raw: withData(`,"key":7`), path: "data.key", rule: "must be a string"},
		{name: "null is not a string", raw: withData(`,"key":null`), path: "data.key", rule: "must be a string"},
		{name: "maxLength", raw: `{"id":"` + strings.Repeat("x", 81) + `","data":{"title":"t","kind":"dm"}}`, path: "id", rule: "must be at most 80 characters", limit: true},
		{name: "minLength", raw: `{"id":"","data":{"title":"t","kind":"dm"}}`, path: "id", rule: "must be at least 1 character"},
		{name: "pattern", raw: withData(`,"key":"` + secret + `"`), path: "data.key", rule: "must match the pattern ^[a-z0-9]+(-[a-z0-9]+)*$"},
		{name: "pattern is unanchored search but anchored here", raw: withData(`,"key":"a--b"`), path: "data.key", rule: "must match the pattern ^[a-z0-9]+(-[a-z0-9]+)*$"},
		{name: "enum string", raw: `{"id":"x","data":{"title":"t","kind":"` + secret + `"}}`, path: "data.kind", rule: `must be one of the allowed values: "dm", "room"`},
		{name: "enum integer", raw: withData(`,"level":3`), path: "data.level", rule: "must be one of the allowed values: 1, 2"},
		{name: "enum integer written as float", raw: withData(`,"level":2.0`), path: "data.level", rule: "must be an integer"},
		{name: "uuid format", raw: withData(`,"who":[{"agent_id":"` + uuid + `"},{"agent_id":"` + secret + `"}]`), path: "data.who[1].agent_id", rule: "must be a UUID (8-4-4-4-12 hexadecimal digits)"},
		{name: "uuid without dashes", raw: withData(`,"who":[{"agent_id":"0b8a5e4f3ffa4f8881aa00000000000a"}]`), path: "data.who[0].agent_id", rule: "must be a UUID (8-4-4-4-12 hexadecimal digits)"},
		{name: "uuid in braces", raw: withData(`,"who":[{"agent_id":"{0b8a5e4f-3ffa-4f88-81aa-00000000000}"}]`), path: "data.who[0].agent_id", rule: "must be a UUID (8-4-4-4-12 hexadecimal digits)"},
		{name: "date-time", raw: withData(`,"at":"2026-11-29 19:13:00"`), path: "data.at", rule: "must be an RFC 3339 date-time"},
		{name: "date-time without zone", raw: withData(`,"at":"2026-11-29T19:13:00"`), path: "data.at", rule: "must be an RFC 3339 date-time"},
		{name: "provider pattern", raw: withData(`,"rev":"007"`), path: "data.rev", rule: "must match the pattern ^(0|[1-9][0-9]{0,19})$"},
		{name: "provider type", raw: withData(`,"rev":7`), path: "data.rev", rule: "must be a string"},

		{name: "integer type string", raw: withData(`,"count":"` + secret + `"`), path: "data.count", rule: "must be an integer"},
		{name: "integer with fraction", raw: withData(`,"count":1.5`), path: "data.count", rule: "must be an integer"},
		{name: "integer with exponent", raw: withData(`,"count":1e1`), path: "data.count", rule: "must be an integer"},
		{name: "integer beyond int64", raw: withData(`,"count":9223372036854775808`), path: "data.count", rule: "must be an integer"},
		{name: "minimum", raw: withData(`,"count":0`), path: "data.count", rule: "must be at least 1"},
		{name: "maximum", raw: withData(`,"count":101`), path: "data.count", rule: "must be at most 100", limit: true},
		{name: "int8 range from Go type", raw: withData(`,"small":128`), path: "data.small", rule: "must be at most 127", limit: true},
		{name: "number maximum", raw: withData(`,"ratio":1.0000001`), path: "data.ratio", rule: "must be at most 1", limit: true},
		{name: "number minimum", raw: withData(`,"ratio":-1e-9`), path: "data.ratio", rule: "must be at least 0"},
		{name: "number huge", raw: withData(`,"ratio":1e999`), path: "data.ratio", rule: "must be at most 1", limit: true},
		{name: "number type", raw: withData(`,"ratio":true`), path: "data.ratio", rule: "must be a number"},
		{name: "boolean type", raw: withData(`,"flag":"true"`), path: "data.flag", rule: "must be a boolean"},
		{name: "object type", raw: withData(`,"payload":["` + secret + `"]`), path: "data.payload", rule: "must be an object"},

		{name: "array type", raw: withData(`,"targets":"` + secret + `"`), path: "data.targets", rule: "must be an array"},
		{name: "minItems", raw: withData(`,"targets":[]`), path: "data.targets", rule: "must have at least 1 item"},
		{name: "maxItems", raw: withData(`,"targets":["a","b","c","d"]`), path: "data.targets", rule: "must have at most 3 items", limit: true},
		{name: "item type", raw: withData(`,"targets":["a",2]`), path: "data.targets[1]", rule: "must be a string"},
		{name: "uniqueItems", raw: withData(`,"targets":["` + secret + `","b","` + secret + `"]`), path: "data.targets", rule: "must not contain duplicate items"},
		{name: "item errors before uniqueness", raw: withData(`,"targets":["a","a",3]`), path: "data.targets[2]", rule: "must be a string"},

		{name: "invalid JSON", raw: `{"id":`, path: "", rule: "must be valid JSON"},
		{name: "trailing value", raw: `{"id":"x","data":{"title":"t","kind":"dm"}} {}`, path: "", rule: "must be valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := sendSchema.Validate([]byte(tt.raw))
			if tt.rule == "" {
				if err != nil {
					t.Fatalf("Validate(%.60q) = %v, want nil", tt.raw, err)
				}
				return
			}
			var ve *schema.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Validate(%.60q) = %v (%T), want *ValidationError", tt.raw, err, err)
			}
			want := schema.ValidationError{Path: tt.path, Rule: tt.rule, Limit: tt.limit}
			if *ve != want {
				t.Errorf("Validate(%.60q) = %+v, want %+v", tt.raw, *ve, want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("Validate(%.60q) error %q contains the rejected value", tt.raw, err)
			}
		})
	}
}

func TestValidateCountsCodePoints(t *testing.T) {
	title := func(s string) []byte { return []byte(`{"id":"x","data":{"kind":"dm","title":"` + s + `"}}`) }
	tests := []struct {
		name  string
		title string
		ok    bool
	}{
		{"200 two-byte characters", strings.Repeat("é", 200), true},
		{"201 two-byte characters", strings.Repeat("é", 201), false},
		{"200 four-byte characters", strings.Repeat("😀", 200), true},
		{"200 escaped surrogate pairs", strings.Repeat(`\ud83d\ude00`, 200), true},
		{"201 escaped surrogate pairs", strings.Repeat(`\ud83d\ude00`, 201), false},
		{"200 combining sequences count twice", strings.Repeat("e\u0301", 100), true},
		{"201 code points of combining sequences", strings.Repeat("e\u0301", 100) + "x", false},
	}
	for _, tt := range tests {
		err := sendSchema.Validate(title(tt.title))
		var ve *schema.ValidationError
		switch {
		case tt.ok && err != nil:
			t.Errorf("%s: Validate = %v, want nil", tt.name, err)
		case !tt.ok && (!errors.As(err, &ve) || ve.Path != "data.title" || !ve.Limit):
			t.Errorf("%s: Validate = %v, want a limit violation at data.title", tt.name, err)
		}
	}
}

func TestValidateHandWritten(t *testing.T) {
	// A literal schema (no For) validates too, including a pattern compiled
	// lazily on first use, from many goroutines at once.
	s := &schema.Schema{
		Type:                 "object",
		AdditionalProperties: schema.Ptr(false),
		Required:             []string{"key"},
		Properties: map[string]*schema.Schema{
			"key":   {Type: "string", Pattern: `^k-[0-9]+$`, MaxLength: schema.Ptr[int64](10)},
			"tags":  {Type: "array", Items: &schema.Schema{Type: "object"}, UniqueItems: true},
			"level": {Enum: []any{"low", 2, nil}},
		},
	}
	tests := []struct {
		raw  string
		rule string
	}{
		{`{"key":"k-1"}`, ""},
		{`{"key":"k-1","level":"low"}`, ""},
		{`{"key":"k-1","level":2.0}`, ""},
		{`{"key":"k-1","level":null}`, ""},
		{`{"key":"k-1","level":"2"}`, `must be one of the allowed values: "low", 2, null`},
		{`{"key":"k-1","level":"Low"}`, `must be one of the allowed values: "low", 2, null`},
		{`{"key":"k-1","level":"` + secret + `"}`, `must be one of the allowed values: "low", 2, null`},
		{`{"key":"` + secret + `"}`, "must match the pattern ^k-[0-9]+$"},
		{`{"key":"k-1","tags":[{"a":1,"b":[1,2]},{"b":[1,2],"a":1.0}]}`, "must not contain duplicate items"},
		{`{"key":"k-1","tags":[{"a":1},{"a":"1"}]}`, ""},
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for _, tt := range tests {
				if err := wantRule(t, s, tt.raw, tt.rule); err != nil && strings.Contains(err.Error(), secret) {
					t.Errorf("Validate(%q) error %q contains the rejected value", tt.raw, err)
				}
			}
		})
	}
	wg.Wait()
}

func TestValidateAnyOf(t *testing.T) {
	// A tool's output is its success shape or the {error} envelope; a value
	// that is neither reports the first alternative's violation.
	ok := &schema.Schema{Type: "object", AdditionalProperties: schema.Ptr(false), Required: []string{"n"},
		Properties: map[string]*schema.Schema{"n": {Type: "integer"}}}
	failed := &schema.Schema{Type: "object", AdditionalProperties: schema.Ptr(false), Required: []string{"error"},
		Properties: map[string]*schema.Schema{"error": {Type: "object"}}}
	s := &schema.Schema{Type: "object", AnyOf: []*schema.Schema{ok, failed}}
	tests := []struct {
		raw  string
		rule string
	}{
		{`{"n":1}`, ""},
		{`{"error":{}}`, ""},
		{`{"n":1,"error":{}}`, "is not a property of this object; allowed: n"},
		{`{}`, "is required"},
		{`[]`, "must be an object"},
	}
	for _, tt := range tests {
		wantRule(t, s, tt.raw, tt.rule)
	}
}

// wantRule validates raw against s and fails t unless it passes (rule "")
// or fails on rule; it returns Validate's error.
func wantRule(t *testing.T, s *schema.Schema, raw, rule string) error {
	t.Helper()
	err := s.Validate([]byte(raw))
	var ve *schema.ValidationError
	switch {
	case rule == "" && err != nil:
		t.Errorf("Validate(%s) = %v, want nil", raw, err)
	case rule != "" && (!errors.As(err, &ve) || ve.Rule != rule):
		t.Errorf("Validate(%s) = %v, want rule %q", raw, err, rule)
	}
	return err
}

func TestValidateBrokenSchema(t *testing.T) {
	// A schema the package cannot enforce fails closed with an error that
	// is not a ValidationError, so the caller reports an internal failure
	// rather than blaming the input.
	tests := []struct {
		name string
		s    *schema.Schema
		raw  string
	}{
		{"nil schema", nil, `{}`},
		{"unknown type", &schema.Schema{Type: "null"}, `null`},
		{"unknown format", &schema.Schema{Type: "string", Format: "email"}, `"x"`},
		{"bad pattern", &schema.Schema{Type: "string", Pattern: "("}, `"x"`},
		{"nil property schema", &schema.Schema{Type: "object", Properties: map[string]*schema.Schema{"a": nil}}, `{"a":1}`},
	}
	for _, tt := range tests {
		err := tt.s.Validate([]byte(tt.raw))
		var ve *schema.ValidationError
		if err == nil || errors.As(err, &ve) {
			t.Errorf("%s: Validate(%s) = %v, want a non-validation error", tt.name, tt.raw, err)
		}
	}
}

func TestValidationErrorText(t *testing.T) {
	tests := []struct {
		err  schema.ValidationError
		want string
	}{
		{schema.ValidationError{Path: "data.title", Rule: "is required"}, "data.title is required"},
		{schema.ValidationError{Path: "", Rule: "has a property that is not allowed"}, "value has a property that is not allowed"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%+v.Error() = %q, want %q", tt.err, got, tt.want)
		}
	}
}
