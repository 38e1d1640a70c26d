package table

import "github.com/agentbox/agentbox/internal/store"

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
