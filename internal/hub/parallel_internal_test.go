package hub

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

func TestEachLimit(t *testing.T) {
	var running, peak atomic.Int32
	ran := make([]bool, 50)
	err := eachLimit(context.Background(), len(ran), 4, func(_ context.Context, i int) error {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		ran[i] = true
		running.Add(-1)
		return nil
	})
	if err != nil {
		t.Fatalf("eachLimit = %v, want nil", err)
	}
	for i, ok := range ran {
		if !ok {
			t.Errorf("fn(%d) never ran", i)
		}
	}
	if p := peak.Load(); p > 4 {
		t.Errorf("%d calls ran at once, want at most 4", p)
	}

	first, second := errors.New("first"), errors.New("second")
	err = eachLimit(context.Background(), 10, 3, func(_ context.Context, i int) error {
		switch i {
		case 3:
			return first
		case 7:
			return second
		}
		return nil
	})
	if !errors.Is(err, first) {
		t.Errorf("eachLimit = %v, want the lowest index's error %v", err, first)
	}
}
