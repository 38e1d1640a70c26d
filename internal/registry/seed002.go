package registry

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/schema"
)

// Seed-002 (IDData) tools: spaces and memory.
//
// Their Go input type is the MCP arguments object itself, {id, data} or,
// for a tool whose path has no {id} (create_space, list_spaces,
// list_memory), {data}; REST sends data as the body (GET: as the query)
// and id as the path parameter. Their contract carries, besides the common
// fields, seed 002's two blocks, rendered here in the seed's form:
//
//   - rest_contract: body_rule and one request with authorization,
//     body_rule, body_schema, example_body, method, path (with the id's
//     example in place of {id}) and path_parameters_schema. A GET request
//     has no body: its data fields are query_parameters_schema instead.
//     session_header is our one addition: every tool but agent_prime and
//     get_help needs the session agent_prime returned.
//   - mcp_contract: annotation_justifications, annotations, arguments_schema,
//     example_arguments, example_call (a whole JSON-RPC tools/call),
//     output_schema, security_schemes and tool.
//
// The output schema of these tools is the seed's generic one (results,
// operation receipts and errors all fit it); result_schema gives the
// precise shape of a successful result.

// Seed 002's REST rules, verbatim.
const (
	restBodyRule    = `If body_schema is present, send an object matching it directly as the HTTP JSON body. Do not wrap it in {"data": ...}. Path and query parameters are not body fields.`
	requestBodyRule = "Send example_body directly. A literal top-level data property is invalid in REST."
	queryBodyRule   = "Send no body. Send data fields as query parameters (query_parameters_schema); a literal data parameter is invalid."
	noBodyRule      = "Send no body: this request has no data fields."
	restAuth        = "Bearer <agent_key>"
)

// RESTContract is seed 002's "HTTP request" block.
type RESTContract struct {
	BodyRule string        `json:"body_rule"`
	Requests []RESTRequest `json:"requests"`
}

// RESTRequest is one request of a RESTContract. Fields are in the byte
// order of their JSON names, as in the seed.
type RESTRequest struct {
	Authorization         string          `json:"authorization"`
	BodyRule              string          `json:"body_rule"`
	BodySchema            *schema.Schema  `json:"body_schema,omitempty"`
	ExampleBody           json.RawMessage `json:"example_body,omitempty"`
	Method                string          `json:"method"`
	Path                  string          `json:"path"`
	PathParametersSchema  *schema.Schema  `json:"path_parameters_schema,omitempty"`
	QueryParametersSchema *schema.Schema  `json:"query_parameters_schema,omitempty"`
	SessionHeader         string          `json:"session_header"`
}

// MCPContract is seed 002's "Tool arguments" block.
type MCPContract struct {
	AnnotationJustifications map[string]string `json:"annotation_justifications"`
	Annotations              map[string]bool   `json:"annotations"`
	ArgumentsSchema          *schema.Schema    `json:"arguments_schema"`
	ExampleArguments         json.RawMessage   `json:"example_arguments"`
	ExampleCall              json.RawMessage   `json:"example_call"`
	OutputSchema             *schema.Schema    `json:"output_schema"`
	SecuritySchemes          []SecurityScheme  `json:"security_schemes"`
	Tool                     string            `json:"tool"`
}

// seed002 completes an IDData declaration: it checks the input is the
// seed's {id, data} form, makes data optional when none of its properties
// is required, swaps in the generic output schema and derives the example
// data. A malformed declaration panics, as in New.
func (t *Tool) seed002() {
	fail := func(format string, args ...any) {
		panic(fmt.Sprintf("registry: tool %s: "+format, append([]any{t.Name}, args...)...))
	}
	in := t.Input
	data := in.Properties["data"]
	if in.Type != "object" || data == nil || data.Type != "object" || data.AdditionalProperties == nil || *data.AdditionalProperties {
		fail("an IDData input must be an object with a strict data object")
	}
	wantProps, wantRequired := []string{"data"}, []string{"data"}
	params := t.PathParams()
	switch {
	case slices.Equal(params, []string{"id"}):
		wantProps, wantRequired = []string{"data", "id"}, []string{"id", "data"}
		if id := in.Properties["id"]; id == nil || id.Type != "string" || id.Example == nil {
			fail("the id must be a string with an example")
		}
	case len(params) != 0:
		fail("an IDData path may have no parameter but {id}")
	}
	var got []string
	for name := range in.Properties {
		got = append(got, name)
	}
	slices.Sort(got)
	if !slices.Equal(got, wantProps) || !slices.Equal(in.Required, wantRequired) {
		fail("arguments are %v (required %v), want %v (required %v)", got, in.Required, wantProps, wantRequired)
	}
	t.Output = seedOutputSchema(t.Name)
	if len(data.Required) == 0 {
		// Nothing in data is required, so data itself need not be sent:
		// get_memory {id} and list_memory {} are complete calls.
		optional := *in
		optional.Required = slices.DeleteFunc(slices.Clone(in.Required), func(p string) bool { return p == "data" })
		if len(optional.Required) == 0 {
			optional.Required = nil
		}
		t.Input = &optional
	}
	if t.ExampleArgs == nil {
		ex, err := exampleObject(data)
		if err != nil {
			fail("%v", err)
		}
		t.ExampleArgs = ex
	}
	if err := data.Validate(t.ExampleArgs); err != nil {
		fail("example data does not satisfy its schema: %v", err)
	}
}

// exampleObject builds an object from the property examples of s: every
// property with an example, and every required enum property with its
// first value. A required property with neither is a declaration error.
func exampleObject(s *schema.Schema) (json.RawMessage, error) {
	obj := map[string]any{}
	for name, p := range s.Properties {
		switch {
		case p.Example != nil:
			obj[name] = p.Example
		case slices.Contains(s.Required, name) && len(p.Enum) > 0:
			obj[name] = p.Enum[0]
		case slices.Contains(s.Required, name):
			return nil, fmt.Errorf("required data property %s has no example", name)
		}
	}
	return json.Marshal(obj)
}

// seedOutputSchema is seed 002's output schema for tool.
func seedOutputSchema(tool string) *schema.Schema {
	str := func() *schema.Schema { return &schema.Schema{Type: "string"} }
	return &schema.Schema{
		Type:                 "object",
		AdditionalProperties: schema.Ptr(true),
		Description: "Structured result for " + tool + ". Resource fields vary by detail, permissions and operation. " +
			"Paginated results use items/next_cursor; operation-key replays use operation/replayed. " +
			"Failures have error and the MCP result has isError=true. See get_help for this tool's contract.",
		Properties: map[string]*schema.Schema{
			"error": {
				Type: "object",
				Properties: map[string]*schema.Schema{
					"code": str(), "help": str(), "message": str(), "next_action": str(),
					"retry_after_seconds": {Type: "integer"},
				},
				Required: []string{"code", "message", "next_action", "help"},
			},
			"next_cursor": str(),
			"operation":   {Type: "object"},
			"replayed":    {Type: "boolean"},
			"truncated":   {Type: "boolean"},
		},
	}
}

// restContract renders the seed's REST block.
func (t *Tool) restContract() *RESTContract {
	data := t.Input.Properties["data"]
	r := RESTRequest{Authorization: restAuth, Method: t.Method, Path: t.Path, SessionHeader: SessionHeader}
	if id := t.Input.Properties["id"]; id != nil {
		r.Path = strings.ReplaceAll(t.Path, "{id}", fmt.Sprint(id.Example))
		r.PathParametersSchema = &schema.Schema{
			Type:                 "object",
			Properties:           map[string]*schema.Schema{"id": id},
			Required:             []string{"id"},
			AdditionalProperties: schema.Ptr(false),
		}
	}
	switch {
	case t.Method != "GET":
		r.BodyRule, r.BodySchema, r.ExampleBody = requestBodyRule, data, t.ExampleArgs
	case len(data.Properties) > 0:
		r.BodyRule, r.QueryParametersSchema = queryBodyRule, data
	default:
		r.BodyRule = noBodyRule
	}
	return &RESTContract{BodyRule: restBodyRule, Requests: []RESTRequest{r}}
}

// mcpContract renders the seed's MCP block. Annotations are the three the
// seed shows, plus idempotentHint when it holds (its MCP default is false).
func (t *Tool) mcpContract() *MCPContract {
	hints := map[string]bool{
		"readOnlyHint":    t.Hints.ReadOnly,
		"destructiveHint": t.Hints.Destructive,
		"openWorldHint":   t.Hints.OpenWorld,
	}
	if t.Hints.Idempotent {
		hints["idempotentHint"] = true
	}
	why := map[string]string{}
	for h := range hints {
		why[h] = t.Hints.Why[h]
	}
	args := map[string]any{"data": t.ExampleArgs}
	if id := t.Input.Properties["id"]; id != nil {
		args["id"] = id.Example
	}
	exArgs := mustJSON(t.Name, args)
	return &MCPContract{
		AnnotationJustifications: why,
		Annotations:              hints,
		ArgumentsSchema:          t.Input,
		ExampleArguments:         exArgs,
		ExampleCall: mustJSON(t.Name, map[string]any{
			"id": 1, "jsonrpc": "2.0", "method": "tools/call",
			"params": map[string]any{"arguments": exArgs, "name": t.Name},
		}),
		OutputSchema:    t.Output,
		SecuritySchemes: []SecurityScheme{{Type: "oauth2", Scopes: []string{t.Scope}}},
		Tool:            t.Name,
	}
}

// mustJSON encodes example values, which seed002 has checked against
// their schemas: they always encode.
func mustJSON(tool string, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("registry: rendering " + tool + " examples: " + err.Error())
	}
	return b
}

// refuseArgumentKey answers a seed-002 call that carries box_key, in its
// arguments or in data (REST: the body), with an error that says what to do
// instead. Seed 000 tells agents to include box_key in every call, but seed
// 002's schemas are strict and have no such field; the schema's generic
// "property not allowed" would leave such an agent stuck. The key's value
// is never echoed.
func refuseArgumentKey(args []byte) error {
	var top map[string]json.RawMessage
	if json.Unmarshal(args, &top) != nil {
		return nil // not an object: the schema check answers
	}
	field := ""
	if _, ok := top["box_key"]; ok {
		field = "box_key"
	} else if raw, ok := top["data"]; ok {
		var data map[string]json.RawMessage
		if json.Unmarshal(raw, &data) == nil {
			if _, ok := data["box_key"]; ok {
				field = "data.box_key"
			}
		}
	}
	if field == "" {
		return nil
	}
	return apperr.Invalid(field, "not accepted by this tool: send the key as 'Authorization: Bearer <key>'").
		WithNext("Remove box_key from the arguments and send the key in the 'Authorization: Bearer <key>' header.")
}
