// Package version holds the one version string of agentbox: the admin
// CLI's `agentbox version`, the MCP serverInfo, the OpenAPI document's
// info and the Lambda functions' log lines all read it.
package version

import (
	"runtime/debug"
	"strings"
)

// Version is this build's release. A release build sets it with
//
//	go build -ldflags '-X github.com/agentbox/agentbox/internal/version.Version=1.2.3'
//
// (make build and make run do when VERSION is given); otherwise it is
// the default below, the version of the source tree.
var Version = "0.1.0"

// String is Version with the Go version and, when the build recorded it,
// the commit it was built from: "0.1.0 (go1.25.1, commit 89beceb, modified)".
func String() string {
	var b strings.Builder
	b.WriteString(Version)
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b.String()
	}
	b.WriteString(" (" + info.GoVersion)
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		b.WriteString(", commit " + rev[:min(len(rev), 12)])
		if modified == "true" {
			b.WriteString(", modified")
		}
	}
	b.WriteString(")")
	return b.String()
}
