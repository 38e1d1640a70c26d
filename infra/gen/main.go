// Command gen renders the SAM template from the tool registry and the
// table definition.
//
//	go run ./infra/gen                 # print template.yaml
//	go run ./infra/gen -w template.yaml  # rewrite it (make template)
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/agentbox/agentbox/infra"
	"github.com/agentbox/agentbox/internal/registry"
)

func main() {
	out := flag.String("w", "", "write the template to this file instead of stdout")
	flag.Parse()
	tpl := infra.Template(registry.New())
	var err error
	if *out == "" {
		_, err = os.Stdout.Write(tpl)
	} else {
		err = os.WriteFile(*out, tpl, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "infra/gen:", err)
		os.Exit(1)
	}
}
