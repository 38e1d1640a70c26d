// Package table is the layout of agentbox's one table: every item key,
// every index entry and every encoding of a stored record is built here,
// so the layout reads in one place and a test (table_test.go) can prove
// that no two families collide. It knows the store's port and nothing of
// the domain.
//
// Partition families (PK / SK; Version and Count as the item uses them):
//
//	box#<box>        box                  the box; GSI1 boxes / OrderKey (list-boxes)
//	agent#<agent>    agent                agent record: name, status, keys (Version = admin
//	                                      revision); GSI1 box#<box>#agents / AgentOrderKey
//	agent#<agent>    profile              private profile (Version = profile version)
//	agent#<agent>    checkpoint           shared checkpoint (Version = revision)
//	agent#<agent>    count#acked          attention rows ACKed (Count); unread = inbox head - acked
//	agent#<agent>    inbox, inbox#<seq>   inbox head (Version = last row) and attention rows;
//	                                      a row is on GSI1 att#<agent> / <stream>#<stream seq>
//	agent#<agent>    count#requests       live open request counter (Count)
//	agent#<agent>    acks                 ACK sequencer, the open ACK intent, the ACK watermark
//	agent#<agent>    sessions             the agent's sessions, oldest first (session cap)
//	agent#<agent>    count#spaces         spaces created (Count; the spaces quota)
//	agent#<agent>    card                 directory card (Version = card revision)
//	agent#<agent>    card#listing         what a search filters on (Version = card revision);
//	                                      GSI2 box#<box>#directory / OrderKey while listed and
//	                                      active (sparse)
//	agent#<agent>    count#memberships    membership generation (Count): +1 on every add, remove
//	agent#<agent>    member#<room>        current membership, agent side
//	agent#<agent>    space#<created>#<id> the member's side of a private space
//	agent#<agent>    memory#<name>        a memory note (Version = note version)
//	agent#<agent>    count#memory         note counter (Version = revision, Count = notes)
//	key#<key id>     key                  agent key record: hash of the secret, owner
//	okey#<key id>    key                  owner key record; GSI1 box#<box>#ownerkeys / <created>#<id>
//	oauth#<link>     link                 OAuth subject link (issuer, subject, client → agent);
//	                                      GSI1 box#<box>#oauth / <created>#<link>
//	ses#<session>    ses                  session (ExpiresAt = idle expiry); when bound,
//	                                      GSI1 seen#<agent> / <last use ns 20>#<session>
//	ses#<session>    ended                the state of a signed session id
//	ses#<session>    rcpts                the session's retrieval receipts
//	ses#<session>    rcpt#<seq>           one receipt, as written before rcpts (legacy.go)
//	idem#<agent>     k#<key>              idempotency record of (agent, key), any tool (ExpiresAt)
//	config#cursor    key                  the HMAC secret of every cursor
//	rate#<kind>#<id>#m#<n>  rate          a rate limit's shard (Count, ExpiresAt)
//	intent#<intent>  intent               open intent (Version = steps applied);
//	                                      GSI1 intents#open#<shard> / <created ns 20>#<intent>
//	fan#<set>        part#<n>             a fan-out's recipients of step n, immutable
//	room#<room>      room                 room record (Version = admin revision);
//	                                      GSI1 box#<box>#rooms / OrderKey
//	room#<room>      brief                room brief (Version = brief revision; absent is 0)
//	room#<room>      member#<agent>       membership, room side (Version = membership revision)
//	room#<room>      epoch#<agent>        epoch ledger, never deleted (Version = epochs started)
//	room#<room>      count#members        current member count (Count)
//	room#<room>      head, msg#<seq>      the room's stream: head (Version = last sequence), messages
//	dm#<A>#<B>       head, msg#<seq>      a DM pair's stream, A < B
//	msg#<id>         msg                  a message's address; with requests,
//	                                      GSI1 box#<box>#requests / <sent ns 20>#<id>;
//	                                      always GSI2 box#<box>#activity / <sent ns 20>#<id>
//	thr#<root>       m#<seq>              the thread index
//	req#<message>    to#<recipient>       a request (Version = declaration revision, 0 = open);
//	                                      GSI1 rin#<recipient>, GSI2 rout#<author> /
//	                                      <sent ns 20>#<message>#<recipient>
//	frep#<message>   <file>#<agent>       a file access report (Version = report revision)
//	space#<space>    space                the space (Version = space version)
//	space#<space>    listing              what list_spaces shows; a public one's on
//	                                      GSI1 box#<box>#spaces / SpaceSortKey
//	space#<space>    members              private space's counter (Version = revision, Count)
//	space#<space>    member#<agent>       a private space's member
//	webhooks         ep#<endpoint>        a webhook endpoint (per agent, or per box when its agent is empty)
//	webhooks         epa#<endpoint>#<agent>  a box endpoint's cursor for one agent (Version = delivered inbox seq)
//
// Index families (Families lists each with its GSI). Every index read is
// eventually consistent (a GSI has no consistent read): an item written an
// instant ago may appear a moment later on DynamoDB, which each reader
// tolerates as its doc says (list_boxes, list_agents, the directory,
// rooms_list, the operator view, the sweep, requests_list, the receipt
// lookup).
//
// Records (the structs encoded into items) are the domain's persistence
// shapes, kept apart from the DTOs tools return so a stored field never
// leaks by accident.
//
// Sequences are fixed-width (SeqKey, TimeKey), names sort by OrderKey
// (collate.go), records encode with Encode and decode with Decode
// (codec.go). The old shapes still read (the unsharded intents index,
// one-row receipts, the listing shapes migrate-listings moves) are in
// legacy.go, each with what reads it and when it can go.
package table

import "github.com/agentbox/agentbox/internal/store"

// Family is one partition family of the table: the PK prefix its builders
// start with, every sort key its items use and the index families its
// items carry. It is what table_test checks the builders against.
type Family struct {
	// Name names the family in failures.
	Name string
	// PK is the literal the partition key starts with (the whole key for
	// a singleton partition such as "webhooks"); Exact says it is whole.
	PK    string
	Exact bool
	// SK lists the family's sort keys.
	SK []SK
	// Indexes lists the index families the family's items carry.
	Indexes []IndexFamily
}

// SK is one sort key of a family: a whole key (Exact) or the literal start
// of a range of keys that a Query reads by prefix.
type SK struct {
	Prefix string
	Exact  bool
}

// IndexFamily is one family of index partitions: its GSI, and the literal
// start and end of its partition keys (an id sits between them).
type IndexFamily struct {
	Name   string
	GSI    store.Index
	Prefix string
	Suffix string
	Exact  bool
	// Reader is who reads it, eventually consistent.
	Reader string
}

func exact(sk string) SK                 { return SK{Prefix: sk, Exact: true} }
func ranged(sk string) SK                { return SK{Prefix: sk} }
func sks(s ...SK) []SK                   { return s }
func idx(i ...IndexFamily) []IndexFamily { return i }

// The index families.
var (
	boxesIdx       = IndexFamily{Name: "boxes", GSI: store.GSI1, Prefix: BoxesIndex, Exact: true, Reader: "list-boxes"}
	agentsIdx      = IndexFamily{Name: "box agents", GSI: store.GSI1, Prefix: "box#", Suffix: "#agents", Reader: "list_agents, operator view, migrate-listings"}
	directoryIdx   = IndexFamily{Name: "directory", GSI: store.GSI2, Prefix: "box#", Suffix: "#directory", Reader: "directory search"}
	ownerKeysIdx   = IndexFamily{Name: "owner keys", GSI: store.GSI1, Prefix: "box#", Suffix: "#ownerkeys", Reader: "list-owner-keys"}
	oauthLinksIdx  = IndexFamily{Name: "box oauth links", GSI: store.GSI1, Prefix: "box#", Suffix: "#oauth", Reader: "oauth-list"}
	roomsIdx       = IndexFamily{Name: "box rooms", GSI: store.GSI1, Prefix: "box#", Suffix: "#rooms", Reader: "list_rooms, operator view"}
	requestsIdx    = IndexFamily{Name: "box requests", GSI: store.GSI1, Prefix: "box#", Suffix: "#requests", Reader: "operator view board"}
	activityIdx    = IndexFamily{Name: "box activity", GSI: store.GSI2, Prefix: "box#", Suffix: "#activity", Reader: "operator view feed, charts, files; migrate-listings"}
	spacesIdx      = IndexFamily{Name: "box spaces", GSI: store.GSI1, Prefix: "box#", Suffix: "#spaces", Reader: "list_spaces, operator view"}
	seenIdx        = IndexFamily{Name: "seen", GSI: store.GSI1, Prefix: "seen#", Reader: "operator view last seen"}
	attentionIdx   = IndexFamily{Name: "attention", GSI: store.GSI1, Prefix: "att#", Reader: "receipt lookup of a stream read"}
	incomingIdx    = IndexFamily{Name: "incoming requests", GSI: store.GSI1, Prefix: "rin#", Reader: "requests_list in, operator view"}
	outgoingIdx    = IndexFamily{Name: "outgoing requests", GSI: store.GSI2, Prefix: "rout#", Reader: "requests_list out, operator view"}
	intentsIdx     = IndexFamily{Name: "open intents", GSI: store.GSI1, Prefix: IntentIndex, Exact: true, Reader: "sweep (legacy, unsharded)"}
	intentShardIdx = IndexFamily{Name: "open intent shards", GSI: store.GSI1, Prefix: IntentIndex + "#", Reader: "sweep"}
)

// Families is the table's layout as data, in the order of the package doc.
var Families = []Family{
	{Name: "box", PK: "box#", SK: sks(exact("box")), Indexes: idx(boxesIdx)},
	{Name: "agent", PK: "agent#", SK: sks(
		exact("agent"), exact("profile"), exact("checkpoint"), exact("count#acked"),
		exact("inbox"), ranged(InboxRowPrefix), exact("count#requests"), exact("acks"),
		exact("sessions"), exact("count#spaces"), exact("card"), exact("card#listing"),
		exact("count#memberships"), ranged("member#"), ranged("space#"), ranged("memory#"),
		exact("count#memory"),
	), Indexes: idx(agentsIdx, directoryIdx, attentionIdx)},
	{Name: "agent key", PK: "key#", SK: sks(exact("key"))},
	{Name: "owner key", PK: "okey#", SK: sks(exact("key")), Indexes: idx(ownerKeysIdx)},
	{Name: "oauth link", PK: "oauth#", SK: sks(exact("link")), Indexes: idx(oauthLinksIdx)},
	{Name: "session", PK: "ses#", SK: sks(exact("ses"), exact("ended"), exact("rcpts"), ranged("rcpt#")), Indexes: idx(seenIdx)},
	{Name: "idempotency", PK: "idem#", SK: sks(ranged("k#"))},
	{Name: "cursor secret", PK: "config#cursor", Exact: true, SK: sks(exact("key"))},
	{Name: "rate", PK: "rate#", SK: sks(exact("rate"))},
	{Name: "intent", PK: "intent#", SK: sks(exact("intent")), Indexes: idx(intentsIdx, intentShardIdx)},
	{Name: "fan-out", PK: "fan#", SK: sks(ranged("part#"))},
	{Name: "room", PK: "room#", SK: sks(
		exact("room"), exact("brief"), ranged("member#"), ranged("epoch#"), exact("count#members"),
		exact("head"), ranged(StreamMsgPrefix),
	), Indexes: idx(roomsIdx)},
	{Name: "dm stream", PK: "dm#", SK: sks(exact("head"), ranged(StreamMsgPrefix))},
	{Name: "message pointer", PK: "msg#", SK: sks(exact("msg")), Indexes: idx(requestsIdx, activityIdx)},
	{Name: "thread", PK: "thr#", SK: sks(ranged("m#"))},
	{Name: "request", PK: "req#", SK: sks(ranged("to#")), Indexes: idx(incomingIdx, outgoingIdx)},
	// A report's SK starts with the file's name: the whole SK space of the
	// partition is the one range.
	{Name: "file report", PK: "frep#", SK: sks(ranged(""))},
	{Name: "space", PK: "space#", SK: sks(exact("space"), exact("listing"), exact("members"), ranged("member#")), Indexes: idx(spacesIdx)},
	{Name: "webhooks", PK: WebhookPartition, Exact: true, SK: sks(ranged(WebhookPrefix), ranged(WebhookCursorPrefix))},
}

// Nested lists the pairs of sort keys of one family of which one is a
// prefix of the other, each with why it is safe. Only an exact key may be
// the shorter one: a range read by prefix would also return the longer.
var Nested = map[[2]string]string{
	{"inbox", "inbox#"}:      "the head is read by Get; rows are read from inbox#, which \"inbox\" sorts before and outside of",
	{"card", "card#listing"}: "both are read by Get, never by prefix",
}
