package hub

// Large fan-outs: the recipient list is immutable, written once.
//
// A post whose recipients do not fit its first write continues as a fan-out
// intent (intent.go) of one step per fanoutChunk recipients. What changes
// from step to step is only which chunk comes next, so that is all the
// intent item (the progress record) holds; the recipients themselves are
// written before the first write as parts, one item per step:
//
//	fan#<set>   part#<n>   recipients of step n (ExpiresAt = fanoutPartTTL after the post)
//
// A set is named by the SHA-256 of its recipient list, so the parts are
// immutable by construction: a call retried after contention, or the next
// post to an unchanged room, writes the same items again (renewing their
// expiry) rather than leaving copies behind, and two posts never read each
// other's recipients. Parts written by a call whose first write then failed
// are garbage that expires. A step reads its part and its recipients' inbox
// heads and writes their rows with the intent's advance, so every step,
// and every recipient, costs the same however large the room.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/agentbox/agentbox/internal/hub/table"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/store"
)

// fanoutChunk is how many recipients one intent step writes: two items
// each, within stepRoom.
const fanoutChunk = 45

// fanoutPartTTL is how long a recipient part outlives the last post that
// wrote it: far beyond SweepGrace, so a fan-out whose caller vanished is
// finished by the sweep long before its parts expire.
const fanoutPartTTL = 7 * 24 * time.Hour

// fanoutParts splits to into one part per step, named by the set's hash,
// each expiring fanoutPartTTL after at.
func fanoutParts(to []recipient, at time.Time) (set string, parts []*store.Item) {
	sum := sha256.Sum256(table.Encode(to))
	set = hex.EncodeToString(sum[:16])
	exp := at.Add(fanoutPartTTL).Unix()
	for n := uint64(0); int(n)*fanoutChunk < len(to); n++ {
		lo := int(n) * fanoutChunk
		k := table.FanoutPartKey(set, n)
		parts = append(parts, &store.Item{PK: k.PK, SK: k.SK, Version: 1, ExpiresAt: exp,
			Data: table.Encode(to[lo:min(lo+fanoutChunk, len(to))])})
	}
	return set, parts
}

// planFanout makes p's fan-out to recipients to an intent: the parts to
// write before the first write, and the intent that walks them.
func planFanout(p *plan, c *call, fan fanoutPayload, to []recipient) {
	set, parts := fanoutParts(to, c.Now)
	fan.Parts, fan.To = set, nil
	p.parts = parts
	p.intent = newIntent(intentFanout, uint64(len(parts)), fan, c.Now, c.BoxID)
}

// writeParts writes a plan's recipient parts, as many per write as one
// transaction holds. Each put is unconditional: the items are immutable,
// so writing one again only renews its expiry.
func (h *Hub) writeParts(ctx context.Context, parts []*store.Item) error {
	for len(parts) > 0 {
		var ops []store.Op
		bytes := 0
		for _, it := range parts {
			sz := store.ItemSize(it)
			if len(ops) == store.MaxWriteItems || bytes+sz > store.MaxWriteBytes/2 {
				break
			}
			ops, bytes = append(ops, store.Put(it, store.Unconditional)), bytes+sz
		}
		if err := h.st.Write(ctx, ops); err != nil {
			return storageErr(err)
		}
		parts = parts[len(ops):]
	}
	return nil
}

// fanoutRecipients returns step n's recipients: from the intent itself
// (intents opened by an earlier version), else from its part.
func (h *Hub) fanoutRecipients(ctx context.Context, f *fanoutPayload, n uint64) ([]recipient, error) {
	if f.Parts == "" {
		lo := min(int(n)*fanoutChunk, len(f.To))
		return f.To[lo:min(lo+fanoutChunk, len(f.To))], nil
	}
	it, err := h.st.Get(ctx, table.FanoutPartKey(f.Parts, n))
	if err != nil {
		return nil, storageErr(err)
	}
	if it == nil {
		return nil, apperr.Normalize(fmt.Errorf("hub: fan-out part %d of message %s is missing", n, f.MessageID))
	}
	var to []recipient
	if err := json.Unmarshal(it.Data, &to); err != nil {
		return nil, apperr.Normalize(err)
	}
	return to, nil
}

// recipient is one attention row to write.
type recipient struct {
	Agent   string `json:"a"`
	Reasons int    `json:"r"`
}

// fanoutPayload is a fan-out intent's remaining work.
type fanoutPayload struct {
	MessageID string    `json:"m"`
	Stream    string    `json:"s"`
	Seq       uint64    `json:"q"`
	At        time.Time `json:"t"`
	// To lists the recipients in the intent itself: only intents opened
	// by an earlier version carry it.
	To []recipient `json:"to,omitempty"`
	// Parts names the recipient parts, one per step (fanout.go).
	Parts string `json:"p,omitempty"`
}

// fanoutOps writes one attention row per recipient, each numbered in its
// inbox by moving the inbox head read as heads[i].
func fanoutOps(f fanoutPayload, to []recipient, heads []*store.Item) []guardedOp {
	ops := make([]guardedOp, 0, 2*len(to))
	for i, r := range to {
		hk := table.InboxHeadKey(r.Agent)
		next := store.Item{PK: hk.PK, SK: hk.SK}
		cond := store.Absent
		if heads[i] != nil {
			next, cond = *heads[i], store.AtVersion(heads[i].Version)
		}
		next.Version++
		row := table.Attention{Seq: next.Version, MessageID: f.MessageID, Stream: f.Stream, StreamSeq: f.Seq,
			Reasons: r.Reasons, At: f.At}
		rk := table.InboxRowKey(r.Agent, next.Version)
		ops = append(ops,
			guardedOp{op: store.Put(&next, cond), onFail: contended},
			guardedOp{op: store.Put(&store.Item{PK: rk.PK, SK: rk.SK, Version: 1,
				GSI1PK: table.AttentionIndex(r.Agent), GSI1SK: table.AttentionSortKey(f.Stream, f.Seq),
				Data: table.Encode(row)}, store.Absent), onFail: contended})
	}
	return ops
}

// fanoutStep is step n of a fan-out intent: the next chunk of recipients.
func (h *Hub) fanoutStep(ctx context.Context, rec *table.Intent, n uint64) ([]guardedOp, error) {
	var f fanoutPayload
	if err := json.Unmarshal(rec.Payload, &f); err != nil {
		return nil, apperr.Normalize(err)
	}
	chunk, err := h.fanoutRecipients(ctx, &f, n)
	if err != nil {
		return nil, err
	}
	if len(chunk) == 0 {
		return nil, nil
	}
	heads, err := h.inboxHeads(ctx, chunk)
	if err != nil {
		return nil, err
	}
	return fanoutOps(f, chunk, heads), nil
}
