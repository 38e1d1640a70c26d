package registry

import (
	"bytes"
	"encoding/json"

	"github.com/agentbox/agentbox/internal/apperr"

	"github.com/agentbox/agentbox/internal/schema"
)

// Contract is a tool's published contract: one entry of
// tool-contracts.json, and what get_help returns.
type Contract struct {
	Name                     string            `json:"name"`
	Title                    string            `json:"title"`
	Description              string            `json:"description"`
	Group                    string            `json:"group"`
	REST                     RESTRoute         `json:"rest"`
	InputSchema              *schema.Schema    `json:"input_schema"`
	OutputSchema             *schema.Schema    `json:"output_schema"`
	Annotations              map[string]bool   `json:"annotations"`
	AnnotationJustifications map[string]string `json:"annotation_justifications"`
	SecuritySchemes          []SecurityScheme  `json:"security_schemes"`
	// Errors are the codes the tool answers with (Tool.Errors).
	Errors []apperr.Code `json:"errors"`
	// ResultSchema, RESTContract and MCPContract are set for seed-002
	// (IDData) tools only: the precise success shape and the seed's two
	// contract blocks (seed002.go).
	ResultSchema *schema.Schema `json:"result_schema,omitempty"`
	RESTContract *RESTContract  `json:"rest_contract,omitempty"`
	MCPContract  *MCPContract   `json:"mcp_contract,omitempty"`
}

// RESTRoute is a tool's REST binding.
type RESTRoute struct {
	Method     string   `json:"method"`
	Path       string   `json:"path"`
	PathParams []string `json:"path_parameters,omitempty"`
	// SessionHeader names the header that carries the session.
	SessionHeader string `json:"session_header,omitempty"`
	Authorization string `json:"authorization,omitempty"`
}

// SecurityScheme is the OAuth2 scheme and the scope a tool needs.
type SecurityScheme struct {
	Type   string   `json:"type"`
	Scopes []string `json:"scopes"`
}

// SessionHeader is the REST header carrying the session id agent_prime
// returned.
const SessionHeader = "Agentbox-Session"

// Annotations renders the MCP hint booleans.
func (t *Tool) Annotations() map[string]bool {
	return map[string]bool{
		"readOnlyHint":    t.Hints.ReadOnly,
		"destructiveHint": t.Hints.Destructive,
		"idempotentHint":  t.Hints.Idempotent,
		"openWorldHint":   t.Hints.OpenWorld,
	}
}

// Contract renders the tool's contract.
func (t *Tool) Contract() Contract {
	c := Contract{
		Name: t.Name, Title: t.Title, Description: t.Description, Group: t.Group,
		REST:                     RESTRoute{Method: t.Method, Path: t.Path, PathParams: t.PathParams()},
		InputSchema:              t.Input,
		OutputSchema:             t.Output,
		Annotations:              t.Annotations(),
		AnnotationJustifications: t.Hints.Why,
		SecuritySchemes:          []SecurityScheme{{Type: "oauth2", Scopes: []string{t.Scope}}},
		Errors:                   t.Errors,
	}
	if t.Shape == IDData {
		c.ResultSchema, c.RESTContract, c.MCPContract = t.Result, t.restContract(), t.mcpContract()
	}
	if t.Authenticated {
		c.REST.Authorization = "Bearer <agent_key>"
		if t.Name != "agent_prime" {
			c.REST.SessionHeader = SessionHeader
		}
	}
	return c
}

// ContractsJSON renders tool-contracts.json: every tool's contract, in
// declaration order, indented, with a trailing newline.
func (r *Registry) ContractsJSON() []byte {
	cs := make([]Contract, len(r.tools))
	for i, t := range r.tools {
		cs[i] = t.Contract()
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(cs); err != nil {
		panic("registry: rendering contracts: " + err.Error())
	}
	return buf.Bytes()
}

// IntegerRevisions reports whether the tool's contract carries revisions as
// JSON integers (seed 002) rather than decimal strings (seed 000).
func (t *Tool) IntegerRevisions() bool { return t.Seed == "002" }
