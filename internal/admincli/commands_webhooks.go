package admincli

import (
	"context"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

func init() { commands = append(commands, webhookCommands...) }

type webhookList struct {
	Webhooks []*hub.WebhookInfo `json:"webhooks"`
}

// webhookCommands are the owner's wake-event endpoints: agents cannot set
// them.
var webhookCommands = []*Command{
	{
		Name: "add-webhook",
		Summary: "Register an https:// endpoint that receives signed wake events (Standard Webhooks) when the agent gets attention " +
			"(--agent), or when any agent of the box does (--box; each event names its agent). Prints the signing secret (whsec_...) once.",
		Flags: []Flag{
			{Name: "agent", Usage: "agent id (UUID): one agent's events (give --agent or --box)"},
			{Name: "box", Usage: "box id (UUID): every agent of the box, present and future (give --agent or --box)"},
			{Name: "url", Usage: "https:// URL of the receiver", Required: true},
		},
		Run: func(ctx context.Context, a *hub.Admin, args Args) (any, error) {
			switch agent, box := args["agent"], args["box"]; {
			case (agent == "") == (box == ""):
				return nil, apperr.New(apperr.InvalidArgument, "Give exactly one of --agent and --box.")
			case box != "":
				return a.AddBoxWebhook(ctx, box, args["url"])
			default:
				return a.AddWebhook(ctx, agent, args["url"])
			}
		},
	},
	{
		Name:    "list-webhooks",
		Summary: "List a box's webhook endpoints with their scope (agent or box), state (active, disabled, failing), delivered inbox seq and last status.",
		Flags:   []Flag{idFlag("box")},
		Run:     boxRows((*hub.Admin).ListWebhooks, func(_ string, l []*hub.WebhookInfo) any { return webhookList{l} }),
	},
	{
		Name: "rotate-webhook-secret",
		Summary: "Issue a new signing secret, printed once; the old one keeps signing beside it for --overlap " +
			"(default 24h; 0 ends it at once).",
		Flags: []Flag{
			idFlag("webhook"),
			{Name: "overlap", Usage: "how long the old secret still signs, e.g. 24h, 30m, 0"},
		},
		Run: func(ctx context.Context, a *hub.Admin, args Args) (any, error) {
			overlap := 24 * time.Hour
			if s, ok := args["overlap"]; ok {
				d, err := time.ParseDuration(s)
				if err != nil {
					return nil, apperr.New(apperr.InvalidArgument, "--overlap must be a duration such as 24h, 30m or 0.")
				}
				overlap = d
			}
			return a.RotateWebhookSecret(ctx, args["webhook"], overlap)
		},
	},
	{
		Name: "enable-webhook",
		Summary: "Enable a disabled or failing endpoint: deliveries resume from the agent's current inbox head " +
			"(events dropped while failing stay dropped).",
		Flags: []Flag{idFlag("webhook")},
		Run: func(ctx context.Context, a *hub.Admin, args Args) (any, error) {
			return a.SetWebhookEnabled(ctx, args["webhook"], true)
		},
	},
	{
		Name:    "disable-webhook",
		Summary: "Stop deliveries to an endpoint until enable-webhook.",
		Flags:   []Flag{idFlag("webhook")},
		Run: func(ctx context.Context, a *hub.Admin, args Args) (any, error) {
			return a.SetWebhookEnabled(ctx, args["webhook"], false)
		},
	},
	{
		Name:    "remove-webhook",
		Summary: "Delete an endpoint.",
		Flags:   []Flag{idFlag("webhook")},
		Run: func(ctx context.Context, a *hub.Admin, args Args) (any, error) {
			if err := a.RemoveWebhook(ctx, args["webhook"]); err != nil {
				return nil, err
			}
			return map[string]bool{"removed": true}, nil
		},
	},
}
