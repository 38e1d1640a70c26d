package hubtest_test

import (
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/hub/hubtest"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// TestWorld checks the seeded world is the one the package doc promises:
// who lives in which box, with which role, and who is in the room.
func TestWorld(t *testing.T) {
	hubtest.ForEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		w := hubtest.New(t, ad, hubtest.Config{Room: true})
		for _, c := range []struct {
			ag   *hub.AgentInfo
			name string
			box  string
		}{{w.Alice, "alice", w.Box}, {w.Bob, "bob", w.Box}, {w.Mallory, "mallory", w.OtherBox}} {
			if c.ag.Name != c.name || c.ag.BoxID != c.box || c.ag.Role != "tester" || c.ag.BoxKey == "" {
				t.Errorf("agent %+v, want %s of box %s with role tester and a key", c.ag, c.name, c.box)
			}
		}
		if w.Box == w.OtherBox {
			t.Fatalf("both boxes are %s", w.Box)
		}
		for _, c := range []struct {
			ag    *hub.AgentInfo
			rooms int
		}{{w.Alice, 1}, {w.Bob, 1}, {w.Mallory, 0}} {
			cr := w.Prime(c.ag)
			out, err := w.Hub.Prime(w.Ctx, cr, hub.PrimeInput{})
			if err != nil || !out.SessionResumed || len(out.Rooms) != c.rooms {
				t.Fatalf("Prime(%s) again = %+v, %v; want the session resumed in %d rooms", c.ag.Name, out, err, c.rooms)
			}
			if c.rooms == 1 && out.Rooms[0].RoomID != w.Room.RoomID {
				t.Errorf("Prime(%s).Rooms = %+v, want room %s", c.ag.Name, out.Rooms, w.Room.RoomID)
			}
		}
		dm := w.DM(w.Prime(w.Alice), w.Bob, "k1", "hi")
		if dm.MessageID == "" {
			t.Errorf("DM: no message id")
		}
		_, err := w.Hub.CheckpointGet(w.Ctx, hub.Credentials{Bearer: w.Alice.BoxKey}, hub.CheckpointGetInput{})
		hubtest.WantCode(t, "CheckpointGet unprimed", err, apperr.NotPrimed)
		if w.Store.Reset() == 0 {
			t.Errorf("the counting store counted no round trips")
		}
	})
}
