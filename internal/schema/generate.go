package schema

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

var (
	providerType        = reflect.TypeFor[Provider]()
	timeType            = reflect.TypeFor[time.Time]()
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	jsonMarshalerType   = reflect.TypeFor[json.Marshaler]()
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// For returns the schema of values of type t under the rules in the package
// documentation. It fails, naming the type and field, on a type whose JSON
// form it cannot describe exactly and on a malformed or inapplicable tag, so
// that a mistake surfaces when the registry is built rather than as a
// schema that promises something the service does not check.
func For(t reflect.Type) (*Schema, error) {
	if t == nil {
		return nil, errors.New("schema: nil type")
	}
	g := generator{inProgress: map[reflect.Type]bool{}}
	s, err := g.schemaFor(t)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return s, nil
}

// Of is For for a type parameter. It panics on error, for building the
// registry in package initialization, where an error is a programming
// mistake that must stop the binary.
func Of[T any]() *Schema {
	s, err := For(reflect.TypeFor[T]())
	if err != nil {
		panic(err)
	}
	return s
}

type generator struct {
	// inProgress holds the struct types being described, to refuse
	// recursive types: without $ref they have no finite schema.
	inProgress map[reflect.Type]bool
}

func (g *generator) schemaFor(t reflect.Type) (*Schema, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Interface {
		switch {
		case t.Implements(providerType):
			if embedsProvider(t) {
				// The method may be promoted from the embedded type, which
				// would describe only that part of t.
				return nil, fmt.Errorf("%s has a JSONSchema method and embeds a type with one; name the embedded field or drop one method", t)
			}
			s := reflect.Zero(t).Interface().(Provider).JSONSchema()
			if s == nil {
				return nil, fmt.Errorf("%s.JSONSchema returned nil", t)
			}
			c := *s
			return &c, nil
		case reflect.PointerTo(t).Implements(providerType):
			return nil, fmt.Errorf("%s has JSONSchema on a pointer receiver; use a value receiver so value and pointer fields agree", t)
		case t == timeType:
			return &Schema{Type: "string", Format: "date-time"}, nil
		case t == rawMessageType:
			return &Schema{}, nil
		case implements(t, jsonMarshalerType) || implements(t, jsonUnmarshalerType):
			return nil, fmt.Errorf("%s has custom JSON encoding; give it a JSONSchema method", t)
		case implements(t, textMarshalerType) || implements(t, textUnmarshalerType):
			return &Schema{Type: "string"}, nil
		}
	}

	switch t.Kind() {
	case reflect.Bool:
		return &Schema{Type: "boolean"}, nil
	case reflect.Int, reflect.Int64:
		return &Schema{Type: "integer"}, nil
	case reflect.Int8, reflect.Int16, reflect.Int32:
		bits := t.Bits()
		return &Schema{Type: "integer", Minimum: Ptr(int64(-1) << (bits - 1)), Maximum: Ptr(int64(1)<<(bits-1) - 1)}, nil
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return &Schema{Type: "integer", Minimum: Ptr[int64](0)}, nil
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return &Schema{Type: "integer", Minimum: Ptr[int64](0), Maximum: Ptr(int64(1)<<t.Bits() - 1)}, nil
	case reflect.Float32, reflect.Float64:
		return &Schema{Type: "number"}, nil
	case reflect.String:
		return &Schema{Type: "string"}, nil
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			return nil, fmt.Errorf("%s is a byte slice, which encoding/json sends as base64 text; use a string type", t)
		}
		items, err := g.schemaFor(t.Elem())
		if err != nil {
			return nil, err
		}
		s := &Schema{Type: "array", Items: items}
		if t.Kind() == reflect.Array {
			s.MinItems, s.MaxItems = Ptr(int64(t.Len())), Ptr(int64(t.Len()))
		}
		return s, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("%s has non-string keys", t)
		}
		return &Schema{Type: "object"}, nil
	case reflect.Interface:
		if t.NumMethod() != 0 {
			return nil, fmt.Errorf("%s is a non-empty interface, which JSON cannot decode into", t)
		}
		return &Schema{}, nil
	case reflect.Struct:
		return g.structSchema(t)
	}
	return nil, fmt.Errorf("%s has kind %s, which has no JSON form", t, t.Kind())
}

// embedsProvider reports whether struct type t embeds a Provider.
func embedsProvider(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	for i := range t.NumField() {
		if f := t.Field(i); f.Anonymous && implements(f.Type, providerType) {
			return true
		}
	}
	return false
}

// implements reports whether t or *t has the method set of iface, which is
// what encoding/json consults when encoding (t) and decoding (*t).
func implements(t, iface reflect.Type) bool {
	return t.Implements(iface) || reflect.PointerTo(t).Implements(iface)
}

func (g *generator) structSchema(t reflect.Type) (*Schema, error) {
	if g.inProgress[t] {
		return nil, fmt.Errorf("%s is recursive, which needs $ref; give it a JSONSchema method", t)
	}
	g.inProgress[t] = true
	defer delete(g.inProgress, t)

	s := &Schema{Type: "object", Properties: map[string]*Schema{}, AdditionalProperties: Ptr(false)}
	if err := g.addFields(s, t); err != nil {
		return nil, err
	}
	if len(s.Properties) == 0 {
		s.Properties = nil
	}
	return s, nil
}

// addFields adds the JSON fields of struct type t to s, flattening embedded
// structs in place, so that Required follows field order.
func (g *generator) addFields(s *Schema, t reflect.Type) error {
	for i := range t.NumField() {
		f := t.Field(i)
		jsonTag := f.Tag.Get("json")
		if jsonTag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(jsonTag, ",")
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			if hasSchemaTags(f) {
				return fmt.Errorf("%s field %s: desc, example and schema tags have no effect on an embedded struct", t, f.Name)
			}
			if !f.IsExported() && f.Type.Kind() == reflect.Pointer {
				return fmt.Errorf("%s field %s: encoding/json cannot decode into an embedded pointer to an unexported struct", t, f.Name)
			}
			if g.inProgress[ft] {
				return fmt.Errorf("%s field %s: %s is recursive", t, f.Name, ft)
			}
			g.inProgress[ft] = true
			err := g.addFields(s, ft)
			delete(g.inProgress, ft)
			if err != nil {
				return err
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		optional := f.Type.Kind() == reflect.Pointer
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "omitempty", "omitzero":
				optional = true
			case "string":
				return fmt.Errorf("%s field %s: the json \",string\" option changes the wire type and is not supported", t, f.Name)
			}
		}
		fs, err := g.schemaFor(f.Type)
		if err == nil {
			fs, err = applyTags(fs, f.Tag)
		}
		if err != nil {
			return fmt.Errorf("%s field %s: %w", t, f.Name, err)
		}
		if _, dup := s.Properties[name]; dup {
			return fmt.Errorf("%s field %s: JSON name %q is used twice", t, f.Name, name)
		}
		s.Properties[name] = fs
		if !optional {
			s.Required = append(s.Required, name)
		}
	}
	return nil
}

func hasSchemaTags(f reflect.StructField) bool {
	for _, k := range []string{"desc", "example", "schema"} {
		if _, ok := f.Tag.Lookup(k); ok {
			return true
		}
	}
	return false
}

// applyTags returns a copy of base with the field's desc, schema and
// example tags applied. Bounds may only narrow what base already says.
func applyTags(base *Schema, tag reflect.StructTag) (*Schema, error) {
	desc, hasDesc := tag.Lookup("desc")
	constraints, hasSchema := tag.Lookup("schema")
	example, hasExample := tag.Lookup("example")
	if !hasDesc && !hasSchema && !hasExample {
		return base, nil
	}
	s := *base
	if hasDesc {
		s.Description = desc
	}
	if hasSchema {
		if err := applyConstraints(&s, base, constraints); err != nil {
			return nil, err
		}
	}
	if hasExample {
		s.Example = nil
		v := parseExample(example, s.Type)
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("example: %v", err)
		}
		if err := s.Validate(raw); err != nil {
			return nil, fmt.Errorf("example does not satisfy the schema: %w", err)
		}
		s.Example = v
	}
	return &s, nil
}

// parseExample reads an example tag: JSON when it is valid JSON (numbers
// kept exact as json.Number), else the literal text. A string field keeps
// the literal text unless the tag is a JSON string, so example:"123" on a
// string field is the string "123".
func parseExample(lit, typ string) any {
	if !json.Valid([]byte(lit)) {
		return lit
	}
	dec := json.NewDecoder(strings.NewReader(lit))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return lit
	}
	if _, isString := v.(string); typ == "string" && !isString {
		return lit
	}
	return v
}

var (
	stringKeywords = []string{"minLength", "maxLength", "pattern", "format"}
	numberKeywords = []string{"minimum", "maximum"}
	arrayKeywords  = []string{"minItems", "maxItems", "uniqueItems", "itemFormat"}
)

func applyConstraints(s, base *Schema, tag string) error {
	seen := map[string]bool{}
	for _, part := range strings.Split(tag, ",") {
		key, val, hasVal := strings.Cut(part, "=")
		if seen[key] {
			return fmt.Errorf("schema tag repeats %s", key)
		}
		seen[key] = true
		switch {
		case slices.Contains(stringKeywords, key) && s.Type != "string",
			slices.Contains(numberKeywords, key) && s.Type != "integer" && s.Type != "number",
			slices.Contains(arrayKeywords, key) && s.Type != "array",
			key == "enum" && s.Type != "string" && s.Type != "integer" && s.Type != "number":
			return fmt.Errorf("schema tag %s does not apply to type %q", key, s.Type)
		}
		if key == "uniqueItems" {
			if hasVal {
				return errors.New("schema tag uniqueItems is a bare flag")
			}
			s.UniqueItems = true
			continue
		}
		if !hasVal || val == "" {
			return fmt.Errorf("schema tag %q needs a value (key=value)", part)
		}
		var err error
		switch key {
		case "minLength":
			s.MinLength, err = lowerBound(key, val, base.MinLength, 0)
		case "maxLength":
			s.MaxLength, err = upperBound(key, val, base.MaxLength, 0)
		case "minItems":
			s.MinItems, err = lowerBound(key, val, base.MinItems, 0)
		case "maxItems":
			s.MaxItems, err = upperBound(key, val, base.MaxItems, 0)
		case "minimum":
			s.Minimum, err = lowerBound(key, val, base.Minimum, math.MinInt64)
		case "maximum":
			s.Maximum, err = upperBound(key, val, base.Maximum, math.MinInt64)
		case "pattern":
			if base.Pattern != "" {
				return errors.New("schema tag pattern would replace the type's own pattern")
			}
			if _, err := compilePattern(val); err != nil {
				return fmt.Errorf("schema tag pattern: %v", err)
			}
			s.Pattern = val
		case "format":
			if base.Format != "" {
				return errors.New("schema tag format would replace the type's own format")
			}
			if !knownFormats[val] {
				return fmt.Errorf("schema tag format %q is not supported (uuid, date-time)", val)
			}
			s.Format = val
		case "itemFormat":
			if base.Items == nil || base.Items.Type != "string" || base.Items.Format != "" {
				return errors.New("schema tag itemFormat needs an array of strings without a format")
			}
			if !knownFormats[val] {
				return fmt.Errorf("schema tag itemFormat %q is not supported (uuid, date-time)", val)
			}
			items := *base.Items
			items.Format = val
			s.Items = &items
		case "enum":
			if base.Enum != nil {
				return errors.New("schema tag enum would replace the type's own enum")
			}
			s.Enum, err = parseEnum(val, s.Type)
		default:
			return fmt.Errorf("schema tag has unknown keyword %q", key)
		}
		if err != nil {
			return err
		}
	}
	for _, b := range []struct {
		name     string
		min, max *int64
	}{
		{"length", s.MinLength, s.MaxLength},
		{"items", s.MinItems, s.MaxItems},
		{"value", s.Minimum, s.Maximum},
	} {
		if b.min != nil && b.max != nil && *b.min > *b.max {
			return fmt.Errorf("schema tag minimum %s %d exceeds maximum %d", b.name, *b.min, *b.max)
		}
	}
	return nil
}

// lowerBound parses a minimum-style bound, which may only raise the type's.
func lowerBound(key, val string, base *int64, floor int64) (*int64, error) {
	n, err := strconv.ParseInt(val, 10, 64)
	if err != nil || n < floor {
		return nil, fmt.Errorf("schema tag %s=%s is not a valid bound", key, val)
	}
	if base != nil && n < *base {
		return nil, fmt.Errorf("schema tag %s=%d would widen the type's %d", key, n, *base)
	}
	return &n, nil
}

// upperBound parses a maximum-style bound, which may only lower the type's.
func upperBound(key, val string, base *int64, floor int64) (*int64, error) {
	n, err := strconv.ParseInt(val, 10, 64)
	if err != nil || n < floor {
		return nil, fmt.Errorf("schema tag %s=%s is not a valid bound", key, val)
	}
	if base != nil && n > *base {
		return nil, fmt.Errorf("schema tag %s=%d would widen the type's %d", key, n, *base)
	}
	return &n, nil
}

func parseEnum(val, typ string) ([]any, error) {
	var out []any
	seen := map[string]bool{}
	for _, v := range strings.Split(val, "|") {
		if seen[v] {
			return nil, fmt.Errorf("schema tag enum repeats %q", v)
		}
		seen[v] = true
		switch typ {
		case "string":
			out = append(out, v)
		case "integer":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("schema tag enum value %q is not an integer", v)
			}
			out = append(out, n)
		case "number":
			if _, err := strconv.ParseFloat(v, 64); err != nil || !json.Valid([]byte(v)) {
				return nil, fmt.Errorf("schema tag enum value %q is not a number", v)
			}
			out = append(out, json.Number(v))
		}
	}
	return out, nil
}
