package dynamotest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentbox/agentbox/internal/store"
)

// Handler wraps a minidyn handler (server.NewServer()) to remove two of its
// defects that would make tests fail for reasons no real DynamoDB has:
//
//   - Races. minidyn changes its table map (CreateTable, DeleteTable)
//     without its own lock. Handler runs table management and every write
//     alone, and reads concurrently with each other.
//
//   - Stale index entries. When a Put replaces an item that was in a
//     secondary index with one that is not (a sparse index), minidyn keeps
//     the old index entry; deleting the item later leaves that entry behind
//     and shifts minidyn's index cursor, so later index queries silently
//     skip other items. After each successful PutItem or TransactWriteItems
//     Put of an item missing an index key, Handler repairs the index while
//     still holding the write lock: it re-puts the item with placeholder
//     index keys (replacing any stale entry), deletes it (removing the
//     placeholder), and puts it back as the caller sent it.
//
//   - Partial cancellation reasons. minidyn stops a transaction at its
//     first failed condition and names only that one; DynamoDB evaluates
//     every condition and names each that failed. When minidyn cancels a
//     transaction, Handler evaluates the condition of every later item on
//     its own (a one-item transaction holding only a ConditionCheck, which
//     writes nothing) while still holding the write lock, so against the
//     same state, and reports each failure in the reasons.
//
// BatchWriteItem is passed through unrepaired; the adapter never uses it.
func Handler(engine http.Handler) http.Handler {
	return &handler{engine: engine}
}

type handler struct {
	mu     sync.RWMutex
	engine http.Handler
	seq    atomic.Int64
}

const targetPrefix = "DynamoDB_20120810."

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	target := r.Header.Get("X-Amz-Target")
	switch op := target[strings.LastIndexByte(target, '.')+1:]; op {
	case "GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems":
		h.mu.RLock()
		defer h.mu.RUnlock()
		h.engine.ServeHTTP(w, r)
	case "PutItem", "TransactWriteItems":
		h.mu.Lock()
		defer h.mu.Unlock()
		h.putAndRepair(w, r, op)
	default:
		h.mu.Lock()
		defer h.mu.Unlock()
		h.engine.ServeHTTP(w, r)
	}
}

// attrs is an item or key in DynamoDB's JSON, attribute values kept raw.
type attrs = map[string]json.RawMessage

type putRequest struct {
	TableName string `json:"TableName"`
	Item      attrs  `json:"Item"`
}

func (h *handler) putAndRepair(w http.ResponseWriter, r *http.Request, op string) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "dynamotest: reading request: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := httptest.NewRecorder()
	h.engine.ServeHTTP(rec, r)
	if op == "TransactWriteItems" && rec.Code == http.StatusBadRequest {
		if err := h.completeReasons(rec, body); err != nil {
			w.Header().Set("Content-Type", "application/x-amz-json-1.0")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, `{"__type":"InternalServerError","message":%q}`, "dynamotest: cancellation reasons: "+err.Error())
			return
		}
	}
	if rec.Code == http.StatusOK {
		if err := h.repair(op, body); err != nil {
			w.Header().Set("Content-Type", "application/x-amz-json-1.0")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, `{"__type":"InternalServerError","message":%q}`, "dynamotest: index repair: "+err.Error())
			return
		}
	}
	maps.Copy(w.Header(), rec.Header())
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

func (h *handler) repair(op string, body []byte) error {
	var puts []putRequest
	switch op {
	case "PutItem":
		var p putRequest
		if err := json.Unmarshal(body, &p); err != nil {
			return err
		}
		puts = append(puts, p)
	case "TransactWriteItems":
		var tx struct {
			TransactItems []struct {
				Put *putRequest `json:"Put"`
			} `json:"TransactItems"`
		}
		if err := json.Unmarshal(body, &tx); err != nil {
			return err
		}
		for _, ti := range tx.TransactItems {
			if ti.Put != nil {
				puts = append(puts, *ti.Put)
			}
		}
	}
	def := store.Definition()
	for _, p := range puts {
		placeheld := maps.Clone(p.Item)
		for _, ix := range def.Indexes {
			_, hasPK := p.Item[ix.PK]
			_, hasSK := p.Item[ix.SK]
			if hasPK && hasSK {
				continue
			}
			v, err := json.Marshal(map[string]string{"S": fmt.Sprintf("\x00dynamotest-%d", h.seq.Add(1))})
			if err != nil {
				return err
			}
			placeheld[ix.PK], placeheld[ix.SK] = v, v
		}
		if len(placeheld) == len(p.Item) {
			continue
		}
		key := attrs{def.PK: p.Item[def.PK], def.SK: p.Item[def.SK]}
		for _, step := range []struct {
			op   string
			body any
		}{
			{"PutItem", map[string]any{"TableName": p.TableName, "Item": placeheld}},
			{"DeleteItem", map[string]any{"TableName": p.TableName, "Key": key}},
			{"PutItem", map[string]any{"TableName": p.TableName, "Item": p.Item}},
		} {
			if err := h.call(step.op, step.body); err != nil {
				return err
			}
		}
	}
	return nil
}

func (h *handler) call(op string, in any) error {
	rec, err := h.do(op, in)
	if err != nil {
		return err
	}
	if rec.Code != http.StatusOK {
		return fmt.Errorf("%s answered %d", op, rec.Code)
	}
	return nil
}

// do sends one request to the engine directly (the caller holds the lock).
func (h *handler) do(op string, in any) (*httptest.ResponseRecorder, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set("X-Amz-Target", targetPrefix+op)
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	rec := httptest.NewRecorder()
	h.engine.ServeHTTP(rec, req)
	return rec, nil
}

// conditional is the part of a transaction item a condition needs.
type conditional struct {
	TableName                 string            `json:"TableName"`
	Key                       attrs             `json:"Key"`
	Item                      attrs             `json:"Item"`
	ConditionExpression       string            `json:"ConditionExpression"`
	ExpressionAttributeNames  map[string]string `json:"ExpressionAttributeNames"`
	ExpressionAttributeValues attrs             `json:"ExpressionAttributeValues"`
}

var placeholder = regexp.MustCompile(`[#:][A-Za-z0-9_]+`)

// completeReasons rewrites a cancelled transaction's response in rec so that
// every item whose condition fails is named, not only the first.
func (h *handler) completeReasons(rec *httptest.ResponseRecorder, body []byte) error {
	var resp map[string]json.RawMessage
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		return nil // not a JSON error body: leave it alone
	}
	var typ string
	_ = json.Unmarshal(resp["__type"], &typ)
	if !strings.HasSuffix(typ, "TransactionCanceledException") {
		return nil
	}
	var reasons []map[string]json.RawMessage
	if err := json.Unmarshal(resp["CancellationReasons"], &reasons); err != nil {
		return err
	}
	var tx struct {
		TransactItems []map[string]conditional `json:"TransactItems"`
	}
	if err := json.Unmarshal(body, &tx); err != nil {
		return err
	}
	if len(reasons) != len(tx.TransactItems) {
		return nil
	}
	def := store.Definition()
	failedSeen := false
	for i, ti := range tx.TransactItems {
		var code string
		_ = json.Unmarshal(reasons[i]["Code"], &code)
		if code == "ConditionalCheckFailed" {
			failedSeen = true
			continue
		}
		if !failedSeen || code != "None" {
			continue
		}
		for _, c := range ti {
			if c.ConditionExpression == "" {
				continue
			}
			key := c.Key
			if key == nil {
				key = attrs{def.PK: c.Item[def.PK], def.SK: c.Item[def.SK]}
			}
			check := map[string]any{"TableName": c.TableName, "Key": key, "ConditionExpression": c.ConditionExpression}
			// Only the placeholders the condition uses: the engine rejects
			// unused ones (an update's values, for instance).
			names, values := map[string]string{}, attrs{}
			for _, ph := range placeholder.FindAllString(c.ConditionExpression, -1) {
				if v, ok := c.ExpressionAttributeNames[ph]; ok {
					names[ph] = v
				}
				if v, ok := c.ExpressionAttributeValues[ph]; ok {
					values[ph] = v
				}
			}
			if len(names) > 0 {
				check["ExpressionAttributeNames"] = names
			}
			if len(values) > 0 {
				check["ExpressionAttributeValues"] = values
			}
			failed, err := h.checkFails(check)
			if err != nil {
				return err
			}
			if failed {
				reasons[i]["Code"] = json.RawMessage(`"ConditionalCheckFailed"`)
			}
		}
	}
	raw, err := json.Marshal(reasons)
	if err != nil {
		return err
	}
	resp["CancellationReasons"] = raw
	out, err := json.Marshal(resp)
	if err != nil {
		return err
	}
	rec.Body.Reset()
	rec.Body.Write(out)
	return nil
}

// checkFails runs a one-item transaction holding only check and reports
// whether its condition failed; any other failure is an error.
func (h *handler) checkFails(check map[string]any) (bool, error) {
	rec, err := h.do("TransactWriteItems", map[string]any{"TransactItems": []any{map[string]any{"ConditionCheck": check}}})
	if err != nil {
		return false, err
	}
	if rec.Code == http.StatusOK {
		return false, nil
	}
	if rec.Code == http.StatusBadRequest && strings.Contains(rec.Body.String(), "ConditionalCheckFailed") {
		return true, nil
	}
	return false, fmt.Errorf("condition probe answered %d", rec.Code)
}
