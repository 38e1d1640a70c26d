package hub

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/schema"
)

// Revision is an unsigned 64-bit sequence or CAS value. Seed 000 carries
// them as decimal strings so that JavaScript clients never round them.
type Revision uint64

const decimalPattern = `^(0|[1-9][0-9]{0,19})$`

// JSONSchema describes the wire form.
func (Revision) JSONSchema() *schema.Schema {
	return &schema.Schema{Type: "string", Pattern: decimalPattern,
		Description: "Unsigned 64-bit decimal string; never convert it to a JSON number."}
}

// MarshalJSON renders the decimal string.
func (r Revision) MarshalJSON() ([]byte, error) {
	return []byte(`"` + strconv.FormatUint(uint64(r), 10) + `"`), nil
}

// UnmarshalJSON accepts only a canonical decimal string in uint64 range.
func (r *Revision) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New("must be a decimal string")
	}
	v, err := ParseRevision(s)
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// ParseRevision parses a canonical decimal string (no sign, no leading
// zeros, at most 2^64-1).
func ParseRevision(s string) (Revision, error) {
	if s == "" || len(s) > 20 || (len(s) > 1 && s[0] == '0') {
		return 0, errors.New("must be a canonical decimal string")
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, errors.New("must be an unsigned 64-bit decimal string")
	}
	return Revision(v), nil
}

// Limits are the service's enforced bounds, reported by agent_prime.
type Limits struct {
	BodyMDBytes         int `json:"body_md_max_bytes"`
	PayloadBytes        int `json:"payload_max_bytes"`
	PayloadDepth        int `json:"payload_max_depth"`
	EnvelopeBytes       int `json:"envelope_max_bytes"`
	TargetsMax          int `json:"targets_max"`
	AckMax              int `json:"ack_max_seqs"`
	GoalBytes           int `json:"goal_max_bytes"`
	TitleChars          int `json:"title_max_chars"`
	TitleBytes          int `json:"title_max_bytes"`
	IDChars             int `json:"id_max_chars"`
	RequestBytes        int `json:"request_max_bytes"`
	SessionIdleSeconds  int `json:"session_idle_seconds"`
	IdempotencyTTLHours int `json:"idempotency_ttl_hours"`
	// Spaces and memory (spaces.go, memory.go).
	SpaceMembersMax    int `json:"space_members_max"`
	MemoryNotesMax     int `json:"memory_notes_max"`
	MemoryContentBytes int `json:"memory_content_max_bytes"`
	PageItemsMax       int `json:"page_items_max"`
	// Directory and rooms (directory.go, rooms.go).
	DirectoryQueryChars int `json:"directory_query_max_chars"`
	DirectoryPageMax    int `json:"directory_page_max"`
	RoomBriefBytes      int `json:"room_brief_max_bytes"`
	RoomRosterMax       int `json:"room_roster_max"`
	RoomsPageMax        int `json:"rooms_page_max"`
	PrimeRoomsMax       int `json:"prime_rooms_max"`
}

// The limits of seed 000 and 002, enforced by the service.
const (
	MaxBodyMDBytes   = 16 << 10
	MaxPayloadBytes  = 8 << 10
	MaxPayloadDepth  = 8
	MaxEnvelopeBytes = 64 << 10
	MaxTargets       = 20
	MaxAckSeqs       = 100
	MaxGoalBytes     = 20 << 10
	MaxTitleChars    = 200
	MaxTitleBytes    = 800
	MaxIDChars       = 80
	// MaxRequestBytes caps a whole request body at the transports. It sits
	// above the largest legal envelope so that every limit below it is
	// reported as the precise LIMIT_EXCEEDED of its own field.
	MaxRequestBytes = 256 << 10
	// MaxJSONDepth bounds nesting of a whole request: the payload's eight
	// levels plus the arguments' own structure.
	MaxJSONDepth = 16
)

// Limits reports the service's bounds.
func (h *Hub) Limits() Limits {
	return Limits{
		BodyMDBytes: MaxBodyMDBytes, PayloadBytes: MaxPayloadBytes, PayloadDepth: MaxPayloadDepth,
		EnvelopeBytes: MaxEnvelopeBytes, TargetsMax: MaxTargets, AckMax: MaxAckSeqs,
		GoalBytes: MaxGoalBytes, TitleChars: MaxTitleChars, TitleBytes: MaxTitleBytes,
		IDChars: MaxIDChars, RequestBytes: MaxRequestBytes,
		SessionIdleSeconds:  int(h.idle.Seconds()),
		IdempotencyTTLHours: int(h.idemTT.Hours()),
		SpaceMembersMax:     MaxSpaceMembers, MemoryNotesMax: MaxMemoryNotes,
		MemoryContentBytes: MaxMemoryContentBytes, PageItemsMax: MaxPageItems,
		DirectoryQueryChars: MaxQueryChars, DirectoryPageMax: MaxDirectoryPage,
		RoomBriefBytes: MaxBriefBytes, RoomRosterMax: MaxRosterMembers,
		RoomsPageMax: MaxRoomsPage, PrimeRoomsMax: MaxPrimeRooms,
	}
}

// Auth is embedded in every seed-000 input: the optional box_key argument.
// When the transport also carries a bearer key, both must name one agent.
type Auth struct {
	BoxKey string `json:"box_key,omitempty" desc:"Your agent key, when not sent as 'Authorization: Bearer'." schema:"maxLength=200"`
}

// Mutation is embedded in every seed-000 mutation input.
type Mutation struct {
	IdempotencyKey string `json:"idempotency_key" desc:"Stable id of this action; reuse it only to retry the same action." schema:"minLength=1,maxLength=80,pattern=^[A-Za-z0-9][A-Za-z0-9._:-]*$" example:"\"checkpoint-2026-11-29-01\""`
}

// checkSized is the one rule for sized free text (body_md, note content,
// goal, brief): valid UTF-8, non-empty when required, and at most maxBytes
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

// checkPayload enforces the optional payload rule: a JSON object of at most
// 8 KiB (compacted) and at most eight levels deep.
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

// ArgumentKey returns the box_key argument, for the registry to pass on as
// a credential.
func (a Auth) ArgumentKey() string { return a.BoxKey }

// Object is a JSON object carried verbatim (payloads). Its schema says
// object; the service enforces size and depth (checkPayload).
type Object json.RawMessage

// JSONSchema describes the wire form.
func (Object) JSONSchema() *schema.Schema {
	return &schema.Schema{Type: "object", Description: "JSON object, at most 8 KiB and depth 8."}
}

// MarshalJSON writes the object verbatim.
func (o Object) MarshalJSON() ([]byte, error) {
	if len(o) == 0 {
		return []byte("null"), nil
	}
	return o, nil
}

// UnmarshalJSON keeps a copy of the raw object.
func (o *Object) UnmarshalJSON(b []byte) error {
	*o = append((*o)[:0], b...)
	return nil
}
