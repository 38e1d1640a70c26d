package schema_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/schema"
)

// Revision mimics the domain's decimal-string revision type: its own schema,
// plus custom JSON methods that would otherwise be refused.
type Revision uint64

func (Revision) JSONSchema() *schema.Schema {
	return &schema.Schema{Type: "string", Pattern: `^(0|[1-9][0-9]{0,19})$`, Description: "Decimal string."}
}
func (r Revision) MarshalJSON() ([]byte, error) { return json.Marshal(uint64(r)) }
func (r *Revision) UnmarshalJSON([]byte) error  { return nil }

// Code is a string type with text encoding: a plain string on the wire.
type Code string

func (c Code) MarshalText() ([]byte, error)  { return []byte(c), nil }
func (c *Code) UnmarshalText(b []byte) error { *c = Code(b); return nil }

type Meta struct {
	Trace  string `json:"trace,omitempty" desc:"Trace id."`
	Source string `json:"source"`
}

type Everything struct {
	Meta
	Name     string            `json:"name" desc:"Display name." schema:"minLength=1,maxLength=80,pattern=^[a-z]+$" example:"alice"`
	Count    int               `json:"count" schema:"minimum=1,maximum=100" example:"3"`
	Small    int8              `json:"small"`
	Unsigned uint32            `json:"unsigned,omitempty" schema:"maximum=10"`
	Big      uint64            `json:"big,omitzero"`
	Ratio    float64           `json:"ratio"`
	Flag     bool              `json:"flag"`
	Note     *string           `json:"note" desc:"Optional because it is a pointer."`
	Tags     []string          `json:"tags" schema:"minItems=1,maxItems=3,uniqueItems" example:"[\"a\",\"b\"]"`
	Pair     [2]int            `json:"pair"`
	Status   string            `json:"status" schema:"enum=active|paused|archived"`
	Level    int               `json:"level" schema:"enum=1|2|3"`
	ID       string            `json:"id" schema:"format=uuid" example:"0b8a5e4f-3ffa-4f88-81aa-000000000001"`
	Numeric  string            `json:"numeric" example:"123"`
	At       time.Time         `json:"at"`
	Payload  map[string]any    `json:"payload,omitempty" desc:"Free-form object."`
	Raw      json.RawMessage   `json:"raw,omitempty"`
	Anything any               `json:"anything,omitempty"`
	Rev      Revision          `json:"rev" desc:"Revision you last read." example:"\"7\""`
	PrevRev  *Revision         `json:"prev_rev,omitempty"`
	Code     Code              `json:"code"`
	Child    *Child            `json:"child,omitempty"`
	Children []Child           `json:"children"`
	Labels   map[string]string `json:"labels,omitempty"`
	Skipped  string            `json:"-"`
	internal string
	NoTag    string
	//lint:ignore SA5008 deliberate: encoding/json names this field "-", and the generator must agree.
	DashName  string `json:"-,"`
	Untouched string `json:"untouched,omitempty" schema:"maxLength=5"`
}

type Child struct {
	Value string `json:"value"`
}

const everythingJSON = `{
  "additionalProperties": false,
  "properties": {
    "-": {"type": "string"},
    "NoTag": {"type": "string"},
    "anything": {},
    "at": {"format": "date-time", "type": "string"},
    "big": {"minimum": 0, "type": "integer"},
    "child": {"additionalProperties": false, "properties": {"value": {"type": "string"}}, "required": ["value"], "type": "object"},
    "children": {"items": {"additionalProperties": false, "properties": {"value": {"type": "string"}}, "required": ["value"], "type": "object"}, "type": "array"},
    "code": {"type": "string"},
    "count": {"example": 3, "maximum": 100, "minimum": 1, "type": "integer"},
    "flag": {"type": "boolean"},
    "id": {"example": "0b8a5e4f-3ffa-4f88-81aa-000000000001", "format": "uuid", "type": "string"},
    "labels": {"type": "object"},
    "level": {"enum": [1, 2, 3], "type": "integer"},
    "name": {"description": "Display name.", "example": "alice", "maxLength": 80, "minLength": 1, "pattern": "^[a-z]+$", "type": "string"},
    "note": {"description": "Optional because it is a pointer.", "type": "string"},
    "numeric": {"example": "123", "type": "string"},
    "pair": {"items": {"type": "integer"}, "maxItems": 2, "minItems": 2, "type": "array"},
    "payload": {"description": "Free-form object.", "type": "object"},
    "prev_rev": {"description": "Decimal string.", "pattern": "^(0|[1-9][0-9]{0,19})$", "type": "string"},
    "ratio": {"type": "number"},
    "raw": {},
    "rev": {"description": "Revision you last read.", "example": "7", "pattern": "^(0|[1-9][0-9]{0,19})$", "type": "string"},
    "small": {"maximum": 127, "minimum": -128, "type": "integer"},
    "source": {"type": "string"},
    "status": {"enum": ["active", "paused", "archived"], "type": "string"},
    "tags": {"example": ["a", "b"], "items": {"type": "string"}, "maxItems": 3, "minItems": 1, "type": "array", "uniqueItems": true},
    "trace": {"description": "Trace id.", "type": "string"},
    "unsigned": {"maximum": 10, "minimum": 0, "type": "integer"},
    "untouched": {"maxLength": 5, "type": "string"}
  },
  "required": ["source", "name", "count", "small", "ratio", "flag", "tags", "pair", "status", "level", "id", "numeric", "at", "rev", "code", "children", "NoTag", "-"],
  "type": "object"
}`

func TestForEverything(t *testing.T) {
	got, err := schema.For(reflect.TypeFor[Everything]())
	if err != nil {
		t.Fatalf("For(Everything) = %v", err)
	}
	assertJSON(t, "For(Everything)", got, everythingJSON)

	// The provider's own schema must not be mutated by field tags.
	if d := (Revision(0)).JSONSchema().Description; d != "Decimal string." {
		t.Errorf("Revision.JSONSchema().Description = %q after generation, want unchanged", d)
	}
	_ = Everything{}.internal // unexported fields are not properties

	// Pointers to the root are described like the root.
	ptr, err := schema.For(reflect.TypeFor[*Everything]())
	if err != nil || !reflect.DeepEqual(ptr, got) {
		t.Errorf("For(*Everything) = %v, %v; want the same as For(Everything)", ptr, err)
	}
}

func TestForScalars(t *testing.T) {
	tests := []struct {
		typ  reflect.Type
		want string
	}{
		{reflect.TypeFor[string](), `{"type":"string"}`},
		{reflect.TypeFor[bool](), `{"type":"boolean"}`},
		{reflect.TypeFor[int](), `{"type":"integer"}`},
		{reflect.TypeFor[int64](), `{"type":"integer"}`},
		{reflect.TypeFor[int16](), `{"maximum":32767,"minimum":-32768,"type":"integer"}`},
		{reflect.TypeFor[int32](), `{"maximum":2147483647,"minimum":-2147483648,"type":"integer"}`},
		{reflect.TypeFor[uint8](), `{"maximum":255,"minimum":0,"type":"integer"}`},
		{reflect.TypeFor[uint](), `{"minimum":0,"type":"integer"}`},
		{reflect.TypeFor[float32](), `{"type":"number"}`},
		{reflect.TypeFor[[]*int](), `{"items":{"type":"integer"},"type":"array"}`},
		{reflect.TypeFor[map[string]any](), `{"type":"object"}`},
		{reflect.TypeFor[json.RawMessage](), `{}`},
		{reflect.TypeFor[time.Time](), `{"format":"date-time","type":"string"}`},
		{reflect.TypeFor[struct{}](), `{"additionalProperties":false,"type":"object"}`},
	}
	for _, tt := range tests {
		got, err := schema.For(tt.typ)
		if err != nil {
			t.Errorf("For(%v) = %v", tt.typ, err)
			continue
		}
		assertJSON(t, "For("+tt.typ.String()+")", got, tt.want)
	}
}

// UpdateSpaceBody is seed 002's update_space body, written the way the
// registry will write it.
type UpdateSpaceBody struct {
	ExpectedVersion int64  `json:"expected_version" desc:"Copy the current version returned by a read. save_memory uses 0 only to create a missing name. Stale versions fail without overwriting." schema:"minimum=1" example:"1"`
	Title           string `json:"title" desc:"Short descriptive title: 1–200 Unicode characters, at most 800 UTF-8 bytes." schema:"minLength=1,maxLength=200" example:"PDF extraction checkpoint"`
	Goal            string `json:"goal" desc:"Goal, allowed scope, acceptance criteria and stopping conditions; 1–20 KiB UTF-8." example:"Verify document extraction quality. Scope: provided documents. Done when another agent reviews the report."`
	Status          string `json:"status" schema:"enum=active|paused|archived"`
	OperationKey    string `json:"operation_key,omitempty" desc:"Optional stable client key scoped to this agent for 30 days. Reuse identical payload after a timeout. Different payload conflicts. Retry returns compact operation receipt, not original body. Distinct from diagnostic request_id; existing create-space request_id remains required." schema:"maxLength=80,pattern=^[a-z0-9]+(-[a-z0-9]+)*$"`
}

// TestForMatchesSeed002 checks that generated output is exactly seed 002's
// update_space body_schema (testdata holds it, copied from the seed): same
// keywords, same values, keys in the same sorted order.
func TestForMatchesSeed002(t *testing.T) {
	seed, err := os.ReadFile("testdata/seed002_update_space_body_schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := json.Indent(&want, bytes.TrimSpace(seed), "", "  "); err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(schema.Of[UpdateSpaceBody](), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want.String() {
		t.Errorf("Of[UpdateSpaceBody]() =\n%s\nwant seed 002 body_schema\n%s", got, want.String())
	}
}

// A field's type or tags the generator refuses: each row is a struct of
// one field, Field, with the type and the tags beside json:"field".
var badFields = []struct {
	typ  reflect.Type
	tags string
	want []string // substrings of the error, beyond the struct and Field
}{
	{reflect.TypeFor[string](), `schema:"maxLength=many"`, []string{"maxLength"}},
	{reflect.TypeFor[int](), `schema:"maxLength=3"`, []string{"does not apply"}},
	{reflect.TypeFor[string](), `schema:"pattern=^[a-z$"`, []string{"pattern"}},
	{reflect.TypeFor[string](), `schema:"format=email"`, []string{"not supported"}},
	{reflect.TypeFor[[]int](), `schema:"itemFormat=uuid"`, []string{"itemFormat", "array of strings"}},
	{reflect.TypeFor[string](), `schema:"maxLength=3,maxLength=4"`, []string{"repeats"}},
	{reflect.TypeFor[string](), `schema:"minLength=5,maxLength=4"`, []string{"exceeds"}},
	{reflect.TypeFor[uint8](), `schema:"maximum=300"`, []string{"widen"}},
	{reflect.TypeFor[uint](), `schema:"minimum=-1"`, []string{"widen"}},
	{reflect.TypeFor[[]string](), `schema:"uniqueItems=true"`, []string{"bare flag"}},
	{reflect.TypeFor[int](), `schema:"enum=1|two"`, []string{"not an integer"}},
	{reflect.TypeFor[Revision](), `schema:"pattern=^1$"`, []string{"own pattern"}},
	{reflect.TypeFor[int](), `example:"\"three\""`, []string{"example", "must be an integer"}},
	{reflect.TypeFor[string](), `schema:"maxLength=3" example:"toolong"`, []string{"example", "at most 3 characters"}},
	{reflect.TypeFor[string](), `schema:"enum=a|b" example:"c"`, []string{"example", "allowed values"}},
	{reflect.TypeFor[int](), `json:"field,string"`, []string{",string"}},
	{reflect.TypeFor[[]byte](), ``, []string{"base64"}},
	{reflect.TypeFor[customJSON](), ``, []string{"custom JSON"}},
	{reflect.TypeFor[ptrProvider](), ``, []string{"pointer receiver"}},
	{reflect.TypeFor[chan int](), ``, []string{"chan"}},
	{reflect.TypeFor[map[int]string](), ``, []string{"non-string keys"}},
	{reflect.TypeFor[error](), ``, []string{"interface"}},
}

// badField is badFields' row i as a struct type.
func badField(i int) reflect.Type {
	tag := badFields[i].tags
	if !strings.HasPrefix(tag, `json:`) {
		tag = strings.TrimSpace(`json:"field" ` + tag)
	}
	return reflect.StructOf([]reflect.StructField{{Name: "Field", Type: badFields[i].typ, Tag: reflect.StructTag(tag)}})
}

// Refused shapes beyond a single field's type and tags.
type (
	badTagKey struct {
		Field string `json:"field" schema:"maxLen=3"`
	}
	badDuplicate struct {
		Meta
		Source string `json:"source"`
	}
	badEmbeddedTag struct {
		Meta `desc:"ignored"`
	}
	badRecursive struct {
		Next *badRecursive `json:"next,omitempty"`
	}
	badNested struct {
		Inner []badTagKey `json:"inner"`
	}
	providedStruct struct {
		Value string `json:"value"`
	}
	badPromotedProvider struct {
		providedStruct
		Extra string `json:"extra"`
	}
)

// JSONSchema on providedStruct is promoted into badPromotedProvider, whose
// schema it would silently replace.
func (providedStruct) JSONSchema() *schema.Schema { return &schema.Schema{Type: "object"} }

type customJSON struct{}

func (customJSON) MarshalJSON() ([]byte, error) { return []byte(`1`), nil }

type ptrProvider string

func (*ptrProvider) JSONSchema() *schema.Schema { return &schema.Schema{Type: "string"} }

// TestForErrors: every refused type fails For with an error that names the
// refusing type and field and says why.
func TestForErrors(t *testing.T) {
	type refused struct {
		typ  reflect.Type
		want []string // substrings of the error
	}
	tests := []refused{
		{reflect.TypeFor[badTagKey](), []string{"badTagKey", "Field", "unknown keyword"}},
		{reflect.TypeFor[badDuplicate](), []string{"badDuplicate", "Source", "used twice"}},
		{reflect.TypeFor[badEmbeddedTag](), []string{"badEmbeddedTag", "Meta", "embedded"}},
		{reflect.TypeFor[badRecursive](), []string{"badRecursive", "Next", "recursive"}},
		{reflect.TypeFor[badNested](), []string{"badNested", "Inner", "badTagKey", "Field"}},
		{reflect.TypeFor[customJSON](), []string{"customJSON", "custom JSON"}},
		{reflect.TypeFor[badPromotedProvider](), []string{"badPromotedProvider", "embeds"}},
	}
	for i, f := range badFields {
		typ := badField(i)
		tests = append(tests, refused{typ, append([]string{typ.String(), "Field"}, f.want...)})
	}
	for _, tt := range tests {
		_, err := schema.For(tt.typ)
		if err == nil {
			t.Errorf("For(%v) = nil error, want one mentioning %q", tt.typ, tt.want)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("For(%v) = %q, want it to mention %q", tt.typ, err, w)
			}
		}
	}
}

func TestOfPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Of[badTagKey]() did not panic")
		}
	}()
	schema.Of[badTagKey]()
}

func TestMarshalDeterministic(t *testing.T) {
	first, err := json.Marshal(schema.Of[Everything]())
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, _ := json.Marshal(schema.Of[Everything]())
		if !bytes.Equal(first, again) {
			t.Fatalf("json.Marshal(Of[Everything]()) differs between runs:\n%s\n%s", first, again)
		}
	}
}

// assertJSON compares got, marshalled, with want after normalizing both.
func assertJSON(t *testing.T, call string, got *schema.Schema, want string) {
	t.Helper()
	gotJSON, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatalf("%s: marshal: %v", call, err)
	}
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want JSON: %v", err)
	}
	wantJSON, _ := json.MarshalIndent(w, "", "  ")
	if !bytes.Equal(gotJSON, wantJSON) {
		t.Errorf("%s =\n%s\nwant\n%s", call, gotJSON, wantJSON)
	}
}

// TestItemFormat: itemFormat gives an array's string items a format, which
// Validate then enforces, and leaves the element type's schema untouched.
func TestItemFormat(t *testing.T) {
	type ids struct {
		IDs   []string `json:"ids" schema:"maxItems=2,itemFormat=uuid"`
		Names []string `json:"names"`
	}
	s := schema.Of[ids]()
	if got := s.Properties["ids"]; got.Items == nil || got.Items.Format != "uuid" || got.MaxItems == nil || *got.MaxItems != 2 {
		t.Fatalf("ids schema = %+v, want items with format uuid and maxItems 2", got)
	}
	if s.Properties["names"].Items.Format != "" {
		t.Errorf("names items = %+v, want no format", s.Properties["names"].Items)
	}
	if err := s.Validate([]byte(`{"ids":["0b8a5e4f-3ffa-4f88-81aa-00000000000a"],"names":["x"]}`)); err != nil {
		t.Errorf("Validate(uuid ids) = %v, want nil", err)
	}
	var ve *schema.ValidationError
	if err := s.Validate([]byte(`{"ids":["nope"],"names":[]}`)); !errors.As(err, &ve) || ve.Path != "ids[0]" {
		t.Errorf("Validate(ids [nope]) = %v, want a violation at ids[0]", err)
	}
}

// TestWithExamples: example becomes examples at every depth, in a copy.
func TestWithExamples(t *testing.T) {
	type inner struct {
		N int `json:"n" example:"3"`
	}
	type outer struct {
		Name  string  `json:"name" example:"\"x\""`
		Items []inner `json:"items"`
	}
	s := schema.Of[outer]()
	b, err := json.Marshal(s.WithExamples())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"example":`) || !strings.Contains(string(b), `"examples":["x"]`) || !strings.Contains(string(b), `"examples":[3]`) {
		t.Errorf("WithExamples() = %s, want examples arrays and no example", b)
	}
	if s.Properties["name"].Example == nil || s.Properties["items"].Items.Properties["n"].Example == nil {
		t.Errorf("WithExamples changed its receiver: %+v", s)
	}
}
