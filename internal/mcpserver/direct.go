package mcpserver

// # Why tools/call bypasses the SDK's server
//
// In stateless mode the SDK serves every POST by building a throwaway
// server session: a JSON-RPC connection with its goroutines, a faked
// initialize, and three or more decodes of the same bytes, each through a
// decoder that allocates a 32 KiB buffer (go-sdk internal/json.Unmarshal
// wraps the bytes in a bytes.Reader and a segmentio json.Decoder). For a
// one-shot tools/call that was ≈ 90% of the call's allocations and ≈ 4× the
// CPU of the same call over REST (BenchmarkHandlerCall).
//
// None of that machinery does anything for tools/call on this server: the
// tools are registered through the SDK's low-level AddTool, which leaves
// every argument check to registry.Tool.Invoke, and a stateless session can
// neither notify nor ask the client anything. So this layer answers
// tools/call requests itself: it decodes the envelope once (decodeMessage),
// runs the same tool handler the SDK would run (handler.tools), and writes
// the answer the SDK would write — the SDK's own result type and JSON-RPC
// encoder, the SDK's empty-content rule, the same fixed error messages.
// TestDirectCallMatchesSDK sends the same requests through both paths and
// compares the answers, so the two cannot drift apart unnoticed.
//
// The SDK still serves everything else of the 2025 revisions (initialize,
// tools/list, ping, notifications), and a tools/call notification, which
// has no answer to write; 2026-07-28 requests are modern.go's.

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentbox/agentbox/internal/strictjson"
)

// errNotJSONRPC is decodeMessage's one failure: the caller answers it with
// a fixed message, never with the reason.
var errNotJSONRPC = errors.New("mcpserver: not a JSON-RPC 2.0 message")

// decodeMessage is jsonrpc.DecodeMessage without the SDK's per-call 32 KiB
// decoder. It keeps that function's rules: keys match exactly (the SDK
// decodes with case-insensitive matching off), unknown keys are ignored,
// "jsonrpc" must be "2.0", a present "method" makes a request, a numeric id
// is truncated to an integer (jsonrpc.MakeID), and a message without a
// method must carry an id. raw has passed the strict JSON gate, so it has
// no duplicate keys.
func decodeMessage(raw []byte) (jsonrpc.Message, error) {
	var version, rawID, rawMethod, params, result, rawErr json.RawMessage
	if !strictjson.Members(raw, func(key, value []byte) bool {
		switch string(key) {
		case "jsonrpc":
			version = value
		case "id":
			rawID = value
		case "method":
			rawMethod = value
		case "params":
			params = value
		case "result":
			result = value
		case "error":
			rawErr = value
		}
		return true
	}) {
		return nil, errNotJSONRPC
	}
	if string(version) != `"2.0"` {
		var v string
		if err := json.Unmarshal(version, &v); err != nil || v != "2.0" {
			return nil, errNotJSONRPC
		}
	}
	id, err := decodeID(rawID)
	if err != nil {
		return nil, errNotJSONRPC
	}
	if rawMethod != nil {
		method, ok := decodeString(rawMethod)
		if !ok {
			return nil, errNotJSONRPC
		}
		return &jsonrpc.Request{Method: method, ID: id, Params: params}, nil
	}
	if !id.IsValid() {
		return nil, errNotJSONRPC
	}
	resp := &jsonrpc.Response{ID: id, Result: result}
	if !isNull(rawErr) {
		var we jsonrpc.Error
		if err := json.Unmarshal(rawErr, &we); err != nil {
			return nil, errNotJSONRPC
		}
		resp.Error = &we
	}
	return resp, nil
}

// decodeID is jsonrpc.MakeID of the decoded id: absent or null is no id, a
// number is truncated to an integer, a string is kept.
func decodeID(raw json.RawMessage) (jsonrpc.ID, error) {
	if isNull(raw) {
		return jsonrpc.ID{}, nil
	}
	if s, ok := decodeString(raw); ok {
		return jsonrpc.MakeID(s)
	}
	if n, ok := smallInteger(raw); ok {
		// What json.Unmarshal gives for it, without a decoder.
		return jsonrpc.MakeID(float64(n))
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return jsonrpc.ID{}, err
	}
	return jsonrpc.MakeID(v)
}

// smallInteger is raw as an integer when it is a JSON integer of at most
// 15 digits (every client's ids): exact as a float64, as json.Unmarshal
// would decode it.
func smallInteger(raw json.RawMessage) (int64, bool) {
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 || (digits[0] == '0' && len(digits) > 1) {
		return 0, false
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if len(digits) < len(raw) {
		n = -n
	}
	return n, true
}

// decodeString decodes a JSON string, without a decoder when it has no
// escapes.
func decodeString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err == nil
}

// isNull reports a JSON null (or nothing at all).
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// directCall runs a tools/call request (one with an id) as the SDK would,
// without the SDK's session (see the note at the top of this file), and
// returns the tool's answer for writeResult. When the call names no tool or
// is malformed it has answered already and reports false.
func (s *handler) directCall(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) (answer, bool) {
	// The SDK's answers to missing params: the transport refuses a call
	// without "params" before reading its id, and the session a "params"
	// that is null.
	switch {
	case req.Params == nil:
		writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, rpcMessages[jsonrpc.CodeInvalidRequest])
		return answer{}, false
	case isNull(req.Params):
		writeJSONRPCError(w, http.StatusOK, req.ID, jsonrpc.CodeInvalidRequest, rpcMessages[jsonrpc.CodeInvalidRequest])
		return answer{}, false
	}
	params, ok := callParams(req.Params)
	if !ok {
		writeJSONRPCError(w, http.StatusOK, req.ID, jsonrpc.CodeInvalidParams, invalidCallMessage)
		return answer{}, false
	}
	run, ok := s.tools[params.Name]
	if !ok {
		writeJSONRPCError(w, http.StatusOK, req.ID, jsonrpc.CodeInvalidParams, invalidCallMessage)
		return answer{}, false
	}
	return run(r.Context(), r.Header, params.Arguments), true
}

// invalidCallMessage is the one answer to a tools/call whose params are
// malformed or name no tool; the name is not echoed.
const invalidCallMessage = "Invalid params: unknown tool or malformed call; tools/list names the tools."

// callParams decodes tools/call params with the SDK's rules for
// CallToolParamsRaw: exact keys, unknown keys ignored, a name that is a
// string, _meta an object when present.
func callParams(raw json.RawMessage) (*mcp.CallToolParamsRaw, bool) {
	p := &mcp.CallToolParamsRaw{}
	ok := true
	if !strictjson.Members(raw, func(key, value []byte) bool {
		switch string(key) {
		case "name":
			if !isNull(value) {
				p.Name, ok = decodeString(value)
			}
		case "arguments":
			p.Arguments = value
		case "_meta":
			ok = isNull(value) || value[0] == '{'
		}
		return ok
	}) || !ok {
		return nil, false
	}
	return p, true
}

// writeResult writes a tool's answer as the JSON-RPC result the SDK
// writes for it, with the headers of the SDK's JSON response mode. The
// bytes are assembled here rather than by marshaling the SDK's
// CallToolResult, which would copy and re-validate the rendered output
// twice more; TestDirectCallMatchesSDK holds the two forms equal.
// (Failures of this layer go through writeJSONRPCError, as the SDK's do
// after sanitize.)
func writeResult(w http.ResponseWriter, id jsonrpc.ID, ans answer) {
	writeTypedResult(w, id, ans, "")
}

// writeTypedResult is writeResult with a resultType member (its JSON
// string, as 2026-07-28 requires on every result), or none when it is "".
func writeTypedResult(w http.ResponseWriter, id jsonrpc.ID, ans answer, resultType string) {
	idJSON, err := json.Marshal(id.Raw())
	if err != nil {
		// Unreachable: an id decoded from JSON encodes again.
		idJSON = []byte("null")
	}
	// The text block is the same bytes as structuredContent, as a JSON
	// string without HTML escaping: a model reads "<key>", not
	// "\u003ckey\u003e". (The SDK's TextContent escapes; this path is the
	// one that answers.)
	text, err := strictjson.Marshal(string(ans.data))
	if err != nil {
		// Unreachable: a string always encodes.
		text = []byte(`""`)
	}
	var b bytes.Buffer
	b.Grow(len(idJSON) + len(text) + len(ans.data) + 128)
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(idJSON)
	b.WriteString(`,"result":{"content":[{"type":"text","text":`)
	b.Write(text)
	b.WriteString(`}],"structuredContent":`)
	b.Write(ans.data)
	if ans.code != "" {
		b.WriteString(`,"isError":true`)
	}
	if resultType != "" {
		b.WriteString(`,"resultType":`)
		b.WriteString(resultType)
	}
	b.WriteString(`}}`)
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b.Bytes())
}
