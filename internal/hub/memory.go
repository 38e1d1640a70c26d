package hub

import (
	"context"
	"github.com/agentbox/agentbox/internal/hub/table"
	"strings"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/cursor"
	"github.com/agentbox/agentbox/internal/store"
)

// Memory notes (seed 002).
//
// A note is private to its agent: it lives in the agent's own partition
// under its name, so no call can address another agent's note at all, and
// a name the caller has not saved answers NOT_FOUND_OR_FORBIDDEN exactly
// as one that only another agent has.
//
// save_memory is a CAS on the note's version. expected_version 0 creates a
// missing name only: the write carries an absent condition, so of several
// concurrent creators one wins and the others get REVISION_CONFLICT with
// the winner's version. delete_memory is a CAS too.
//
// The number of notes is bounded (MaxMemoryNotes) by a counter item that
// every create and delete moves by CAS in the same atomic write as the
// note, so the bound holds under concurrency without ever querying the
// notes. Concurrent creates of different names contend on that counter;
// the loser runs again (the kernel's retry) against the new count.
//
// Versions never repeat for a name. The counter also keeps the highest
// version any deleted note had, and a note created afterwards starts above
// it: otherwise a name deleted and created again would be back at version
// 1, and a client still holding the deleted note's version 1 would
// overwrite (or delete) the new note with a stale CAS.

// Memory limits, enforced by the service.
const (
	// MaxMemoryNotes bounds an agent's notes.
	MaxMemoryNotes = 200
	// MaxMemoryContentBytes bounds a note's content (UTF-8).
	MaxMemoryContentBytes = 16 << 10
)

// memoryFloor returns the counter's version floor (0 without a counter).
func memoryFloor(counter *store.Item) (uint64, error) {
	if counter == nil || len(counter.Data) == 0 {
		return 0, nil
	}
	rec, err := table.Decode[table.MemoryCounter](counter)
	if err != nil {
		return 0, apperr.Normalize(err)
	}
	return rec.VersionFloor, nil
}

// NoteRef is a note's name: the REST path parameter and MCP's id.
type NoteRef struct {
	ID string `json:"id" desc:"Note name, e.g. working-context: lowercase words joined by hyphens, at most 80 characters." schema:"minLength=1,maxLength=80,pattern=^[a-z0-9]+(-[a-z0-9]+)*$" example:"working-context"`
}

// MemoryNoteDTO is a note as get_memory and save_memory return it.
type MemoryNoteDTO struct {
	Name      string `json:"name"`
	Version   uint64 `json:"version" desc:"Current version: send it as expected_version to replace or delete the note."`
	Content   string `json:"content"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

// MemorySummary is one list_memory item: a note without its content.
type MemorySummary struct {
	Name         string `json:"name"`
	Version      uint64 `json:"version"`
	ContentBytes int    `json:"content_bytes"`
	UpdatedAt    string `json:"updated_at"`
}

func memoryDTO(r *table.Memory, version uint64) *MemoryNoteDTO {
	return &MemoryNoteDTO{Name: r.Name, Version: version, Content: r.Content,
		CreatedAt: timestamp(r.CreatedAt), UpdatedAt: timestamp(r.UpdatedAt)}
}

// checkNoteName enforces the name rule in the service: it keeps names
// safe inside item keys (no NUL, no separator confusion).
func checkNoteName(name string) error {
	if name == "" {
		return apperr.Invalid("id", "must not be empty")
	}
	return checkSlug("id", name)
}

func checkContent(s string) error {
	return checkSized("content", s, true, MaxMemoryContentBytes, "16 KiB of UTF-8")
}

// SaveMemoryData is save_memory's body.
type SaveMemoryData struct {
	ExpectedVersion int64  `json:"expected_version" desc:"The version you last read; 0 creates a missing note." schema:"minimum=0" example:"0"`
	Content         string `json:"content" desc:"The note, 1 byte to 16 KiB of UTF-8 (Markdown or plain text)." schema:"minLength=1" example:"Parsing done; next: table extraction tests."`
	OpKey
}

// SaveMemoryInput is save_memory's {id, data}.
type SaveMemoryInput struct {
	NoteRef
	Data SaveMemoryData `json:"data"`
}

// MemoryMutationOutput is save_memory's result; a replay has only the
// receipt.
type MemoryMutationOutput struct {
	Note *MemoryNoteDTO `json:"note,omitempty"`
	Receipt
}

// SaveMemory creates (expected_version 0, the name must be missing) or
// replaces (expected_version = the current version) one of the caller's
// notes. Creating past MaxMemoryNotes is LIMIT_EXCEEDED.
func (h *Hub) SaveMemory(ctx context.Context, cr Credentials, in SaveMemoryInput) (*MemoryMutationOutput, error) {
	d := in.Data
	if d.ExpectedVersion < 0 {
		return nil, apperr.Invalid("expected_version", "must be at least 0")
	}
	if err := firstInvalid(checkNoteName(in.ID), checkContent(d.Content), checkOperationKey(d.OperationKey)); err != nil {
		return nil, err
	}
	m := newMutation("save_memory", d.OperationKey, struct {
		Name            string
		ExpectedVersion int64
		Content         string
	}{in.ID, d.ExpectedVersion, d.Content})

	var noteSlot, counterSlot slot
	return mutate(ctx, h, cr, m, func(agent string, b *batch) {
		noteSlot, counterSlot = b.add(table.MemoryKey(agent, in.ID)), b.add(table.MemoryCounterKey(agent))
	}, func(c *call) (*MemoryMutationOutput, *plan, error) {
		note, counter := c.item(noteSlot), c.item(counterSlot)
		current := uint64(0)
		rec := &table.Memory{Name: in.ID, Content: d.Content, CreatedAt: c.Now, UpdatedAt: c.Now}
		if note != nil {
			current = note.Version
			old, err := table.Decode[table.Memory](note)
			if err != nil {
				return nil, nil, apperr.Normalize(err)
			}
			rec.CreatedAt = old.CreatedAt
		}
		if uint64(d.ExpectedVersion) != current {
			return nil, nil, apperr.VersionConflict(current)
		}

		floor, err := memoryFloor(counter)
		if err != nil {
			return nil, nil, err
		}
		k := table.MemoryKey(c.AgentID, in.ID)
		cond, next := store.AtVersion(current), current+1
		if current == 0 {
			cond, next = store.Absent, floor+1
		}
		// The note goes before the counter: when a concurrent creator of
		// the same name has won, the note's condition is the first to fail
		// and the answer is REVISION_CONFLICT, not a retry.
		p := &plan{}
		p.put(&store.Item{PK: k.PK, SK: k.SK, Version: next, Data: table.Encode(rec)}, cond, h.conflictAt(k))
		if current == 0 {
			n := count(counter)
			if n >= MaxMemoryNotes {
				return nil, nil, apperr.Limit("memory", "200 notes per agent; delete one first")
			}
			p.add(counterOp(c.AgentID, counter, n+1, floor))
		}
		out := &MemoryMutationOutput{Note: memoryDTO(rec, next)}
		out.Operation = operation(c, m, in.ID, next)
		p.receipt = operationReceipt(out.Operation)
		return out, p, nil
	})
}

// counterOp moves the note counter to n notes and the version floor to
// floor by CAS on its revision.
func counterOp(agent string, counter *store.Item, n int64, floor uint64) guardedOp {
	k := table.MemoryCounterKey(agent)
	cond, rev := store.Absent, uint64(1)
	if counter != nil {
		cond, rev = store.AtVersion(counter.Version), counter.Version+1
	}
	return guardedOp{
		op: store.Put(&store.Item{PK: k.PK, SK: k.SK, Version: rev, Count: max(n, 0),
			Data: table.Encode(table.MemoryCounter{VersionFloor: floor})}, cond),
		onFail: contended,
	}
}

// GetMemoryInput is get_memory's {id, data}.
type GetMemoryInput struct {
	NoteRef
	Data NoData `json:"data"`
}

// MemoryOutput is get_memory's result.
type MemoryOutput struct {
	Note MemoryNoteDTO `json:"note"`
}

// GetMemory returns one of the caller's notes.
func (h *Hub) GetMemory(ctx context.Context, cr Credentials, in GetMemoryInput) (*MemoryOutput, error) {
	if err := checkNoteName(in.ID); err != nil {
		return nil, err
	}
	var note slot
	return read(ctx, h, cr, func(agent string, b *batch) {
		note = b.add(table.MemoryKey(agent, in.ID))
	}, func(c *call) (*MemoryOutput, error) {
		rec, err := decode[table.Memory](c.item(note), apperr.Forbidden())
		if err != nil {
			return nil, err
		}
		return &MemoryOutput{Note: *memoryDTO(rec, c.item(note).Version)}, nil
	})
}

// ListMemoryData is list_memory's query.
type ListMemoryData struct {
	Cursor string `json:"cursor,omitempty" desc:"next_cursor of the previous page; omit to start." schema:"maxLength=2048"`
	Limit  int    `json:"limit,omitempty" desc:"Page size, 1–100; 50 when omitted." schema:"minimum=1,maximum=100"`
}

// ListMemoryInput is list_memory's {data}.
type ListMemoryInput struct {
	Data ListMemoryData `json:"data"`
}

// ListMemoryOutput is one page of the caller's notes, by name.
type ListMemoryOutput struct {
	Items      []MemorySummary `json:"items"`
	NextCursor string          `json:"next_cursor,omitempty" desc:"Present when more notes follow; pass it as cursor."`
	Total      int64           `json:"total" desc:"How many notes you have."`
	MaxNotes   int             `json:"max_notes" desc:"How many notes you may have."`
}

type memoryPos struct {
	N string `json:"n"`
}

// ListMemory pages through the caller's notes in name order, without their
// content (get_memory returns it). It reads the table, so a page is
// complete up to its last name.
func (h *Hub) ListMemory(ctx context.Context, cr Credentials, in ListMemoryInput) (*ListMemoryOutput, error) {
	limit, err := pageSize("limit", in.Data.Limit, DefaultPageItems, MaxPageItems)
	if err != nil {
		return nil, err
	}
	var counter slot
	return read(ctx, h, cr, func(agent string, b *batch) {
		counter = b.add(table.MemoryCounterKey(agent))
	}, func(c *call) (*ListMemoryOutput, error) {
		return h.memoryPage(ctx, c, count(c.item(counter)), in.Data.Cursor, limit)
	})
}

// memoryPage reads one page of list_memory; total is the note count.
func (h *Hub) memoryPage(ctx context.Context, c *call, total int64, cur string, limit int) (*ListMemoryOutput, error) {
	pk, prefix := table.MemoryPrefix(c.AgentID)
	ks := table.Keyset[memoryPos]{
		Scope: cursor.Scope{Agent: c.AgentID, Stream: "memory", Key: c.cursorKey},
		Key:   func(p memoryPos) (string, bool) { return prefix + p.N, checkNoteName(p.N) == nil },
		Pos:   func(sk string) memoryPos { return memoryPos{N: strings.TrimPrefix(sk, prefix)} },
	}
	rows, next, err := pageUnder(ctx, h.st, pk, prefix, ks, cur, limit)
	if err != nil {
		return nil, err
	}
	recs, err := decodeAll[table.Memory](rows, nil)
	if err != nil {
		return nil, err
	}
	out := &ListMemoryOutput{Items: []MemorySummary{}, Total: total, MaxNotes: MaxMemoryNotes, NextCursor: next}
	for i, rec := range recs {
		out.Items = append(out.Items, MemorySummary{Name: rec.Name, Version: rows[i].Version,
			ContentBytes: len(rec.Content), UpdatedAt: timestamp(rec.UpdatedAt)})
	}
	return out, nil
}

// DeleteMemoryData is delete_memory's body.
type DeleteMemoryData struct {
	ExpectedVersion int64 `json:"expected_version" desc:"The version you last read." schema:"minimum=1" example:"1"`
	OpKey
}

// DeleteMemoryInput is delete_memory's {id, data}.
type DeleteMemoryInput struct {
	NoteRef
	Data DeleteMemoryData `json:"data"`
}

// DeletedNote names the note a delete removed.
type DeletedNote struct {
	Name    string `json:"name"`
	Version uint64 `json:"version" desc:"The version that was deleted."`
}

// DeleteMemoryOutput is delete_memory's result; a replay has only the
// receipt.
type DeleteMemoryOutput struct {
	Deleted *DeletedNote `json:"deleted,omitempty"`
	Receipt
}

// DeleteMemory deletes one of the caller's notes if expected_version is
// current. A missing note is NOT_FOUND_OR_FORBIDDEN.
func (h *Hub) DeleteMemory(ctx context.Context, cr Credentials, in DeleteMemoryInput) (*DeleteMemoryOutput, error) {
	d := in.Data
	if d.ExpectedVersion < 1 {
		return nil, apperr.Invalid("expected_version", "must be at least 1")
	}
	if err := firstInvalid(checkNoteName(in.ID), checkOperationKey(d.OperationKey)); err != nil {
		return nil, err
	}
	m := newMutation("delete_memory", d.OperationKey, struct {
		Name            string
		ExpectedVersion int64
	}{in.ID, d.ExpectedVersion})

	var noteSlot, counterSlot slot
	return mutate(ctx, h, cr, m, func(agent string, b *batch) {
		noteSlot, counterSlot = b.add(table.MemoryKey(agent, in.ID)), b.add(table.MemoryCounterKey(agent))
	}, func(c *call) (*DeleteMemoryOutput, *plan, error) {
		note, counter := c.item(noteSlot), c.item(counterSlot)
		if note == nil {
			return nil, nil, apperr.Forbidden()
		}
		if uint64(d.ExpectedVersion) != note.Version {
			return nil, nil, apperr.VersionConflict(note.Version)
		}
		floor, err := memoryFloor(counter)
		if err != nil {
			return nil, nil, err
		}
		k := table.MemoryKey(c.AgentID, in.ID)
		p := &plan{}
		p.del(k, store.AtVersion(note.Version), h.conflictOrGoneAt(k))
		p.add(counterOp(c.AgentID, counter, count(counter)-1, max(floor, note.Version)))
		out := &DeleteMemoryOutput{Deleted: &DeletedNote{Name: in.ID, Version: note.Version}}
		out.Operation = operation(c, m, in.ID, note.Version)
		p.receipt = operationReceipt(out.Operation)
		return out, p, nil
	})
}
