// Command gen rewrites the README's generated sections (make readme).
//
//	go run ./internal/docgen/gen -w README.md
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/agentbox/agentbox/internal/docgen"
	"github.com/agentbox/agentbox/internal/registry"
)

func main() {
	path := flag.String("w", "README.md", "the README to rewrite in place")
	flag.Parse()
	if err := rewrite(*path); err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
}

func rewrite(path string) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	out, err := docgen.Update(doc, registry.New())
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}
