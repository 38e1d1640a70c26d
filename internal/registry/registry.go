// Package registry is the single source of truth for the tool surface.
//
// Each tool is declared once, in tools.go, with its name, input and output
// Go types, annotations and their justifications, REST method and path,
// OAuth scope and domain handler. Everything else is derived from this
// list: the MCP tool list (internal/mcpserver), the REST router
// (internal/rest), the Lambda functions (one per tool, all running the
// one binary of functions/), the SAM template (infra), tool-contracts.json
// and get_help. No other file lists tools.
package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/schema"
	"github.com/agentbox/agentbox/internal/strictjson"
)

// Shape is how a tool's arguments are laid out.
type Shape int

const (
	// Flat tools (seed 000) take one arguments object; REST sends it as the
	// body, plus any path parameters.
	Flat Shape = iota
	// IDData tools (seed 002) take {id, data} over MCP; REST sends data as
	// the body directly and id as the path parameter.
	IDData
)

// OAuth scopes of the security scheme each contract names.
const (
	ScopeRead  = hub.ScopeRead
	ScopeWrite = hub.ScopeWrite
)

// Hints are MCP tool annotations, each with the reason it holds: the
// justification an agent reads before deciding to call.
type Hints struct {
	ReadOnly, Destructive, Idempotent, OpenWorld bool
	// Why holds one justification per hint, keyed "readOnlyHint",
	// "destructiveHint", "idempotentHint" and "openWorldHint".
	Why map[string]string
}

// Tool is one declared tool.
type Tool struct {
	Name        string
	Title       string
	Description string
	Group       string
	Seed        string
	Method      string
	// Path is the REST route in net/http pattern syntax ("/v1/spaces/{id}").
	Path  string
	Shape Shape
	Hints Hints
	// Scope is the OAuth scope: coordination:read for read-only tools,
	// coordination:write for every other (define sets it from the hints).
	Scope string
	// Authenticated is false only for get_help, whose answer is public
	// documentation.
	Authenticated bool
	// Input is the schema of the tool's arguments, generated from the Go
	// type; for IDData tools it is the {id, data} (or {data}) object itself.
	// Result is the precise schema of a successful result. Output is the
	// declared MCP outputSchema, which an error result ({"error": envelope},
	// isError true) must satisfy too, since MCP clients validate
	// structuredContent whatever isError says: for Flat tools it is Result
	// or the error envelope (anyOf), for IDData tools seed 002's generic
	// output schema (see seed002.go).
	Input  *schema.Schema
	Output *schema.Schema
	Result *schema.Schema
	// ExampleArgs is an example of the arguments (IDData: of data).
	ExampleArgs json.RawMessage
	// Errors are the codes the tool answers with. A declaration names
	// those of the tool's own rules; New adds the ones every tool of its
	// kind shares (errors.go).
	Errors []apperr.Code

	observer Observer
	call     func(ctx context.Context, h *hub.Hub, cr hub.Credentials, args []byte) (any, error)
}

// PathParams lists the names of the path's {parameters}.
func (t *Tool) PathParams() []string {
	var out []string
	p := t.Path
	for i := 0; i < len(p); i++ {
		if p[i] == '{' {
			j := i + 1
			for j < len(p) && p[j] != '}' {
				j++
			}
			out = append(out, p[i+1:j])
			i = j
		}
	}
	return out
}

// keyed is implemented by inputs that embed hub.Auth.
type keyed interface{ ArgumentKey() string }

// family is what the tools of one documentation group share: the group,
// the seed whose form their contracts follow, and the shape of their
// arguments. Every tool but get_help needs a session.
type family struct {
	group, seed string
	shape       Shape
	public      bool
}

// define declares a tool of family f from its domain handler; the schemas
// come from the handler's types.
func define[In, Out any](f family, t Tool, fn func(*hub.Hub, context.Context, hub.Credentials, In) (*Out, error)) *Tool {
	t.Group, t.Seed, t.Shape, t.Authenticated = f.group, f.seed, f.shape, !f.public
	if t.Scope == "" {
		t.Scope = ScopeWrite
		if t.Hints.ReadOnly {
			t.Scope = ScopeRead
		}
	}
	t.Input = schema.Of[In]()
	t.Result = schema.Of[Out]()
	if t.Shape == IDData {
		t.seed002()
	} else {
		t.Output = resultOrError(t.Result)
	}
	t.call = func(ctx context.Context, h *hub.Hub, cr hub.Credentials, args []byte) (any, error) {
		var in In
		if err := strictjson.Decode(args, &in); err != nil {
			return nil, apperr.Invalid("", "arguments do not match the tool's schema")
		}
		if k, ok := any(in).(keyed); ok {
			cr.ArgKey = k.ArgumentKey()
		}
		out, err := fn(h, ctx, cr, in)
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	return &t
}

// errorResult is the structuredContent of a Flat tool's error result.
type errorResult struct {
	Error apperr.Envelope `json:"error"`
}

// resultOrError is a Flat tool's declared output: its success shape or the
// error envelope. The outer node keeps type object, which MCP requires of
// an outputSchema.
func resultOrError(result *schema.Schema) *schema.Schema {
	return &schema.Schema{
		Type:        "object",
		Description: "The result; on failure (isError true) only {error}.",
		AnyOf:       []*schema.Schema{result, schema.Of[errorResult]()},
	}
}

// Invoke runs the tool on raw JSON arguments: the strict JSON gate, the
// tool's input schema, then the domain handler. Every failure is an
// *apperr.Error; nothing of the arguments is echoed.
func (t *Tool) Invoke(ctx context.Context, h *hub.Hub, cr hub.Credentials, args []byte) (any, error) {
	out, err := t.invoke(ctx, h, cr, args)
	if err != nil {
		t.checkError(ctx, err)
	}
	return out, err
}

func (t *Tool) invoke(ctx context.Context, h *hub.Hub, cr hub.Credentials, args []byte) (any, error) {
	if len(args) == 0 {
		args = []byte("{}")
	}
	if err := strictjson.Check(args, hub.MaxJSONDepth); err != nil {
		var se *strictjson.Error
		if errors.As(err, &se) && se.Limit {
			return nil, apperr.New(apperr.LimitExceeded, "arguments: "+se.Problem)
		}
		return nil, apperr.Invalid("", "arguments: "+err.Error())
	}
	if t.Shape == IDData {
		if err := refuseArgumentKey(args); err != nil {
			return nil, err
		}
	}
	if err := t.Input.Validate(args); err != nil {
		var ve *schema.ValidationError
		if !errors.As(err, &ve) {
			// The schema itself cannot be enforced: a defect, not bad input.
			return nil, apperr.Wrap(apperr.StorageFailure, "The request could not be completed.", err)
		}
		field := ve.Path
		if field == "" {
			field = "arguments"
		}
		if ve.Limit {
			return nil, apperr.New(apperr.LimitExceeded, field+" "+ve.Rule)
		}
		return nil, apperr.Invalid(field, ve.Rule)
	}
	if handle, rest, found := sessionArgument(args); found {
		// The explicit handle is the call's session: it wins over any
		// transport header, which a per-call host may have minted afresh.
		cr.SessionID, cr.SessionHandle, args = handle, true, rest
	}
	info := cr.Info
	if info == nil {
		info = &hub.CallInfo{}
		cr.Info = info
	}
	out, err := t.call(ctx, h, cr, args)
	if err != nil || info.Attention == nil {
		return out, err
	}
	return withAttention(out, info.Attention)
}

// withAttention adds the caller's attention summary to a result object:
// every authenticated result carries it (its schema is in each tool's
// output schema), read in the same batch as authentication.
func withAttention(out any, a *hub.AttentionSummary) (any, error) {
	b, err := strictjson.Marshal(out)
	if err != nil {
		return nil, apperr.Normalize(err)
	}
	if len(b) < 2 || b[0] != '{' {
		return out, nil
	}
	att, err := strictjson.Marshal(a)
	if err != nil {
		return nil, apperr.Normalize(err)
	}
	merged := make([]byte, 0, len(b)+len(att)+16)
	merged = append(merged, `{"attention":`...)
	merged = append(merged, att...)
	if len(b) > 2 {
		merged = append(merged, ',')
	}
	merged = append(merged, b[1:]...)
	return json.RawMessage(merged), nil
}

// Registry is the ordered set of tools.
type Registry struct {
	tools  []*Tool
	byName map[string]*Tool
}

// New builds the registry. It panics on a malformed declaration: that is a
// programming error caught by every test.
func New(opts ...Option) *Registry {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	r := &Registry{byName: map[string]*Tool{}}
	for _, t := range declare(r) {
		if _, dup := r.byName[t.Name]; dup {
			panic(fmt.Sprintf("registry: tool %s declared twice", t.Name))
		}
		if t.Hints.ReadOnly != (t.Scope == ScopeRead) {
			panic(fmt.Sprintf("registry: tool %s: scope must follow readOnlyHint", t.Name))
		}
		for _, hint := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if t.Hints.Why[hint] == "" {
				panic(fmt.Sprintf("registry: tool %s: %s has no justification", t.Name, hint))
			}
		}
		if t.Authenticated {
			addAttention(t)
		}
		addSessionArgument(t)
		standardExamples(t)
		completeErrors(t)
		t.observer = o.observer
		r.tools = append(r.tools, t)
		r.byName[t.Name] = t
	}
	return r
}

// Tools returns the tools in declaration order.
func (r *Registry) Tools() []*Tool { return slices.Clone(r.tools) }

// Names returns the tool names in declaration order.
func (r *Registry) Names() []string {
	out := make([]string, len(r.tools))
	for i, t := range r.tools {
		out[i] = t.Name
	}
	return out
}

// Tool returns the named tool.
func (r *Registry) Tool(name string) (*Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// Only returns a registry restricted to one tool: a per-tool Lambda
// function serves exactly its own route.
func (r *Registry) Only(name string) (*Registry, error) {
	t, ok := r.byName[name]
	if !ok {
		return nil, fmt.Errorf("registry: no tool %q", name)
	}
	return &Registry{tools: []*Tool{t}, byName: map[string]*Tool{name: t}}, nil
}

// addAttention declares the attention summary in an authenticated tool's
// output schemas.
func addAttention(t *Tool) {
	att := schema.Of[hub.AttentionSummary]()
	att.Description = "Your attention summary, on every result: unread inbox rows and open requests."
	// The precise success schema names it: a Flat tool's output is
	// anyOf [Result, error]; seed 002's generic output schema is the seed's
	// exactly and admits additional properties.
	for _, sc := range []*schema.Schema{t.Result} {
		if sc == nil || sc.Type != "object" {
			continue
		}
		if sc.Properties == nil {
			sc.Properties = map[string]*schema.Schema{}
		}
		if _, ok := sc.Properties["attention"]; !ok {
			sc.Properties["attention"] = att
		}
	}
}

// standardExamples puts t's schemas in JSON Schema 2020-12's vocabulary:
// examples arrays instead of the OpenAPI-style example keyword, except in
// a seed-002 tool's arguments, whose form (example) is the seed's. A
// seed-000 mutation's idempotency_key gets an example of its own tool, so
// that no two tools show the same key: a copied key would collide.
func standardExamples(t *Tool) {
	if t.Shape != IDData {
		t.Input = t.Input.WithExamples()
	}
	t.Result = t.Result.WithExamples()
	t.Output = t.Output.WithExamples()
	if p := t.Input.Properties["idempotency_key"]; p != nil {
		ex := strings.ReplaceAll(t.Name, "_", "-") + "-2026-11-29-01"
		p.Examples = []any{ex}
		if err := p.Validate(mustJSON(t.Name, ex)); err != nil {
			panic(fmt.Sprintf("registry: tool %s: idempotency_key example: %v", t.Name, err))
		}
	}
}
