package admincli

import (
	"github.com/agentbox/agentbox/internal/hub"
)

// migrate-listings moves a box written before listing items existed to
// them (hub/admin_listings.go). Its own file, like the owner commands, so
// the change stays apart from the command table.
func init() {
	commands = append(commands, &Command{
		Name: "migrate-listings",
		Summary: "Give a box's spaces and directory cards written before this version their listing items, " +
			"so list_spaces and directory_search read small items only, and put older messages on the box's requests and activity indexes " +
			"(the operator view's board and feed). Safe to run again and while agents work.",
		Flags: []Flag{idFlag("box")},
		Run:   with1((*hub.Admin).MigrateListings, "box"),
	})
}
