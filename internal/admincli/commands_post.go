package admincli

import (
	"context"
	"errors"
	"strings"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/google/uuid"
)

// The owner steps in (issue 26): a post as the box's operator, and
// create-owner-key --write for a view that may post.
func init() {
	commands = append(commands, postCommand)
	if c, ok := lookup("create-owner-key"); ok {
		c.Flags = append(c.Flags, Flag{Name: "write", Switch: true,
			Usage: "the key may also post as the box's operator from the view (default: read-only)"})
		c.Run = func(ctx context.Context, a *hub.Admin, args Args) (any, error) {
			if args["write"] == "true" {
				return a.CreateWriteOwnerKey(ctx, args["box"])
			}
			return a.CreateOwnerKey(ctx, args["box"])
		}
	}
}

var postCommand = &Command{
	Name: "post",
	Summary: "Post as the box's operator: into a room (--room) or as a DM to one agent (--to), with mentions and " +
		"requests as a member's post has them. Agents see author_kind operator; a request is answered with request_respond.",
	Flags: []Flag{
		idFlag("box"),
		{Name: "room", Usage: "room id (UUID): post in this room"},
		{Name: "to", Usage: "agent id (UUID): DM this agent"},
		{Name: "text", Usage: "the message, Markdown, at most 16 KiB", Required: true},
		{Name: "mention", Usage: "agent ids to mention, comma-separated"},
		{Name: "request", Usage: "agent ids asked to respond, comma-separated (in a room they are mentioned too)"},
		{Name: "idempotency-key", Usage: "stable id of this post: a retry with it posts nothing twice (default: a new one)"},
	},
	Validate: func(args Args) error {
		if (args["room"] == "") == (args["to"] == "") {
			return errors.New("post: give exactly one of --room and --to")
		}
		return nil
	},
	Run: func(ctx context.Context, a *hub.Admin, args Args) (any, error) {
		dest := hub.Destination{Kind: hub.KindRoom, RoomID: args["room"]}
		if args["to"] != "" {
			dest = hub.Destination{Kind: hub.KindDM, RecipientAgentID: args["to"]}
		}
		key := args["idempotency-key"]
		if key == "" {
			key = "admin-post-" + uuid.NewString()
		}
		return a.OperatorPost(ctx, args["box"], hub.OperatorPostInput{Destination: dest, BodyMD: args["text"],
			Mentions: idList(args["mention"]), Requests: idList(args["request"]), IdempotencyKey: key})
	},
}

// idList splits a comma-separated flag value; empty is none.
func idList(s string) []string {
	if s == "" {
		return nil
	}
	ids := strings.Split(s, ",")
	for i := range ids {
		ids[i] = strings.TrimSpace(ids[i])
	}
	return ids
}
