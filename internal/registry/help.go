package registry

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// HelpInput is get_help's input.
type HelpInput struct {
	hub.Auth
	Tool string `json:"tool" desc:"The tool whose contract you want." schema:"minLength=1,maxLength=80" example:"\"checkpoint_save\""`
}

// HelpOutput is one tool's whole contract.
type HelpOutput struct {
	Contract map[string]any `json:"contract" desc:"The tool's entry of tool-contracts.json."`
}

// helpTool declares get_help. It lives here, not in the domain, because a
// contract is a registry artefact.
func helpTool(r *Registry) *Tool {
	return define(family{group: "session and self", seed: "002", public: true}, Tool{
		Name: "get_help", Title: "Tool contract", Method: "GET", Path: helpPath,
		Description: "Return one tool's full contract: REST route, input and output schemas, annotations and security. Needs no session.",
		Hints: Hints{ReadOnly: true, Idempotent: true, Why: why(
			"Only reads static documentation.",
			"Changes nothing.",
			"The same tool name always returns the same contract.",
			"Returns this service's own documentation only.")},
	}, func(_ *hub.Hub, _ context.Context, _ hub.Credentials, in HelpInput) (*HelpOutput, error) {
		t, ok := r.byName[in.Tool]
		if !ok {
			return nil, apperr.Invalid("tool", "is not a tool of this service; the tool list (MCP tools/list, the REST OpenAPI document) names them")
		}
		doc := map[string]any{}
		b, err := json.Marshal(t.Contract())
		if err == nil {
			err = json.Unmarshal(b, &doc)
		}
		if err != nil {
			return nil, apperr.Normalize(err)
		}
		return &HelpOutput{Contract: doc}, nil
	})
}

// helpPath is get_help's REST route.
const helpPath = "/v1/help/{tool}"

// ErrorContext is what t's errors are answered for on transport tr: the
// words of their next_action and help (see apperr.Context). t is nil for a
// failure no tool answered.
func ErrorContext(t *Tool, tr apperr.Transport) apperr.Context {
	c := apperr.Context{Transport: tr}
	if t == nil {
		switch tr {
		case apperr.MCP:
			c.Help = `tools/list names the tools; get_help {"tool":"<name>"} returns one's contract.`
		case apperr.REST:
			c.Help = "GET " + strings.ReplaceAll(helpPath, "{tool}", "<tool>") + " returns a tool's contract."
		}
		return c
	}
	c.Tool, c.ReadOnly, c.IntegerRevisions = t.Name, t.Hints.ReadOnly, t.IntegerRevisions()
	_, c.BoxKeyArgument = t.Input.Properties["box_key"]
	if _, ok := t.Input.Properties["idempotency_key"]; ok {
		c.MutationKey = "idempotency_key"
	} else if data := t.Input.Properties["data"]; data != nil && data.Properties["operation_key"] != nil {
		c.MutationKey, c.MutationKeyOptional = "operation_key", true
	}
	switch tr {
	case apperr.MCP:
		c.HelpCall = `get_help {"tool":"` + t.Name + `"}`
	case apperr.REST:
		c.HelpCall = "GET " + strings.ReplaceAll(helpPath, "{tool}", t.Name)
	}
	if c.HelpCall != "" {
		c.Help = c.HelpCall + " returns this tool's contract."
	}
	return c
}
