package hub

// Waiting for attention: inbox_list's wait wakes on an arrival in this
// process and polls the inbox head for arrivals committed elsewhere.

import (
	"context"
	"sync"
	"time"

	"github.com/agentbox/agentbox/internal/hub/table"
)

// waitPoll is how often a waiting inbox_list re-reads the inbox head,
// for arrivals committed by other processes (Lambda instances).
const waitPoll = time.Second

// waiters wakes inbox_list calls waiting in this process when attention
// arrives for their agent; arrivals from other processes are found by
// polling the inbox head.
type waiters struct {
	mu sync.Mutex
	ch map[string]chan struct{}
	// hook, when set (OnAttention), also hears every arrival.
	hook func(agents []string)
}

// wait returns a channel closed at the agent's next arrival.
func (w *waiters) wait(agent string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch == nil {
		w.ch = map[string]chan struct{}{}
	}
	ch, ok := w.ch[agent]
	if !ok {
		ch = make(chan struct{})
		w.ch[agent] = ch
	}
	return ch
}

// notify wakes every waiter of the agents.
func (w *waiters) notify(agents []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.hook != nil {
		w.hook(agents)
	}
	for _, a := range agents {
		if ch, ok := w.ch[a]; ok {
			close(ch)
			delete(w.ch, a)
		}
	}
}

// OnAttention makes f hear of every attention arrival in this process (the
// local webhook dispatcher's wake-up); f must not block.
func (h *Hub) OnAttention(f func(agents []string)) {
	h.waiters.mu.Lock()
	defer h.waiters.mu.Unlock()
	h.waiters.hook = f
}

// waitInbox waits until the agent's inbox head passes after or d elapses,
// and returns the head then.
func (h *Hub) waitInbox(ctx context.Context, agent string, after uint64, d time.Duration) (uint64, error) {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	poll := time.NewTicker(waitPoll)
	defer poll.Stop()
	for {
		woke := h.waiters.wait(agent)
		head, err := h.st.Get(ctx, table.InboxHeadKey(agent))
		if err != nil {
			return 0, storageErr(err)
		}
		if v := version(head); v > after {
			return v, nil
		}
		select {
		case <-ctx.Done():
			return after, nil
		case <-deadline.C:
			return after, nil
		case <-woke:
		case <-poll.C:
		}
	}
}
