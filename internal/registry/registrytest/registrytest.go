// Package registrytest holds the registry's error contract in tests: a
// registry built with Guard fails the test whenever a tool answers a code
// its contract does not list, whichever transport called it. AsJSON is
// what a client of either transport sees of a tool's result.
package registrytest

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/registry"
)

// Guard is an observer option that fails t on an undeclared code.
func Guard(t testing.TB) registry.Option {
	return registry.WithObserver(func(tool *registry.Tool, code apperr.Code, declared bool) {
		if !declared {
			t.Errorf("tool %s answered %q, which its contract does not list (Errors %v)", tool.Name, code, tool.Errors)
		}
	})
}

// Recorder counts the codes each tool answered, and the undeclared ones.
type Recorder struct {
	mu         sync.Mutex
	seen       map[string]map[apperr.Code]int
	undeclared []string
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{seen: map[string]map[apperr.Code]int{}} }

// Option is the observer option that feeds the recorder.
func (r *Recorder) Option() registry.Option {
	return registry.WithObserver(func(tool *registry.Tool, code apperr.Code, declared bool) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.seen[tool.Name] == nil {
			r.seen[tool.Name] = map[apperr.Code]int{}
		}
		r.seen[tool.Name][code]++
		if !declared {
			r.undeclared = append(r.undeclared, tool.Name+" answered "+string(code))
		}
	})
}

// Seen reports how often tool answered code.
func (r *Recorder) Seen(tool string, code apperr.Code) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[tool][code]
}

// TakeUndeclared returns the undeclared answers recorded since the last
// call and forgets them.
func (r *Recorder) TakeUndeclared() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.undeclared
	r.undeclared = nil
	return out
}

// AsJSON is v through its JSON encoding, decoded into a T: with T any, the
// generic form (maps, slices, float64, strings) a client sees, so results
// and documents compare whatever Go types produced them.
func AsJSON[T any](t testing.TB, v any) T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal(%T): %v", v, err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("json.Unmarshal(%s) into %T: %v", b, out, err)
	}
	return out
}
