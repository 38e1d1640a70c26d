package dynamo_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/truora/minidyn/server"

	"github.com/agentbox/agentbox/infra"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/dynamo"
	"github.com/agentbox/agentbox/internal/store/dynamo/dynamotest"
	"github.com/agentbox/agentbox/internal/store/storetest"
)

// TestConformance runs the port's conformance suite against the adapter on
// minidyn, in process; it always runs. The engine records each request's
// operation (and, for a transaction, the kind of each item), and the test
// then checks that the actions the template grants its roles
// (infra.ReadActions, infra.WriteActions) authorize every one, and that
// none is granted which the adapter never needs.
func TestConformance(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	used := map[string]bool{}
	engine := dynamotest.Handler(server.NewServer())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target := r.Header.Get("X-Amz-Target")
		op := target[strings.LastIndexByte(target, '.')+1:]
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		mu.Lock()
		if op == "TransactWriteItems" {
			var tx struct{ TransactItems []map[string]json.RawMessage }
			_ = json.Unmarshal(body, &tx)
			for _, ti := range tx.TransactItems {
				for kind := range ti {
					used["dynamodb:"+map[string]string{"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem", "ConditionCheck": "ConditionCheckItem"}[kind]] = true
				}
			}
		} else {
			used["dynamodb:"+op] = true
		}
		mu.Unlock()
		engine.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	client := dynamotest.NewClient(srv.URL)

	storetest.RunWith(t, func(t *testing.T, now func() time.Time) store.Store {
		return dynamo.New(client, dynamotest.NewTable(t, client), dynamo.Options{Now: now})
	}, suiteOptions)

	granted := append(slices.Clone(infra.ReadActions), infra.WriteActions...)
	// Table management is the template's (or a local run's), not a role's.
	for _, admin := range []string{"dynamodb:CreateTable", "dynamodb:DescribeTable", "dynamodb:UpdateTimeToLive"} {
		delete(used, admin)
	}
	for action := range used {
		if !slices.Contains(granted, action) {
			t.Errorf("the adapter called %s, which the template's roles do not grant (infra.ReadActions, infra.WriteActions)", action)
		}
	}
	for _, action := range granted {
		if !used[action] {
			t.Errorf("%s is granted but the conformance workload never needed it", action)
		}
	}
}
