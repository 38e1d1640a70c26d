package hookclient

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// CallMain runs "agentbox call TOOL [JSON]": it prints the tool's result
// (structuredContent) on stdout and returns the exit code.
func CallMain(ctx context.Context, args []string, env Env, stdout, stderr io.Writer) int {
	if len(args) == 0 || len(args) > 2 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, "usage: agentbox call TOOL [JSON-OBJECT]   (AGENTBOX_URL, AGENTBOX_KEY from the environment)")
		return ExitUsage
	}
	var in map[string]any
	if len(args) == 2 {
		if err := json.Unmarshal([]byte(args[1]), &in); err != nil || in == nil {
			fmt.Fprintln(stderr, "agentbox call: the arguments must be one JSON object")
			return ExitUsage
		}
	}
	c, err := newClient(env)
	if err != nil {
		return report(err, stderr)
	}
	out, err := c.Call(ctx, args[0], in)
	if err != nil {
		return report(err, stderr)
	}
	fmt.Fprintln(stdout, string(out))
	return ExitOK
}

// InboxMain runs "agentbox inbox [--wait S] [--summary]": the unread page
// as JSON, or with --summary one line for a hook to print into an agent's
// context. Exit 0 when there is unread attention, 3 when there is none.
func InboxMain(ctx context.Context, args []string, env Env, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentbox inbox", flag.ContinueOnError)
	fs.SetOutput(stderr)
	wait := fs.Int("wait", 0, "wait up to this many seconds (at most 20) for new attention when there is none")
	summary := fs.Bool("summary", false, "print one line (\"3 unread, 1 request from alice in #release\") instead of the JSON page")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	if fs.NArg() > 0 || *wait < 0 || *wait > 20 {
		fmt.Fprintln(stderr, "usage: agentbox inbox [--wait SECONDS (0-20)] [--summary]")
		return ExitUsage
	}
	c, err := newClient(env)
	if err != nil {
		return report(err, stderr)
	}
	in := map[string]any{"filter": "unread"}
	if *wait > 0 {
		in["wait_seconds"] = *wait
	}
	raw, err := c.Call(ctx, "inbox_list", in)
	if err != nil {
		return report(err, stderr)
	}
	var page inboxPage
	if err := json.Unmarshal(raw, &page); err != nil {
		fmt.Fprintln(stderr, "agentbox inbox: the server's answer is not an inbox page")
		return ExitUnreachable
	}
	unread := int64(len(page.Rows))
	if page.Attention != nil && page.Attention.UnreadCount > unread {
		unread = page.Attention.UnreadCount
	}
	if !*summary {
		fmt.Fprintln(stdout, string(raw))
	} else {
		rooms := map[string]string{}
		if page.needsRooms() {
			rooms = c.roomNames(ctx)
		}
		fmt.Fprintln(stdout, page.summary(unread, rooms))
	}
	if unread == 0 {
		return ExitEmpty
	}
	return ExitOK
}

// report prints err and returns its exit code.
func report(err error, stderr io.Writer) int {
	var ee *exitError
	if errors.As(err, &ee) {
		fmt.Fprintln(stderr, ee.msg)
		return ee.code
	}
	fmt.Fprintln(stderr, err)
	return ExitToolError
}

type inboxPage struct {
	Rows []struct {
		Reasons int `json:"reasons"`
		Message *struct {
			AuthorName  string `json:"author_name"`
			Destination struct {
				Kind   string `json:"kind"`
				RoomID string `json:"room_id"`
			} `json:"destination"`
		} `json:"message"`
	} `json:"rows"`
	Attention *struct {
		UnreadCount      int64 `json:"unread_count"`
		OpenRequestCount int64 `json:"open_request_count"`
	} `json:"attention"`
}

// Reason bits of an inbox row (hub.Reason*).
const (
	reasonDM      = 1
	reasonMention = 4
	reasonReply   = 8
	reasonRequest = 16
)

func (p *inboxPage) needsRooms() bool {
	for _, r := range p.Rows {
		if r.Message != nil && r.Message.Destination.Kind == "room" {
			return true
		}
	}
	return false
}

// roomNames maps the caller's room ids to names (first page of rooms_list;
// best effort: a failure leaves ids unnamed).
func (c *client) roomNames(ctx context.Context) map[string]string {
	names := map[string]string{}
	raw, err := c.Call(ctx, "rooms_list", map[string]any{"limit": 100})
	if err != nil {
		return names
	}
	var out struct {
		Rooms []struct {
			RoomID string `json:"room_id"`
			Name   string `json:"name"`
		} `json:"rooms"`
	}
	if json.Unmarshal(raw, &out) == nil {
		for _, r := range out.Rooms {
			names[r.RoomID] = r.Name
		}
	}
	return names
}

// summary is the one line: "3 unread, 1 request from alice in #release,
// 1 mention, 1 DM from bob". Counts of reasons come from the page's rows;
// unread is the whole inbox's count.
func (p *inboxPage) summary(unread int64, rooms map[string]string) string {
	if unread == 0 {
		return "0 unread"
	}
	type group struct {
		what  string // "request", "mention", "reply", "DM"
		where string // "from alice in #release"
	}
	counts := map[group]int{}
	var order []group
	for _, r := range p.Rows {
		what := ""
		switch {
		case r.Reasons&reasonRequest != 0:
			what = "request"
		case r.Reasons&reasonMention != 0:
			what = "mention"
		case r.Reasons&reasonReply != 0:
			what = "reply"
		case r.Reasons&reasonDM != 0:
			what = "DM"
		default:
			continue
		}
		where := ""
		if m := r.Message; m != nil {
			where = "from " + m.AuthorName
			if m.Destination.Kind == "room" {
				name := rooms[m.Destination.RoomID]
				if name == "" {
					name = m.Destination.RoomID
				}
				where += " in #" + name
			}
		}
		g := group{what, where}
		if counts[g] == 0 {
			order = append(order, g)
		}
		counts[g]++
	}
	rank := map[string]int{"request": 0, "mention": 1, "reply": 2, "DM": 3}
	sort.SliceStable(order, func(i, j int) bool { return rank[order[i].what] < rank[order[j].what] })
	parts := []string{fmt.Sprintf("%d unread", unread)}
	for _, g := range order {
		n := counts[g]
		s := fmt.Sprintf("%d %s", n, g.what)
		if n > 1 {
			s += "s"
		}
		if g.where != "" {
			s += " " + g.where
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
