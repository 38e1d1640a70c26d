package hub

// The directory: each agent's public card, seen by the agents of its box.
//
// A card is a projection of two owners' data, kept in one item
// (agent#<agent>/card, see keys.go):
//
//   - the owner's part: the agent's name and its directory opt-in
//     (table.Agent.DirectoryListed), changed only by the admin plane;
//   - the agent's part: role, description, skills and contact notes,
//     changed only by directory_update_self under CAS on the card revision.
//
// Beside it, written with it in every write, is the card's listing item
// (agent#<agent>/card#listing: table.CardListing, what a search filters on: box,
// name, role, listed). The listing item, not the card, is in the box's
// directory index (GSI2), exactly while the agent is listed and active,
// so a search scans entries of a few hundred bytes, not cards of up to
// 6 KiB, and reads whole cards only for the page it returns. Both writers recompute that from the agent record
// they read, and each write is conditional on what the other writer
// changes (the owner's on the card's version, the agent's on the agent
// record's version), so a listing change and a card update never
// interleave into a listed card of an unlisted agent.
//
// Search reads the index (on DynamoDB an index may lag the table by a
// moment) and then re-reads the page's cards from the table, dropping any
// that are no longer listed or no longer match: an agent that opted out is
// never shown, even while the index catches up. One call reads at most
// directoryScanBudget entries and directoryScanBytes of them (checked
// after each chunk), then answers a short page with a cursor: a selective
// query over a large box costs a bounded number of read units per call.
//
// Cards written before listing items existed carry the GSI2 keys on the
// card item itself. table.CardListing's JSON is a subset of table.Card's with the
// same names, so such an entry decodes as a listing and is found as
// before, at the old cost, counted against the byte budget; the card's
// next write (the agent's or the owner's) moves it to the new shape. A card listed a moment ago
// may appear a moment later; the directory is a browser, not an event
// stream (seed 000: "start fresh after directory changes").

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"github.com/agentbox/agentbox/internal/hub/table"
	"strings"
	"unicode/utf8"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/cursor"
	"github.com/agentbox/agentbox/internal/schema"
	"github.com/agentbox/agentbox/internal/store"
)

// Directory limits, enforced by the service.
const (
	// MaxQueryChars bounds a directory query (Unicode characters).
	MaxQueryChars = 100
	// maxQueryBytes bounds its UTF-8 size as well.
	maxQueryBytes = 4 * MaxQueryChars
	// DefaultDirectoryPage and MaxDirectoryPage bound directory_search's
	// page size.
	DefaultDirectoryPage = 20
	MaxDirectoryPage     = 100
	// directoryScanBudget and directoryScanBytes bound the index entries
	// one search call reads: a selective query over a large box returns a
	// short (even empty) page with a cursor instead of reading the whole
	// directory in one call. The byte budget is checked after each chunk,
	// so a call reads at most directoryScanBytes plus one chunk of entries
	// (a listing entry is at most about 2 KiB: an 80-character name, its
	// fold and an 80-character role).
	directoryScanBudget = 1000
	directoryScanBytes  = 256 << 10
	directoryScanChunk  = 250

	// Card field bounds.
	MaxCardRoleChars    = 80
	MaxCardDescBytes    = 4 << 10
	MaxCardSkills       = 20
	MaxCardSkillChars   = 40
	MaxCardContactBytes = 1 << 10
)

// visible reports whether an agent's card may be shown to the other agents
// of its box: the owner listed it and the agent is active.
func visible(a *table.Agent) bool { return a.DirectoryListed && a.Status == statusActive }

// cardItems builds the card item and its listing item at version, taking
// the owner's part from a. Every writer of a card goes through it and puts
// both, so the index membership always follows the agent record the write
// was conditioned on.
func cardItems(a *table.Agent, card *table.Card, version uint64) (full, listing *store.Item) {
	card.AgentID, card.BoxID, card.Name, card.Listed = a.ID, a.BoxID, a.Name, visible(a)
	return card.Items(version)
}

// DirectoryCard is an agent's public card: the owner-given name and the
// fields the agent declared about itself.
type DirectoryCard struct {
	AgentID       string   `json:"agent_id" desc:"The agent's id."`
	Name          string   `json:"name" desc:"The agent's public name, given by the box owner."`
	Role          string   `json:"role,omitempty" desc:"Self-declared display role."`
	DescriptionMD string   `json:"description_md,omitempty" desc:"Self-declared description, Markdown."`
	Skills        []string `json:"skills,omitempty" desc:"Self-declared skills."`
	ContactNotes  string   `json:"contact_notes,omitempty" desc:"Self-declared notes on how to reach or work with this agent."`
	Revision      Revision `json:"revision" desc:"Card revision: \"0\" until the agent first updates its card. directory_update_self takes it as expected_revision."`
	UpdatedAt     string   `json:"updated_at,omitempty" desc:"When the agent last updated its card."`
}

func cardDTO(a *table.Agent, it *store.Item) (DirectoryCard, error) {
	dto := DirectoryCard{AgentID: a.ID, Name: a.Name}
	if it == nil {
		return dto, nil
	}
	card, err := table.Decode[table.Card](it)
	if err != nil {
		return DirectoryCard{}, apperr.Normalize(err)
	}
	return cardRecordDTO(card, it.Version), nil
}

func cardRecordDTO(card *table.Card, version uint64) DirectoryCard {
	return DirectoryCard{AgentID: card.AgentID, Name: card.Name, Role: card.Role,
		DescriptionMD: card.DescriptionMD, Skills: card.Skills, ContactNotes: card.ContactNotes,
		Revision: Revision(version), UpdatedAt: timestampIfSet(card.UpdatedAt)}
}

// DirectorySearchInput is directory_search's input.
type DirectorySearchInput struct {
	Auth
	Query  string `json:"query,omitempty" desc:"Text to find in names and roles, taken literally, any case; empty lists everyone. At most 100 characters." schema:"maxLength=100" example:"\"review\""`
	Cursor string `json:"cursor,omitempty" desc:"next_cursor from the previous page." schema:"maxLength=2048"`
	Limit  int    `json:"limit,omitempty" desc:"Page size, 1-100 (default 20)." schema:"minimum=1,maximum=100"`
}

// DirectorySearchOutput is one page of cards.
type DirectorySearchOutput struct {
	Cards      []DirectoryCard `json:"cards" desc:"Listed cards of your box, ordered by case-folded name, then agent id."`
	NextCursor string          `json:"next_cursor,omitempty" desc:"Present when more cards may follow; pass it as cursor with the same query. A page can be short, even empty, and still have one."`
}

// dirPos is a directory cursor's position: the index sort key of the last
// entry read.
type dirPos struct {
	K string `json:"k"`
}

// directoryStream binds a cursor to the normalized query, hashed to keep
// cursors short.
func directoryStream(q string) string {
	sum := sha256.Sum256([]byte(q))
	return "directory:" + hex.EncodeToString(sum[:12])
}

// searchQuery validates and folds a query.
func searchQuery(q string) (string, error) {
	if !utf8.ValidString(q) {
		return "", apperr.Invalid("query", "must be valid UTF-8")
	}
	if len(q) > maxQueryBytes || utf8.RuneCountInString(q) > MaxQueryChars {
		return "", apperr.Limit("query", "100 characters")
	}
	return table.Fold(strings.TrimSpace(q)), nil
}

// listingMatches reports whether listing l's name or role contains the
// folded query q.
func listingMatches(l *table.CardListing, q string) bool {
	return containsFolded(table.Fold(l.Name), q) || (l.Role != "" && containsFolded(table.Fold(l.Role), q))
}

// DirectorySearch returns the listed, active cards of the caller's box
// whose name or role contains the query, ordered by folded name then id,
// one page at a time. Cards of other boxes and of unlisted agents are never
// read into a result.
//
// Errors: INVALID_ARGUMENT, LIMIT_EXCEEDED (query over 100 characters,
// limit over 100), CURSOR_INVALID (a cursor of another caller or query, or
// tampered with).
func (h *Hub) DirectorySearch(ctx context.Context, cr Credentials, in DirectorySearchInput) (*DirectorySearchOutput, error) {
	limit, err := pageSize("limit", in.Limit, DefaultDirectoryPage, MaxDirectoryPage)
	if err != nil {
		return nil, err
	}
	q, err := searchQuery(in.Query)
	if err != nil {
		return nil, err
	}
	return read(ctx, h, cr, nil, func(c *call) (*DirectorySearchOutput, error) {
		return h.directoryPage(ctx, c, q, in.Cursor, limit)
	})
}

// directoryPage reads one page of directory_search.
func (h *Hub) directoryPage(ctx context.Context, c *call, q, cur string, limit int) (*DirectorySearchOutput, error) {
	ks := table.Keyset[dirPos]{
		Scope: cursor.Scope{Agent: c.AgentID, Stream: directoryStream(q), Key: c.cursorKey},
		Key:   func(p dirPos) (string, bool) { return p.K, true },
		Pos:   func(sk string) dirPos { return dirPos{K: sk} },
	}
	after, err := ks.After(cur)
	if err != nil {
		return nil, err
	}

	type hit struct {
		key   string
		agent string
	}
	var hits []hit
	last, scanned, bytes := "", 0, 0
	chunk := func() int {
		if scanned >= directoryScanBudget || bytes >= directoryScanBytes {
			return 0
		}
		n := min(directoryScanChunk, directoryScanBudget-scanned)
		if q == "" {
			n = min(n, limit+1-len(hits)) // every entry matches: read no more than needed
		}
		return n
	}
	end, err := table.Scan(ctx, h.st, store.Query{Index: store.GSI2, PK: table.DirectoryIndex(c.BoxID)}, after, chunk,
		func(items []*store.Item) (bool, error) {
			for _, it := range items {
				scanned++
				bytes += store.ItemSize(it)
				last = it.GSI2SK
				l, err := table.Decode[table.CardListing](it)
				if err != nil {
					return false, err
				}
				if listingMatches(l, q) {
					hits = append(hits, hit{key: it.GSI2SK, agent: l.AgentID})
					if len(hits) > limit {
						return true, nil
					}
				}
			}
			return false, nil
		})
	if err != nil {
		return nil, storageErr(err)
	}

	out := &DirectorySearchOutput{Cards: []DirectoryCard{}}
	switch {
	case len(hits) > limit:
		hits = hits[:limit]
		out.NextCursor = ks.Next(hits[limit-1].key)
	case !end && last != "":
		out.NextCursor = ks.Next(last)
	}
	if len(hits) > 0 {
		keys := make([]store.Key, len(hits))
		for i, ht := range hits {
			keys[i] = table.CardKey(ht.agent)
		}
		cards, fresh, err := getMany[table.Card](ctx, h.st, keys, nil)
		if err != nil {
			return nil, err
		}
		for i, card := range cards {
			if card == nil || !card.Listed || card.BoxID != c.BoxID || !listingMatches(&card.CardListing, q) {
				continue
			}
			out.Cards = append(out.Cards, cardRecordDTO(card, fresh[i].Version))
		}
	}
	return out, nil
}

// DirectoryGetInput is directory_get's input.
type DirectoryGetInput struct {
	Auth
	AgentID string `json:"agent_id" desc:"The agent whose card to read." schema:"format=uuid"`
}

// DirectoryGetOutput is one card.
type DirectoryGetOutput struct {
	Card            DirectoryCard `json:"card"`
	DirectoryListed bool          `json:"directory_listed" desc:"Whether the owner lists this agent in the directory. Always true for another agent's card; reading your own card shows whether others can see it."`
}

// DirectoryGet returns one listed card of the caller's box. An agent that
// is not listed, not active, of another box, or that does not exist gives
// the same NOT_FOUND_OR_FORBIDDEN. The caller may always read its own card,
// listed or not: that reveals nothing it does not know, and gives it the
// revision directory_update_self needs.
func (h *Hub) DirectoryGet(ctx context.Context, cr Credentials, in DirectoryGetInput) (*DirectoryGetOutput, error) {
	if err := uuidArg("agent_id", &in.AgentID); err != nil {
		return nil, err
	}
	var agent, card slot
	return read(ctx, h, cr, func(_ string, b *batch) {
		agent, card = b.add(table.AgentKey(in.AgentID)), b.add(table.CardKey(in.AgentID))
	}, func(c *call) (*DirectoryGetOutput, error) {
		a, err := decode[table.Agent](c.item(agent), apperr.Forbidden())
		if err != nil {
			return nil, err
		}
		self := a.ID == c.AgentID
		if a.BoxID != c.BoxID || (!self && !visible(a)) {
			return nil, apperr.Forbidden()
		}
		dto, err := cardDTO(a, c.item(card))
		if err != nil {
			return nil, err
		}
		return &DirectoryGetOutput{Card: dto, DirectoryListed: visible(a)}, nil
	})
}

// SkillList is a card's skills: at most 20 distinct entries of 1-40
// characters.
type SkillList []string

// JSONSchema describes the wire form, with the per-entry bounds a struct
// tag cannot express.
func (SkillList) JSONSchema() *schema.Schema {
	one, maxChars, maxItems := int64(1), int64(MaxCardSkillChars), int64(MaxCardSkills)
	return &schema.Schema{Type: "array", MaxItems: &maxItems,
		Items:       &schema.Schema{Type: "string", MinLength: &one, MaxLength: &maxChars},
		Description: "Your whole skill list, replacing the old one: up to 20 entries of 1-40 characters."}
}

// DirectoryUpdateSelfInput is directory_update_self's input. Every card
// field is optional: an absent field keeps its value, an empty one clears
// it. The name and the directory opt-in are the owner's and cannot be sent.
type DirectoryUpdateSelfInput struct {
	Auth
	Mutation
	ExpectedRevision Revision   `json:"expected_revision" desc:"The card revision you last read (\"0\" before the first update). A stale revision fails with REVISION_CONFLICT and overwrites nothing."`
	Role             *string    `json:"role,omitempty" desc:"Display role, at most 80 characters, one line." schema:"maxLength=80" example:"\"Code reviewer\""`
	DescriptionMD    *string    `json:"description_md,omitempty" desc:"Description, Markdown, at most 4 KiB UTF-8." schema:"maxLength=4096"`
	Skills           *SkillList `json:"skills,omitempty"`
	ContactNotes     *string    `json:"contact_notes,omitempty" desc:"How to reach or work with you, at most 1 KiB UTF-8." schema:"maxLength=1024"`
}

// DirectoryUpdateSelfOutput is the card as it now is.
type DirectoryUpdateSelfOutput struct {
	Card            DirectoryCard `json:"card"`
	DirectoryListed bool          `json:"directory_listed" desc:"Whether the owner lists you in the directory, i.e. whether other agents can see this card."`
	Replay
}

func (in *DirectoryUpdateSelfInput) validate() error {
	if in.Role == nil && in.DescriptionMD == nil && in.Skills == nil && in.ContactNotes == nil {
		return apperr.Invalid("", "name at least one of role, description_md, skills, contact_notes")
	}
	if in.Role != nil {
		if err := checkLine("role", *in.Role, MaxCardRoleChars, "80 characters"); err != nil {
			return err
		}
	}
	if in.DescriptionMD != nil {
		if err := checkText("description_md", *in.DescriptionMD, MaxCardDescBytes, "4 KiB of UTF-8"); err != nil {
			return err
		}
	}
	if in.ContactNotes != nil {
		if err := checkText("contact_notes", *in.ContactNotes, MaxCardContactBytes, "1 KiB of UTF-8"); err != nil {
			return err
		}
	}
	if in.Skills != nil {
		if len(*in.Skills) > MaxCardSkills {
			return apperr.Limit("skills", "20 entries")
		}
		seen := make(map[string]bool, len(*in.Skills))
		for _, s := range *in.Skills {
			if strings.TrimSpace(s) == "" {
				return apperr.Invalid("skills", "entries must not be empty")
			}
			if err := checkLine("skills", s, MaxCardSkillChars, "40 characters per entry"); err != nil {
				return err
			}
			f := table.Fold(strings.TrimSpace(s))
			if seen[f] {
				return apperr.Invalid("skills", "entries must be distinct")
			}
			seen[f] = true
		}
	}
	return nil
}

// DirectoryUpdateSelf changes the fields of the caller's own card that the
// request names, under CAS on the card revision, and returns the card as it
// now is. It cannot change the name or the directory opt-in (the owner's),
// nor another agent's card: the card is always the caller's.
//
// Errors: INVALID_ARGUMENT, LIMIT_EXCEEDED, PROFILE_OUTDATED,
// REVISION_CONFLICT (with the current revision), IDEMPOTENCY_CONFLICT,
// TEMPORARILY_UNAVAILABLE when the owner changed the agent at the same
// moment (retry with the same idempotency_key).
func (h *Hub) DirectoryUpdateSelf(ctx context.Context, cr Credentials, in DirectoryUpdateSelfInput) (*DirectoryUpdateSelfOutput, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	m := newMutation("directory_update_self", in.IdempotencyKey, struct {
		R Revision
		A *string
		D *string
		S *SkillList
		C *string
	}{in.ExpectedRevision, in.Role, in.DescriptionMD, in.Skills, in.ContactNotes})

	var cardSlot, agentSlot slot
	return mutate(ctx, h, cr, m, func(agent string, b *batch) {
		// The agent record again, for its version: the write is
		// conditioned on it (see the note at the top of this file).
		cardSlot, agentSlot = b.add(table.CardKey(agent)), b.add(table.AgentKey(agent))
	}, func(c *call) (*DirectoryUpdateSelfOutput, *plan, error) {
		agentIt, cardIt := c.item(agentSlot), c.item(cardSlot)
		a, err := decode[table.Agent](agentIt, authFailed())
		if err != nil {
			return nil, nil, err
		}
		card := &table.Card{}
		current := version(cardIt)
		if cardIt != nil {
			if card, err = table.Decode[table.Card](cardIt); err != nil {
				return nil, nil, apperr.Normalize(err)
			}
		}
		if uint64(in.ExpectedRevision) != current {
			return nil, nil, apperr.Conflict(current)
		}
		in.apply(card)
		card.UpdatedAt = c.Now
		k := table.CardKey(c.AgentID)
		p := &plan{}
		full, listing := cardItems(a, card, current+1)
		p.put(full, casCond(cardIt), h.conflictAt(k))
		// The card's CAS guards its listing; a card written before listing
		// items existed has none yet.
		p.put(listing, store.Unconditional, nil)
		// The owner changed the agent meanwhile: run again on the new record.
		p.check(table.AgentKey(c.AgentID), store.AtVersion(agentIt.Version), contended)
		out := &DirectoryUpdateSelfOutput{Card: cardRecordDTO(card, current+1), DirectoryListed: card.Listed}
		p.receipt = &DirectoryUpdateSelfOutput{Card: DirectoryCard{AgentID: c.AgentID, Name: a.Name, Revision: Revision(current + 1), UpdatedAt: timestamp(c.Now)}, DirectoryListed: card.Listed}
		return out, p, nil
	})
}

// apply sets the card fields the request names.
func (in *DirectoryUpdateSelfInput) apply(card *table.Card) {
	if in.Role != nil {
		card.Role = *in.Role
	}
	if in.DescriptionMD != nil {
		card.DescriptionMD = *in.DescriptionMD
	}
	if in.Skills != nil {
		card.Skills = make([]string, 0, len(*in.Skills))
		for _, s := range *in.Skills {
			card.Skills = append(card.Skills, strings.TrimSpace(s))
		}
		if len(card.Skills) == 0 {
			card.Skills = nil
		}
	}
	if in.ContactNotes != nil {
		card.ContactNotes = *in.ContactNotes
	}
}
