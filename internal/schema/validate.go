package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// ValidationError is the first rule a value broke. It exists so transports
// can build a safe, useful message: Path and Rule come only from the
// schema, never from the rejected value; a caller's property name appears
// only as the path of an unknown property, and only when it is a plain
// name (plainName).
type ValidationError struct {
	// Path locates the value: "" for the root, "data.title",
	// "targets[3]". An unknown property is reported at its own path when
	// its name is plain, else at its parent.
	Path string
	// Rule is the rule broken, e.g. "must be at most 200 characters".
	Rule string
	// Limit is true for maxLength, maxItems and maximum: the value is well
	// shaped but too large, which the service answers with LIMIT_EXCEEDED
	// rather than INVALID_ARGUMENT.
	Limit bool
}

func (e *ValidationError) Error() string {
	if e.Path == "" {
		return "value " + e.Rule
	}
	return e.Path + " " + e.Rule
}

func violation(path, rule string) error { return &ValidationError{Path: path, Rule: rule} }

func limitViolation(path, rule string) error {
	return &ValidationError{Path: path, Rule: rule, Limit: true}
}

var knownFormats = map[string]bool{"uuid": true, "date-time": true}

// Validate checks one JSON document against s and returns nil, the first
// violation as a *ValidationError, or another error when s itself is
// unusable (an unknown type or format, a bad pattern), which callers treat
// as an internal failure. raw should already have passed strictjson.Check;
// Validate does not look for duplicate keys or invalid UTF-8.
//
// The first violation is found in a fixed order, so a given input always
// gets the same answer: at each node type, then enum, then anyOf (the first
// alternative's violation when none holds), then the keywords of
// the value's kind; in an object required properties (in Required order),
// then unknown properties, then the known properties in sorted name order;
// in an array the length bounds, then each item in index order, then
// uniqueness.
//
// Integers are JSON numbers with neither fraction nor exponent that fit in
// int64 (so 1.0 is not an integer here). Lengths count Unicode code points.
// Minimum and maximum compare integers exactly and other numbers as
// float64.
func (s *Schema) Validate(raw []byte) error {
	if s == nil {
		return errors.New("schema: Validate on a nil *Schema")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return violation("", "must be valid JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return violation("", "must be valid JSON")
	}
	return s.validate("", v)
}

func (s *Schema) validate(path string, v any) error {
	if s == nil {
		return fmt.Errorf("schema: nil schema at %q", path)
	}
	if s.Type != "" {
		ok, err := hasType(s.Type, v)
		if err != nil {
			return err
		}
		if !ok {
			return violation(path, typeRule[s.Type])
		}
	}
	if len(s.Enum) > 0 {
		ok, err := s.inEnum(v)
		if err != nil {
			return err
		}
		if !ok {
			return violation(path, s.enumRule())
		}
	}
	if err := s.validateAnyOf(path, v); err != nil {
		return err
	}
	switch x := v.(type) {
	case map[string]any:
		return s.validateObject(path, x)
	case []any:
		return s.validateArray(path, x)
	case string:
		return s.validateString(path, x)
	case json.Number:
		return s.validateNumber(path, x)
	}
	return nil
}

// validateAnyOf passes when v satisfies one alternative; otherwise it
// reports the first alternative's violation.
func (s *Schema) validateAnyOf(path string, v any) error {
	var first error
	for _, alt := range s.AnyOf {
		err := alt.validate(path, v)
		if err == nil {
			return nil
		}
		var ve *ValidationError
		if !errors.As(err, &ve) {
			return err
		}
		if first == nil {
			first = err
		}
	}
	return first
}

var typeRule = map[string]string{
	"object":  "must be an object",
	"array":   "must be an array",
	"string":  "must be a string",
	"integer": "must be an integer",
	"number":  "must be a number",
	"boolean": "must be a boolean",
}

func hasType(typ string, v any) (bool, error) {
	switch typ {
	case "object":
		_, ok := v.(map[string]any)
		return ok, nil
	case "array":
		_, ok := v.([]any)
		return ok, nil
	case "string":
		_, ok := v.(string)
		return ok, nil
	case "boolean":
		_, ok := v.(bool)
		return ok, nil
	case "number":
		_, ok := v.(json.Number)
		return ok, nil
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false, nil
		}
		_, isInt := integer(n)
		return isInt, nil
	}
	return false, fmt.Errorf("schema: unsupported type %q", typ)
}

// integer returns n as an int64 when it is written without fraction or
// exponent and fits.
func integer(n json.Number) (int64, bool) {
	if strings.ContainsAny(string(n), ".eE") {
		return 0, false
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	return i, err == nil
}

func (s *Schema) enumRule() string {
	vals := make([]string, 0, len(s.Enum))
	for _, e := range s.Enum {
		b, err := json.Marshal(e)
		if err != nil {
			return "must be one of the allowed values"
		}
		vals = append(vals, string(b))
	}
	return "must be one of the allowed values: " + strings.Join(vals, ", ")
}

func (s *Schema) inEnum(v any) (bool, error) {
	var key string
	keyed := false
	for _, e := range s.Enum {
		// A valid UTF-8 string encodes and decodes to itself, and a
		// string's canonical form matches only the same string: no round
		// trip (this runs on every call of a tool with an enum).
		if es, ok := e.(string); ok && utf8.ValidString(es) {
			if vs, ok := v.(string); ok && vs == es {
				return true, nil
			}
			continue
		}
		if !keyed {
			key, keyed = canonical(v), true
		}
		b, err := json.Marshal(e)
		if err != nil {
			return false, fmt.Errorf("schema: enum value: %v", err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var ev any
		if err := dec.Decode(&ev); err != nil {
			return false, fmt.Errorf("schema: enum value: %v", err)
		}
		if canonical(ev) == key {
			return true, nil
		}
	}
	return false, nil
}

func (s *Schema) validateObject(path string, obj map[string]any) error {
	for _, name := range s.Required {
		if _, ok := obj[name]; !ok {
			return violation(join(path, name), "is required")
		}
	}
	if s.AdditionalProperties != nil && !*s.AdditionalProperties {
		var unknown []string
		for k := range obj {
			if _, known := s.Properties[k]; !known {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			slices.Sort(unknown)
			allowed := "; this object takes no properties"
			if len(s.Properties) > 0 {
				allowed = "; allowed: " + strings.Join(slices.Sorted(maps.Keys(s.Properties)), ", ")
			}
			if PlainName(unknown[0]) {
				return violation(join(path, unknown[0]), "is not a property of this object"+allowed)
			}
			return violation(path, "has a property that is not allowed"+allowed)
		}
	}
	// The known properties present, in sorted name order: sorting only
	// those keeps the order and spares sorting every declared name.
	present := make([]string, 0, len(obj))
	for name := range obj {
		if _, known := s.Properties[name]; known {
			present = append(present, name)
		}
	}
	slices.Sort(present)
	for _, name := range present {
		if err := s.Properties[name].validate(join(path, name), obj[name]); err != nil {
			return err
		}
	}
	return nil
}

// PlainName reports a property name that can be named in an error: a
// short lowercase snake_case word like every name of our schemas. Anything
// else (a key, a sentence, markup) might be a secret the caller misplaced
// and is not repeated.
func PlainName(name string) bool {
	if name == "" || len(name) > 40 || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func (s *Schema) validateArray(path string, arr []any) error {
	n := int64(len(arr))
	if s.MinItems != nil && n < *s.MinItems {
		return violation(path, "must have at least "+plural(*s.MinItems, "item"))
	}
	if s.MaxItems != nil && n > *s.MaxItems {
		return limitViolation(path, "must have at most "+plural(*s.MaxItems, "item"))
	}
	if s.Items != nil {
		for i, item := range arr {
			if err := s.Items.validate(path+"["+strconv.Itoa(i)+"]", item); err != nil {
				return err
			}
		}
	}
	if s.UniqueItems {
		seen := make(map[string]struct{}, len(arr))
		for _, item := range arr {
			k := canonical(item)
			if _, dup := seen[k]; dup {
				return violation(path, "must not contain duplicate items")
			}
			seen[k] = struct{}{}
		}
	}
	return nil
}

func (s *Schema) validateString(path, str string) error {
	if s.MinLength != nil || s.MaxLength != nil {
		n := int64(utf8.RuneCountInString(str))
		if s.MinLength != nil && n < *s.MinLength {
			return violation(path, "must be at least "+plural(*s.MinLength, "character"))
		}
		if s.MaxLength != nil && n > *s.MaxLength {
			return limitViolation(path, "must be at most "+plural(*s.MaxLength, "character"))
		}
	}
	if s.Pattern != "" {
		re, err := compilePattern(s.Pattern)
		if err != nil {
			return fmt.Errorf("schema: pattern at %q: %v", path, err)
		}
		if !re.MatchString(str) {
			return violation(path, "must match the pattern "+s.Pattern)
		}
	}
	switch s.Format {
	case "":
	case "uuid":
		if !isUUID(str) {
			return violation(path, "must be a UUID (8-4-4-4-12 hexadecimal digits)")
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, str); err != nil {
			return violation(path, "must be an RFC 3339 date-time")
		}
	default:
		return fmt.Errorf("schema: unsupported format %q at %q", s.Format, path)
	}
	return nil
}

func (s *Schema) validateNumber(path string, n json.Number) error {
	if s.Minimum != nil && compare(n, *s.Minimum) < 0 {
		return violation(path, "must be at least "+strconv.FormatInt(*s.Minimum, 10))
	}
	if s.Maximum != nil && compare(n, *s.Maximum) > 0 {
		return limitViolation(path, "must be at most "+strconv.FormatInt(*s.Maximum, 10))
	}
	return nil
}

// compare returns the sign of n - limit.
func compare(n json.Number, limit int64) int {
	if i, ok := integer(n); ok {
		switch {
		case i < limit:
			return -1
		case i > limit:
			return 1
		}
		return 0
	}
	// Overflow gives ±Inf, which still compares correctly.
	f, _ := strconv.ParseFloat(string(n), 64)
	switch l := float64(limit); {
	case f < l:
		return -1
	case f > l:
		return 1
	}
	return 0
}

func plural(n int64, unit string) string {
	s := strconv.FormatInt(n, 10) + " " + unit
	if n != 1 {
		s += "s"
	}
	return s
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := range len(s) {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// patterns caches compiled patterns by source. The cache lives outside
// Schema so that a Schema stays a plain value that can be copied (tags are
// applied to copies) and built as a literal, and still compiles each
// pattern once. Patterns come from code, so the cache is bounded.
var patterns sync.Map // string -> *regexp.Regexp

func compilePattern(p string) (*regexp.Regexp, error) {
	if re, ok := patterns.Load(p); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, err
	}
	actual, _ := patterns.LoadOrStore(p, re)
	return actual.(*regexp.Regexp), nil
}

// canonical renders a decoded JSON value so that values JSON Schema calls
// equal render equally: object keys sorted, numbers by value (1, 1.0 and
// 1e0 agree). It serves enum and uniqueItems, and makes uniqueItems linear
// instead of comparing every pair.
func canonical(v any) string {
	var b strings.Builder
	writeCanonical(&b, v)
	return b.String()
}

func writeCanonical(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		b.WriteString(strconv.Quote(x))
	case json.Number:
		b.WriteString(canonicalNumber(x))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			writeCanonical(b, x[k])
		}
		b.WriteByte('}')
	}
}

func canonicalNumber(n json.Number) string {
	if i, ok := integer(n); ok {
		return strconv.FormatInt(i, 10)
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		// Out of float64 range: compare by spelling.
		return "n" + string(n)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
