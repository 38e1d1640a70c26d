// Package admincli is the owner's command line, `agentbox admin ...`, and
// the admin socket that lets it reach a running local server.
//
// # Design note
//
// Every command is one entry of the commands table: its flags and one Run
// function over *hub.Admin. Execute is the only way a command runs, and both
// delivery paths end in it:
//
//	agentbox admin create-box --name demo
//	        │
//	        ├─ --table NAME ──────────────► DynamoDB adapter ─┐
//	        │                                                 │
//	        └─ --data DIR: bolt.Open(DIR/agentbox.db)         ├─► Execute(ctx, admin, Request)
//	              │ ok ──────────────────► bbolt adapter ─────┤
//	              └ ErrLocked (the server holds the file)     │
//	                  └─► POST over DIR/admin.sock ─► SocketHandler (in the server)
//
// bbolt takes an exclusive lock on its file, so while `agentbox serve` runs
// the CLI cannot open the store itself; it sends the same Request over the
// server's unix socket instead and prints the same JSON. Adding a command is
// adding one table entry: the parser, usage text, socket protocol and both
// delivery paths follow from it.
//
// Output. A command prints exactly one JSON document on stdout and exits 0.
// A failure prints {"error": envelope} (apperr.Envelope, plus "cause" with
// internal detail for the owner) on stderr and exits 1; a usage error does the
// same and exits 2.
package admincli

import (
	"context"
	"fmt"
	"slices"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// Flag is one command flag. Every flag takes a string value.
type Flag struct {
	Name     string
	Usage    string
	Required bool
	// File marks a flag whose value is a path on the caller's machine: the
	// CLI reads the file and the command receives its contents. The server
	// behind the admin socket therefore never opens a path a client named,
	// and relative paths resolve against the caller's working directory.
	File bool
	// Switch marks a flag that takes no value (--on): present means on, and
	// the command receives it as "true"; absent, it is absent from Args.
	Switch bool
}

// Args are a command's flag values by flag name (for File flags, the file's
// contents). An absent optional flag is absent from the map.
type Args map[string]string

// Command is one admin command.
type Command struct {
	Name    string
	Summary string
	Flags   []Flag
	// Validate, when set, checks how flags combine (exactly one of --on and
	// --off) beyond what each flag says; its error is a usage error.
	Validate func(args Args) error
	// Run performs the command. Its result is printed as JSON; its error is
	// normalized to an apperr envelope.
	Run runFunc
}

// runFunc is a Command's Run.
type runFunc = func(ctx context.Context, a *hub.Admin, args Args) (any, error)

// with1, with2 and with3 run an Admin method on the values of the named
// flags, in order: the commands that only pass their flags on.
func with1[T any](fn func(*hub.Admin, context.Context, string) (T, error), f string) runFunc {
	return func(ctx context.Context, a *hub.Admin, args Args) (any, error) { return fn(a, ctx, args[f]) }
}

func with2[T any](fn func(*hub.Admin, context.Context, string, string) (T, error), f, g string) runFunc {
	return func(ctx context.Context, a *hub.Admin, args Args) (any, error) { return fn(a, ctx, args[f], args[g]) }
}

func with3[T any](fn func(*hub.Admin, context.Context, string, string, string) (T, error), f, g, h string) runFunc {
	return func(ctx context.Context, a *hub.Admin, args Args) (any, error) {
		return fn(a, ctx, args[f], args[g], args[h])
	}
}

// boxRows runs fn, a list of one box's rows, and answers the rows as
// wrap lays them out for printing.
func boxRows[T any](fn func(*hub.Admin, context.Context, string) ([]T, error), wrap func(box string, rows []T) any) runFunc {
	return func(ctx context.Context, a *hub.Admin, args Args) (any, error) {
		rows, err := fn(a, ctx, args["box"])
		if err != nil {
			return nil, err
		}
		return wrap(args["box"], rows), nil
	}
}

// idFlag is the required flag naming one entity by its UUID.
func idFlag(entity string) Flag {
	return Flag{Name: entity, Usage: entity + " id (UUID)", Required: true}
}

// maxFileBytes bounds a File flag's contents: far above any legal profile
// document (16 KiB instructions + 8 KiB payload), small enough that a wrong
// path (a log, a binary) fails fast instead of travelling to the store.
const maxFileBytes = 1 << 20

// agentList is list-agents' output: an object rather than a bare array, so
// that fields (a cursor, a count) can be added without breaking scripts.
type agentList struct {
	BoxID  string           `json:"box_id"`
	Agents []*hub.AgentInfo `json:"agents"`
}

// boxList is list-boxes' output.
type boxList struct {
	Boxes []*hub.BoxInfo `json:"boxes"`
}

// commands is the table of admin commands, in the order usage shows them.
// The room and directory commands (commands_rooms.go) join it at init.
var commands = []*Command{
	{
		Name:    "list-boxes",
		Summary: "List the boxes of the store by name (to find a box id).",
		Run: func(ctx context.Context, a *hub.Admin, _ Args) (any, error) {
			boxes, err := a.ListBoxes(ctx)
			if err != nil {
				return nil, err
			}
			return boxList{Boxes: boxes}, nil
		},
	},
	{
		Name:    "create-box",
		Summary: "Create an empty box (an isolated coordination space).",
		Flags:   []Flag{{Name: "name", Usage: "box name, 1-80 characters", Required: true}},
		Run:     with1((*hub.Admin).CreateBox, "name"),
	},
	{
		Name: "create-agent",
		Summary: "Create an agent in a box and print its key. The key is shown this once and never again. " +
			"The output's \"directory\" says what the box directory shows of the agent.",
		Flags: []Flag{
			idFlag("box"),
			{Name: "name", Usage: "agent name, 1-80 characters", Required: true},
			{Name: "role", Usage: "role in the agent's private profile (profile_get); the directory does not show it"},
			{Name: "listed", Usage: "list the agent's public card in the box directory, so directory_search finds it (default: unlisted)", Switch: true},
			{Name: "card-role", Usage: "role on the agent's public card, which directory_search matches (the agent may change it)"},
		},
		Run: func(ctx context.Context, a *hub.Admin, args Args) (any, error) {
			return a.AddAgent(ctx, hub.NewAgent{Box: args["box"], Name: args["name"], Role: args["role"],
				Scope: args["scope"], Listed: args["listed"] == "true", CardRole: args["card-role"]})
		},
	},
	{
		Name: "rotate-key",
		Summary: "Revoke every key of an agent and issue a new one, atomically; prints the new key once. " +
			"The new key keeps the scope of the agent's keys unless --scope is given.",
		Flags: []Flag{idFlag("agent")},
		Run:   with2((*hub.Admin).RotateKeyScoped, "agent", "scope"),
	},
	{
		Name:    "revoke-key",
		Summary: "Revoke one key of an agent (--key), or all of its keys.",
		Flags: []Flag{
			idFlag("agent"),
			{Name: "key", Usage: "key id to revoke (from key_ids); omit to revoke every key"},
		},
		Run: with2((*hub.Admin).RevokeKey, "agent", "key"),
	},
	{
		Name: "deactivate-agent",
		Summary: "Deactivate an agent: it can no longer authenticate, leaves the directory, rosters and targets " +
			"(unknown to other agents), and keeps its history and memberships. Running it again completes an interrupted run.",
		Flags: []Flag{idFlag("agent")},
		Run:   with1((*hub.Admin).DeactivateAgent, "agent"),
	},
	{
		Name:    "reactivate-agent",
		Summary: "Reactivate a deactivated agent: its keys work again and its card and memberships return.",
		Flags:   []Flag{idFlag("agent")},
		Run:     with1((*hub.Admin).ReactivateAgent, "agent"),
	},
	{
		Name: "set-profile",
		Summary: "Replace fields of an agent's private profile from a JSON file " +
			`{"role": ..., "instructions_md": ..., "payload": {...}}; absent fields are kept.`,
		Flags: []Flag{
			idFlag("agent"),
			{Name: "file", Usage: "path of the JSON profile document", Required: true, File: true},
		},
		Run: func(ctx context.Context, a *hub.Admin, args Args) (any, error) {
			return a.SetProfile(ctx, args["agent"], []byte(args["file"]))
		},
	},
	{
		Name:    "list-agents",
		Summary: "List a box's agents by name, with each key's id and scope. Never shows keys.",
		Flags:   []Flag{idFlag("box")},
		Run:     boxRows((*hub.Admin).ListAgents, func(box string, l []*hub.AgentInfo) any { return agentList{BoxID: box, Agents: l} }),
	},
}

func lookup(name string) (*Command, bool) {
	for _, c := range commands {
		if c.Name == name {
			return c, true
		}
	}
	return nil, false
}

// Request is one command invocation: what the socket carries and what
// Execute runs.
type Request struct {
	Command string `json:"command"`
	Args    Args   `json:"args"`
}

// check validates a request against the command's flags: no unknown
// argument, every required one present and non-empty. The socket server
// runs it too, because a client of another version may send anything.
func (c *Command) check(args Args) error {
	for name := range args {
		if !slices.ContainsFunc(c.Flags, func(f Flag) bool { return f.Name == name }) {
			return fmt.Errorf("%s: unknown flag --%s", c.Name, name)
		}
	}
	for _, f := range c.Flags {
		if f.Required && args[f.Name] == "" {
			return fmt.Errorf("%s: missing required flag --%s", c.Name, f.Name)
		}
		if v, ok := args[f.Name]; ok && f.Switch && v != "true" {
			return fmt.Errorf("%s: --%s takes no value", c.Name, f.Name)
		}
	}
	if c.Validate != nil {
		return c.Validate(args)
	}
	return nil
}

// helpNext is the next action of every usage error.
const helpNext = "Run 'agentbox admin help' for the commands and their flags."

// Execute runs one admin command against a. It is the single code path of
// every command, whether the CLI opened the store itself or the request
// arrived over the admin socket.
func Execute(ctx context.Context, a *hub.Admin, req Request) (any, error) {
	c, ok := lookup(req.Command)
	if !ok {
		return nil, apperr.Invalid("", "unknown admin command").WithNext(helpNext)
	}
	if err := c.check(req.Args); err != nil {
		return nil, apperr.Invalid("", err.Error()).WithNext(helpNext)
	}
	return c.Run(ctx, a, req.Args)
}
