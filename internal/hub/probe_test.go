package hub_test

import (
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// probeMarker travels in every rejected value so that an echo of it in an
// error is easy to see.
const probeMarker = "zzprobe"

// controlClasses are the characters no name, title or line may hold, one
// or two per class.
var controlClasses = []struct{ class, chars string }{
	{"C0", "\x01\x1b"},
	{"DEL", "\x7f"},
	{"C1", "\u0085\u009b"},
	{"bidi override", "\u202a\u202b\u202c\u202d\u202e"},
	{"bidi isolate", "\u2066\u2067\u2068\u2069"},
}

// probeValues returns one rejected value per control character.
func probeValues() []struct{ class, value string } {
	var out []struct{ class, value string }
	for _, c := range controlClasses {
		for _, r := range c.chars {
			out = append(out, struct{ class, value string }{c.class, "ok" + string(r) + probeMarker})
		}
	}
	return out
}

// wantRefusedQuietly checks a rejected value is INVALID_ARGUMENT whose
// text names no part of the value.
func wantRefusedQuietly(t *testing.T, call string, err error) {
	t.Helper()
	e := wantCode(t, call, err, apperr.InvalidArgument)
	for _, s := range []string{e.Message, e.NextAction, e.Error()} {
		if strings.Contains(s, probeMarker) || strings.ContainsAny(s, "\x01\x1b\x7f\u0085\u009b\u202a\u202e\u2066\u2069") {
			t.Errorf("%s: error %q echoes the rejected value", call, s)
		}
	}
}

// TestControlCharacterCorpus: every name and title field refuses every
// control class, without echoing the value.
func TestControlCharacterCorpus(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		cr, crb := f.prime(f.a), f.prime(f.b)
		space := mustCreateSpace(f, cr, "public", "probe target")
		room := f.mustRoom("probe-room", "brief")
		adm := f.h.Admin()
		fields := []struct {
			name string
			call func(v string) error
		}{
			{"box name", func(v string) error { _, err := adm.CreateBox(f.ctx, v); return err }},
			{"agent name", func(v string) error { _, err := adm.CreateAgent(f.ctx, f.box, v, "r"); return err }},
			{"agent role", func(v string) error { _, err := adm.CreateAgent(f.ctx, f.box, "n", v); return err }},
			{"room name", func(v string) error { _, err := adm.CreateRoom(f.ctx, f.box, v, "brief"); return err }},
			{"space title (create)", func(v string) error { _, err := createSpace(f, cr, "public", v, ""); return err }},
			{"space title (update)", func(v string) error {
				_, err := f.h.UpdateSpace(f.ctx, cr, hub.UpdateSpaceInput{SpaceRef: hub.SpaceRef{ID: space.ID},
					Data: hub.UpdateSpaceData{ExpectedVersion: 1, Title: v, Goal: "g", Status: "active"}})
				return err
			}},
			{"card role", func(v string) error {
				_, err := f.h.DirectoryUpdateSelf(f.ctx, crb, hub.DirectoryUpdateSelfInput{
					Mutation: hub.Mutation{IdempotencyKey: "probe"}, Role: &v})
				return err
			}},
			{"card contact_notes", func(v string) error {
				_, err := f.h.DirectoryUpdateSelf(f.ctx, crb, hub.DirectoryUpdateSelfInput{
					Mutation: hub.Mutation{IdempotencyKey: "probe"}, ContactNotes: &v})
				return err
			}},
			{"file display_name", func(v string) error {
				_, err := f.h.MessageSend(f.ctx, cr, hub.MessageSendInput{
					Mutation:    hub.Mutation{IdempotencyKey: "probe"},
					Destination: hub.Destination{Kind: "room", RoomID: room.RoomID}, BodyMD: "see file",
					Files: []hub.FileRefInput{{URL: "https://example.com/a.md", DisplayName: v}}})
				return err
			}},
		}
		f.mustAdd(room.RoomID, f.a)
		for _, fd := range fields {
			for _, pv := range probeValues() {
				wantRefusedQuietly(t, fd.name+" with "+pv.class, fd.call(pv.value))
			}
		}
		// A clean value passes validation in every field, so the refusals
		// above were the characters'.
		for _, fd := range fields {
			if err := fd.call("clean value"); isCode(err, apperr.InvalidArgument) {
				t.Errorf("%s with a clean value: %v", fd.name, err)
			}
		}
		// Only the clean update was written.
		got, err := f.h.GetSpace(f.ctx, cr, hub.GetSpaceInput{SpaceRef: hub.SpaceRef{ID: space.ID}})
		if err != nil {
			t.Fatalf("GetSpace: %v", err)
		}
		if got.Space.Title != "clean value" || got.Space.Version != 2 {
			t.Errorf("space title %q version %d after refused updates and one clean one, want %q at 2",
				got.Space.Title, got.Space.Version, "clean value")
		}
	})
}
