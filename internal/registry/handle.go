package registry

import (
	"encoding/json"

	"github.com/agentbox/agentbox/internal/schema"
	"github.com/agentbox/agentbox/internal/strictjson"
)

// The durable session as an explicit handle (brief §11).
//
// MCP 2026-07-28 has no protocol session, and some 2025-era hosts open a
// fresh MCP connection for every tool call, so a session that rides on
// the transport (Mcp-Session-Id) does not survive from agent_prime to the
// next call there. agent_prime's session_id is therefore also an ordinary,
// optional argument of every tool: the registry, not each tool, accepts
// it, takes it out of the arguments before the tool decodes them, and
// hands it to the domain as the call's session. It is checked there
// exactly as a header would be — together with the caller's key, never
// as authority on its own — and everything scoped to "this session"
// (receipts, "returned to this session" for ACKs) is scoped to it.
//
// When both an argument and a transport header name a session, the
// argument wins: a host that reconnects per call sends a brand-new
// Mcp-Session-Id with every call, while the argument is the handle the
// model was told to keep.

// SessionArgument is the name of the handle argument every tool accepts.
const SessionArgument = "session_id"

// maxSessionArgument bounds the handle's length; every id the hub issues
// is shorter.
const maxSessionArgument = 80

// sessionArgumentSchema is the handle's schema in every tool's input.
func sessionArgumentSchema(t *Tool) *schema.Schema {
	desc := "The session_id agent_prime returned. Pass it on every call (hosts may reconnect per call); valid only with your key."
	switch {
	case t.Name == "agent_prime":
		desc = "A session_id agent_prime returned, to resume it; omit it to prime this connection's. If it expired, use the session_id returned."
	case !t.Authenticated:
		desc = "Accepted and ignored: this tool needs no session."
	}
	return &schema.Schema{Type: "string", MinLength: schema.Ptr[int64](1), MaxLength: schema.Ptr(int64(maxSessionArgument)), Description: desc}
}

// addSessionArgument declares the handle in t's input schema. A seed-002
// tool takes it beside id and data, never inside data (data is the REST
// body, and REST carries the session as a header).
func addSessionArgument(t *Tool) {
	in := *t.Input
	in.Properties = make(map[string]*schema.Schema, len(t.Input.Properties)+1)
	for k, v := range t.Input.Properties {
		in.Properties[k] = v
	}
	if _, dup := in.Properties[SessionArgument]; dup {
		panic("registry: tool " + t.Name + " declares " + SessionArgument + " itself")
	}
	in.Properties[SessionArgument] = sessionArgumentSchema(t)
	t.Input = &in
}

// sessionArgument takes the handle out of arguments that passed the input
// schema (so it is a string when present): the handle, the arguments
// without it, and whether it was there. The common call without a handle
// costs one scan and no allocation.
func sessionArgument(args []byte) (handle string, rest []byte, found bool) {
	strictjson.Members(args, func(key, _ []byte) bool {
		found = string(key) == SessionArgument
		return !found
	})
	if !found {
		return "", args, false
	}
	// With a handle: decode, drop the member, encode again. The strict gate guarantees a single
	// occurrence of each key.
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil {
		return "", args, false
	}
	value, ok := obj[SessionArgument]
	if !ok || json.Unmarshal(value, &handle) != nil {
		return "", args, false
	}
	delete(obj, SessionArgument)
	out, err := json.Marshal(obj)
	if err != nil {
		return "", args, false
	}
	return handle, out, true
}
