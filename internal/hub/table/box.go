package table

import "github.com/agentbox/agentbox/internal/store"

// BoxKey is the box item: box#<box> / box.
func BoxKey(box string) store.Key { return store.Key{PK: "box#" + box, SK: "box"} }

// BoxesIndex is the GSI1 partition of every box of the store (list-boxes),
// by OrderKey of the box's name.
const BoxesIndex = "boxes"
