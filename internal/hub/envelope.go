package hub

import (
	"encoding/json"

	"github.com/agentbox/agentbox/internal/hub/table"
	"github.com/agentbox/agentbox/internal/strictjson"
)

// The message envelope bound (seed 000: "the message envelope including
// file metadata is at most 64 KiB") is measured on what the agent sent,
// never on how the service stores or returns it: the message's own fields,
// named as in message_send's arguments (destination, body_md, payload,
// files with their metadata, mentions, requests, reply_to), as compact
// JSON with every character written as itself (no \u003c for "<"), and
// without box_key and idempotency_key, which are not the message. A
// request_respond reply counts its body, files and the small payload the
// service gives it. What the service adds on reading (ids, author,
// sequence, times, thread root, file ids and versioning) is not counted,
// so a message read back is larger than its envelope by those fields.

// envelopeBytes is the size MaxEnvelopeBytes bounds.
func envelopeBytes(msg *table.Message) int {
	files := make([]FileRefInput, len(msg.Files))
	for i, f := range msg.Files {
		files[i] = FileRefInput{URL: f.URL, DisplayName: f.DisplayName, MediaType: f.MediaType,
			VersionLabel: f.VersionLabel, SHA256: f.SHA256, Commit: f.Commit}
	}
	sent := struct {
		Destination Destination     `json:"destination"`
		BodyMD      string          `json:"body_md"`
		Payload     json.RawMessage `json:"payload,omitempty"`
		Files       []FileRefInput  `json:"files,omitempty"`
		Mentions    []string        `json:"mentions,omitempty"`
		Requests    []string        `json:"requests,omitempty"`
		ReplyTo     string          `json:"reply_to,omitempty"`
	}{Destination{Kind: msg.Kind, RoomID: msg.RoomID, RecipientAgentID: msg.Recipient},
		msg.BodyMD, msg.Payload, files, msg.Mentions, msg.Requests, msg.ReplyTo}
	b, err := strictjson.Marshal(sent)
	if err != nil {
		// Plain strings and a payload already validated as JSON.
		panic("hub: encoding a message envelope: " + err.Error())
	}
	return len(b)
}
