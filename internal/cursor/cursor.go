// Package cursor encodes keyset positions for list tools.
//
// A cursor is base64url (unpadded) of strict JSON: a version, the scope it
// was made for (the authenticated agent, the stream or filter, and the
// epoch that applies), the position, and an HMAC-SHA256 tag over all of
// them under the deployment's cursor key. Decoding checks every part: an
// unknown field, a duplicate key, trailing data, a tag that does not
// verify (any tampering), a scope that is not the caller's current one, or
// anything that does not parse is CURSOR_INVALID. Cursors are still not
// credentials: authorization is decided afresh on every read.
package cursor

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/strictjson"
)

// MaxLen bounds an encoded cursor.
const MaxLen = 2048

// Scope is what a cursor is bound to. Stream names the list and its filter
// (for example "inbox:unread" or "rooms"); Epoch is the membership epoch or
// generation the listing was made in (0 when none applies).
// Key is the secret that authenticates cursors; it must be non-empty.
type Scope struct {
	Agent  string
	Stream string
	Epoch  uint64
	Key    []byte
}

type envelope struct {
	V int             `json:"v"`
	A string          `json:"a"`
	S string          `json:"s"`
	E uint64          `json:"e"`
	P json.RawMessage `json:"p"`
	M []byte          `json:"m,omitempty"`
}

// tag is the HMAC of the envelope's other fields, in their encoding.
func tag(key []byte, env envelope) []byte {
	if len(key) == 0 {
		panic("cursor: no key")
	}
	env.M = nil
	b, err := json.Marshal(env)
	if err != nil {
		panic("cursor: " + err.Error())
	}
	m := hmac.New(sha256.New, key)
	m.Write(b)
	return m.Sum(nil)[:16]
}

// Encode makes a cursor for pos (any JSON-marshalable value) in scope.
func Encode(scope Scope, pos any) string {
	p, err := json.Marshal(pos)
	if err != nil {
		panic("cursor: position is not marshalable: " + err.Error())
	}
	env := envelope{V: 1, A: scope.Agent, S: scope.Stream, E: scope.Epoch, P: p}
	env.M = tag(scope.Key, env)
	b, err := json.Marshal(env)
	if err != nil {
		panic("cursor: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// Invalid is the one error every bad cursor gets.
func Invalid() *apperr.Error {
	return apperr.New(apperr.CursorInvalid, "The cursor is not valid for this list, caller or epoch.")
}

// Decode reads a cursor made by Encode for exactly scope into pos (a
// pointer to the position type).
func Decode(s string, scope Scope, pos any) error {
	if s == "" || len(s) > MaxLen {
		return Invalid()
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return Invalid()
	}
	if strictjson.Check(b, 8) != nil {
		return Invalid()
	}
	var env envelope
	if strictjson.Decode(b, &env) != nil {
		return Invalid()
	}
	if env.V != 1 || len(env.P) == 0 || !hmac.Equal(env.M, tag(scope.Key, env)) {
		return Invalid()
	}
	if env.A != scope.Agent || env.S != scope.Stream || env.E != scope.Epoch {
		return Invalid()
	}
	if bytes.HasPrefix(bytes.TrimSpace(env.P), []byte("{")) && strictjson.Check(env.P, 8) != nil {
		return Invalid()
	}
	dec := json.NewDecoder(bytes.NewReader(env.P))
	dec.DisallowUnknownFields()
	if dec.Decode(pos) != nil {
		return Invalid()
	}
	return nil
}
