// Package strictjson is the gate every request body passes before anything
// else reads it.
//
// encoding/json is lenient where a security boundary must not be: it keeps
// the last of duplicate keys (so two layers can disagree on which value the
// caller sent), replaces invalid UTF-8 and lone surrogate escapes with U+FFFD
// (so the stored text differs from the bytes that were checked), and its
// error text can quote input. Check closes those gaps with a small,
// non-recursive scanner over RFC 8259:
//
//   - the whole body must be valid UTF-8, and every \u escape must denote a
//     Unicode scalar value: a lone surrogate (\ud800 unpaired, or \udc00
//     first) is rejected as invalid UTF-8 text, because no UTF-8 string can
//     hold it and encoding/json would silently turn it into U+FFFD;
//   - keys are compared after unescaping, so "a" and "\u0061" collide;
//   - nesting is counted over objects and arrays and refused beyond a limit
//     before it is allocated, so hostile depth costs O(limit) memory and no
//     stack;
//   - the top level must be one object followed only by whitespace.
//
// The scanner is a loop over the input with an explicit stack; each byte is
// visited a bounded number of times and keys go through a hash set, so the
// cost is linear in the input. Errors name a fixed problem and a byte offset,
// never input bytes.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Error is why a body failed the gate. It exists so that transports can
// answer with a precise, safe message: Problem is one of a few fixed phrases
// and never contains input bytes, unlike encoding/json's errors.
type Error struct {
	// Problem is a fixed phrase such as "duplicate key in object".
	Problem string
	// Offset is the byte offset at which the problem was detected, or -1
	// when no single position applies.
	Offset int
	// Limit is true when the body is refused only for exceeding a size
	// bound (nesting depth), so the transport answers LIMIT_EXCEEDED rather
	// than INVALID_ARGUMENT.
	Limit bool
}

func (e *Error) Error() string {
	if e.Offset < 0 {
		return e.Problem
	}
	return fmt.Sprintf("%s (at byte %d)", e.Problem, e.Offset)
}

// The fixed problems. They are unexported: callers branch on Limit, and
// tests on the text.
const (
	problemEmpty        = "request body is empty"
	problemUTF8         = "invalid UTF-8"
	problemSurrogate    = "invalid UTF-8: lone surrogate escape"
	problemNotObject    = "request body is not a JSON object"
	problemMalformed    = "malformed JSON"
	problemEnd          = "malformed JSON: unexpected end of input"
	problemControl      = "malformed JSON: unescaped control character in string"
	problemEscape       = "malformed JSON: invalid escape in string"
	problemNumber       = "malformed JSON: invalid number"
	problemDuplicate    = "duplicate key in object"
	problemTrailing     = "trailing data after the JSON value"
	problemWrongType    = "a JSON value has the wrong type for its field"
	problemUnknownField = "unknown field in object"
	problemCannotDecode = "JSON value cannot be decoded"
)

// smallObjectKeysLimit is how many keys an object keeps in a list before
// switching to a set.
const smallObjectKeysLimit = 16

func fail(problem string, offset int) *Error { return &Error{Problem: problem, Offset: offset} }

// Check reports whether raw is a strict JSON object: valid UTF-8 with no
// lone surrogate escapes, no duplicate keys in any object (compared after
// unescaping), at most maxDepth levels of objects and arrays (the top-level
// object is level 1, so maxDepth < 1 rejects everything), and nothing but
// whitespace after the object. It returns nil or an *Error.
//
// Check is also the right tool for a nested JSON object field such as a
// message payload: Check(payload, 8) enforces "object, depth ≤ 8".
func Check(raw []byte, maxDepth int) error {
	if !utf8.Valid(raw) {
		return fail(problemUTF8, invalidUTF8Offset(raw))
	}
	start := skipSpace(raw, 0)
	if start == len(raw) {
		return fail(problemEmpty, -1)
	}
	if raw[start] != '{' {
		return fail(problemNotObject, start)
	}
	end, err := scan(raw, start, maxDepth)
	if err != nil {
		return err
	}
	if end = skipSpace(raw, end); end != len(raw) {
		return fail(problemTrailing, end)
	}
	return nil
}

// Decode decodes raw into v and refuses unknown object fields and trailing
// data. It is a safety net behind Check and schema validation, which must
// have run first (Decode itself does not recheck UTF-8 or duplicates): if
// the Go type and the published schema ever drift apart, the request fails
// here instead of silently dropping a field.
//
// Numbers decoded into interface values become json.Number, not float64, so
// that integers beyond 2^53 in free-form payloads survive a round trip.
// Errors are *Error and never contain input; only a misuse of v (not a
// non-nil pointer) returns encoding/json's *InvalidUnmarshalError, which
// names the Go type and nothing from the input.
func Decode(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	off := int(dec.InputOffset())
	if i := skipSpace(raw, off); i != len(raw) {
		return fail(problemTrailing, i)
	}
	return nil
}

// decodeError turns an encoding/json error into a safe *Error. The original
// text is dropped on purpose: SyntaxError, unknown-field errors and custom
// UnmarshalJSON errors can all quote caller input.
func decodeError(err error) error {
	var (
		syntax  *json.SyntaxError
		typ     *json.UnmarshalTypeError
		invalid *json.InvalidUnmarshalError
	)
	switch {
	case errors.Is(err, io.EOF):
		return fail(problemEmpty, -1)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fail(problemEnd, -1)
	case errors.As(err, &syntax):
		return fail(problemMalformed, int(syntax.Offset))
	case errors.As(err, &typ):
		return fail(problemWrongType, int(typ.Offset))
	case errors.As(err, &invalid):
		return err
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// encoding/json has no error type for this; the prefix is stable
		// since Go 1.10.
		return fail(problemUnknownField, -1)
	default:
		return fail(problemCannotDecode, -1)
	}
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) {
		switch raw[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func invalidUTF8Offset(raw []byte) int {
	for i := 0; i < len(raw); {
		r, size := utf8.DecodeRune(raw[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// frame is one open object or array. Objects remember their keys: a short
// list while small (most request objects), a set once larger, so that a
// hostile object with many keys still costs linear time.
type frame struct {
	object bool
	keys   []string
	set    map[string]struct{}
}

// add records key and reports false if it was already present.
func (f *frame) add(key string) bool {
	if f.set != nil {
		if _, dup := f.set[key]; dup {
			return false
		}
		f.set[key] = struct{}{}
		return true
	}
	for _, k := range f.keys {
		if k == key {
			return false
		}
	}
	if len(f.keys) < smallObjectKeysLimit {
		f.keys = append(f.keys, key)
		return true
	}
	f.set = make(map[string]struct{}, 2*smallObjectKeysLimit)
	for _, k := range f.keys {
		f.set[k] = struct{}{}
	}
	f.keys = nil
	f.set[key] = struct{}{}
	return true
}

type state int

const (
	wantValue  state = iota // a value must start here
	wantKey                 // an object key must start here
	afterValue              // a value has just ended
)

// scan checks the value starting at raw[pos] (known to be valid UTF-8) and
// returns the offset just past it.
func scan(raw []byte, pos, maxDepth int) (int, error) {
	var stack []frame
	st := wantValue
	for {
		pos = skipSpace(raw, pos)
		switch st {
		case wantValue:
			if pos >= len(raw) {
				return 0, fail(problemEnd, pos)
			}
			c := raw[pos]
			switch {
			case c == '{' || c == '[':
				if len(stack) >= maxDepth {
					return 0, &Error{Problem: fmt.Sprintf("nesting deeper than %d levels", max(maxDepth, 0)), Offset: pos, Limit: true}
				}
				stack = append(stack, frame{object: c == '{'})
				closer := byte(']')
				if c == '{' {
					closer = '}'
				}
				pos = skipSpace(raw, pos+1)
				if pos < len(raw) && raw[pos] == closer {
					stack = stack[:len(stack)-1]
					pos++
					st = afterValue
				} else if c == '{' {
					st = wantKey
				}
				continue
			case c == '"':
				end, _, err := scanString(raw, pos, false)
				if err != nil {
					return 0, err
				}
				pos = end
			case c == 't':
				if !bytes.HasPrefix(raw[pos:], []byte("true")) {
					return 0, fail(problemMalformed, pos)
				}
				pos += len("true")
			case c == 'f':
				if !bytes.HasPrefix(raw[pos:], []byte("false")) {
					return 0, fail(problemMalformed, pos)
				}
				pos += len("false")
			case c == 'n':
				if !bytes.HasPrefix(raw[pos:], []byte("null")) {
					return 0, fail(problemMalformed, pos)
				}
				pos += len("null")
			case c == '-' || isDigit(c):
				end, err := scanNumber(raw, pos)
				if err != nil {
					return 0, err
				}
				pos = end
			default:
				return 0, fail(problemMalformed, pos)
			}
			st = afterValue

		case wantKey:
			if pos >= len(raw) {
				return 0, fail(problemEnd, pos)
			}
			if raw[pos] != '"' {
				return 0, fail(problemMalformed, pos)
			}
			end, key, err := scanString(raw, pos, true)
			if err != nil {
				return 0, err
			}
			if !stack[len(stack)-1].add(key) {
				return 0, fail(problemDuplicate, pos)
			}
			pos = skipSpace(raw, end)
			if pos >= len(raw) {
				return 0, fail(problemEnd, pos)
			}
			if raw[pos] != ':' {
				return 0, fail(problemMalformed, pos)
			}
			pos++
			st = wantValue

		case afterValue:
			if len(stack) == 0 {
				return pos, nil
			}
			if pos >= len(raw) {
				return 0, fail(problemEnd, pos)
			}
			top := &stack[len(stack)-1]
			switch c := raw[pos]; {
			case c == ',':
				pos++
				if top.object {
					st = wantKey
				} else {
					st = wantValue
				}
			case c == '}' && top.object, c == ']' && !top.object:
				stack[len(stack)-1] = frame{} // let the key set be collected
				stack = stack[:len(stack)-1]
				pos++
			default:
				return 0, fail(problemMalformed, pos)
			}
		}
	}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// scanNumber checks the RFC 8259 number grammar
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? starting at raw[pos].
// What may follow the number is the caller's business.
func scanNumber(raw []byte, pos int) (int, error) {
	i := pos
	if raw[i] == '-' {
		i++
	}
	digits := func() bool {
		start := i
		for i < len(raw) && isDigit(raw[i]) {
			i++
		}
		return i > start
	}
	switch {
	case i < len(raw) && raw[i] == '0':
		i++
	case !digits():
		return 0, fail(problemNumber, pos)
	}
	if i < len(raw) && raw[i] == '.' {
		i++
		if !digits() {
			return 0, fail(problemNumber, pos)
		}
	}
	if i < len(raw) && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		if i < len(raw) && (raw[i] == '+' || raw[i] == '-') {
			i++
		}
		if !digits() {
			return 0, fail(problemNumber, pos)
		}
	}
	return i, nil
}

// scanString checks the string starting at the quote raw[pos] and returns
// the offset just past its closing quote. With decode set it also returns
// the unescaped value (for duplicate-key detection). raw is valid UTF-8, so
// only escapes and control characters need checking here.
func scanString(raw []byte, pos int, decode bool) (int, string, error) {
	var buf []byte // decoded prefix; nil until the first escape
	lit := pos + 1 // start of the pending unescaped run
	i := pos + 1
	for i < len(raw) {
		c := raw[i]
		switch {
		case c == '"':
			if !decode {
				return i + 1, "", nil
			}
			if buf == nil {
				return i + 1, string(raw[lit:i]), nil
			}
			return i + 1, string(append(buf, raw[lit:i]...)), nil
		case c < 0x20:
			return 0, "", fail(problemControl, i)
		case c != '\\':
			i++
			continue
		}
		// An escape at raw[i].
		if decode {
			buf = append(buf, raw[lit:i]...)
		}
		if i+1 >= len(raw) {
			return 0, "", fail(problemEnd, i)
		}
		esc := raw[i+1]
		if esc == 'u' {
			r, ok := hex4(raw, i+2)
			if !ok {
				return 0, "", fail(problemEscape, i)
			}
			n := 6
			switch {
			case 0xDC00 <= r && r <= 0xDFFF:
				return 0, "", fail(problemSurrogate, i)
			case 0xD800 <= r && r <= 0xDBFF:
				lo, ok := rune(0), false
				if i+7 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
					lo, ok = hex4(raw, i+8)
				}
				if !ok || lo < 0xDC00 || lo > 0xDFFF {
					return 0, "", fail(problemSurrogate, i)
				}
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				n = 12
			}
			if decode {
				buf = utf8.AppendRune(buf, r)
			}
			i += n
		} else {
			var b byte
			switch esc {
			case '"', '\\', '/':
				b = esc
			case 'b':
				b = '\b'
			case 'f':
				b = '\f'
			case 'n':
				b = '\n'
			case 'r':
				b = '\r'
			case 't':
				b = '\t'
			default:
				return 0, "", fail(problemEscape, i)
			}
			if decode {
				buf = append(buf, b)
			}
			i += 2
		}
		lit = i
	}
	return 0, "", fail(problemEnd, i)
}

// hex4 decodes four hex digits at raw[i:i+4].
func hex4(raw []byte, i int) (rune, bool) {
	if i+4 > len(raw) {
		return 0, false
	}
	var r rune
	for _, c := range raw[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// Marshal encodes v as compact JSON without HTML escaping and without a
// trailing newline: the one encoder of what this service answers, so that
// text such as "<key>" or "a & b" reads in a response exactly as it was
// sent, not as \u003ckey\u003e. (encoding/json's default escaping guards
// JSON embedded in HTML, which no answer of ours is.) A json.RawMessage
// inside v is copied as it is; render it with Marshal too.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
