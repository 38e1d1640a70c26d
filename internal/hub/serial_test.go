package hub_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// casFailures counts Writes that failed a condition: with one process's
// writers of a counter serialized (serial.go), DMs racing to one receiver
// should lose no compare-and-set.
type casFailures struct {
	store.Store
	n atomic.Int64
}

func (c *casFailures) Write(ctx context.Context, ops []store.Op) error {
	err := c.Store.Write(ctx, ops)
	if _, ok := store.ConditionFailed(err); ok {
		c.n.Add(1)
	}
	return err
}

// TestHotCounterWritersQueue races 8 senders of 10 DMs each to one
// receiver in one process. Every send succeeds, the receiver's inbox holds
// each message once, hole-free (f.inboxes checks it). On DynamoDB, where
// the lock is held through the commit, no send loses its compare-and-set
// at all; on bbolt the lock is handed on before the commit (pipelining),
// so a successor can reach the store first and run again, rarely.
func TestHotCounterWritersQueue(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var counter *casFailures
		f := newFixture(t, ad, func(s store.Store) store.Store { counter = &casFailures{Store: s}; return counter })
		const senders, each = 8, 10
		var creds []hub.Credentials
		for i := range senders {
			creds = append(creds, f.prime(f.mustAgent(f.box, fmt.Sprintf("sender-%d", i))))
		}
		counter.n.Store(0)
		var wg sync.WaitGroup
		var mu sync.Mutex
		sent := map[string]bool{}
		for i, cr := range creds {
			wg.Go(func() {
				for j := range each {
					out, err := sendDM(f, cr, fmt.Sprintf("k-%d-%d", i, j), f.b.AgentID, "hello")
					if err != nil {
						t.Errorf("sender %d, DM %d: %v", i, j, err)
						return
					}
					mu.Lock()
					sent[out.MessageID] = true
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		rows := f.attention(f.b.AgentID)
		if len(rows) != senders*each {
			t.Fatalf("receiver has %d inbox rows, want %d", len(rows), senders*each)
		}
		for _, r := range rows {
			if !sent[r.MessageID] {
				t.Errorf("inbox row %d is message %s, which no sender sent (or it is there twice)", r.Seq, r.MessageID)
			}
			delete(sent, r.MessageID)
		}
		if !ad.OrderedWrites && counter.n.Load() != 0 {
			t.Errorf("%d writes failed a condition; writers of one counter in one process should queue, not collide", counter.n.Load())
		}
		t.Logf("%s: %d writes failed a condition of %d sends", ad.Name, counter.n.Load(), senders*each)
	})
}

// failingHead holds the first Write that moves the receiver's inbox head
// until released, then fails it without writing: a pipelined predecessor
// whose commit fails after its successor planned on top of it.
type failingHead struct {
	store.Store
	head      store.Key
	held      chan struct{} // closed when the first such Write arrives
	release   chan struct{} // closed by the test to fail it
	successor chan struct{} // closed when a later such Write failed its condition
	calls     atomic.Int64
}

func (f *failingHead) Write(ctx context.Context, ops []store.Op) error {
	moves := false
	for _, op := range ops {
		if op.Kind == store.OpPut && op.Item.PK == f.head.PK && op.Item.SK == f.head.SK {
			moves = true
		}
	}
	if !moves {
		return f.Store.Write(ctx, ops)
	}
	switch f.calls.Add(1) {
	case 1:
		close(f.held)
		<-f.release
		return errors.New("injected: the disk went away")
	case 2:
		err := f.Store.Write(ctx, ops)
		if _, ok := store.ConditionFailed(err); ok {
			close(f.successor)
		}
		return err
	}
	return f.Store.Write(ctx, ops)
}

// TestPipelinedPredecessorFails: alice's DM to bob hands the inbox head on
// before its commit, carol's DM plans on top of it, and then alice's
// commit fails. Carol's compare-and-set must fail with it, and her call
// run again on what the store holds: bob ends with carol's message alone,
// as row 1.
func TestPipelinedPredecessorFails(t *testing.T) {
	t.Parallel()
	ad := teststores.All()[0]
	if !ad.OrderedWrites {
		t.Fatalf("adapter %s: want the embedded engine, whose writes are ordered", ad.Name)
	}
	var fh *failingHead
	f := newFixture(t, ad, func(s store.Store) store.Store {
		fh = &failingHead{Store: s, held: make(chan struct{}), release: make(chan struct{}), successor: make(chan struct{})}
		return fh
	})
	fh.head = store.Key{PK: "agent#" + f.b.AgentID, SK: "inbox"}
	crA, crC := f.prime(f.a), f.prime(f.mustAgent(f.box, "carol"))

	aliceErr := make(chan error, 1)
	go func() {
		_, err := sendDM(f, crA, "alice-1", f.b.AgentID, "from alice")
		aliceErr <- err
	}()
	<-fh.held
	type result struct {
		out *hub.MessageSendOutput
		err error
	}
	carol := make(chan result, 1)
	go func() {
		out, err := sendDM(f, crC, "carol-1", f.b.AgentID, "from carol")
		carol <- result{out, err}
	}()
	select {
	case <-fh.successor:
	case <-time.After(30 * time.Second):
		t.Fatalf("carol's first write never failed on alice's pending head; was it planned on top of it?")
	}
	close(fh.release)

	if err := <-aliceErr; err == nil {
		t.Errorf("alice's send succeeded; its write was failed")
	} else if e, _ := apperr.As(err); e == nil || e.Code != apperr.StorageFailure {
		t.Errorf("alice's send: %v, want STORAGE_FAILURE", err)
	}
	r := <-carol
	if r.err != nil {
		t.Fatalf("carol's send: %v, want success on a retry", r.err)
	}
	rows := f.attention(f.b.AgentID)
	if len(rows) != 1 || rows[0].MessageID != r.out.MessageID || rows[0].Seq != 1 {
		t.Errorf("bob's inbox = %+v, want carol's message alone as row 1", rows)
	}
}
