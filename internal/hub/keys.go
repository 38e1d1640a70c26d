package hub

import "github.com/agentbox/agentbox/internal/store"

// Every item key of the table is built here, so the layout reads in one
// place:
//
//	box#<box>            box                 the box
//	agent#<agent>        agent               agent record: name, status, keys (Version =
//	                                         admin revision); GSI1 box#<box>#agents / <name>#<agent>
//	agent#<agent>        profile             private profile (Version = profile version)
//	agent#<agent>        checkpoint          shared checkpoint (Version = revision)
//	agent#<agent>        count#unread        live unread attention counter (Count)
//	agent#<agent>        count#requests      live open request counter (Count)
//	agent#<agent>        member#<room>       current room memberships
//	key#<key id>         key                 key record: hash of the secret, owner
//	ses#<session>        ses                 session (ExpiresAt = idle expiry)
//	idem#<agent>         <tool>#<mutation>   idempotency record (ExpiresAt)
//
// GSI1 on agents serves the owner's listings; directory and room indexes
// join as their tools arrive.
func boxKey(box string) store.Key       { return store.Key{PK: "box#" + box, SK: "box"} }
func agentKey(agent string) store.Key   { return store.Key{PK: "agent#" + agent, SK: "agent"} }
func profileKey(agent string) store.Key { return store.Key{PK: "agent#" + agent, SK: "profile"} }
func checkpointKey(agent string) store.Key {
	return store.Key{PK: "agent#" + agent, SK: "checkpoint"}
}
func unreadCounterKey(agent string) store.Key {
	return store.Key{PK: "agent#" + agent, SK: "count#unread"}
}
func requestCounterKey(agent string) store.Key {
	return store.Key{PK: "agent#" + agent, SK: "count#requests"}
}
func membershipPrefix(agent string) (pk, prefix string) { return "agent#" + agent, "member#" }
func keyRecordKey(keyID string) store.Key               { return store.Key{PK: "key#" + keyID, SK: "key"} }
func sessionKey(id string) store.Key                    { return store.Key{PK: "ses#" + id, SK: "ses"} }
func idemKey(agent, tool, key string) store.Key {
	return store.Key{PK: "idem#" + agent, SK: tool + "#" + key}
}
func boxAgentsIndex(box string) string { return "box#" + box + "#agents" }
