package bolt_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/bolt"
)

// queueInOrder starts one goroutine per write, each only after the one
// before has queued, so that the group runs them in slice order. The first
// becomes the leader and is held (by BeforeFirstGroup) until hold returns.
// It returns each write's result.
func queueInOrder(t *testing.T, s *bolt.Store, writes []func() error, hold func(queued func() int)) []error {
	t.Helper()
	queuedNow := make(chan func() int, 1)
	release := make(chan struct{})
	bolt.BeforeFirstGroup(s, func(queued func() int) {
		queuedNow <- queued
		<-release
	})
	errs := make([]error, len(writes))
	var wg sync.WaitGroup
	var queued func() int
	for i, w := range writes {
		wg.Go(func() { errs[i] = w() })
		if i == 0 {
			queued = <-queuedNow
		}
		for queued() < i+1 {
			time.Sleep(time.Millisecond)
		}
	}
	hold(queued)
	close(release)
	wg.Wait()
	return errs
}

func TestGroupCommitMixesFailingConditions(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "agentbox.db"), bolt.Options{})
	defer s.Close()
	v1 := &store.Item{PK: "P", SK: "v", Version: 1}
	if err := s.Write(ctx, []store.Op{store.Put(v1, store.Absent)}); err != nil {
		t.Fatalf("Write(seed) = %v, want nil", err)
	}
	before := s.Commits()

	put := func(sk string, cond store.Condition, more ...store.Op) func() error {
		return func() error {
			ops := append([]store.Op{store.Put(&store.Item{PK: "P", SK: sk, Data: []byte(sk)}, cond)}, more...)
			return s.Write(ctx, ops)
		}
	}
	writes := []struct {
		name   string
		write  func() error
		failed []int // nil: succeeds
	}{
		{"new key", put("a", store.Absent), nil},
		{"stale version", put("b", store.Absent, store.Put(&store.Item{PK: "P", SK: "v", Version: 3}, store.AtVersion(2))), []int{1}},
		{"same key again, sees the first's put", put("a", store.Absent), []int{0}},
		{"current version", put("c", store.Absent, store.Put(&store.Item{PK: "P", SK: "v", Version: 2}, store.AtVersion(1))), nil},
		{"version moved by the member before", put("d", store.Absent, store.Put(&store.Item{PK: "P", SK: "v", Version: 2}, store.AtVersion(1))), []int{1}},
		{"two failing conditions", put("e", store.Present, store.Delete(store.Key{PK: "P", SK: "a"}, store.AtVersion(9))), []int{0, 1}},
		{"present after the first's put", put("a", store.Present), nil},
		{"check only", func() error { return s.Write(ctx, []store.Op{store.Check(store.Key{PK: "P", SK: "c"}, store.Present)}) }, nil},
	}
	fns := make([]func() error, len(writes))
	for i, w := range writes {
		fns[i] = w.write
	}
	errs := queueInOrder(t, s, fns, func(queued func() int) {})

	for i, w := range writes {
		cf, isCF := store.ConditionFailed(errs[i])
		switch {
		case w.failed == nil && errs[i] != nil:
			t.Errorf("write %q = %v, want nil", w.name, errs[i])
		case w.failed != nil && !isCF:
			t.Errorf("write %q = %v, want a ConditionFailedError on %v", w.name, errs[i], w.failed)
		case w.failed != nil && !slices.Equal(cf.Failed, w.failed):
			t.Errorf("write %q failed operations %v, want %v", w.name, cf.Failed, w.failed)
		}
	}
	if got := s.Commits() - before; got != 1 {
		t.Errorf("commits for a group of %d writes = %d, want 1", len(writes), got)
	}
	// Nothing of a failed write is there: b, d and e were never put; v
	// holds the version the one successful CAS wrote.
	for _, sk := range []string{"b", "d", "e"} {
		if it, err := s.Get(ctx, store.Key{PK: "P", SK: sk}); it != nil || err != nil {
			t.Errorf("Get(P/%s) = %+v, %v, want nothing of the failed write", sk, it, err)
		}
	}
	if it, err := s.Get(ctx, store.Key{PK: "P", SK: "v"}); err != nil || it == nil || it.Version != 2 {
		t.Errorf("Get(P/v) = %+v, %v, want version 2", it, err)
	}
	for _, sk := range []string{"a", "c"} {
		if it, err := s.Get(ctx, store.Key{PK: "P", SK: sk}); err != nil || it == nil || string(it.Data) != sk {
			t.Errorf("Get(P/%s) = %+v, %v, want the item put", sk, it, err)
		}
	}
}

func TestGroupCommitAllFailingCommitsNothing(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "agentbox.db"), bolt.Options{})
	defer s.Close()
	before := s.Commits()
	fail := func() error {
		return s.Write(ctx, []store.Op{store.Put(&store.Item{PK: "P", SK: "x"}, store.Present)})
	}
	errs := queueInOrder(t, s, []func() error{fail, fail, fail}, func(func() int) {})
	for i, err := range errs {
		if _, ok := store.ConditionFailed(err); !ok {
			t.Errorf("write %d = %v, want a ConditionFailedError", i, err)
		}
	}
	if got := s.Commits() - before; got != 0 {
		t.Errorf("commits for a group whose every write failed = %d, want 0", got)
	}
}

func TestGroupCommitIsolatesStoreErrors(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "agentbox.db"), bolt.Options{})
	defer s.Close()
	if err := bolt.PutRaw(s, "P", "corrupt", []byte{0xee}); err != nil {
		t.Fatalf("PutRaw = %v, want nil", err)
	}
	put := func(sk string) func() error {
		return func() error {
			return s.Write(ctx, []store.Op{store.Put(&store.Item{PK: "P", SK: sk}, store.Unconditional)})
		}
	}
	errs := queueInOrder(t, s, []func() error{put("a"), put("corrupt"), put("b")}, func(func() int) {})
	for i, want := range []bool{false, true, false} {
		if got := errs[i] != nil; got != want {
			t.Errorf("write %d = %v, want error: %v", i, errs[i], want)
		}
	}
	if _, ok := store.ConditionFailed(errs[1]); ok {
		t.Errorf("write to a corrupt item = %v, want a store error, not a failed condition", errs[1])
	}
	for _, sk := range []string{"a", "b"} {
		if it, err := s.Get(ctx, store.Key{PK: "P", SK: sk}); err != nil || it == nil {
			t.Errorf("Get(P/%s) = %+v, %v, want the item its write put beside the failing one", sk, it, err)
		}
	}
}

func TestGroupCommitDropsCanceledWaiter(t *testing.T) {
	s := openStore(t, filepath.Join(t.TempDir(), "agentbox.db"), bolt.Options{})
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	put := func(ctx context.Context, sk string) func() error {
		return func() error {
			return s.Write(ctx, []store.Op{store.Put(&store.Item{PK: "P", SK: sk}, store.Unconditional)})
		}
	}
	errs := queueInOrder(t, s,
		[]func() error{put(context.Background(), "lead"), put(ctx, "canceled"), put(context.Background(), "after")},
		func(queued func() int) {
			cancel()
			for queued() > 2 { // the canceled waiter withdraws itself
				time.Sleep(time.Millisecond)
			}
		})
	if errs[0] != nil || errs[2] != nil {
		t.Errorf("writes with live contexts = %v, %v, want nil, nil", errs[0], errs[2])
	}
	if !errors.Is(errs[1], context.Canceled) {
		t.Errorf("write canceled while queued = %v, want context.Canceled", errs[1])
	}
	if it, err := s.Get(context.Background(), store.Key{PK: "P", SK: "canceled"}); it != nil || err != nil {
		t.Errorf("Get(P/canceled) = %+v, %v, want nothing", it, err)
	}
}

// TestGroupCommitCrash kills (SIGKILL) a child process doing grouped
// writes from 16 goroutines and checks that every write it acknowledged is
// in the file.
func TestGroupCommitCrash(t *testing.T) {
	if path := os.Getenv("AGENTBOX_GROUPCOMMIT_CRASH_DB"); path != "" {
		groupCrashChild(path)
		return
	}
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	path := filepath.Join(t.TempDir(), "agentbox.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestGroupCommitCrash$")
	cmd.Env = append(os.Environ(), "AGENTBOX_GROUPCOMMIT_CRASH_DB="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child: %v", err)
	}
	var acked []string
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if k, ok := strings.CutPrefix(lines.Text(), "ack "); ok {
			acked = append(acked, k)
			if len(acked) == 400 {
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatalf("kill child: %v", err)
				}
			}
		}
	}
	err = cmd.Wait()
	if len(acked) < 400 {
		t.Fatalf("child acknowledged %d writes before exiting (%v), want at least 400", len(acked), err)
	}

	s := openStore(t, path, bolt.Options{})
	defer s.Close()
	for _, k := range acked {
		pk, sk, _ := strings.Cut(k, "/")
		if it, err := s.Get(context.Background(), store.Key{PK: pk, SK: sk}); err != nil || it == nil {
			t.Fatalf("Get(%s) after the kill = %+v, %v, want the acknowledged write (%d acknowledged)", k, it, err, len(acked))
		}
	}
}

// groupCrashChild writes until killed, printing "ack pk/sk" after each Write
// that returned nil.
func groupCrashChild(path string) {
	s, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for n := 0; ; n++ {
				it := &store.Item{PK: fmt.Sprintf("w%d", g), SK: fmt.Sprintf("%08d", n), Data: make([]byte, 512)}
				if err := s.Write(context.Background(), []store.Op{store.Put(it, store.Absent)}); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(2)
				}
				mu.Lock()
				fmt.Fprintf(os.Stdout, "ack %s/%s\n", it.PK, it.SK)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

func TestGroupCommitLeaderPanicReleasesLead(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "agentbox.db"), bolt.Options{})
	defer s.Close()
	bolt.BeforeFirstGroup(s, func(func() int) { panic("leader fails") })
	put := func(sk string) error {
		return s.Write(ctx, []store.Op{store.Put(&store.Item{PK: "P", SK: sk}, store.Unconditional)})
	}
	func() {
		defer func() {
			if p := recover(); p != "leader fails" {
				t.Errorf("Write with a panicking leader recovered %v, want the panic", p)
			}
		}()
		_ = put("first")
	}()
	// A lead still held would block this Write forever.
	if err := put("second"); err != nil {
		t.Errorf("Write after a leader panicked = %v, want nil", err)
	}
}

// TestGroupCommitOverflowingQueue queues more Writes than one group takes
// behind a held leader; every one must be answered and written.
func TestGroupCommitOverflowingQueue(t *testing.T) {
	const n = 300 // over maxGroup (128) twice
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "agentbox.db"), bolt.Options{})
	defer s.Close()
	bolt.BeforeFirstGroup(s, func(queued func() int) {
		for queued() < n {
			time.Sleep(time.Millisecond)
		}
	})
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = s.Write(ctx, []store.Op{store.Put(&store.Item{PK: "P", SK: fmt.Sprintf("%03d", i)}, store.Absent)})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("write %d = %v, want nil", i, err)
		}
	}
	items, err := s.Query(ctx, store.Query{PK: "P", Limit: n + 1})
	if err != nil || len(items) != n {
		t.Errorf("Query(P) = %d items, %v, want %d", len(items), err, n)
	}
	if c := s.Commits(); c > n/2 {
		t.Errorf("commits for %d writes queued at once = %d, want them grouped", n, c)
	}
}

func TestGroupCommitPanicInTransactionAnswersWaiters(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "agentbox.db"), bolt.Options{})
	defer s.Close()
	var panicked atomic.Bool
	bolt.InGroup(s, func() {
		if panicked.CompareAndSwap(false, true) {
			panic("engine fails")
		}
	})
	put := func(sk string) func() error {
		return func() (err error) {
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("panic: %v", p)
				}
			}()
			return s.Write(ctx, []store.Op{store.Put(&store.Item{PK: "P", SK: sk}, store.Unconditional)})
		}
	}
	errs := queueInOrder(t, s, []func() error{put("lead"), put("follower")}, func(func() int) {})
	if errs[0] == nil || !strings.HasPrefix(errs[0].Error(), "panic: engine fails") {
		t.Errorf("leader's Write = %v, want the panic", errs[0])
	}
	if errs[1] == nil {
		t.Errorf("follower's Write in the panicking group = nil, want an error")
	}
	for _, sk := range []string{"lead", "follower"} {
		if it, err := s.Get(ctx, store.Key{PK: "P", SK: sk}); it != nil || err != nil {
			t.Errorf("Get(P/%s) = %+v, %v, want nothing of the rolled-back group", sk, it, err)
		}
	}
	if err := put("after")(); err != nil {
		t.Errorf("Write after a group panicked = %v, want nil", err)
	}
}
