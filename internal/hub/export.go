package hub

// Thread export: a thread as a document, one chunk per call.
//
// thread_export renders what thread_read shows — the messages of a visible
// anchor's thread the caller may see, and the anchor's hidden ancestors as
// redacted references (threadView, messages.go) — as JSON Lines (one
// ThreadEntry per line) or Markdown. The first call fixes an upper bound
// (the stream head), so the export is a snapshot; each call answers the
// next chunk of at most max_bytes (but at least one whole entry) with
// next_cursor and partial: true until the last. A chunk always ends after
// a whole entry and the cursor points just past it, so concatenating the
// chunks gives the whole document: no entry split, skipped or repeated.
// Nothing is acknowledged, no receipt is recorded, nothing is uploaded.
//
// Markdown. Every piece of user text is rendered so that it cannot become
// structure: bodies go inside a fenced block whose fence is longer than any
// run of backticks in the body (so no line of the body can close it, and
// inside it nothing is a heading or an author line); names are one line
// with every ASCII punctuation character backslash-escaped; ids, times and
// URLs (already validated: no spaces or controls) go in code spans longer
// than any backtick run they hold.

import (
	"context"
	"encoding/json"
	"github.com/agentbox/agentbox/internal/hub/table"
	"strings"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/cursor"
)

// Export formats.
const (
	FormatJSON     = "json"
	FormatMarkdown = "markdown"
)

// exportReadRows is how many index rows one read of an export takes.
const exportReadRows = 100

// ThreadExportInput is thread_export's input.
type ThreadExportInput struct {
	Auth
	MessageID string `json:"message_id" desc:"Any message of the thread." schema:"format=uuid"`
	Format    string `json:"format" desc:"json (JSON Lines) or markdown; concatenate the chunks." schema:"enum=json|markdown" example:"\"markdown\""`
	Cursor    string `json:"cursor,omitempty" desc:"From the previous chunk." schema:"maxLength=2048"`
	MaxBytes  int    `json:"max_bytes,omitempty" desc:"Chunk byte budget (default 128 KiB)." schema:"minimum=1024,maximum=262144"`
}

// ThreadExportOutput is one chunk of an export.
type ThreadExportOutput struct {
	ThreadRootID string `json:"thread_root_id"`
	Format       string `json:"format" schema:"enum=json|markdown"`
	Chunk        string `json:"chunk" desc:"This part of the document; chunks never split an entry."`
	EntryCount   int    `json:"entry_count" desc:"Entries (messages and redacted references) in this chunk."`
	Partial      bool   `json:"partial" desc:"True until the last chunk: pass next_cursor for the rest."`
	NextCursor   string `json:"next_cursor,omitempty"`
}

type exportPos struct {
	After uint64 `json:"a"`
	Upper uint64 `json:"u"`
}

// ThreadExport answers the next chunk of the export of a visible anchor's
// thread. See the note at the top of this file.
//
// Errors: INVALID_ARGUMENT, LIMIT_EXCEEDED, NOT_FOUND_OR_FORBIDDEN (an
// anchor you cannot see), CURSOR_INVALID.
func (h *Hub) ThreadExport(ctx context.Context, cr Credentials, in ThreadExportInput) (*ThreadExportOutput, error) {
	if err := uuidArg("message_id", &in.MessageID); err != nil {
		return nil, err
	}
	if in.Format != FormatJSON && in.Format != FormatMarkdown {
		return nil, apperr.Invalid("format", "must be json or markdown")
	}
	budget, err := pageBytes(in.MaxBytes)
	if err != nil {
		return nil, err
	}
	declare, visible := h.visibleRead(ctx, in.MessageID)
	return read(ctx, h, cr, declare, func(c *call) (*ThreadExportOutput, error) {
		anchor, err := visible(c)
		if err != nil {
			return nil, err
		}
		v, err := h.viewThread(ctx, c, anchor)
		if err != nil {
			return nil, err
		}
		ks := table.Keyset[exportPos]{Scope: cursor.Scope{Agent: c.AgentID, Stream: "export:" + anchor.ThreadRoot + ":" + in.Format, Key: c.cursorKey}}
		var pos exportPos
		if in.Cursor != "" {
			if pos, err = ks.Decode(in.Cursor, func(p exportPos) bool { return p.Upper >= p.After && p.Upper != 0 }); err != nil {
				return nil, err
			}
		} else {
			head, err := h.st.Get(ctx, v.st.head())
			if err != nil {
				return nil, storageErr(err)
			}
			pos.Upper = version(head)
		}
		out := &ThreadExportOutput{ThreadRootID: anchor.ThreadRoot, Format: in.Format}
		var b strings.Builder
		if in.Cursor == "" && in.Format == FormatMarkdown {
			b.WriteString("# Thread " + codeSpan(anchor.ThreadRoot) + "\n\n")
		}
		full, more := false, true
		for !full && more {
			rows, m, err := h.threadRows(ctx, v, pos.After, pos.Upper, exportReadRows)
			if err != nil {
				return nil, err
			}
			more = m
			for _, r := range rows {
				if r.entry != nil {
					piece, err := renderEntry(in.Format, r.entry)
					if err != nil {
						return nil, err
					}
					if out.EntryCount > 0 && b.Len()+len(piece) > budget {
						full = true
						break
					}
					b.WriteString(piece)
					out.EntryCount++
				}
				pos.After = r.seq
			}
		}
		out.Chunk = b.String()
		if full || more {
			out.Partial = true
			out.NextCursor = ks.Encode(pos)
		}
		return out, nil
	})
}

// renderEntry renders one entry in format, ending with a newline.
func renderEntry(format string, e *ThreadEntry) (string, error) {
	if format == FormatJSON {
		b, err := json.Marshal(e)
		if err != nil {
			return "", apperr.Normalize(err)
		}
		return string(b) + "\n", nil
	}
	var b strings.Builder
	b.WriteString("---\n\n### Message " + codeSpan(e.MessageID))
	if e.Redacted {
		b.WriteString(" (redacted)\n\nAn earlier message of this thread that you cannot see.\n\n")
		return b.String(), nil
	}
	m := e.Message
	b.WriteString("\n\n")
	b.WriteString("- author: " + escapeMD(m.AuthorName) + " " + codeSpan(m.AuthorAgentID))
	if m.AuthorKind == AuthorOperator {
		b.WriteString(" (the box's operator)")
	}
	b.WriteString("\n")
	b.WriteString("- sent: " + codeSpan(m.SentAt) + "\n")
	if m.ReplyTo != "" {
		b.WriteString("- in reply to: " + codeSpan(m.ReplyTo) + "\n")
	}
	for _, f := range m.Files {
		b.WriteString("- file: " + escapeMD(f.DisplayName) + " " + codeSpan(f.URL) + " (" + f.Versioning)
		switch f.Versioning {
		case "version_label":
			b.WriteString(" " + codeSpan(f.VersionLabel))
		case "sha256":
			b.WriteString(" " + codeSpan(f.SHA256))
		case "commit":
			b.WriteString(" " + codeSpan(f.Commit))
		}
		b.WriteString(")\n")
	}
	fence := strings.Repeat("`", max(3, longestRun(m.BodyMD, '`')+1))
	b.WriteString("\n" + fence + "markdown\n" + m.BodyMD)
	if !strings.HasSuffix(m.BodyMD, "\n") {
		b.WriteString("\n")
	}
	b.WriteString(fence + "\n\n")
	return b.String(), nil
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// codeSpan renders s as inline code that nothing in s can end.
func codeSpan(s string) string {
	s = strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
	d := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return d + s + d
}

// escapeMD renders one line of user text as literal Markdown text: line
// breaks become spaces and every ASCII punctuation character is
// backslash-escaped (CommonMark lets any of them be escaped), so the text
// can open no heading, list, link, emphasis or HTML.
func escapeMD(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\r' || r == '\n':
			b.WriteByte(' ')
		case r < 0x80 && strings.ContainsRune("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
