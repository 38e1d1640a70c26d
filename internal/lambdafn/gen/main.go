// Command gen writes the Lambda entry points from the tool registry:
// functions/<tool>/main.go for every tool, and removes the directories of
// tools that no longer exist (never functions/mcp, which is hand-written).
// Run it from anywhere inside the module after adding or removing a tool:
//
//	go run ./internal/lambdafn/gen
//
// TestFunctionsMatchRegistry fails until it has been run.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentbox/agentbox/internal/lambdafn"
	"github.com/agentbox/agentbox/internal/registry"
)

func main() {
	dir := flag.String("dir", "", "functions directory (default: functions/ at the module root)")
	flag.Parse()
	if *dir == "" {
		root, err := moduleRoot()
		if err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		*dir = filepath.Join(root, lambdafn.FunctionsDir)
	}
	if err := lambdafn.SyncFunctions(*dir, registry.New().Names()); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// moduleRoot is the nearest directory at or above the working directory
// holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod at or above the working directory")
		}
		dir = parent
	}
}
