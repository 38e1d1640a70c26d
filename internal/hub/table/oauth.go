package table

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/agentbox/agentbox/internal/store"
)

// OAuth links, oauth#<link>: who an access token is. The owner maps an
// issuer's subject (and, optionally, one client of it) to one agent; the
// link's id is the SHA-256 of the triple, so a token finds its link with
// one Get whatever its subject looks like (any length, any character),
// and the same triple can never be linked twice.

// OAuthLinkKey is a link's record, found by OAuthLinkID.
func OAuthLinkKey(link string) store.Key { return store.Key{PK: "oauth#" + link, SK: "link"} }

// BoxOAuthLinksIndex is the GSI1 partition of a box's links, by creation
// (OwnerKeySortKey's form): oauth-list.
func BoxOAuthLinksIndex(box string) string { return "box#" + box + "#oauth" }

// OAuthLinkID is the id of the link of (issuer, subject, client); client
// is empty for a link that accepts every client of the issuer.
func OAuthLinkID(issuer, subject, client string) string {
	h := sha256.New()
	for _, s := range []string{issuer, subject, client} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// OAuthLink binds a token subject of one issuer (and client) to an agent.
type OAuthLink struct {
	ID        string    `json:"id"`
	Issuer    string    `json:"issuer"`
	Subject   string    `json:"subject"`
	Client    string    `json:"client,omitempty"`
	BoxID     string    `json:"box_id"`
	AgentID   string    `json:"agent_id"`
	CreatedAt time.Time `json:"created_at"`
	// Scope is ScopeRead for a link that may only read whatever the token
	// grants; empty leaves the token's scopes as they are.
	Scope string `json:"scope,omitempty"`
}

// Item is the link's item, written once (Version 1), on its box's links
// index in creation order.
func (r *OAuthLink) Item() *store.Item {
	k := OAuthLinkKey(r.ID)
	return &store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: Encode(r),
		GSI1PK: BoxOAuthLinksIndex(r.BoxID), GSI1SK: OwnerKeySortKey(r.CreatedAt, r.ID)}
}
