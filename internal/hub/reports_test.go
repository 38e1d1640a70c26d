package hub_test

import (
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

func report(f *fixture, cr hub.Credentials, key, msg, file string, rev hub.Revision, state string) (*hub.FileAccessReportOutput, error) {
	return f.h.FileAccessReport(f.ctx, cr, hub.FileAccessReportInput{Mutation: hub.Mutation{IdempotencyKey: key},
		MessageID: msg, FileID: file, ExpectedRevision: rev, State: state, Note: "checked with my own tools"})
}

// TestFileReports: viewers report their own access, replace it by CAS, and
// see only their own; the author sees all while it can see the message;
// nobody else learns anything.
func TestFileReports(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		r := newReqFixture(t, ad)
		sent, err := r.h.MessageSend(r.ctx, r.crA, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: "files"},
			Destination: r.roomDest, BodyMD: "two links", Files: []hub.FileRefInput{
				{URL: "https://example.com/a.md", DisplayName: "a"}, {URL: "https://example.com/b.md", DisplayName: "b"}}})
		if err != nil {
			t.Fatalf("MessageSend: %v", err)
		}
		got, err := r.h.MessageGet(r.ctx, r.crB, hub.MessageGetInput{MessageID: sent.MessageID})
		if err != nil || len(got.Message.Files) != 2 || got.Message.Files[0].Versioning != "unversioned" {
			t.Fatalf("MessageGet = %+v, %v; want two unversioned references", got, err)
		}
		fa, fb := got.Message.Files[0].FileID, got.Message.Files[1].FileID

		// Nothing reported yet: the author's listing is empty, never "accessible".
		none, err := r.h.FileReportsList(r.ctx, r.crA, hub.FileReportsListInput{MessageID: sent.MessageID})
		if err != nil || none.Scope != "all" || len(none.Reports) != 0 {
			t.Fatalf("FileReportsList before any report = %+v, %v; want scope all and no reports", none, err)
		}
		if _, err := report(r.fixture, r.crB, "b1", sent.MessageID, fa, 0, hub.AccessDenied); err != nil {
			t.Fatalf("FileAccessReport(bob): %v", err)
		}
		fix, err := report(r.fixture, r.crB, "b2", sent.MessageID, fa, 1, hub.AccessAccessible)
		if err != nil || fix.Report.Revision != 2 || fix.Report.State != hub.AccessAccessible {
			t.Fatalf("FileAccessReport(replace) = %+v, %v; want revision 2 accessible", fix, err)
		}
		_, err = report(r.fixture, r.crB, "b3", sent.MessageID, fa, 1, hub.AccessOther)
		if e := wantCode(t, "FileAccessReport(stale)", err, apperr.RevisionConflict); e.CurrentRevision == nil || *e.CurrentRevision != 2 {
			t.Errorf("stale report: current %v, want 2", e.CurrentRevision)
		}
		// The longest note (500 four-byte characters) still commits, and
		// its replay answers the compact receipt.
		long := hub.FileAccessReportInput{Mutation: hub.Mutation{IdempotencyKey: "c1"}, MessageID: sent.MessageID, FileID: fb,
			State: hub.AccessNotFound, Note: strings.Repeat("😀", 500)}
		if _, err := r.h.FileAccessReport(r.ctx, r.crC, long); err != nil {
			t.Fatalf("FileAccessReport(carol, longest note): %v", err)
		}
		if again, err := r.h.FileAccessReport(r.ctx, r.crC, long); err != nil || !again.Replayed || again.Report.Revision != 1 {
			t.Fatalf("FileAccessReport replay = %+v, %v; want the receipt at revision 1", again, err)
		}
		long.Note += "x"
		long.IdempotencyKey = "c2"
		_, err = r.h.FileAccessReport(r.ctx, r.crC, long)
		wantCode(t, "FileAccessReport(501-character note)", err, apperr.LimitExceeded)
		_, err = report(r.fixture, r.crA, "a1", sent.MessageID, fa, 0, hub.AccessAccessible)
		wantCode(t, "FileAccessReport by the author", err, apperr.InvalidArgument)
		_, err = report(r.fixture, r.crB, "b4", sent.MessageID, sent.MessageID, 0, hub.AccessAccessible)
		wantCode(t, "FileAccessReport on a file the message does not carry", err, apperr.NotFoundOrForbidden)

		// The author pages through every report.
		p1, err := r.h.FileReportsList(r.ctx, r.crA, hub.FileReportsListInput{MessageID: sent.MessageID, Limit: 1})
		if err != nil || len(p1.Reports) != 1 || p1.NextCursor == "" {
			t.Fatalf("FileReportsList(author, limit 1) = %+v, %v; want one report and a cursor", p1, err)
		}
		p2, err := r.h.FileReportsList(r.ctx, r.crA, hub.FileReportsListInput{MessageID: sent.MessageID, Limit: 1, Cursor: p1.NextCursor})
		if err != nil || len(p2.Reports) != 1 || p2.NextCursor != "" || p2.Reports[0].ReporterAgentID == p1.Reports[0].ReporterAgentID {
			t.Fatalf("FileReportsList(author, page 2) = %+v, %v; want the other report and the end", p2, err)
		}
		// Others see only their own.
		own, err := r.h.FileReportsList(r.ctx, r.crB, hub.FileReportsListInput{MessageID: sent.MessageID})
		if err != nil || own.Scope != "own" || len(own.Reports) != 1 || own.Reports[0].ReporterAgentID != r.b.AgentID {
			t.Errorf("FileReportsList(bob) = %+v, %v; want only bob's report", own, err)
		}
		_, err = r.h.FileReportsList(r.ctx, r.crB, hub.FileReportsListInput{MessageID: sent.MessageID, Cursor: p1.NextCursor})
		wantCode(t, "FileReportsList(bob with alice's cursor)", err, apperr.CursorInvalid)

		// Authorization: other agent, other box, removed member, and the
		// author once removed — the same error as an unknown message.
		_, unknown := r.h.FileReportsList(r.ctx, r.crB, hub.FileReportsListInput{MessageID: "00000000-0000-4000-8000-000000000000"})
		ref := envelope(t, unknown)
		r.mustRemove(r.room, r.c)
		for _, tc := range []struct {
			name string
			cr   hub.Credentials
		}{{"OtherAgent", r.crD}, {"OtherBox", r.crOther}, {"RemovedMember", r.crC}} {
			_, err := r.h.FileReportsList(r.ctx, tc.cr, hub.FileReportsListInput{MessageID: sent.MessageID})
			wantSameError(t, "FileReportsList by "+tc.name, err, ref, sent.MessageID, fa)
			_, err = report(r.fixture, tc.cr, "x-"+tc.name, sent.MessageID, fb, 0, hub.AccessDenied)
			wantSameError(t, "FileAccessReport by "+tc.name, err, ref, sent.MessageID, fb)
		}
		r.mustRemove(r.room, r.a)
		_, err = r.h.FileReportsList(r.ctx, r.crA, hub.FileReportsListInput{MessageID: sent.MessageID})
		wantSameError(t, "FileReportsList by the removed author", err, ref, sent.MessageID)
	})
}
