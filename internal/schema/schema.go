// Package schema generates JSON Schemas from Go types and validates raw JSON
// against them.
//
// The tool registry describes every tool's input and output with Go structs.
// The schemas it publishes (tool-contracts.json, MCP tools/list, get_help)
// and the check it runs on incoming arguments are the same *Schema value, so
// what a caller reads and what the service enforces cannot drift apart.
//
// Only the subset of JSON Schema that agentbox publishes is supported, both
// when generating and when validating: type (object, array, string, integer,
// number, boolean), description, example (seed 002) and examples,
// properties, required,
// additionalProperties (as a boolean), anyOf, items, enum, minLength, maxLength,
// pattern, format (uuid, date-time), minimum, maximum, minItems, maxItems and
// uniqueItems. A schema using anything else cannot be written with this type,
// and Validate fails closed on a type or format it does not know.
//
// # Generation rules (For)
//
//   - struct: an object with additionalProperties false. Properties are the
//     exported fields under their json tag names (json:"-" skips a field);
//     embedded structs without a json name are flattened. A field is required
//     unless it is a pointer or its json tag has omitempty or omitzero. Two
//     fields with one JSON name are an error (encoding/json would silently
//     pick one).
//   - string, bool, float kinds: string, boolean, number. Integer kinds:
//     integer, bounded by the Go type's range where that is narrower than
//     int64 (unsigned kinds get minimum 0).
//   - slices and arrays: array with items ([N]T also fixes the item count).
//     []byte is refused: encoding/json sends it as base64 text.
//   - map[string]T: a free-form object (no property constraints); the
//     "payload object" case. Map values are checked only when decoding.
//   - pointers: the element's schema. The empty interface and
//     json.RawMessage: the empty schema {} (anything). time.Time: string with
//     format date-time. Types with MarshalText/UnmarshalText: string.
//   - A type with a value-receiver JSONSchema() *Schema method (see
//     [Provider]) supplies its own schema. Any other type with custom JSON
//     encoding is refused, because reflection cannot see its wire form.
//
// Field tags add keywords: desc:"..." (description), example:"..." (parsed
// as JSON when it is valid JSON, else taken as a string; a non-string JSON
// value on a string field is also taken literally; the example must satisfy
// the field's schema), and schema:"k=v,k=v" with minLength, maxLength,
// minimum, maximum, minItems, maxItems, pattern, format, enum (values
// separated by "|") and the bare flag uniqueItems. Because "," separates
// keywords, a pattern may not contain a comma: spell a bounded repetition
// such as x{1,3} as xx?x?, or give the field a [Provider] type. On an
// array of strings, itemFormat=uuid gives its items that format. A keyword
// that does not apply to the
// field's type, or a bound outside the Go type's range, is an error.
package schema

// Schema is one JSON Schema node. It exists so that the tool registry can
// publish and enforce a single value; see the package documentation for
// what each keyword means here.
//
// Fields are declared in the byte order of their JSON names so that
// encoding/json writes keys sorted, exactly like the seed contracts; a
// Schema marshals deterministically. A Schema is an immutable value after
// construction: Validate only reads it, and may be called concurrently.
type Schema struct {
	// AdditionalProperties false refuses object properties not listed in
	// Properties; nil leaves them free.
	AdditionalProperties *bool `json:"additionalProperties,omitempty"`
	// AnyOf lists alternatives of which a value must satisfy at least one,
	// besides this node's own keywords. The registry uses it only for a
	// tool's output: its success shape or the {error} envelope, so that an
	// error result conforms to the declared outputSchema too.
	AnyOf []*Schema `json:"anyOf,omitempty"`
	// Description is shown to callers; it must never carry secrets.
	Description string `json:"description,omitempty"`
	// Enum lists the allowed values (compared as JSON values).
	Enum []any `json:"enum,omitempty"`
	// Example is a valid sample value for documentation, under the
	// OpenAPI-style keyword "example" that seed 002's contracts show; JSON
	// Schema 2020-12 has no such keyword (strict validators refuse it), so
	// every other schema carries Examples instead (WithExamples).
	Example any `json:"example,omitempty"`
	// Examples are valid sample values: JSON Schema 2020-12's annotation.
	Examples []any `json:"examples,omitempty"`
	// Format is "uuid" or "date-time" (RFC 3339).
	Format string `json:"format,omitempty"`
	// Items is the schema of every array element.
	Items *Schema `json:"items,omitempty"`
	// MaxItems bounds the array length; exceeding it is a limit error.
	MaxItems *int64 `json:"maxItems,omitempty"`
	// MaxLength bounds the string length in Unicode code points; exceeding
	// it is a limit error.
	MaxLength *int64 `json:"maxLength,omitempty"`
	// Maximum bounds a number from above (inclusive); exceeding it is a
	// limit error.
	Maximum *int64 `json:"maximum,omitempty"`
	// MinItems bounds the array length from below.
	MinItems *int64 `json:"minItems,omitempty"`
	// MinLength bounds the string length in Unicode code points from below.
	MinLength *int64 `json:"minLength,omitempty"`
	// Minimum bounds a number from below (inclusive).
	Minimum *int64 `json:"minimum,omitempty"`
	// Pattern is an RE2 regular expression a string must contain a match
	// of (unanchored, as in JSON Schema; anchor it with ^ and $).
	Pattern string `json:"pattern,omitempty"`
	// Properties are the schemas of known object properties.
	Properties map[string]*Schema `json:"properties,omitempty"`
	// Required lists the properties an object must have, in field order.
	Required []string `json:"required,omitempty"`
	// Type is object, array, string, integer, number or boolean; empty
	// means any JSON value.
	Type string `json:"type,omitempty"`
	// UniqueItems refuses arrays with two equal elements.
	UniqueItems bool `json:"uniqueItems,omitempty"`
}

// Provider is implemented, with a value receiver, by types whose JSON form
// reflection cannot infer (decimal-string revisions, UUID types, types with
// custom MarshalJSON). JSONSchema is called on the zero value and must
// return a fresh or never-mutated schema: field tags are applied to a copy.
type Provider interface {
	JSONSchema() *Schema
}

// Ptr returns a pointer to v, for hand-written schemas
// (MaxLength: schema.Ptr[int64](80), AdditionalProperties: schema.Ptr(false)).
func Ptr[T any](v T) *T { return &v }

// WithExamples returns a deep copy of s in which every node's example
// becomes examples, [example]: the schema in JSON Schema 2020-12's own
// vocabulary. Enum values are shared (never mutated).
func (s *Schema) WithExamples() *Schema {
	if s == nil {
		return nil
	}
	c := *s
	if c.Example != nil {
		c.Examples = append([]any{c.Example}, c.Examples...)
		c.Example = nil
	}
	c.Items = s.Items.WithExamples()
	if s.AnyOf != nil {
		c.AnyOf = make([]*Schema, len(s.AnyOf))
		for i, alt := range s.AnyOf {
			c.AnyOf[i] = alt.WithExamples()
		}
	}
	if s.Properties != nil {
		c.Properties = make(map[string]*Schema, len(s.Properties))
		for name, p := range s.Properties {
			c.Properties[name] = p.WithExamples()
		}
	}
	return &c
}
