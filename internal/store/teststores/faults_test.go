package teststores_test

import (
	"errors"
	"testing"

	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// TestFaults: armed, Faults fails reads and writes separately with their
// errors, or panics in both; disarmed, it passes calls through.
func TestFaults(t *testing.T) {
	t.Parallel()
	f := teststores.NewFaults(teststores.All()[0].Open(t, nil))
	ctx := t.Context()
	it := &store.Item{PK: "P", SK: "a", Data: []byte("x")}
	k := it.Key()
	read := func() []error {
		_, g := f.Get(ctx, k)
		_, b := f.BatchGet(ctx, []store.Key{k})
		_, q := f.Query(ctx, store.Query{PK: "P"})
		return []error{g, b, q}
	}
	write := func() error { return f.Write(ctx, []store.Op{store.Put(it, store.Unconditional)}) }
	errRead, errWrite := errors.New("read fault"), errors.New("write fault")

	f.FailReads(errRead)
	for i, err := range read() {
		if !errors.Is(err, errRead) {
			t.Errorf("read %d with reads failing = %v, want %v", i, err, errRead)
		}
	}
	if err := write(); err != nil {
		t.Errorf("Write with only reads failing = %v, want nil", err)
	}
	f.FailReads(nil)
	f.FailWrites(errWrite)
	if err := write(); !errors.Is(err, errWrite) {
		t.Errorf("Write with writes failing = %v, want %v", err, errWrite)
	}
	for i, err := range read() {
		if err != nil {
			t.Errorf("read %d with only writes failing = %v, want nil", i, err)
		}
	}
	f.FailWrites(nil)
	f.Panic(true)
	for name, call := range map[string]func(){"read": func() { read() }, "write": func() { _ = write() }} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s with Panic(true) did not panic", name)
				}
			}()
			call()
		}()
	}
}
