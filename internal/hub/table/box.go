package table

import (
	"time"

	"github.com/agentbox/agentbox/internal/store"
)

// BoxKey is the box item: box#<box> / box.
func BoxKey(box string) store.Key { return store.Key{PK: "box#" + box, SK: "box"} }

// BoxesIndex is the GSI1 partition of every box of the store (list-boxes),
// by OrderKey of the box's name.
const BoxesIndex = "boxes"

// Box is the record stored at its key.
type Box struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}
