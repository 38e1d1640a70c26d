package hub_test

import (
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/limits"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// BenchmarkCheckpointSaveLimiter measures checkpoint_save with the
// limiter off and on. "on" counts every write in the agent's and the box's
// store-kept buckets and every call in the per-instance ones, at rates too
// high to refuse anything, so what is measured is the limiter's cost.
func BenchmarkCheckpointSaveLimiter(b *testing.B) {
	huge := limits.Rate{PerSecond: 1e9, Burst: 1e9}
	on := limits.Config{AgentMutations: huge, BoxMutations: huge, AgentCalls: huge, BoxCalls: huge}
	for _, ad := range teststores.All() {
		for _, mode := range []struct {
			name string
			cfg  *limits.Config
		}{{"off", nil}, {"on", &on}} {
			b.Run(ad.Name+"/"+mode.name, func(b *testing.B) {
				h, ag := benchFixtureOpts(b, ad, hub.Options{Limits: mode.cfg})
				benchSaves(b, h, ag)
			})
		}
	}
}
