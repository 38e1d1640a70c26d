package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestLoopbenchRuns drives a freshly built agentbox with every workload
// kind at small counts: it exits 0, and every run's row reports nothing
// lost, duplicated, invented or reordered.
func TestLoopbenchRuns(t *testing.T) {
	bin := agentboxBinary(t)
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"-bin", "old=" + bin, "-bin", "new=" + bin, "-workloads", "rt:5,3x8", "-runs", "3",
		"-dir", t.TempDir()}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("loopbench exit %d, stderr:\n%s\nstdout:\n%s", code, stderr.String(), stdout.String())
	}
	rows := 0
	for line := range strings.SplitSeq(stdout.String(), "\n") {
		f := strings.Fields(line)
		if len(f) < 14 || (f[0] != "new" && f[0] != "old") {
			continue
		}
		rows++
		if tail := strings.Join(f[len(f)-4:], " "); tail != "0 0 0 0" {
			t.Errorf("row %q: lost dup inv ooo = %s, want 0 0 0 0", line, tail)
		}
	}
	// 2 binaries × 2 workloads × 3 runs, then 2 × 2 medians.
	if rows != 16 {
		t.Errorf("loopbench printed %d result rows, want 16:\n%s", rows, stdout.String())
	}
	if !strings.Contains(stdout.String(), "new/old") {
		t.Errorf("loopbench output has no ratio row:\n%s", stdout.String())
	}
}

// TestParseWorkloads: the workload list reads as written and refuses
// what it cannot run.
func TestParseWorkloads(t *testing.T) {
	got, err := parseWorkloads("rt:5, 4x250")
	if err != nil || len(got) != 2 || !got[0].roundTrip || got[0].n != 5 || got[1].w != 4 || got[1].n != 250 {
		t.Errorf("parseWorkloads(rt:5, 4x250) = %+v, %v", got, err)
	}
	for _, bad := range []string{"", "4", "0x5", "rt:0", "4x", "axb"} {
		if _, err := parseWorkloads(bad); err == nil {
			t.Errorf("parseWorkloads(%q) = nil error, want one", bad)
		}
	}
}
