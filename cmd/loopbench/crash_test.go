package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/admincli"
	"github.com/agentbox/agentbox/internal/hub"
)

var built struct {
	once sync.Once
	path string
	err  error
}

// agentboxBinary builds agentbox once per test process.
func agentboxBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "loopbench-bin-")
		if err != nil {
			built.err = err
			return
		}
		built.path = filepath.Join(dir, "agentbox")
		if out, err := exec.Command("go", "build", "-o", built.path, "../agentbox").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build agentbox: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.path != "" {
		_ = os.RemoveAll(filepath.Dir(built.path))
	}
	os.Exit(code)
}

// TestKillUnderLoad: agentbox serve is killed (SIGKILL) while 4 senders
// send DMs to one receiver that polls and ACKs; restarted on the same data
// directory, the receiver's inbox holds every DM the server had answered
// with success, once and in each sender's order. Sends in flight at the
// kill may be there too (their outcome was unknown), at most one per
// sender. The kill comes after several checkpoints of the store's journal
// (each after about 256 KiB, 80 or so DMs), so the restart replays
// journals that were rewound over older records, one of them perhaps
// with a checkpoint in flight.
func TestKillUnderLoad(t *testing.T) {
	bin := agentboxBinary(t)
	data := t.TempDir()
	s, err := startServer(t.Context(), bin, data, false)
	if err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			s.stop()
		}
	}()
	var box struct {
		BoxID string `json:"box_id"`
	}
	if err := s.admin(&box, "create-box", "--name", "crash"); err != nil {
		t.Fatal(err)
	}
	ra, err := newAgent(t.Context(), s, box.BoxID, "receiver")
	if err != nil {
		t.Fatal(err)
	}
	const w, perSender, killAfter = 4, 2000, 600
	senders := make([]*agent, w)
	for i := range senders {
		if senders[i], err = newAgent(t.Context(), s, box.BoxID, fmt.Sprintf("sender-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var sends []sent
	var answered atomic.Int64
	var wg sync.WaitGroup
	for si, a := range senders {
		wg.Go(func() {
			for i := range perSender {
				t0 := time.Now()
				if _, err := send(t.Context(), a, ra.id, si, i); err != nil {
					return // the server is gone
				}
				mu.Lock()
				sends = append(sends, sent{sender: si, index: i, start: t0})
				mu.Unlock()
				answered.Add(1)
			}
		})
	}
	rec := &receiver{a: ra}
	wg.Go(func() {
		for range 100 * perSender {
			got, err := rec.poll(t.Context())
			if err != nil {
				return
			}
			if got == 0 {
				time.Sleep(pollPause)
			}
		}
	})
	deadline := time.Now().Add(2 * time.Minute)
	for answered.Load() < killAfter && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if err := syscall.Kill(s.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed = true
	_ = s.cmd.Wait()
	wg.Wait()
	for _, a := range append(senders, ra) {
		_ = a.cs.Close()
	}
	if len(sends) < killAfter {
		t.Fatalf("only %d sends answered before the deadline, want %d before the kill", len(sends), killAfter)
	}
	// The store alternates between two journals (one takes the appends
	// while the other's records are checkpointed); one must hold records.
	var journaled int64
	for _, name := range []string{"-journal", "-journal.1"} {
		fi, err := os.Stat(filepath.Join(data, admincli.DBName+name))
		if err != nil {
			t.Fatalf("the store's journal %s after the kill: %v", name, err)
		}
		journaled += fi.Size()
	}
	if journaled == 0 {
		t.Fatalf("the store's journals after the kill are empty, want records to replay")
	}

	s2, err := startServer(t.Context(), bin, data, false)
	if err != nil {
		t.Fatalf("restart after kill -9: %v", err)
	}
	defer s2.stop()
	after, err := connect(t.Context(), s2, ra.key)
	if err != nil {
		t.Fatal(err)
	}
	defer after.cs.Close()
	var all []delivery
	cursor := ""
	for range w*perSender/100 + 2 {
		args := map[string]any{"filter": "all", "limit": 100}
		if cursor != "" {
			args["cursor"] = cursor
		}
		page, err := call[hub.InboxListOutput](t.Context(), after, "inbox_list", args)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range page.Rows {
			b := ""
			if row.Message != nil {
				b = row.Message.BodyMD
			}
			all = append(all, delivery{body: b, seq: uint64(row.InboxSeq), at: time.Now()})
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	got := tally(sends, all)
	if got.Lost != 0 || got.Dup != 0 || got.OutOfOrder != 0 || got.Invented > w {
		t.Errorf("after kill -9 with %d sends answered (%d rows shown before it), the inbox holds %d rows: %v; want none lost, duplicated or reordered, at most %d in flight",
			len(sends), len(rec.deliveries), len(all), got, w)
	}
	t.Logf("killed after %d answered sends; %d rows in the inbox after restart (%d were in flight)", len(sends), len(all), got.Invented)
}
