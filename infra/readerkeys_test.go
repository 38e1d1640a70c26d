package infra_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbox/agentbox/infra"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/hub/hubtest"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// recordingStore records the keys every Write addresses.
type recordingStore struct {
	store.Store
	mu   sync.Mutex
	keys []store.Key
}

func (s *recordingStore) Write(ctx context.Context, ops []store.Op) error {
	s.mu.Lock()
	for _, op := range ops {
		k := op.Key
		if op.Item != nil {
			k = store.Key{PK: op.Item.PK, SK: op.Item.SK}
		}
		s.keys = append(s.keys, k)
	}
	s.mu.Unlock()
	return s.Store.Write(ctx, ops)
}

func (s *recordingStore) take() []store.Key {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.keys
	s.keys = nil
	return k
}

// stringLike is IAM's StringLike for the patterns ReaderWritableKeys uses:
// a literal, or a literal prefix and one trailing *.
func stringLike(t *testing.T, pattern, s string) bool {
	t.Helper()
	prefix, wild := strings.CutSuffix(pattern, "*")
	if strings.ContainsAny(prefix, "*?") {
		t.Fatalf("pattern %q: only a trailing * is supported here", pattern)
	}
	if wild {
		return strings.HasPrefix(s, prefix)
	}
	return s == pattern
}

// TestReadToolsWriteOnlyReaderKeys backs the reader role's one write
// grant with behaviour: every read-scope tool, called with its example
// arguments after enough idle time that its session is refreshed, writes
// only items whose partition key the role's LeadingKeys condition allows.
// A read tool that wrote anything else would be denied by IAM in
// production.
func TestReadToolsWriteOnlyReaderKeys(t *testing.T) {
	for _, adapter := range teststores.All() {
		t.Run(adapter.Name, func(t *testing.T) {
			const idle = time.Hour
			var rec *recordingStore
			w := hubtest.New(t, adapter, hubtest.Config{Options: hub.Options{SessionIdle: idle},
				Wrap: []func(store.Store) store.Store{func(s store.Store) store.Store { rec = &recordingStore{Store: s}; return rec }}})
			h, ctx, clock := w.Hub, w.Ctx, w.Clock
			cr := w.Prime(w.Alice)

			sessionWrites := 0
			for _, tool := range registry.New().Tools() {
				if tool.Scope != registry.ScopeRead {
					continue
				}
				clock.Advance(idle / 2) // past the refresh point, within the window
				rec.take()
				// Errors are fine (the example ids name nothing): what
				// matters is what the call wrote on its way.
				_, _ = tool.Invoke(ctx, h, cr, tool.ExampleArgs)
				for _, k := range rec.take() {
					allowed := false
					for _, p := range infra.ReaderWritableKeys {
						allowed = allowed || stringLike(t, p, k.PK)
					}
					if !allowed {
						t.Errorf("read tool %s wrote partition %q, which the reader role (LeadingKeys %v) may not", tool.Name, k.PK, infra.ReaderWritableKeys)
					}
					if strings.HasPrefix(k.PK, "ses#") {
						sessionWrites++
					}
				}
			}
			if sessionWrites == 0 {
				t.Errorf("no read tool refreshed its session: the test exercised no write and proves nothing")
			}
		})
	}
}
