package table

import (
	"strings"

	"github.com/agentbox/agentbox/internal/store"
)

// The old shapes the code still reads. Each is written by no current
// version: items of the shape exist only where an earlier version wrote
// them, and each note says what still reads them and when the reading can
// go.

// IntentIndex is the GSI1 partition that listed every open intent before
// the index was sharded (IntentShard); the shards' partitions start with
// it. The sweep still reads the bare partition (IntentPartitions), for
// intents opened by an earlier version. It can leave IntentPartitions once
// every table has run a sweep past those intents' grace with none left
// there: nothing writes to it any more.
const IntentIndex = "intents#open"

// ReceiptKey is a receipt of one row as written before a session's
// receipts became one item (ReceiptsKey); inbox_ack still honours them
// (the hub's shownTo reads them for the rows the receipts item does not
// cover). It can go once every session that wrote one has expired: a
// session's receipts live no longer than the session.
func ReceiptKey(session string, inboxSeq uint64) store.Key {
	return store.Key{PK: "ses#" + session, SK: "rcpt#" + SeqKey(inboxSeq)}
}

// The listing shapes. Before listing items existed a space's or a card's
// whole item carried the index keys, and a private space had no listing
// item; migrate-listings (the admin plane's MigrateListings) finds such
// items and rewrites them in today's shape, and messages with requests
// sent before the box's requests index existed are put on it the same
// way. The predicates below are how it recognises the old shapes; they can
// go with the command, once every box has been migrated (a run that moves
// nothing says so).

// OldSpaceEntry reports whether an entry of a box's spaces index
// (BoxSpacesIndex) is a space item itself, the old shape, and returns the
// space's id; today the index holds listing items only.
func OldSpaceEntry(it *store.Item) (space string, ok bool) {
	k := SpaceKey("")
	if it.SK != k.SK {
		return "", false
	}
	return strings.TrimPrefix(it.PK, k.PK), true
}

// OldSpace reports whether a space, read with its listing item (either
// nil when absent), has the old shape: the space item on the index, or a
// space without a listing item.
func OldSpace(space, listing *store.Item) bool {
	return space != nil && (space.GSI1PK != "" || listing == nil)
}

// OldCardEntry reports whether an entry of a box's directory index
// (DirectoryIndex) is a card item itself, the old shape, and returns the
// agent's id; today the index holds card listing items only.
func OldCardEntry(it *store.Item) (agent string, ok bool) {
	k := CardKey("")
	if it.SK != k.SK {
		return "", false
	}
	return strings.TrimPrefix(it.PK, k.PK), true
}

// OldCard reports whether a card item has the old shape: on the
// directory index itself.
func OldCard(card *store.Item) bool { return card != nil && card.GSI2PK != "" }

// OldRequestPointer reports whether a message's pointer (MessagePointerKey)
// of a message with requests is off its box's requests index
// (BoxRequestsIndex), as pointers written before the index existed are.
func OldRequestPointer(pointer *store.Item) bool { return pointer != nil && pointer.GSI1PK == "" }

// OldActivityPointer reports whether a message's pointer is off its box's
// activity index (BoxActivityIndex), as pointers written before the index
// existed are. migrate-listings puts them on it.
func OldActivityPointer(pointer *store.Item) bool { return pointer != nil && pointer.GSI2PK == "" }
