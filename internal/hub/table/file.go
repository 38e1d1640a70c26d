package table

import "github.com/agentbox/agentbox/internal/store"

// FileReportKey is an agent's access report of a file of a message
// (Version = report revision).
func FileReportKey(message, file, agent string) store.Key {
	return store.Key{PK: "frep#" + message, SK: file + "#" + agent}
}

// FileReportPrefix is the range of a message's reports, of one file when
// file is not empty.
func FileReportPrefix(message, file string) (pk, prefix string) {
	if file != "" {
		file += "#"
	}
	return "frep#" + message, file
}
