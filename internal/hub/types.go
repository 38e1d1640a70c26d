package hub

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/agentbox/agentbox/internal/hub/table"
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
	// Rates and quotas configured per stack (limits.go); 0 is no limit.
	Rates               RateLimits `json:"rates"`
	SessionsPerAgentMax int        `json:"sessions_per_agent_max" desc:"Live sessions per agent; priming one more ends the oldest. 0: no cap."`
	SpacesPerAgentMax   int        `json:"spaces_per_agent_max" desc:"Spaces one agent may create. 0: no cap."`
	RoomMembersMax      int        `json:"room_members_max" desc:"Active members one room may have. 0: no cap."`
	InboxWaitMaxSeconds int        `json:"inbox_wait_max_seconds" desc:"Longest wait inbox_list grants here (0: it does not wait; poll instead). A wait is also cut to the time the call has left; the result says what was granted."`
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
		Rates:               h.limits.rateLimits(),
		SessionsPerAgentMax: h.limits.sessionsPerAgt,
		SpacesPerAgentMax:   h.limits.spacesPerAgt,
		RoomMembersMax:      h.limits.roomMembers,
		InboxWaitMaxSeconds: int(h.limits.waitMax.Seconds()),
	}
}

// Auth is embedded in every seed-000 input: the optional box_key argument.
// When the transport also carries a bearer key, both must name one agent.
type Auth struct {
	BoxKey string `json:"box_key,omitempty" desc:"Your key, if not sent as a Bearer header." schema:"maxLength=200"`
}

// Mutation is embedded in every seed-000 mutation input. Its example is
// per tool (the registry sets it).
type Mutation struct {
	IdempotencyKey string `json:"idempotency_key" desc:"Stable id of this action, yours for 30 days across every tool; reuse it only to retry the same action." schema:"minLength=1,maxLength=80,pattern=^[A-Za-z0-9][A-Za-z0-9._:-]*$"`
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

// fileVersioning names what version reference f pins, if any.
func fileVersioning(f table.File) string {
	switch {
	case f.VersionLabel != "":
		return "version_label"
	case f.SHA256 != "":
		return "sha256"
	case f.Commit != "":
		return "commit"
	}
	return "unversioned"
}

// fileDTO is reference f as results show it.
func fileDTO(f table.File) FileRefDTO {
	return FileRefDTO{FileID: f.ID, URL: f.URL, DisplayName: f.DisplayName, MediaType: f.MediaType,
		VersionLabel: f.VersionLabel, SHA256: f.SHA256, Commit: f.Commit, Versioning: fileVersioning(f)}
}

// Author kinds, on every message and request DTO: an agent, or the box's
// operator (operate.go).
const (
	AuthorAgent    = "agent"
	AuthorOperator = "operator"
	// OperatorName is the operator's author_name.
	OperatorName = "operator"
)

// authorKind is the DTO's author_kind of a stored kind (empty: an agent).
func authorKind(stored string) string {
	if stored == AuthorOperator {
		return AuthorOperator
	}
	return AuthorAgent
}

// messageDTO is stored message r as results show it.
func messageDTO(r *table.Message) MessageDTO {
	d := MessageDTO{MessageID: r.ID, StreamSeq: Revision(r.Seq), AuthorAgentID: r.AuthorID, AuthorName: r.AuthorName,
		AuthorKind: authorKind(r.AuthorKind), BodyMD: r.BodyMD, Payload: Object(r.Payload), Mentions: r.Mentions, Requests: r.Requests,
		ReplyTo: r.ReplyTo, ThreadRootID: r.ThreadRoot, SentAt: timestamp(r.SentAt)}
	d.Destination = Destination{Kind: r.Kind, RoomID: r.RoomID, RecipientAgentID: r.Recipient}
	for _, f := range r.Files {
		d.Files = append(d.Files, fileDTO(f))
	}
	return d
}
