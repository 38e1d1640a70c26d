package hub

import (
	"context"
	"time"

	"github.com/agentbox/agentbox/internal/hub/table"
	"github.com/agentbox/agentbox/internal/store"
)

// The owner's read scope (issue 15): what an owner key grants the
// operator view (internal/opview), which builds its pages on top of the
// table's layout (internal/hub/table) and reads the store itself.
//
// The domain keeps what is the domain's: it checks the key (OwnerBox),
// says which box the key sees, hands out a store that cannot write, and
// names the rules the view shows (ReasonNames, Receipts, the scan
// budget). Everything the view shows is read through Store: every read
// error is already the domain's (storageErr), so the view returns it as is.

// OwnerScope is an authenticated owner key's read scope.
type OwnerScope struct {
	// Box is the one box the key sees; the view answers
	// NOT_FOUND_OR_FORBIDDEN for anything of another.
	Box string
	// Store reads the table; it has no Write, and its errors are the
	// domain's.
	Store store.Reader
	// CursorKey is the deployment's cursor secret, for the view's own
	// list cursors (internal/cursor).
	CursorKey []byte
	// CanPost is set when the key has the write scope: it may post as the
	// box's operator (operate.go), and the view offers its compose box.
	CanPost bool

	h *Hub
}

// OwnerScope authenticates an owner key (as OwnerBox: any failure is
// AUTH_FAILED) and returns its read scope.
func (h *Hub) OwnerScope(ctx context.Context, key string) (*OwnerScope, error) {
	rec, err := h.ownerKeyRecord(ctx, key)
	if err != nil {
		return nil, err
	}
	if err := h.ensureCursorKey(ctx); err != nil {
		return nil, err
	}
	return &OwnerScope{Box: rec.BoxID, Store: reader{h.st}, CursorKey: *h.cursorKey.Load(),
		CanPost: rec.Scope == table.OwnerScopeWrite, h: h}, nil
}

// Now is the hub's clock (UTC), for the view's charts.
func (s *OwnerScope) Now() time.Time { return s.h.clock() }

// SpaceListings reads the listing items of the spaces ids, in order, nil
// where the space is gone; a space older than listing items shows its
// space item instead (spaces.go).
func (s *OwnerScope) SpaceListings(ctx context.Context, ids []string) ([]*store.Item, error) {
	return s.h.spaceListings(ctx, ids)
}

// InboxScanBudget is how many inbox rows one unread page reads at most
// past acknowledged ones (inbox_list's budget, and the view's).
const InboxScanBudget = inboxScanBudget

// Receipts decodes a session's receipts item (ses#S / rcpts, receipts.go;
// nil: none) into when each inbox row was first shown to the session.
func Receipts(it *store.Item) (func(row uint64) (time.Time, bool), error) {
	set, err := decodeReceipts(it)
	if err != nil {
		return nil, err
	}
	return set.shown, nil
}

// ParseStreamID reads a stream id as attention rows carry it: a room's
// stream (room set) or a DM pair's (pair set, sorted).
func ParseStreamID(id string) (room string, pair [2]string, ok bool) {
	s, ok := parseStream(id)
	return s.room, s.pair, ok
}

// reader is the store without Write, mapping read errors to the domain's.
type reader struct{ st store.Store }

func (r reader) Get(ctx context.Context, k store.Key) (*store.Item, error) {
	it, err := r.st.Get(ctx, k)
	if err != nil {
		return nil, storageErr(err)
	}
	return it, nil
}

func (r reader) BatchGet(ctx context.Context, keys []store.Key) ([]*store.Item, error) {
	got, err := r.st.BatchGet(ctx, keys)
	if err != nil {
		return nil, storageErr(err)
	}
	return got, nil
}

func (r reader) Query(ctx context.Context, q store.Query) ([]*store.Item, error) {
	items, err := r.st.Query(ctx, q)
	if err != nil {
		return nil, storageErr(err)
	}
	return items, nil
}

// Webhooks lists the box's webhook endpoints as the admin CLI shows them:
// state and delivery fields, never a secret (issue 29's endpoint state in
// the view).
func (s *OwnerScope) Webhooks(ctx context.Context) ([]*WebhookInfo, error) {
	return s.h.Admin().ListWebhooks(ctx, s.Box)
}
