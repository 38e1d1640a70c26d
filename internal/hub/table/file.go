package table

import (
	"time"

	"github.com/agentbox/agentbox/internal/store"
)

// FileReportKey is an agent's access report of a file of a message
// (Version = report revision).
func FileReportKey(message, file, agent string) store.Key {
	return store.Key{PK: "frep#" + message, SK: file + "#" + agent}
}

// FileReportPrefix is the range of a message's reports, of one file when
// file is not empty.
func FileReportPrefix(message, file string) (pk, prefix string) {
	if file != "" {
		file += "#"
	}
	return "frep#" + message, file
}

// FileReport is an agent's stored statement of its access to a file of a
// message; the service never checks the link, so it is the agent's word.
type FileReport struct {
	MessageID string    `json:"message_id"`
	FileID    string    `json:"file_id"`
	AgentID   string    `json:"agent_id"`
	State     string    `json:"state"`
	Note      string    `json:"note,omitempty"`
	At        time.Time `json:"at"`
}

// File is a file reference as a message stores it; the service keeps the
// reference, never the file.
type File struct {
	ID           string `json:"id"`
	URL          string `json:"url"`
	DisplayName  string `json:"display_name"`
	MediaType    string `json:"media_type,omitempty"`
	VersionLabel string `json:"version_label,omitempty"`
	SHA256       string `json:"sha256,omitempty"`
	Commit       string `json:"commit,omitempty"`
}
