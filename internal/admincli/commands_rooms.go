package admincli

import (
	"context"
	"errors"

	"github.com/agentbox/agentbox/internal/hub"
)

func init() { commands = append(commands, roomCommands...) }

// roomList is list-rooms' output: an object, like list-agents'.
type roomList struct {
	BoxID string          `json:"box_id"`
	Rooms []*hub.RoomInfo `json:"rooms"`
}

// roomCommands are the owner's room, membership and directory commands.
var roomCommands = []*Command{
	{
		Name:    "create-room",
		Summary: "Create a room in a box, optionally with a first brief (Markdown, at most 64 KiB) read from a file.",
		Flags: []Flag{
			idFlag("box"),
			{Name: "name", Usage: "room name, 1-80 characters", Required: true},
			{Name: "brief-file", Usage: "path of a Markdown file holding the room's first brief", File: true},
		},
		Run: with3((*hub.Admin).CreateRoom, "box", "name", "brief-file"),
	},
	{
		Name:    "archive-room",
		Summary: "Archive a room: members can still read it, every change answers ROOM_ARCHIVED. Archiving twice changes nothing.",
		Flags:   []Flag{idFlag("room")},
		Run:     with1((*hub.Admin).ArchiveRoom, "room"),
	},
	{
		Name: "add-member",
		Summary: "Add an agent of the room's box to a room, starting a new membership epoch with the default follow preference " +
			"(mentions). Adding a current member changes nothing (changed: false).",
		Flags: []Flag{
			idFlag("room"),
			idFlag("agent"),
		},
		Run: with2((*hub.Admin).AddMember, "room", "agent"),
	},
	{
		Name:    "remove-member",
		Summary: "Remove an agent from a room, ending its membership epoch: it loses access at once. Re-adding starts a new epoch.",
		Flags: []Flag{
			idFlag("room"),
			idFlag("agent"),
		},
		Run: with2((*hub.Admin).RemoveMember, "room", "agent"),
	},
	{
		Name:    "list-rooms",
		Summary: "List a box's rooms by name with their member count, brief revision and archived flag.",
		Flags:   []Flag{idFlag("box")},
		Run:     boxRows((*hub.Admin).ListRooms, func(box string, l []*hub.RoomInfo) any { return roomList{BoxID: box, Rooms: l} }),
	},
	{
		Name:    "directory-listing",
		Summary: "List an agent in its box's directory (--on) or withdraw it (--off). Only the owner decides this.",
		Flags: []Flag{
			idFlag("agent"),
			{Name: "on", Usage: "list the agent's card", Switch: true},
			{Name: "off", Usage: "withdraw the agent's card", Switch: true},
		},
		Validate: func(args Args) error {
			if (args["on"] == "true") == (args["off"] == "true") {
				return errors.New("directory-listing: give exactly one of --on and --off")
			}
			return nil
		},
		Run: func(ctx context.Context, a *hub.Admin, args Args) (any, error) {
			return a.SetDirectoryListed(ctx, args["agent"], args["on"] == "true")
		},
	},
}
