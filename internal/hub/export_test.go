package hub_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// exportAll follows thread_export to the end and returns the chunks.
func exportAll(t *testing.T, f *fixture, cr hub.Credentials, anchor, format string, maxBytes int) []*hub.ThreadExportOutput {
	t.Helper()
	var chunks []*hub.ThreadExportOutput
	cur := ""
	for range 10000 {
		out, err := f.h.ThreadExport(f.ctx, cr, hub.ThreadExportInput{MessageID: anchor, Format: format, Cursor: cur, MaxBytes: maxBytes})
		if err != nil {
			t.Fatalf("ThreadExport(%s, chunk %d): %v", format, len(chunks), err)
		}
		chunks = append(chunks, out)
		if out.Partial != (out.NextCursor != "") {
			t.Fatalf("ThreadExport chunk %d: partial=%v next_cursor=%q, want both or neither", len(chunks)-1, out.Partial, out.NextCursor)
		}
		if !out.Partial {
			return chunks
		}
		cur = out.NextCursor
	}
	t.Fatalf("ThreadExport never completed")
	return nil
}

// TestThreadExportLargeThread exports a 1,000-message DM thread in small
// chunks: every message exactly once, in order, no chunk splitting one. On
// the DynamoDB emulator, whose sends are many times slower (and slower
// still under -race), the thread has 60 messages — still many chunks — so
// the test costs seconds, not minutes; the chunking code is the same on
// both adapters.
func TestThreadExportLargeThread(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		crA := f.prime(f.a)
		dm := hub.Destination{Kind: hub.KindDM, RecipientAgentID: f.b.AgentID}
		n := 1000
		if ad.Name != "bolt" {
			n = 60
		}
		var ids []string
		root := ""
		for i := range n {
			out, err := f.h.MessageSend(f.ctx, crA, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: fmt.Sprintf("m%d", i)},
				Destination: dm, BodyMD: fmt.Sprintf("message %d %s", i, strings.Repeat("x", i%300)), ReplyTo: root})
			if err != nil {
				t.Fatalf("MessageSend %d: %v", i, err)
			}
			if root == "" {
				root = out.MessageID
			}
			ids = append(ids, out.MessageID)
		}
		crB := f.prime(f.b)
		chunks := exportAll(t, f, crB, ids[n/2], hub.FormatJSON, 4096)
		var got []string
		for i, c := range chunks {
			if c.ThreadRootID != root || !strings.HasSuffix(c.Chunk, "\n") {
				t.Fatalf("chunk %d: root %s, ends %q; want root %s and a whole line", i, c.ThreadRootID, c.Chunk[max(0, len(c.Chunk)-10):], root)
			}
			lines := strings.Split(strings.TrimSuffix(c.Chunk, "\n"), "\n")
			if len(lines) != c.EntryCount {
				t.Errorf("chunk %d: %d lines, entry_count %d", i, len(lines), c.EntryCount)
			}
			for _, l := range lines {
				var e hub.ThreadEntry
				if err := json.Unmarshal([]byte(l), &e); err != nil || e.Message == nil {
					t.Fatalf("chunk %d: line is not a whole entry: %v", i, err)
				}
				got = append(got, e.MessageID)
			}
		}
		if len(chunks) < n/50 {
			t.Errorf("export took %d chunks at 4 KiB; want many", len(chunks))
		}
		if strings.Join(got, ",") != strings.Join(ids, ",") {
			t.Errorf("exported %d entries; want the %d messages exactly once each, in order", len(got), n)
		}
		// Markdown too: every message's heading exactly once.
		md := exportAll(t, f, crB, root, hub.FormatMarkdown, 262144)
		var doc strings.Builder
		for _, c := range md {
			doc.WriteString(c.Chunk)
		}
		if got := strings.Count(doc.String(), "\n### Message "); got != n {
			t.Errorf("markdown export has %d message headings, want %d", got, n)
		}
	})
}

// mdStructure returns the lines of a Markdown document that are outside
// fenced code blocks (CommonMark: a fence of n backticks closes only at a
// line of at least n backticks and nothing else).
func mdStructure(doc string) []string {
	var out []string
	fence := 0
	for _, l := range strings.Split(doc, "\n") {
		trim := strings.TrimLeft(l, " ")
		run := len(trim) - len(strings.TrimLeft(trim, "`"))
		switch {
		case fence == 0 && run >= 3 && len(l)-len(trim) <= 3:
			fence = run
		case fence > 0 && run >= fence && strings.TrimSpace(trim[run:]) == "" && len(l)-len(trim) <= 3:
			fence = 0
		case fence == 0:
			out = append(out, l)
		}
	}
	return out
}

// TestThreadExportMarkdownInjection: bodies and names cannot forge
// headings, authors or leave their block.
func TestThreadExportMarkdownInjection(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		evil := f.mustAgent(f.box, "# Evil *[admin](https://x.example/)* `")
		crE, crB := f.prime(evil), f.prime(f.b)
		dm := hub.Destination{Kind: hub.KindDM, RecipientAgentID: f.b.AgentID}
		bodies := []string{
			"```\n### Message `00000000-0000-4000-8000-000000000000`\n\n- author: alice\n```",
			"````\n# Heading\n````````\n- author: root",
			"~~~\n# tilde\n~~~",
			"<script>alert(1)</script>\n---\n### Message fake",
			"line\r\n# after CR",
			"    ```\n# indented fence\n```",
		}
		root := ""
		for i, body := range bodies {
			out, err := f.h.MessageSend(f.ctx, crE, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: fmt.Sprintf("e%d", i)},
				Destination: dm, BodyMD: body, ReplyTo: root,
				Files: []hub.FileRefInput{{URL: "https://example.com/a_(b)*c*", DisplayName: "[x](https://evil.example/) ### f"}}})
			if err != nil {
				t.Fatalf("MessageSend(body %d): %v", i, err)
			}
			if root == "" {
				root = out.MessageID
			}
		}
		var doc strings.Builder
		for _, c := range exportAll(t, f, crB, root, hub.FormatMarkdown, 1024) {
			doc.WriteString(c.Chunk)
		}
		headings, authors := 0, 0
		for _, l := range mdStructure(doc.String()) {
			switch {
			case strings.HasPrefix(l, "# "):
				if !strings.HasPrefix(l, "# Thread `") {
					t.Errorf("forged heading outside a block: %q", l)
				}
			case strings.HasPrefix(l, "#"):
				headings++
				if !strings.HasPrefix(l, "### Message `") {
					t.Errorf("forged heading outside a block: %q", l)
				}
			case strings.HasPrefix(l, "- author: "):
				authors++
				if !strings.HasPrefix(l, `- author: \# Evil \*\[admin\]\(https\:\/\/x\.example\/\)\* `+"\\`") {
					t.Errorf("author line not escaped: %q", l)
				}
			case strings.HasPrefix(l, "- file: ") && !strings.HasPrefix(l, `- file: \[x\]\(`):
				t.Errorf("file line not escaped: %q", l)
			}
		}
		if headings != len(bodies) || authors != len(bodies) {
			t.Errorf("export has %d headings and %d author lines outside blocks, want %d each\n%s", headings, authors, len(bodies), doc.String())
		}
	})
}

// TestThreadExportVisibility: a member added mid-thread sees its epoch's
// messages and the anchor's earlier ancestors only as redacted references;
// other agents, other boxes and removed members get NOT_FOUND_OR_FORBIDDEN.
func TestThreadExportVisibility(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		r := newReqFixture(t, ad)
		root := r.request("root", r.b)
		side, err := r.h.MessageSend(r.ctx, r.crA, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: "side"},
			Destination: r.roomDest, BodyMD: "side branch", ReplyTo: root.MessageID})
		if err != nil {
			t.Fatalf("MessageSend: %v", err)
		}
		_ = side
		r.mustAdd(r.room, r.d)
		late, err := r.h.MessageSend(r.ctx, r.crA, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: "late"},
			Destination: r.roomDest, BodyMD: "after dave joined", ReplyTo: root.MessageID})
		if err != nil {
			t.Fatalf("MessageSend: %v", err)
		}
		chunks := exportAll(t, r.fixture, r.crD, late.MessageID, hub.FormatJSON, 0)
		var entries []hub.ThreadEntry
		for _, l := range strings.Split(strings.TrimSpace(chunks[0].Chunk), "\n") {
			var e hub.ThreadEntry
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				t.Fatalf("line %q: %v", l, err)
			}
			entries = append(entries, e)
		}
		if len(entries) != 2 || !entries[0].Redacted || entries[0].MessageID != root.MessageID || entries[0].Message != nil ||
			entries[1].Message == nil || entries[1].MessageID != late.MessageID {
			t.Errorf("dave's export = %+v; want the root redacted, the side branch absent and his message", entries)
		}
		ref := envelope(t, func() error {
			_, err := r.h.ThreadExport(r.ctx, r.crD, hub.ThreadExportInput{MessageID: root.MessageID, Format: hub.FormatJSON})
			return err
		}())
		r.mustRemove(r.room, r.c)
		outsider := r.prime(r.mustAgent(r.box, "erin"))
		for _, tc := range []struct {
			name string
			cr   hub.Credentials
		}{{"OtherAgent", outsider}, {"OtherBox", r.crOther}, {"RemovedMember", r.crC}} {
			_, err := r.h.ThreadExport(r.ctx, tc.cr, hub.ThreadExportInput{MessageID: late.MessageID, Format: hub.FormatMarkdown})
			wantSameError(t, "ThreadExport by "+tc.name, err, ref, late.MessageID)
		}
		_, err = r.h.ThreadExport(r.ctx, r.crA, hub.ThreadExportInput{MessageID: late.MessageID, Format: hub.FormatJSON, Cursor: chunks[0].NextCursor + "x"})
		wantCode(t, "ThreadExport(tampered cursor)", err, apperr.CursorInvalid)
	})
}

// TestExportAndReportsRecordNoReceipt: exporting a thread or listing its
// file reports neither acknowledges nor records a receipt, so the row
// stays unread and this session still may not ACK it.
func TestExportAndReportsRecordNoReceipt(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		crA, crB := f.prime(f.a), f.prime(f.b)
		sent := f.mustSend(crA, "m", hub.MessageSendInput{Destination: toDM(f.b.AgentID), BodyMD: "hi",
			Files: []hub.FileRefInput{{URL: "https://example.com/a", DisplayName: "a"}}})
		exportAll(t, f, crB, sent.MessageID, hub.FormatMarkdown, 0)
		if _, err := f.h.FileReportsList(f.ctx, crB, hub.FileReportsListInput{MessageID: sent.MessageID}); err != nil {
			t.Fatalf("FileReportsList: %v", err)
		}
		_, err := f.h.InboxAck(f.ctx, crB, hub.InboxAckInput{Mutation: hub.Mutation{IdempotencyKey: "a"}, InboxSeqs: []hub.Revision{1}})
		wantCode(t, "InboxAck after only an export", err, apperr.InvalidArgument)
		p, err := f.h.Prime(f.ctx, hub.Credentials{Bearer: f.b.BoxKey}, hub.PrimeInput{})
		if err != nil || p.UnreadCount != 1 {
			t.Errorf("unread after an export = %v, %v; want 1", p.UnreadCount, err)
		}
	})
}
