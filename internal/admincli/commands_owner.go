package admincli

import "github.com/agentbox/agentbox/internal/hub"

// Owner keys and key scopes (issue 15). The scope flag is added to
// create-agent and rotate-key here (their Run functions read it).
func init() {
	commands = append(commands, ownerCommands...)
	if c, ok := lookup("create-agent"); ok {
		c.Flags = append(c.Flags, Flag{Name: "scope", Usage: "key scope: coordination:write (default) or coordination:read (a read-only key)"})
	}
	if c, ok := lookup("rotate-key"); ok {
		c.Flags = append(c.Flags, Flag{Name: "scope", Usage: "the new key's scope, coordination:write or coordination:read (default: the scope of the agent's keys)"})
	}
}

// ownerKeyList is list-owner-keys' output: an object, like list-agents'.
type ownerKeyList struct {
	BoxID string              `json:"box_id"`
	Keys  []*hub.OwnerKeyInfo `json:"owner_keys"`
}

var ownerCommands = []*Command{
	{
		Name: "create-owner-key",
		Summary: "Create an owner key for a box's read-only operator view (/ui/) and print it. " +
			"The key is shown this once and never again.",
		Flags: []Flag{idFlag("box")},
		Run:   with1((*hub.Admin).CreateOwnerKey, "box"),
	},
	{
		Name:    "list-owner-keys",
		Summary: "List a box's owner keys (ids and creation times; never the keys).",
		Flags:   []Flag{idFlag("box")},
		Run:     boxRows((*hub.Admin).ListOwnerKeys, func(box string, l []*hub.OwnerKeyInfo) any { return ownerKeyList{BoxID: box, Keys: l} }),
	},
	{
		Name:    "revoke-owner-key",
		Summary: "Revoke an owner key; the view refuses it from its next request.",
		Flags:   []Flag{{Name: "key", Usage: "owner key id (key_id from list-owner-keys)", Required: true}},
		Run:     with1((*hub.Admin).RevokeOwnerKey, "key"),
	},
}
