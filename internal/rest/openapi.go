package rest

// The OpenAPI document.
//
// The REST contract as OpenAPI 3.1, generated from the registry like
// tool-contracts.json, committed as openapi.json (a test fails when it is
// stale) and served at GET /v1/openapi.json. OpenAPI 3.1 schemas are JSON
// Schema 2020-12, so the registry's schemas go in unchanged. Per tool:
//
//   - the route and an operationId that is the tool name;
//   - parameters: the path parameters; for GET, the tool's other fields as
//     query parameters (never box_key: secrets stay out of URLs); and the
//     Agentbox-Session header, required by every tool but agent_prime
//     (which opens or resumes a session) and get_help (public);
//   - the request body of every other method: the arguments object without
//     its path parameters (seed 002: the data object itself);
//   - 200 with the success schema, and every status this transport answers
//     with the error envelope ({"error": ...}; current_revision a decimal
//     string for seed-000 tools, an integer for seed-002 tools), with
//     WWW-Authenticate on 401 and Retry-After on 429 and 503;
//   - bearer security, except get_help.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/schema"
	"github.com/agentbox/agentbox/internal/strictjson"
	"github.com/agentbox/agentbox/internal/version"
)

// OpenAPIPath is where the document is served.
const OpenAPIPath = "/v1/openapi.json"

// openAPIDoc is the document of the whole registry, built once.
var openAPIDoc = sync.OnceValue(func() []byte { return OpenAPI(registry.New()) })

// OpenAPI renders the OpenAPI 3.1 document of r's REST routes, indented,
// with a trailing newline. It is deterministic (sorted keys).
func OpenAPI(r *registry.Registry) []byte {
	paths := map[string]map[string]any{}
	for _, t := range r.Tools() {
		if paths[t.Path] == nil {
			paths[t.Path] = map[string]any{}
		}
		paths[t.Path][strings.ToLower(t.Method)] = operation(t)
	}
	paths[OpenAPIPath] = map[string]any{"get": map[string]any{
		"operationId": "openapi",
		"summary":     "This document",
		"description": "The REST contract of every tool as OpenAPI 3.1. Public.",
		"tags":        []string{"meta"},
		"security":    []any{},
		"responses": map[string]any{"200": map[string]any{
			"description": "The OpenAPI document.",
			"content":     map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object"}}},
		}},
	}}
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":   "agentbox REST API",
			"version": version.Version,
			"license": map[string]any{"name": "Apache-2.0", "identifier": "Apache-2.0"},
			"description": "One route per tool of the coordination hub. Authenticate with 'Authorization: Bearer <agent key>'; " +
				"call agent_prime first and send the session_id it returns as the " + SessionHeader + " header. " +
				"Failures are {\"error\": envelope} with the status of the README's error table.",
		},
		"servers": []any{
			map[string]any{"url": "http://127.0.0.1:8787", "description": "agentbox serve on its default address (make run)"},
			map[string]any{"url": "https://{api_id}.execute-api.{region}.amazonaws.com",
				"description": "A deployed stack: its ApiUrl output without the trailing /v1",
				"variables": map[string]any{
					"api_id": map[string]any{"default": "API_ID", "description": "The stack's HTTP API id."},
					"region": map[string]any{"default": "us-east-1", "description": "The stack's AWS region."},
				}},
		},
		"paths": paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{"bearer": map[string]any{
				"type": "http", "scheme": "bearer",
				"description": "An agent key issued by the box owner.",
			}},
			"schemas": map[string]any{
				errorSchema000: errorSchema(false),
				errorSchema002: errorSchema(true),
			},
			"responses": errorResponses(),
			"headers": map[string]any{
				"Retry-After": map[string]any{
					"description": "Seconds to wait before retrying.",
					"schema":      map[string]any{"type": "integer", "minimum": 1},
				},
				"WWW-Authenticate": map[string]any{
					"description": "The bearer challenge.",
					"schema":      map[string]any{"type": "string"},
				},
			},
		},
	}
	b, err := strictjson.Marshal(doc)
	var out bytes.Buffer
	if err == nil {
		err = json.Indent(&out, b, "", "  ")
	}
	if err != nil {
		panic("rest: rendering the OpenAPI document: " + err.Error())
	}
	return append(out.Bytes(), '\n')
}

const (
	errorSchema000 = "Error"
	errorSchema002 = "Error002"
)

// errorSchema is the {"error": envelope} body; seed-002 tools carry
// current_revision as an integer.
func errorSchema(integerRevisions bool) *schema.Schema {
	s := schema.Of[ErrorBody]()
	env := *s.Properties["error"]
	props := map[string]*schema.Schema{}
	for k, v := range env.Properties {
		props[k] = v
	}
	props["code"] = &schema.Schema{Type: "string", Enum: codes()}
	if integerRevisions {
		props["current_revision"] = &schema.Schema{Type: "integer", Minimum: schema.Ptr[int64](0),
			Description: "The current version, on REVISION_CONFLICT."}
	}
	env.Properties = props
	return &schema.Schema{Type: "object", AdditionalProperties: schema.Ptr(false), Required: []string{"error"},
		Properties: map[string]*schema.Schema{"error": &env}}
}

func codes() []any {
	var out []any
	for _, c := range apperr.Codes() {
		out = append(out, string(c))
	}
	return out
}

// errorStatuses are the statuses this transport answers with the error
// envelope: those of Status, plus 405 (another method on a known path),
// 413 (body too large) and 415 (body not JSON).
func errorStatuses() []int {
	set := []int{http.StatusMethodNotAllowed, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType}
	for _, c := range apperr.Codes() {
		if s := Status(c); !slices.Contains(set, s) {
			set = append(set, s)
		}
	}
	slices.Sort(set)
	return set
}

// toolErrorStatuses are the statuses t's error codes answer with, plus
// the transport's own: 405, 413, 415, and 500 for a failure it recovers
// from (a panic is STORAGE_FAILURE whatever the tool).
func toolErrorStatuses(t *registry.Tool) []int {
	set := []int{http.StatusMethodNotAllowed, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType,
		http.StatusInternalServerError}
	for _, c := range t.Errors {
		if s := Status(c); !slices.Contains(set, s) {
			set = append(set, s)
		}
	}
	slices.Sort(set)
	return set
}

// errorResponseName names the shared error response of a status.
func errorResponseName(integerRevisions bool, status int) string {
	if integerRevisions {
		return errorSchema002 + "_" + strconv.Itoa(status)
	}
	return errorSchema000 + "_" + strconv.Itoa(status)
}

// errorResponses are the shared error responses, per status and family.
func errorResponses() map[string]any {
	out := map[string]any{}
	for _, integerRevisions := range []bool{false, true} {
		ref := "#/components/schemas/" + errorSchema000
		if integerRevisions {
			ref = "#/components/schemas/" + errorSchema002
		}
		for _, status := range errorStatuses() {
			resp := map[string]any{
				"description": http.StatusText(status),
				"content":     map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": ref}}},
			}
			switch status {
			case http.StatusUnauthorized:
				resp["headers"] = map[string]any{"WWW-Authenticate": map[string]any{"$ref": "#/components/headers/WWW-Authenticate"}}
			case http.StatusTooManyRequests, http.StatusServiceUnavailable:
				resp["headers"] = map[string]any{"Retry-After": map[string]any{"$ref": "#/components/headers/Retry-After"}}
			}
			out[errorResponseName(integerRevisions, status)] = resp
		}
	}
	return out
}

// operation is one tool's OpenAPI operation.
func operation(t *registry.Tool) map[string]any {
	props := t.Input
	if t.Shape == registry.IDData {
		props = t.Input.Properties["data"]
	}
	pathParams := t.PathParams()
	var params []any
	for _, p := range pathParams {
		params = append(params, map[string]any{"name": p, "in": "path", "required": true, "schema": t.Input.Properties[p]})
	}
	// Credentials never travel in a URL: box_key and the session handle
	// are not query parameters (the handle goes in the session header).
	body := withoutProperties(props, append(slices.Clone(pathParams), "box_key", registry.SessionArgument))
	if t.Method == http.MethodGet {
		names := make([]string, 0, len(body.Properties))
		for name := range body.Properties {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			params = append(params, map[string]any{"name": name, "in": "query",
				"required": slices.Contains(body.Required, name), "schema": body.Properties[name]})
		}
	} else {
		// The handle travels in the session header over REST.
		body = withoutProperties(props, append(slices.Clone(pathParams), registry.SessionArgument))
	}
	if t.Authenticated {
		params = append(params, map[string]any{
			"name": SessionHeader, "in": "header", "required": t.Name != "agent_prime",
			"description": "The session_id agent_prime returned.",
			"schema":      map[string]any{"type": "string", "maxLength": 80},
		})
	}

	responses := map[string]any{"200": map[string]any{
		"description": "The result.",
		"content":     map[string]any{"application/json": map[string]any{"schema": t.Result}},
	}}
	for _, status := range toolErrorStatuses(t) {
		responses[strconv.Itoa(status)] = map[string]any{"$ref": "#/components/responses/" + errorResponseName(t.IntegerRevisions(), status)}
	}

	op := map[string]any{
		"operationId": t.Name,
		"summary":     t.Title,
		"description": t.Description,
		"tags":        []string{t.Group},
		"responses":   responses,
		// The codes the tool answers with, as its contract lists them.
		"x-error-codes": t.Errors,
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	if t.Method != http.MethodGet && (t.Method != http.MethodDelete || len(body.Properties) > 0) {
		op["requestBody"] = map[string]any{
			"required": len(body.Required) > 0,
			"content":  map[string]any{"application/json": map[string]any{"schema": body}},
		}
	}
	if t.Authenticated {
		op["security"] = []any{map[string]any{"bearer": []string{}}}
	} else {
		op["security"] = []any{}
	}
	return op
}

// withoutProperties is s without the named properties.
func withoutProperties(s *schema.Schema, names []string) *schema.Schema {
	out := *s
	out.Properties = map[string]*schema.Schema{}
	for k, v := range s.Properties {
		if !slices.Contains(names, k) {
			out.Properties[k] = v
		}
	}
	out.Required = slices.DeleteFunc(slices.Clone(s.Required), func(k string) bool { return slices.Contains(names, k) })
	if len(out.Required) == 0 {
		out.Required = nil
	}
	return &out
}
