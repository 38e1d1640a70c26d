package bolt_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/bolt"
)

// crashChildEnv, when set to a database path, turns TestCrashDurability
// into the child: it commits writes to that file forever, acknowledging
// each on stdout once Write has returned, until it is killed.
const crashChildEnv = "AGENTBOX_BOLT_CRASH_CHILD"

// crashWrite is write i: three items in one atomic Write.
func crashWrite(i int) []store.Op {
	pk := "crash#" + strconv.Itoa(i)
	ops := make([]store.Op, 0, 3)
	for _, sk := range []string{"a", "b", "c"} {
		ops = append(ops, store.Put(&store.Item{PK: pk, SK: sk, Version: 1, Data: []byte(`{"i":` + strconv.Itoa(i) + `}`)}, store.Absent))
	}
	return ops
}

// TestCrashDurability: a child process commits multi-item writes to a
// bbolt file and is killed with SIGKILL mid-stream, without closing the
// store. Reopened, the file must hold every write the child acknowledged,
// and no write in part: each one wholly or not at all.
//
// A process kill leaves the page cache to the kernel, so this proves
// atomicity and that an acknowledged write is committed, not that it was
// fsynced; TestSyncsEveryCommit guards the sync setting itself.
func TestCrashDurability(t *testing.T) {
	if path := os.Getenv(crashChildEnv); path != "" {
		crashChild(path)
		return
	}
	path := filepath.Join(t.TempDir(), "agentbox.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashDurability$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the child: %v", err)
	}
	const acks = 40
	acked := -1
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if n, ok := strings.CutPrefix(lines.Text(), "ack "); ok {
			if acked, err = strconv.Atoi(n); err != nil {
				t.Fatalf("child wrote %q", lines.Text())
			}
			if acked >= acks {
				break
			}
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL: %v", err)
	}
	_ = cmd.Wait()
	if acked < acks {
		t.Fatalf("child acknowledged %d writes before ending, want %d", acked+1, acks+1)
	}

	s := openStore(t, path, bolt.Options{})
	defer s.Close()
	for i := 0; ; i++ {
		keys := []store.Key{{PK: "crash#" + strconv.Itoa(i), SK: "a"}, {PK: "crash#" + strconv.Itoa(i), SK: "b"}, {PK: "crash#" + strconv.Itoa(i), SK: "c"}}
		items, err := s.BatchGet(context.Background(), keys)
		if err != nil {
			t.Fatalf("BatchGet(write %d) after the crash: %v", i, err)
		}
		present := 0
		for _, it := range items {
			if it != nil {
				present++
			}
		}
		switch {
		case present == 3:
			continue
		case present != 0:
			t.Fatalf("write %d after the crash: %d of its 3 items, want all or none", i, present)
		case i <= acked:
			t.Fatalf("write %d was acknowledged before the crash but is missing", i)
		}
		// The first write wholly absent; nothing may follow it.
		for j := i; j < i+3; j++ {
			if it, _ := s.Get(context.Background(), store.Key{PK: "crash#" + strconv.Itoa(j), SK: "a"}); it != nil {
				t.Fatalf("write %d present after absent write %d", j, i)
			}
		}
		t.Logf("%d writes acknowledged, %d found after SIGKILL", acked+1, i)
		return
	}
}

// crashChild commits crashWrite(0), crashWrite(1), ... acknowledging each,
// until killed. It never closes the store.
func crashChild(path string) {
	s, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(2)
	}
	for i := 0; ; i++ {
		if err := s.Write(context.Background(), crashWrite(i)); err != nil {
			fmt.Fprintln(os.Stderr, "child write:", err)
			os.Exit(2)
		}
		fmt.Fprintf(os.Stdout, "ack %d\n", i)
	}
}
