// Package hookclient is the small client that hooks and scripts run:
//
//	agentbox call TOOL [JSON]
//	agentbox inbox [--wait SECONDS] [--summary]
//
// It reads AGENTBOX_URL (the server's base URL, e.g. http://127.0.0.1:8787)
// and AGENTBOX_KEY (the agent's key) from the environment, and speaks MCP
// 2026-07-28 to URL/mcp: one POST per tool call, no initialize, the session
// handle passed as the session_id argument. The handle agent_prime returns
// is kept in a state file (AGENTBOX_STATE, else $XDG_STATE_HOME/agentbox,
// else ~/.local/state/agentbox; directory 0700, file 0600), keyed by a hash
// of the URL and the key, so that later calls reuse the session. A call
// whose session is unknown or expired primes once more and retries.
//
// Exit codes, for a hook to branch on:
//
//	0  the call succeeded; for inbox: there is unread attention
//	1  the tool answered an error (its envelope is printed on stderr)
//	2  usage error
//	3  inbox only: nothing unread (after the wait, if one was asked)
//	4  AGENTBOX_KEY missing or refused (AUTH_FAILED)
//	5  AGENTBOX_URL missing or the server unreachable or not answering MCP
package hookclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Exit codes (see the package comment).
const (
	ExitOK          = 0
	ExitToolError   = 1
	ExitUsage       = 2
	ExitEmpty       = 3
	ExitAuth        = 4
	ExitUnreachable = 5
)

const protocolVersion = "2026-07-28"

// Env is the environment the client reads; Getenv is os.Getenv in the
// binary.
type Env func(string) string

// client is one configured connection.
type client struct {
	endpoint string
	key      string
	state    string // state file path
	slot     string // this URL+key's entry in the state file
	http     *http.Client
}

// exitError carries an exit code and what to print on stderr.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func fail(code int, format string, a ...any) error {
	return &exitError{code, fmt.Sprintf(format, a...)}
}

func newClient(env Env) (*client, error) {
	raw := strings.TrimRight(env("AGENTBOX_URL"), "/")
	if raw == "" {
		return nil, fail(ExitUnreachable, "AGENTBOX_URL is not set: set it to the server's base URL, e.g. http://127.0.0.1:8787")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fail(ExitUnreachable, "AGENTBOX_URL is not an http(s) URL")
	}
	key := env("AGENTBOX_KEY")
	if key == "" {
		return nil, fail(ExitAuth, "AGENTBOX_KEY is not set: set it to the agent's key (agentbox admin create-agent prints it)")
	}
	dir := env("AGENTBOX_STATE")
	if dir == "" {
		if x := env("XDG_STATE_HOME"); x != "" {
			dir = filepath.Join(x, "agentbox")
		} else if home := env("HOME"); home != "" {
			dir = filepath.Join(home, ".local", "state", "agentbox")
		} else {
			return nil, fail(ExitUsage, "no state directory: set AGENTBOX_STATE, XDG_STATE_HOME or HOME")
		}
	}
	sum := sha256.Sum256([]byte(raw + "\x00" + key))
	// The base URL, the stack's ApiUrl (…/v1) or its McpUrl (…/mcp) all
	// name the same MCP endpoint.
	endpoint := strings.TrimSuffix(raw, "/v1")
	if !strings.HasSuffix(endpoint, "/mcp") {
		endpoint += "/mcp"
	}
	return &client{endpoint: endpoint, key: key, state: filepath.Join(dir, "sessions.json"),
		slot: hex.EncodeToString(sum[:12]), http: &http.Client{Timeout: 60 * time.Second}}, nil
}

// toolResult is a tools/call result.
type toolResult struct {
	IsError    bool            `json:"isError"`
	Structured json.RawMessage `json:"structuredContent"`
}

type envelope struct {
	Error *struct {
		Code string `json:"code"`
	} `json:"error"`
}

// rawCall posts one tools/call and returns its result.
func (c *client) rawCall(ctx context.Context, tool string, args map[string]any) (*toolResult, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
		"name": tool, "arguments": args,
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    protocolVersion,
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "agentbox-hook", "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}}})
	if err != nil {
		return nil, fail(ExitUsage, "arguments: %v", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fail(ExitUnreachable, "AGENTBOX_URL: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", protocolVersion)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	req.Header.Set("Authorization", "Bearer "+c.key)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fail(ExitUnreachable, "cannot reach the server at AGENTBOX_URL: %v", errors.Unwrap(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fail(ExitUnreachable, "reading the server's answer: %v", err)
	}
	if resp.StatusCode == http.StatusUnauthorized {
		return nil, fail(ExitAuth, "the server refused AGENTBOX_KEY (HTTP 401)")
	}
	var rpc struct {
		Result *toolResult `json:"result"`
		Error  *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &rpc); err != nil {
		return nil, fail(ExitUnreachable, "the server at AGENTBOX_URL did not answer MCP (HTTP %d)", resp.StatusCode)
	}
	if rpc.Error != nil {
		return nil, fail(ExitToolError, "MCP error %d: %s", rpc.Error.Code, rpc.Error.Message)
	}
	if rpc.Result == nil {
		return nil, fail(ExitUnreachable, "the server at AGENTBOX_URL answered without a result (HTTP %d)", resp.StatusCode)
	}
	return rpc.Result, nil
}

// errorCode is the tool error's code, "" on success.
func (r *toolResult) errorCode() string {
	if !r.IsError {
		return ""
	}
	var e envelope
	if json.Unmarshal(r.Structured, &e) != nil || e.Error == nil {
		return "UNKNOWN"
	}
	return e.Error.Code
}

// toolFailure turns a tool error into its exit.
func (r *toolResult) toolFailure() error {
	code := ExitToolError
	if r.errorCode() == "AUTH_FAILED" {
		code = ExitAuth
	}
	return &exitError{code, string(r.Structured)}
}

// Call runs tool with args in the stored session, priming first when there
// is none and once more when the session is no longer known.
func (c *client) Call(ctx context.Context, tool string, args map[string]any) (json.RawMessage, error) {
	if args == nil {
		args = map[string]any{}
	}
	if tool == "agent_prime" {
		res, err := c.rawCall(ctx, tool, args)
		if err != nil {
			return nil, err
		}
		if res.IsError {
			return nil, res.toolFailure()
		}
		var out struct {
			SessionID string `json:"session_id"`
		}
		if json.Unmarshal(res.Structured, &out) == nil && out.SessionID != "" {
			if err := c.saveSession(out.SessionID); err != nil {
				return nil, err
			}
		}
		return res.Structured, nil
	}
	if _, given := args["session_id"]; given {
		res, err := c.rawCall(ctx, tool, args)
		if err != nil {
			return nil, err
		}
		if res.IsError {
			return nil, res.toolFailure()
		}
		return res.Structured, nil
	}
	for attempt := 0; ; attempt++ {
		sid := c.loadSession()
		if sid == "" {
			if _, err := c.Call(ctx, "agent_prime", nil); err != nil {
				return nil, err
			}
			sid = c.loadSession()
		}
		args["session_id"] = sid
		res, err := c.rawCall(ctx, tool, args)
		if err != nil {
			return nil, err
		}
		switch code := res.errorCode(); {
		case code == "":
			return res.Structured, nil
		case (code == "NOT_PRIMED" || code == "PROFILE_OUTDATED") && attempt == 0:
			if err := c.saveSession(""); err != nil {
				return nil, err
			}
			continue
		default:
			return nil, res.toolFailure()
		}
	}
}

// sessions reads the state file; a missing or unreadable file is empty.
func (c *client) sessions() map[string]string {
	m := map[string]string{}
	if b, err := os.ReadFile(c.state); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m
}

func (c *client) loadSession() string { return c.sessions()[c.slot] }

// saveSession stores sid ("" forgets it), atomically and 0600.
func (c *client) saveSession(sid string) error {
	m := c.sessions()
	if sid == "" {
		delete(m, c.slot)
	} else {
		m[c.slot] = sid
	}
	b, _ := json.Marshal(m)
	dir := filepath.Dir(c.state)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail(ExitUsage, "state directory: %v", err)
	}
	f, err := os.CreateTemp(dir, ".sessions-*")
	if err != nil {
		return fail(ExitUsage, "state file: %v", err)
	}
	defer os.Remove(f.Name())
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.Write(b)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), c.state)
	}
	if err != nil {
		return fail(ExitUsage, "state file: %v", err)
	}
	return nil
}
