package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLinksNoGenerator: the Lambda binary carries the runtime only. The
// generators (template, README, contracts) and the Go source tooling they
// use live in other packages and must never be linked into what every
// function deploys; go list -deps, for the deployed platform and tags,
// shows what is.
func TestLinksNoGenerator(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-tags", "lambda.norpc", ".")
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	forbidden := []string{
		"go/format", "go/parser", "go/printer", "go/ast",
		"github.com/agentbox/agentbox/infra",
		"github.com/agentbox/agentbox/internal/docgen",
		"github.com/agentbox/agentbox/internal/admincli",
		"gopkg.in/yaml.v3",
	}
	for _, dep := range deps {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("the Lambda binary links %s; keep generators and their tooling out of the imports of functions/", dep)
			}
		}
	}
	if len(deps) == 0 || !slices.Contains(deps, "github.com/agentbox/agentbox/functions/lambdafn") {
		t.Errorf("go list -deps printed %d packages without functions/lambdafn: the check reads nothing", len(deps))
	}
}
