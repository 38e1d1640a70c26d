package opview

import (
	"encoding/json"
	"time"
)

// The stored records the view reads, as it reads them: only the fields it
// shows, decoded with table.Decode from the items the hub writes (the
// hub's record types are not exported; agents and boxes use table's). A
// field renamed in the hub's record would show here as empty: the view's
// tests read every one of these fields back from a real box.

// messageRecord is a stored message (hub messages.go).
type messageRecord struct {
	ID         string          `json:"id"`
	Seq        uint64          `json:"seq"`
	AuthorID   string          `json:"author_id"`
	AuthorName string          `json:"author_name"`
	BodyMD     string          `json:"body_md"`
	Payload    json.RawMessage `json:"payload,omitempty"`
	Files      []fileRecord    `json:"files,omitempty"`
	Mentions   []string        `json:"mentions,omitempty"`
	Requests   []string        `json:"requests,omitempty"`
	ReplyTo    string          `json:"reply_to,omitempty"`
	ThreadRoot string          `json:"thread_root"`
	SentAt     time.Time       `json:"sent_at"`
}

// fileRecord is a message's file reference (hub files.go).
type fileRecord struct {
	URL         string `json:"url"`
	DisplayName string `json:"display_name"`
}

// roomRecord is a room (hub rooms.go).
type roomRecord struct {
	ID       string `json:"id"`
	BoxID    string `json:"box_id"`
	Name     string `json:"name"`
	Archived bool   `json:"archived"`
}

// briefRecord is a room's brief (hub rooms.go).
type briefRecord struct {
	TextMD string `json:"text_md"`
}

// requestRecord is one requested recipient's request (hub requests.go).
type requestRecord struct {
	MessageID   string `json:"message_id"`
	Destination struct {
		Kind   string `json:"kind"`
		RoomID string `json:"room_id,omitempty"`
	} `json:"destination"`
	StreamSeq   uint64    `json:"stream_seq"`
	AuthorID    string    `json:"author_id"`
	RecipientID string    `json:"recipient_id"`
	SentAt      time.Time `json:"sent_at"`
	Status      string    `json:"status"`
	DeclaredAt  time.Time `json:"declared_at,omitzero"`
	ResponseID  string    `json:"response_id,omitempty"`
}

// spaceListing is what a space's listing item holds (hub spaces.go).
type spaceListing struct {
	ID         string `json:"id"`
	BoxID      string `json:"box_id"`
	Title      string `json:"title"`
	Status     string `json:"status"`
	Visibility string `json:"visibility"`
}

// visibilityPrivate is a private space's Visibility.
const visibilityPrivate = "private"
