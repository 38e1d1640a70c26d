// Package bearer reads the one credential every transport accepts: the
// key of an "Authorization: Bearer <key>" header (RFC 6750 §2.1). REST,
// MCP and the operator view all parse it here, so that a header one of
// them accepts the others accept too, and one they refuse none treats as
// anonymous.
package bearer

import (
	"errors"
	"net/http"
	"strings"
)

// The two ways a present Authorization header is refused.
var (
	// ErrMultiple: more than one Authorization header. Which one counts
	// would be a guess, so none does.
	ErrMultiple = errors.New("more than one Authorization header")
	// ErrMalformed: the header is not one bearer credential.
	ErrMalformed = errors.New("the Authorization header is not 'Bearer <key>'")
)

// Key returns the key of h's Authorization header: "" and no error when
// there is none. The scheme is matched in any case; spaces and tabs around
// the value and between scheme and key are allowed; the key must be a
// b64token (letters, digits, - . _ ~ + /, then any number of =), so a
// second word, a control character or a non-ASCII byte makes the header
// ErrMalformed rather than part of a key.
func Key(h http.Header) (string, error) {
	vs := h.Values("Authorization")
	switch len(vs) {
	case 0:
		return "", nil
	case 1:
	default:
		return "", ErrMultiple
	}
	v := strings.Trim(vs[0], " \t")
	i := strings.IndexAny(v, " \t")
	if i < 0 || !strings.EqualFold(v[:i], "Bearer") {
		return "", ErrMalformed
	}
	key := strings.TrimLeft(v[i:], " \t")
	if !b64token(key) {
		return "", ErrMalformed
	}
	return key, nil
}

// b64token reports whether s is RFC 6750's b64token.
func b64token(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-', c == '.', c == '_', c == '~', c == '+', c == '/':
		default:
			return false
		}
	}
	return true
}
