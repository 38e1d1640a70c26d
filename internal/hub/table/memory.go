package table

import (
	"time"

	"github.com/agentbox/agentbox/internal/store"
)

// MemoryKey is a memory note of an agent (Version = note version).
func MemoryKey(agent, name string) store.Key {
	return store.Key{PK: "agent#" + agent, SK: "memory#" + name}
}

// MemoryPrefix is the range of an agent's notes.
func MemoryPrefix(agent string) (pk, prefix string) { return "agent#" + agent, "memory#" }

// MemoryCounterKey is the agent's note counter (Version = revision, Count
// = notes), which bounds the notes without a scan.
func MemoryCounterKey(agent string) store.Key {
	return store.Key{PK: "agent#" + agent, SK: "count#memory"}
}

// MemoryCounter is the note counter's data; its item's Count is the
// number of notes.
type MemoryCounter struct {
	// VersionFloor is the highest version of any deleted note.
	VersionFloor uint64 `json:"version_floor,omitempty"`
}

// Memory is a stored note.
type Memory struct {
	Name      string    `json:"name"`
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}
