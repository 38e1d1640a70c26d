package hub

// File access reports: a viewer's own statement about one file reference.
//
// The service never fetches a URL, so whether a link works is something
// only its readers can say. A viewer of a message who is not its author
// reports its own access to one of the message's file references; the
// report is independent of ACKs and of request declarations, and a later
// report replaces it by CAS (expected_revision, "0" for the first):
//
//	frep#<message> / <file_id>#<agent>   a report (Version = report revision)
//
// One partition per message, so the author's listing is one strongly
// consistent keyset query in (file_id, reporter) order, and a viewer's own
// reports are one batched read. The author sees every report only while it
// can still see the message; anyone else sees only its own. A file without
// a report is "not reported" — never "accessible".

import (
	"context"
	"github.com/agentbox/agentbox/internal/hub/table"
	"slices"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/cursor"
	"github.com/agentbox/agentbox/internal/store"
)

// File access states a viewer can report.
const (
	AccessAccessible = "accessible"
	AccessDenied     = "denied"
	AccessNotFound   = "not_found"
	AccessOther      = "other"
)

const (
	// maxReportNoteChars bounds a report's note (one line).
	maxReportNoteChars = 500
	// DefaultReportsPage and MaxReportsPage bound file_reports_list.
	DefaultReportsPage = 50
	MaxReportsPage     = 100
)

// FileReportDTO is one report.
type FileReportDTO struct {
	MessageID       string   `json:"message_id"`
	FileID          string   `json:"file_id"`
	ReporterAgentID string   `json:"reporter_agent_id"`
	State           string   `json:"state" desc:"accessible, denied, not_found or other: the reporter's own statement of its access; the service never checks the link." schema:"enum=accessible|denied|not_found|other"`
	Note            string   `json:"note,omitempty"`
	Revision        Revision `json:"revision" desc:"Report revision; pass it as expected_revision to replace the report."`
	ReportedAt      string   `json:"reported_at"`
}

// fileReportDTO is report r at revision.
func fileReportDTO(r *table.FileReport, revision uint64) FileReportDTO {
	return FileReportDTO{MessageID: r.MessageID, FileID: r.FileID, ReporterAgentID: r.AgentID, State: r.State,
		Note: r.Note, Revision: Revision(revision), ReportedAt: timestamp(r.At)}
}

func validAccess(s string) bool {
	return s == AccessAccessible || s == AccessDenied || s == AccessNotFound || s == AccessOther
}

// FileAccessReportInput is file_access_report's input.
type FileAccessReportInput struct {
	Auth
	Mutation
	MessageID        string   `json:"message_id" desc:"A message you did not write." schema:"format=uuid"`
	FileID           string   `json:"file_id" desc:"file_id of one of its files." schema:"format=uuid"`
	ExpectedRevision Revision `json:"expected_revision" desc:"\"0\" for a first report, else its revision."`
	State            string   `json:"state" desc:"What you found opening it yourself." schema:"enum=accessible|denied|not_found|other" example:"\"accessible\""`
	Note             string   `json:"note,omitempty" desc:"Optional one-line note." schema:"maxLength=500"`
}

// FileAccessReportOutput is the stored report.
type FileAccessReportOutput struct {
	Report FileReportDTO `json:"report"`
	Replay
}

// FileAccessReport records (or, by CAS, replaces) the caller's report of
// its own access to one file reference of a message it can see and did
// not write. Nothing is fetched; the report changes no ACK and no request.
//
// Errors: INVALID_ARGUMENT (shape; your own message), NOT_FOUND_OR_FORBIDDEN
// (a message you cannot see, a file it does not carry), REVISION_CONFLICT,
// PROFILE_OUTDATED, IDEMPOTENCY_CONFLICT, TEMPORARILY_UNAVAILABLE.
func (h *Hub) FileAccessReport(ctx context.Context, cr Credentials, in FileAccessReportInput) (*FileAccessReportOutput, error) {
	if err := uuidArg("message_id", &in.MessageID); err != nil {
		return nil, err
	}
	if err := uuidArg("file_id", &in.FileID); err != nil {
		return nil, err
	}
	if !validAccess(in.State) {
		return nil, apperr.Invalid("state", "must be accessible, denied, not_found or other")
	}
	if in.Note != "" {
		if err := checkLine("note", in.Note, maxReportNoteChars, "500 characters"); err != nil {
			return nil, err
		}
		if looksLikeToken(in.Note) {
			return nil, apperr.Invalid("note", "must not contain strings that look like credentials")
		}
	}
	m := newMutation("file_access_report", in.IdempotencyKey, struct {
		M, F string
		R    Revision
		S, N string
	}{in.MessageID, in.FileID, in.ExpectedRevision, in.State, in.Note})
	var ptr, cur slot
	return mutate(ctx, h, cr, m, func(agent string, b *batch) {
		ptr = b.add(table.MessagePointerKey(in.MessageID))
		cur = b.add(table.FileReportKey(in.MessageID, in.FileID, agent))
	}, func(c *call) (*FileAccessReportOutput, *plan, error) {
		msg, err := h.resolveVisible(ctx, c, ptr)
		if err != nil {
			return nil, nil, err
		}
		if msg.AuthorID == c.AgentID {
			return nil, nil, apperr.Invalid("message_id", "the author does not report access to its own files")
		}
		if !slices.ContainsFunc(msg.Files, func(f table.File) bool { return f.ID == in.FileID }) {
			return nil, nil, apperr.Forbidden()
		}
		current := version(c.item(cur))
		if current != uint64(in.ExpectedRevision) {
			return nil, nil, apperr.Conflict(current)
		}
		rec := &table.FileReport{MessageID: msg.ID, FileID: in.FileID, AgentID: c.AgentID, State: in.State, Note: in.Note, At: c.Now}
		k := table.FileReportKey(msg.ID, in.FileID, c.AgentID)
		p := &plan{}
		p.put(&store.Item{PK: k.PK, SK: k.SK, Version: current + 1, Data: table.Encode(rec)}, casCond(c.item(cur)), h.conflictAt(k))
		// The receipt leaves out the note (up to 2000 bytes): a replay
		// answers ids, state, revision and time.
		receipt := fileReportDTO(rec, current+1)
		receipt.Note = ""
		p.receipt = &FileAccessReportOutput{Report: receipt}
		return &FileAccessReportOutput{Report: fileReportDTO(rec, current+1)}, p, nil
	})
}

// FileReportsListInput is file_reports_list's input.
type FileReportsListInput struct {
	Auth
	MessageID string `json:"message_id" desc:"A message you can see." schema:"format=uuid"`
	FileID    string `json:"file_id,omitempty" desc:"Only this file." schema:"format=uuid"`
	Cursor    string `json:"cursor,omitempty" desc:"From an earlier page." schema:"maxLength=2048"`
	Limit     int    `json:"limit,omitempty" desc:"Page size (default 50)." schema:"minimum=1,maximum=100"`
}

// FileReportsListOutput is one page of reports.
type FileReportsListOutput struct {
	Scope      string          `json:"scope" desc:"all: you wrote the message and see every report; own: you see only your own." schema:"enum=all|own"`
	Reports    []FileReportDTO `json:"reports" desc:"Reports in (file_id, reporter) order. A file or reader without a report has not reported: that is never \"accessible\"."`
	NextCursor string          `json:"next_cursor,omitempty" desc:"More reports follow: pass it to continue."`
}

type reportsPos struct {
	After string `json:"a"`
}

// FileReportsList pages through the reports on a message: the author, while
// it can still see the message, gets every report; any other viewer gets
// only its own. Reads the table only; no fetch, no receipt.
//
// Errors: INVALID_ARGUMENT, LIMIT_EXCEEDED, NOT_FOUND_OR_FORBIDDEN (a
// message you cannot see, a file it does not carry), CURSOR_INVALID.
func (h *Hub) FileReportsList(ctx context.Context, cr Credentials, in FileReportsListInput) (*FileReportsListOutput, error) {
	if err := uuidArg("message_id", &in.MessageID); err != nil {
		return nil, err
	}
	if in.FileID != "" {
		if err := uuidArg("file_id", &in.FileID); err != nil {
			return nil, err
		}
	}
	limit, err := pageSize("limit", in.Limit, DefaultReportsPage, MaxReportsPage)
	if err != nil {
		return nil, err
	}
	declare, visible := h.visibleRead(ctx, in.MessageID)
	return read(ctx, h, cr, declare, func(c *call) (*FileReportsListOutput, error) {
		msg, err := visible(c)
		if err != nil {
			return nil, err
		}
		var files []string
		for _, f := range msg.Files {
			if in.FileID == "" || f.ID == in.FileID {
				files = append(files, f.ID)
			}
		}
		if in.FileID != "" && len(files) == 0 {
			return nil, apperr.Forbidden()
		}
		if msg.AuthorID != c.AgentID {
			if in.Cursor != "" {
				return nil, cursor.Invalid() // one page holds all of one's own reports
			}
			return h.ownReports(ctx, c, msg.ID, files)
		}
		pk, prefix := table.FileReportPrefix(msg.ID, in.FileID)
		ks := table.Keyset[reportsPos]{
			Scope: cursor.Scope{Agent: c.AgentID, Stream: "freports:" + msg.ID + ":" + in.FileID, Key: c.cursorKey},
			Key:   func(p reportsPos) (string, bool) { return p.After, p.After == "" || p.After >= prefix },
			Pos:   func(sk string) reportsPos { return reportsPos{After: sk} },
		}
		rows, next, err := pageUnder(ctx, h.st, pk, prefix, ks, in.Cursor, limit)
		if err != nil {
			return nil, err
		}
		reports, err := fileReports(rows)
		if err != nil {
			return nil, err
		}
		return &FileReportsListOutput{Scope: "all", Reports: reports, NextCursor: next}, nil
	})
}

// ownReports reads the caller's own reports on files of a message: at most
// MaxFiles items, one batched read, one page.
func (h *Hub) ownReports(ctx context.Context, c *call, message string, files []string) (*FileReportsListOutput, error) {
	keys := make([]store.Key, len(files))
	for i, f := range files {
		keys[i] = table.FileReportKey(message, f, c.AgentID)
	}
	items, err := h.st.BatchGet(ctx, keys)
	if err != nil {
		return nil, storageErr(err)
	}
	reports, err := fileReports(items)
	if err != nil {
		return nil, err
	}
	return &FileReportsListOutput{Scope: "own", Reports: reports}, nil
}

// fileReports is the reports among items (a page, or a batch whose absent
// items are skipped), in their order.
func fileReports(items []*store.Item) ([]FileReportDTO, error) {
	recs, err := decodeAll[table.FileReport](items, nil)
	if err != nil {
		return nil, err
	}
	out := []FileReportDTO{}
	for i, r := range recs {
		if r != nil {
			out = append(out, fileReportDTO(r, items[i].Version))
		}
	}
	return out, nil
}
