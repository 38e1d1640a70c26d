package dynamo_test

import (
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/dynamo/mototest"
	"github.com/agentbox/agentbox/internal/store/storetest"
)

// TestConformanceMoto runs the conformance suite against moto, a second
// DynamoDB emulator independent of minidyn. The races that rely on
// transaction isolation are skipped there with mototest.NoIsolation; they
// run in TestConformance.
func TestConformanceMoto(t *testing.T) {
	t.Parallel()
	opts := suiteOptions
	opts.NoIsolation = mototest.NoIsolation
	storetest.RunWith(t, func(t *testing.T, now func() time.Time) store.Store {
		return mototest.NewStore(t, now)
	}, opts)
}
