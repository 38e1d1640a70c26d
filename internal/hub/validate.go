package hub

// Validators: one per kind of input, so that every field of a kind obeys
// one rule.
//
//	name   owner-given names (box, agent, room): 1..80 characters, not blank, one line
//	line   one-line free text (card role, contact notes): at most n characters, one line
//	title  space titles: 1..200 characters and at most 800 bytes, not blank, one line
//	text   multi-line free text (card description): at most n bytes; tab and line breaks allowed
//	sized  bodies (body_md, goals, notes, briefs): 1..n bytes of UTF-8, verbatim
//	slug   seed 002's operation_key and note names
//	uuid   any id: a UUID, canonicalized to lower case (RFC 9562: case-insensitive)
//	object free-form JSON an agent stores (payloads): size, depth, no credential-like keys or
//	       token-like values
//
// "One line" and "text" refuse control characters — C0, DEL and C1
// (U+0080–U+009F, e.g. U+0085 NEXT LINE, U+009B CSI) — and the bidirectional
// overrides and isolates (U+202A–U+202E, U+2066–U+2069) that can make a name
// read as another. Errors name the field and the rule, never the value.

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/google/uuid"
)

// forbiddenRune reports a character no name, line or text may hold;
// multiline lets tab, CR and LF through.
func forbiddenRune(r rune, multiline bool) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return !multiline
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// checkChars applies forbiddenRune to s.
func checkChars(field, s string, multiline bool) error {
	for _, r := range s {
		if forbiddenRune(r, multiline) {
			if multiline {
				return apperr.Invalid(field, "must not contain control or bidirectional override characters")
			}
			return apperr.Invalid(field, "must be one line without control or bidirectional override characters")
		}
	}
	return nil
}

// checkLine enforces a one-line field of at most maxChars characters.
func checkLine(field, s string, maxChars int, bound string) error {
	if !utf8.ValidString(s) {
		return apperr.Invalid(field, "must be valid UTF-8")
	}
	if utf8.RuneCountInString(s) > maxChars {
		return apperr.Limit(field, bound)
	}
	return checkChars(field, s, false)
}

// checkName validates an owner-given name: 1..80 characters, not blank,
// one line.
func checkName(field, s string) error {
	if strings.TrimSpace(s) == "" {
		return apperr.Invalid(field, "must not be empty")
	}
	return checkLine(field, s, MaxIDChars, "80 characters")
}

// checkTitle enforces 1..200 characters, at most 800 bytes, not blank, one
// line.
func checkTitle(s string) error {
	if utf8.ValidString(s) && strings.TrimSpace(s) == "" {
		return apperr.Invalid("title", "must not be empty")
	}
	if err := checkLine("title", s, MaxTitleChars, "200 characters"); err != nil {
		return err
	}
	if len(s) > MaxTitleBytes {
		return apperr.Limit("title", "800 bytes of UTF-8")
	}
	return nil
}

// checkText enforces a multi-line free-text field: valid UTF-8, at most
// maxBytes, no control characters but tab and line breaks.
func checkText(field, s string, maxBytes int, bound string) error {
	if !utf8.ValidString(s) {
		return apperr.Invalid(field, "must be valid UTF-8")
	}
	if len(s) > maxBytes {
		return apperr.Limit(field, bound)
	}
	return checkChars(field, s, true)
}

// checkSized is the rule for bodies (body_md, note content, goal, brief):
// valid UTF-8, non-empty when required, and at most maxBytes
// (LIMIT_EXCEEDED naming bound). Byte sizes are what the seeds cap.
func checkSized(field, s string, required bool, maxBytes int, bound string) error {
	if required && s == "" {
		return apperr.Invalid(field, "must not be empty")
	}
	if !utf8.ValidString(s) {
		return apperr.Invalid(field, "must be valid UTF-8")
	}
	if len(s) > maxBytes {
		return apperr.Limit(field, bound)
	}
	return nil
}

// checkBodyMD enforces the 1 byte..16 KiB UTF-8 rule.
func checkBodyMD(field, s string) error {
	return checkSized(field, s, true, MaxBodyMDBytes, "16 KiB of UTF-8")
}

var slugRE = regexp.MustCompile(operationKeyPattern)

// checkSlug enforces seed 002's operation_key pattern, which note names
// share: at most 80 characters of lowercase letters and digits in
// hyphen-separated groups, which also keeps them safe inside item keys.
func checkSlug(field, s string) error {
	if utf8.RuneCountInString(s) > MaxIDChars {
		return apperr.Limit(field, "80 characters")
	}
	if !slugRE.MatchString(s) {
		return apperr.Invalid(field, "must be lowercase letters and digits in hyphen-separated groups")
	}
	return nil
}

// checkUUID requires a UUID in its 36-character form (any case).
func checkUUID(field, s string) error {
	if _, err := uuid.Parse(s); err != nil || len(s) != 36 {
		return apperr.Invalid(field, "must be a UUID")
	}
	return nil
}

// uuidArg validates the UUID at *s and canonicalizes it to lower case in
// place: UUIDs are case-insensitive, and item keys hold the lower-case
// form.
func uuidArg(field string, s *string) error {
	if err := checkUUID(field, *s); err != nil {
		return err
	}
	*s = strings.ToLower(*s)
	return nil
}

// checkPayload enforces the rule for free-form JSON an agent stores: a JSON
// object of at most 8 KiB (compacted), at most eight levels deep, with no
// credential-like member name and no token-like string at any depth (seed
// 000: credential-like JSON fields and file bytes are rejected). It returns
// the compacted object.
func checkPayload(field string, raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, apperr.Invalid(field, "must be a JSON object")
	}
	b := buf.Bytes()
	if len(b) == 0 || b[0] != '{' {
		return nil, apperr.Invalid(field, "must be a JSON object")
	}
	if len(b) > MaxPayloadBytes {
		return nil, apperr.Limit(field, "8 KiB")
	}
	if depth(b) > MaxPayloadDepth {
		return nil, apperr.Limit(field, "depth 8")
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, apperr.Invalid(field, "must be a JSON object")
	}
	if err := checkSecrets(field, v); err != nil {
		return nil, err
	}
	return b, nil
}

// depth returns the maximum nesting of compact, valid JSON.
func depth(b []byte) int {
	d, maxD, inStr, esc := 0, 0, false, false
	for _, c := range b {
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[':
			d++
			maxD = max(maxD, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return maxD
}

// checkSecrets walks decoded JSON for credential-like member names and
// token-like strings.
func checkSecrets(field string, v any) error {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if credentialName(k) {
				return apperr.Invalid(field, "must not contain credential-like fields or file bytes (names such as password, secret, token, api_key, authorization, private_key, *_base64)")
			}
			if err := checkSecrets(field, x); err != nil {
				return err
			}
		}
	case []any:
		for _, x := range t {
			if err := checkSecrets(field, x); err != nil {
				return err
			}
		}
	case string:
		if looksLikeToken(t) {
			return apperr.Invalid(field, "must not contain strings that look like credentials or tokens")
		}
	}
	return nil
}

// credentialSuffixes are the normalized member names (lower case, letters
// and digits only) that mark a credential or file bytes, as a whole name or
// its ending ("github_token", "client-secret", "file_base64"). "max_tokens"
// ends in "tokens" and passes.
var credentialSuffixes = []string{
	"password", "passwd", "passphrase", "secret", "token", "apikey", "authorization",
	"privatekey", "accesskey", "secretkey", "credential", "credentials", "cookie",
	"base64", "filebytes", "filecontent", "attachment",
}

func credentialName(k string) bool {
	var b strings.Builder
	for _, r := range strings.ToLower(k) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	n := b.String()
	for _, s := range credentialSuffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}

// pageSize is every list tool's page size rule: 0 (omitted) is the list's
// default, below 1 is INVALID_ARGUMENT and over its maximum
// LIMIT_EXCEEDED, in one wording for every list.
func pageSize(field string, n, def, maxN int) (int, error) {
	switch {
	case n == 0:
		return def, nil
	case n < 0:
		return 0, apperr.Invalid(field, "must be at least 1")
	case n > maxN:
		return 0, apperr.Limit(field, strconv.Itoa(maxN)+" items")
	}
	return n, nil
}
