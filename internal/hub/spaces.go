package hub

import (
	"context"
	"github.com/agentbox/agentbox/internal/hub/table"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/cursor"
	"github.com/agentbox/agentbox/internal/store"
)

// Spaces (seed 002).
//
// A space is a shared work area of a box: a title, a goal (with scope,
// acceptance criteria and stopping conditions) and a status. Its
// visibility is fixed at creation:
//
//   - public: every agent of the box may read and update it, so a new
//     title or goal is what every viewer sees next;
//   - private: only its members may, and they may do exactly that. The
//     creator is the first member and the only one who manages membership
//     (add_space_member, remove_space_member); the creator cannot be
//     removed. update_space never changes visibility or membership.
//
// A space of another box, a private space the caller is not a member of
// and an id that names nothing all answer the same NOT_FOUND_OR_FORBIDDEN.
// Status is only a label: an archived space stays readable and
// update_space may set it active again.
//
// update_space is a CAS on the space's version: a stale expected_version
// fails with REVISION_CONFLICT and the current version, and writes nothing.
// A private space's update also re-checks, in its write, that the caller is
// still a member, so a removal racing an update cannot be outrun.
//
// list_spaces merges two keysets in one order (creation time, then id):
// the box's public spaces from GSI1, and the caller's private memberships
// from its own partition. On DynamoDB the index is eventually consistent,
// so a public space created a moment ago may appear in a listing a moment
// later; listings are browsers, and get_space reads the table.
//
// Listings read small items only. A space's goal may hold 20 KiB, and a
// listing shows none of it, so every write of a space writes, in the same
// atomic write, its listing item (space#<id> / listing: table.SpaceListing, the
// fields list_spaces returns, at the space's version). The listing item,
// not the space, carries a public space's GSI1 keys; list_spaces reads the
// listing items of the index and batch-reads those of its private spaces,
// so a page of 100 spaces reads about 100 small items however long the
// goals are. Only get_space and the mutations read the space itself.
//
// Spaces written before listing items existed carry the GSI1 keys on the
// space item and have no listing item. table.SpaceListing's JSON is a subset of
// table.Space's with the same names, so such an index entry decodes as a
// listing (at the old cost), and a private space without a listing item
// is read whole; the space's next update writes both, in the new shape.

// Space limits, enforced by the service.
const (
	// MaxSpaceMembers bounds a private space's members, creator included.
	MaxSpaceMembers = 100
	// DefaultPageItems and MaxPageItems bound list_spaces and list_memory.
	DefaultPageItems = 50
	MaxPageItems     = 100
)

const (
	spaceActive    = "active"
	spacePaused    = "paused"
	spaceArchived  = "archived"
	visibilityPub  = table.VisibilityPublic
	visibilityPriv = "private"
)

// SpaceRef is the id of a space: the REST path parameter and MCP's id.
type SpaceRef struct {
	ID string `json:"id" desc:"The space id, from create_space or list_spaces." schema:"minLength=1,maxLength=80" example:"REPLACE_WITH_RESOURCE_ID"`
}

// SpaceDTO is a space as get_space and the space mutations return it.
type SpaceDTO struct {
	ID          string   `json:"id"`
	Version     uint64   `json:"version" desc:"Current version: send it as expected_version to update."`
	Title       string   `json:"title"`
	Goal        string   `json:"goal"`
	Status      string   `json:"status" schema:"enum=active|paused|archived"`
	Visibility  string   `json:"visibility" schema:"enum=public|private"`
	CreatorID   string   `json:"creator_agent_id"`
	RequestID   string   `json:"request_id" desc:"The diagnostic request_id create_space was called with."`
	CreatedAt   string   `json:"created_at"`
	UpdatedAt   string   `json:"updated_at"`
	UpdatedBy   string   `json:"updated_by_agent_id"`
	Members     []string `json:"members,omitempty" desc:"Private spaces: the member agent ids, creator included (get_space only)." schema:"itemFormat=uuid"`
	MemberCount int64    `json:"member_count,omitempty" desc:"Private spaces: the number of members."`
}

// SpaceSummary is one list_spaces item: a space without its goal, which
// get_space returns.
type SpaceSummary struct {
	ID         string `json:"id"`
	Version    uint64 `json:"version"`
	Title      string `json:"title"`
	Status     string `json:"status" schema:"enum=active|paused|archived"`
	Visibility string `json:"visibility" schema:"enum=public|private"`
	CreatorID  string `json:"creator_agent_id"`
	CreatedAt  string `json:"created_at"`
	UpdatedAt  string `json:"updated_at"`
}

func spaceDTO(r *table.Space, version uint64) *SpaceDTO {
	return &SpaceDTO{ID: r.ID, Version: version, Title: r.Title, Goal: r.Goal, Status: r.Status,
		Visibility: r.Visibility, CreatorID: r.CreatorID, RequestID: r.RequestID,
		CreatedAt: timestamp(r.CreatedAt), UpdatedAt: timestamp(r.UpdatedAt), UpdatedBy: r.UpdatedBy}
}

func spaceSummary(r *table.SpaceListing, version uint64) SpaceSummary {
	return SpaceSummary{ID: r.ID, Version: version, Title: r.Title, Status: r.Status, Visibility: r.Visibility,
		CreatorID: r.CreatorID, CreatedAt: timestamp(r.CreatedAt), UpdatedAt: timestamp(r.UpdatedAt)}
}

// SpaceMutationOutput is the result of create_space and update_space: the
// space and the operation receipt; a replay has only the receipt.
type SpaceMutationOutput struct {
	Space *SpaceDTO `json:"space,omitempty"`
	Receipt
}

// checkGoal enforces 1 byte..20 KiB of UTF-8.
func checkGoal(s string) error {
	if strings.TrimSpace(s) == "" && utf8.ValidString(s) {
		return apperr.Invalid("goal", "must not be empty")
	}
	return checkSized("goal", s, true, MaxGoalBytes, "20 KiB of UTF-8")
}

func checkSpaceStatus(s string) error {
	switch s {
	case spaceActive, spacePaused, spaceArchived:
		return nil
	}
	return apperr.Invalid("status", "must be active, paused or archived")
}

// checkSpaceID requires a UUID (space ids are minted by create_space) and
// canonicalizes it to lower case in place, as uuidArg does.
func checkSpaceID(id *string) error { return uuidArg("id", id) }

// canSeeSpace reports whether c may see the space: same box, and public or a
// member. Every read and write of a space goes through it.
func canSeeSpace(c *Caller, r *table.Space, member *store.Item) bool {
	return r.BoxID == c.BoxID && (r.Visibility == visibilityPub || member != nil)
}

// loadSpace decodes the space read in a call's batch and applies canSeeSpace:
// anything the caller may not see is the one NOT_FOUND_OR_FORBIDDEN.
func loadSpace(c *Caller, it, member *store.Item) (*table.Space, error) {
	r, err := decode[table.Space](it, apperr.Forbidden())
	if err != nil {
		return nil, err
	}
	if !canSeeSpace(c, r, member) {
		return nil, apperr.Forbidden()
	}
	return r, nil
}

// CreateSpaceData is create_space's body.
type CreateSpaceData struct {
	RequestID  string `json:"request_id" desc:"Required id of this request, recorded with the space; not a retry key (operation_key is)." schema:"minLength=1,maxLength=80,pattern=^[A-Za-z0-9][A-Za-z0-9._:-]*$" example:"req-2026-11-29-0001"`
	Title      string `json:"title" desc:"Short descriptive title: 1–200 Unicode characters, at most 800 UTF-8 bytes." schema:"minLength=1,maxLength=200" example:"PDF extraction checkpoint"`
	Goal       string `json:"goal" desc:"Goal, allowed scope, acceptance criteria and stopping conditions; 1–20 KiB UTF-8." example:"Verify document extraction quality. Scope: provided documents. Done when another agent reviews the report."`
	Status     string `json:"status,omitempty" desc:"Initial status; active when omitted." schema:"enum=active|paused|archived"`
	Visibility string `json:"visibility" desc:"public: every agent of your box may read and update it; private: only members. Fixed at creation." schema:"enum=public|private" example:"private"`
	OpKey
}

// CreateSpaceInput is create_space's {data}.
type CreateSpaceInput struct {
	Data CreateSpaceData `json:"data"`
}

// CreateSpace creates a space in the caller's box. A private space gets
// the caller as its first member. Without operation_key every call creates
// a new space; with one, a retry after a timeout answers the receipt,
// whose resource_id is the space created.
func (h *Hub) CreateSpace(ctx context.Context, cr Credentials, in CreateSpaceInput) (*SpaceMutationOutput, error) {
	d := in.Data
	if d.Status == "" {
		d.Status = spaceActive
	}
	if err := firstInvalid(
		checkRequestID(d.RequestID), checkTitle(d.Title), checkGoal(d.Goal), checkSpaceStatus(d.Status),
		checkVisibility(d.Visibility), checkOperationKey(d.OperationKey)); err != nil {
		return nil, err
	}
	// request_id is diagnostic: a retry may carry a new one.
	m := newMutation("create_space", d.OperationKey, struct{ Title, Goal, Status, Visibility string }{
		d.Title, d.Goal, d.Status, d.Visibility})

	var created slot
	quota := func(agent string, b *batch) { created = h.limits.spacesSlot(agent, b) }
	return mutate(ctx, h, cr, m, quota, func(c *call) (*SpaceMutationOutput, *plan, error) {
		out, p := createSpace(c, m, d)
		if err := h.limits.countSpace(c, p, created); err != nil {
			return nil, nil, err
		}
		return out, p, nil
	})
}

// createSpace builds create_space's plan.
func createSpace(c *call, m mutation, d CreateSpaceData) (*SpaceMutationOutput, *plan) {
	rec := &table.Space{SpaceListing: table.SpaceListing{ID: uuid.NewString(), BoxID: c.BoxID, CreatorID: c.AgentID,
		Title: d.Title, Status: d.Status, Visibility: d.Visibility, CreatedAt: c.Now, UpdatedAt: c.Now},
		RequestID: d.RequestID, Goal: d.Goal, UpdatedBy: c.AgentID}
	p := &plan{}
	space, listing := rec.Items(1)
	p.put(space, store.Absent, nil)
	// The space's condition guards both: the listing follows it.
	p.put(listing, store.Unconditional, nil)
	out := &SpaceMutationOutput{Space: spaceDTO(rec, 1)}
	if rec.Visibility == visibilityPriv {
		p.add(memberOps(rec, c.AgentID, c.AgentID, c.Now)...)
		p.put(&store.Item{PK: table.SpaceMembersKey(rec.ID).PK, SK: table.SpaceMembersKey(rec.ID).SK, Version: 1, Count: 1}, store.Absent, nil)
		out.Space.Members, out.Space.MemberCount = []string{c.AgentID}, 1
	}
	out.Operation = operation(c, m, rec.ID, 1)
	p.receipt = operationReceipt(out.Operation)
	return out, p
}

// memberOps writes both sides of a new membership.
func memberOps(r *table.Space, agent, by string, now time.Time) []guardedOp {
	m := table.SpaceMember{SpaceID: r.ID, AgentID: agent, AddedBy: by, AddedAt: now}
	sk, ak := table.SpaceMemberKey(r.ID, agent), table.AgentSpaceKey(agent, r.SortKey())
	return []guardedOp{
		{op: store.Put(&store.Item{PK: sk.PK, SK: sk.SK, Version: 1, Data: table.Encode(m)}, store.Absent)},
		{op: store.Put(&store.Item{PK: ak.PK, SK: ak.SK, Version: 1, Data: table.Encode(m)}, store.Unconditional)},
	}
}

func checkVisibility(v string) error {
	if v != visibilityPub && v != visibilityPriv {
		return apperr.Invalid("visibility", "must be public or private")
	}
	return nil
}

var requestIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]*$`)

func checkRequestID(s string) error {
	if s == "" {
		return apperr.Invalid("request_id", "is required")
	}
	if utf8.RuneCountInString(s) > MaxIDChars {
		return apperr.Limit("request_id", "80 characters")
	}
	if !requestIDRE.MatchString(s) {
		return apperr.Invalid("request_id", "must be letters, digits and . _ : -, starting with a letter or digit")
	}
	return nil
}

func firstInvalid(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// GetSpaceInput is get_space's {id, data}.
type GetSpaceInput struct {
	SpaceRef
	Data NoData `json:"data"`
}

// GetSpaceOutput is get_space's result.
type GetSpaceOutput struct {
	Space SpaceDTO `json:"space"`
}

// GetSpace returns a space the caller may see, with its member list when
// it is private. It reads the table, so it is current.
func (h *Hub) GetSpace(ctx context.Context, cr Credentials, in GetSpaceInput) (*GetSpaceOutput, error) {
	if err := checkSpaceID(&in.ID); err != nil {
		return nil, err
	}
	var space, member, members slot
	return read(ctx, h, cr, func(agent string, b *batch) {
		space, member, members = b.add(table.SpaceKey(in.ID)), b.add(table.SpaceMemberKey(in.ID, agent)), b.add(table.SpaceMembersKey(in.ID))
	}, func(c *call) (*GetSpaceOutput, error) {
		rec, err := loadSpace(c.Caller, c.item(space), c.item(member))
		if err != nil {
			return nil, err
		}
		return h.getSpace(ctx, rec, c.item(space).Version, count(c.item(members)))
	})
}

// getSpace completes get_space with a private space's members.
func (h *Hub) getSpace(ctx context.Context, rec *table.Space, version uint64, members int64) (*GetSpaceOutput, error) {
	dto := spaceDTO(rec, version)
	if rec.Visibility == visibilityPriv {
		pk, prefix := table.SpaceMemberPrefix(rec.ID)
		rows, err := h.st.Query(ctx, store.Query{PK: pk, From: prefix, To: store.PrefixEnd(prefix), Limit: MaxSpaceMembers})
		if err != nil {
			return nil, storageErr(err)
		}
		dto.Members = make([]string, 0, len(rows))
		for _, it := range rows {
			dto.Members = append(dto.Members, strings.TrimPrefix(it.SK, prefix))
		}
		dto.MemberCount = members
	}
	return &GetSpaceOutput{Space: *dto}, nil
}

// UpdateSpaceData is update_space's body: exactly seed 002's body_schema.
type UpdateSpaceData struct {
	ExpectedVersion int64  `json:"expected_version" desc:"Copy the current version returned by a read. save_memory uses 0 only to create a missing name. Stale versions fail without overwriting." schema:"minimum=1" example:"1"`
	Title           string `json:"title" desc:"Short descriptive title: 1–200 Unicode characters, at most 800 UTF-8 bytes." schema:"minLength=1,maxLength=200" example:"PDF extraction checkpoint"`
	Goal            string `json:"goal" desc:"Goal, allowed scope, acceptance criteria and stopping conditions; 1–20 KiB UTF-8." example:"Verify document extraction quality. Scope: provided documents. Done when another agent reviews the report."`
	Status          string `json:"status" schema:"enum=active|paused|archived"`
	OpKey
}

// UpdateSpaceInput is update_space's {id, data}.
type UpdateSpaceInput struct {
	SpaceRef
	Data UpdateSpaceData `json:"data"`
}

// UpdateSpace replaces a space's title, goal and status if expected_version
// is current. Any agent that may see the space may update it; visibility
// and membership do not change.
func (h *Hub) UpdateSpace(ctx context.Context, cr Credentials, in UpdateSpaceInput) (*SpaceMutationOutput, error) {
	d := in.Data
	if d.ExpectedVersion < 1 {
		return nil, apperr.Invalid("expected_version", "must be at least 1")
	}
	if err := firstInvalid(checkSpaceID(&in.ID), checkTitle(d.Title), checkGoal(d.Goal), checkSpaceStatus(d.Status),
		checkOperationKey(d.OperationKey)); err != nil {
		return nil, err
	}
	m := newMutation("update_space", d.OperationKey, struct {
		ID              string
		ExpectedVersion int64
		Title, Goal     string
		Status          string
	}{in.ID, d.ExpectedVersion, d.Title, d.Goal, d.Status})

	var space, member slot
	return mutate(ctx, h, cr, m, func(agent string, b *batch) {
		space, member = b.add(table.SpaceKey(in.ID)), b.add(table.SpaceMemberKey(in.ID, agent))
	}, func(c *call) (*SpaceMutationOutput, *plan, error) {
		rec, err := loadSpace(c.Caller, c.item(space), c.item(member))
		if err != nil {
			return nil, nil, err
		}
		current := c.item(space).Version
		if uint64(d.ExpectedVersion) != current {
			return nil, nil, apperr.VersionConflict(current)
		}
		out, p := updateSpace(c, m, rec, current, d)
		return out, p, nil
	})
}

// updateSpace builds update_space's plan over rec at version current.
func updateSpace(c *call, m mutation, rec *table.Space, current uint64, d UpdateSpaceData) (*SpaceMutationOutput, *plan) {

	next := *rec
	next.Title, next.Goal, next.Status, next.UpdatedAt, next.UpdatedBy = d.Title, d.Goal, d.Status, c.Now, c.AgentID
	p := &plan{}
	if rec.Visibility == visibilityPriv {
		// Before the CAS: when both fail, the first decides the answer, and
		// a member removed meanwhile must not learn the current version.
		p.check(table.SpaceMemberKey(rec.ID, c.AgentID), store.Present, answer(func() error { return apperr.Forbidden() }))
	}
	space, listing := next.Items(current + 1)
	p.put(space, store.AtVersion(current), c.h.conflictAt(table.SpaceKey(rec.ID)))
	// Unconditional: the space's CAS guards it, and a space written before
	// listing items existed has none yet.
	p.put(listing, store.Unconditional, nil)
	out := &SpaceMutationOutput{Space: spaceDTO(&next, current+1)}
	out.Operation = operation(c, m, rec.ID, current+1)
	p.receipt = operationReceipt(out.Operation)
	return out, p
}

// ListSpacesData is list_spaces' query.
type ListSpacesData struct {
	Cursor string `json:"cursor,omitempty" desc:"next_cursor of the previous page; omit to start." schema:"maxLength=2048"`
	Limit  int    `json:"limit,omitempty" desc:"Page size, 1–100; 50 when omitted." schema:"minimum=1,maximum=100"`
}

// ListSpacesInput is list_spaces' {data}.
type ListSpacesInput struct {
	Data ListSpacesData `json:"data"`
}

// ListSpacesOutput is one page of list_spaces.
type ListSpacesOutput struct {
	Items      []SpaceSummary `json:"items"`
	NextCursor string         `json:"next_cursor,omitempty" desc:"Present when more spaces follow; pass it as cursor."`
}

type spacesPos struct {
	K string `json:"k"`
}

// ListSpaces browses the spaces the caller may see, oldest first: the
// box's public spaces and the private spaces it is a member of. It is a
// browser, not a lossless stream (see the note at the top of this file).
func (h *Hub) ListSpaces(ctx context.Context, cr Credentials, in ListSpacesInput) (*ListSpacesOutput, error) {
	limit, err := pageSize("limit", in.Data.Limit, DefaultPageItems, MaxPageItems)
	if err != nil {
		return nil, err
	}
	return read(ctx, h, cr, nil, func(c *call) (*ListSpacesOutput, error) {
		return h.spacesPage(ctx, c, in.Data.Cursor, limit)
	})
}

// spacesPage reads one page of list_spaces.
func (h *Hub) spacesPage(ctx context.Context, c *call, cur string, limit int) (*ListSpacesOutput, error) {
	// Two keysets, merged: the cursor holds the merged key (a public
	// listing's sort key, or the suffix of a member row's).
	ks := table.Keyset[spacesPos]{
		Scope: cursor.Scope{Agent: c.AgentID, Stream: "spaces:" + c.BoxID, Key: c.cursorKey},
		Key:   func(p spacesPos) (string, bool) { return p.K, len(p.K) <= 200 && !strings.ContainsRune(p.K, 0) },
		Pos:   func(k string) spacesPos { return spacesPos{K: k} },
	}
	after, err := ks.After(cur)
	if err != nil {
		return nil, err
	}

	from := func(prefix string) string {
		if after == "" {
			return prefix
		}
		return store.After(prefix + after)
	}
	public, err := h.st.Query(ctx, store.Query{Index: store.GSI1, PK: table.BoxSpacesIndex(c.BoxID), From: from(""), Limit: limit + 1})
	if err != nil {
		return nil, storageErr(err)
	}
	pk, prefix := table.AgentSpacePrefix(c.AgentID)
	mine, err := h.st.Query(ctx, store.Query{PK: pk, From: from(prefix), To: store.PrefixEnd(prefix), Limit: limit + 1})
	if err != nil {
		return nil, storageErr(err)
	}

	// Merge the two sorted keysets, keep the first limit+1.
	type entry struct {
		key     string
		item    *store.Item // the listing item, for public entries
		spaceID string      // private entries, read below
	}
	var merged []entry
	i, j := 0, 0
	for len(merged) < limit+1 && (i < len(public) || j < len(mine)) {
		var pubKey, mineKey string
		if i < len(public) {
			pubKey = public[i].GSI1SK
		}
		if j < len(mine) {
			mineKey = strings.TrimPrefix(mine[j].SK, prefix)
		}
		if j >= len(mine) || (i < len(public) && pubKey < mineKey) {
			merged = append(merged, entry{key: pubKey, item: public[i]})
			i++
			continue
		}
		_, id, _ := strings.Cut(mineKey, "#")
		merged = append(merged, entry{key: mineKey, spaceID: id})
		j++
	}
	out := &ListSpacesOutput{Items: []SpaceSummary{}}
	if len(merged) > limit {
		merged = merged[:limit]
		out.NextCursor = ks.Next(merged[limit-1].key)
	}

	var ids []string
	for _, e := range merged {
		if e.item == nil {
			ids = append(ids, e.spaceID)
		}
	}
	private, err := h.spaceListings(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, e := range merged {
		it := e.item
		if it == nil {
			it, private = private[0], private[1:]
			if it == nil {
				continue // a membership whose space is gone: nothing to show
			}
		}
		l, err := table.Decode[table.SpaceListing](it)
		if err != nil {
			return nil, apperr.Normalize(err)
		}
		if l.BoxID != c.BoxID {
			continue
		}
		out.Items = append(out.Items, spaceSummary(l, it.Version))
	}
	return out, nil
}

// spaceListings reads the listing items of the spaces ids, in order, nil
// where the space is gone. A space written before listing items existed
// has none: its space item is read instead (see the note at the top).
func (h *Hub) spaceListings(ctx context.Context, ids []string) ([]*store.Item, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	keys := make([]store.Key, len(ids))
	for i, id := range ids {
		keys[i] = table.SpaceListingKey(id)
	}
	got, err := h.st.BatchGet(ctx, keys)
	if err != nil {
		return nil, storageErr(err)
	}
	var legacy []store.Key
	var at []int
	for i, it := range got {
		if it == nil {
			legacy, at = append(legacy, table.SpaceKey(ids[i])), append(at, i)
		}
	}
	if len(legacy) > 0 {
		old, err := h.st.BatchGet(ctx, legacy)
		if err != nil {
			return nil, storageErr(err)
		}
		for j, i := range at {
			got[i] = old[j]
		}
	}
	return got, nil
}

// SpaceMemberData is the body of add_space_member and remove_space_member.
type SpaceMemberData struct {
	AgentID string `json:"agent_id" desc:"The agent to add or remove: an agent of your box." schema:"format=uuid" example:"00000000-0000-4000-8000-000000000000"`
	OpKey
}

// SpaceMemberInput is the {id, data} of add_space_member and
// remove_space_member.
type SpaceMemberInput struct {
	SpaceRef
	Data SpaceMemberData `json:"data"`
}

// SpaceMemberDTO describes one membership after a change.
type SpaceMemberDTO struct {
	SpaceID     string `json:"space_id"`
	AgentID     string `json:"agent_id"`
	Member      bool   `json:"member" desc:"Whether the agent is a member now."`
	Changed     bool   `json:"changed" desc:"False when the agent already was (add) or was not (remove) a member: nothing was written."`
	MemberCount int64  `json:"member_count"`
}

// SpaceMemberOutput is the result of add_space_member and
// remove_space_member; a replay has only the receipt.
type SpaceMemberOutput struct {
	Membership *SpaceMemberDTO `json:"membership,omitempty"`
	Receipt
}

// AddSpaceMember makes an agent of the caller's box a member of a private
// space the caller created. Adding a member twice changes nothing.
func (h *Hub) AddSpaceMember(ctx context.Context, cr Credentials, in SpaceMemberInput) (*SpaceMemberOutput, error) {
	return h.changeMember(ctx, cr, in, true)
}

// RemoveSpaceMember ends an agent's membership of a private space the
// caller created; it loses access at once. The creator cannot be removed.
// Removing a non-member changes nothing.
func (h *Hub) RemoveSpaceMember(ctx context.Context, cr Credentials, in SpaceMemberInput) (*SpaceMemberOutput, error) {
	return h.changeMember(ctx, cr, in, false)
}

func (h *Hub) changeMember(ctx context.Context, cr Credentials, in SpaceMemberInput, add bool) (*SpaceMemberOutput, error) {
	tool := "remove_space_member"
	if add {
		tool = "add_space_member"
	}
	d := in.Data
	if err := firstInvalid(checkSpaceID(&in.ID), uuidArg("agent_id", &d.AgentID), checkOperationKey(d.OperationKey)); err != nil {
		return nil, err
	}
	m := newMutation(tool, d.OperationKey, struct{ ID, AgentID string }{in.ID, d.AgentID})
	var space, self, target, counterSlot, targetAgent slot
	return mutate(ctx, h, cr, m, func(agent string, b *batch) {
		space, self = b.add(table.SpaceKey(in.ID)), b.add(table.SpaceMemberKey(in.ID, agent))
		target, counterSlot = b.add(table.SpaceMemberKey(in.ID, d.AgentID)), b.add(table.SpaceMembersKey(in.ID))
		targetAgent = b.add(table.AgentKey(d.AgentID))
	}, func(c *call) (*SpaceMemberOutput, *plan, error) {
		rec, err := loadSpace(c.Caller, c.item(space), c.item(self))
		if err != nil {
			return nil, nil, err
		}
		if rec.Visibility != visibilityPriv {
			return nil, nil, apperr.Invalid("id", "public spaces have no members to manage: every agent of the box may see them")
		}
		if rec.CreatorID != c.AgentID {
			return nil, nil, apperr.Forbidden().WithNext("Only the space's creator manages its members; ask the creator.")
		}
		if add {
			t, err := sameBoxAgent(c.Caller, c.item(targetAgent))
			if err != nil || t.Status != statusActive {
				return nil, nil, apperr.Forbidden().WithNext("Check the agent id: it must be an active agent of your box.")
			}
		} else if d.AgentID == rec.CreatorID {
			return nil, nil, apperr.Invalid("agent_id", "the creator cannot be removed from the space")
		}

		counter := c.item(counterSlot)
		members := count(counter)
		isMember := c.item(target) != nil
		dto := &SpaceMemberDTO{SpaceID: rec.ID, AgentID: d.AgentID, Member: isMember, MemberCount: members}
		revision := uint64(0)
		if counter != nil {
			revision = counter.Version
		}
		var ops []guardedOp
		if isMember != add {
			if add && members >= MaxSpaceMembers {
				return nil, nil, apperr.Limit("members", "100 members per private space")
			}
			delta := int64(1)
			if add {
				ops = memberOps(rec, d.AgentID, c.AgentID, c.Now)
				// A concurrent add of the same agent: the retry sees it.
				ops[0].onFail = contended
			} else {
				delta = -1
				ops = []guardedOp{
					{op: store.Delete(table.SpaceMemberKey(rec.ID, d.AgentID), store.Present), onFail: contended},
					{op: store.Delete(table.AgentSpaceKey(d.AgentID, rec.SortKey()), store.Unconditional)},
				}
			}
			cond := store.Absent
			if counter != nil {
				cond = store.AtVersion(counter.Version)
			}
			revision++
			ck := table.SpaceMembersKey(rec.ID)
			ops = append(ops,
				guardedOp{op: store.Put(&store.Item{PK: ck.PK, SK: ck.SK, Version: revision, Count: members + delta}, cond),
					onFail: contended},
				// The caller must still be the member it was when it read.
				guardedOp{op: store.Check(table.SpaceMemberKey(rec.ID, c.AgentID), store.Present),
					onFail: func(context.Context) error { return apperr.Forbidden() }})
			dto.Member, dto.Changed, dto.MemberCount = add, true, members+delta
		}
		out := &SpaceMemberOutput{Membership: dto}
		out.Operation = operation(c, m, rec.ID, revision)
		return out, &plan{ops: ops, receipt: operationReceipt(out.Operation)}, nil
	})
}

// sameBoxAgent decodes an agent record read in a batch and requires it to be
// of the caller's box; anything else is NOT_FOUND_OR_FORBIDDEN.
func sameBoxAgent(c *Caller, it *store.Item) (*table.Agent, error) {
	a, err := decode[table.Agent](it, apperr.Forbidden())
	if err != nil {
		return nil, err
	}
	if a.BoxID != c.BoxID {
		return nil, apperr.Forbidden()
	}
	return a, nil
}
