package hub_test

import (
	"context"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// TestPageSizeOneText: every list tool words its page size rule alike (it
// is checked before the caller is, so no world is needed).
func TestPageSizeOneText(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		ctx, cr := context.Background(), hub.Credentials{}
		id := "00000000-0000-4000-8000-000000000000"
		lists := map[string]func(n int) error{
			"rooms_list": func(n int) error { _, err := f.h.RoomsList(ctx, cr, hub.RoomsListInput{Limit: n}); return err },
			"list_memory": func(n int) error {
				_, err := f.h.ListMemory(ctx, cr, hub.ListMemoryInput{Data: hub.ListMemoryData{Limit: n}})
				return err
			},
			"list_spaces": func(n int) error {
				_, err := f.h.ListSpaces(ctx, cr, hub.ListSpacesInput{Data: hub.ListSpacesData{Limit: n}})
				return err
			},
			"directory_search": func(n int) error {
				_, err := f.h.DirectorySearch(ctx, cr, hub.DirectorySearchInput{Limit: n})
				return err
			},
			"inbox_list": func(n int) error { _, err := f.h.InboxList(ctx, cr, hub.InboxListInput{Limit: n}); return err },
			"conversation_read": func(n int) error {
				_, err := f.h.ConversationRead(ctx, cr, hub.ConversationReadInput{
					Conversation: hub.Destination{Kind: hub.KindRoom, RoomID: id}, Limit: n})
				return err
			},
			"requests_list": func(n int) error {
				_, err := f.h.RequestsList(ctx, cr, hub.RequestsListInput{Direction: hub.DirectionIncoming, Limit: n})
				return err
			},
			"file_reports_list": func(n int) error {
				_, err := f.h.FileReportsList(ctx, cr, hub.FileReportsListInput{MessageID: id, Limit: n})
				return err
			},
		}
		for name, list := range lists {
			e := wantCode(t, name+"(limit -1)", list(-1), apperr.InvalidArgument)
			if e != nil && e.Message != "limit: must be at least 1" {
				t.Errorf("%s(limit -1) = %q", name, e.Message)
			}
			e = wantCode(t, name+"(limit 101)", list(101), apperr.LimitExceeded)
			if e != nil && e.Message != "limit exceeds its limit: 100 items" {
				t.Errorf("%s(limit 101) = %q", name, e.Message)
			}
		}
	})
}
