package hub_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// TestRequestsListFilterPastAChunk: requests_list with a status filter
// reads the index in chunks of at least 16 entries; a full chunk without a
// match is not the end. Of 20 requests to bob the first and the last are
// accepted, so one of them lies past the first chunk in either order, and
// paging with limit 1 finds both.
func TestRequestsListFilterPastAChunk(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		r := newReqFixture(t, ad)
		var accepted []string
		for i := range 20 {
			sent := r.request(fmt.Sprintf("task %d", i), r.b)
			r.clock.Advance(time.Millisecond)
			if i == 0 || i == 19 {
				r.mustAnswer(r.crB, fmt.Sprintf("ok-%d", i), sent.MessageID, hub.StatusAccepted)
				accepted = append(accepted, sent.MessageID)
			}
		}
		found := map[string]bool{}
		cur := ""
		pages := loopLimit(t, "RequestsList pages", 50, time.Minute)
		for {
			pages.must()
			out, err := r.h.RequestsList(r.ctx, r.crB, hub.RequestsListInput{Direction: "incoming", Status: hub.StatusAccepted, Limit: 1, Cursor: cur})
			if err != nil {
				t.Fatalf("RequestsList: %v", err)
			}
			for _, q := range out.Requests {
				found[q.RequestMessageID] = true
			}
			if cur = out.NextCursor; cur == "" {
				break
			}
		}
		for _, id := range accepted {
			if !found[id] {
				t.Errorf("accepted request %s not listed; listed %v", id, found)
			}
		}
		if len(found) != len(accepted) {
			t.Errorf("listed %d accepted requests, want %d", len(found), len(accepted))
		}
	})
}
