package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"testing"
)

// vocabulary2020 is every keyword of JSON Schema 2020-12's vocabularies
// (core, applicator, unevaluated, validation, meta-data, format-annotation,
// content): what a strict validator (Ajv's strict mode) compiles without
// complaint. "example" is not among them.
var vocabulary2020 = map[string]bool{
	// core
	"$schema": true, "$id": true, "$ref": true, "$anchor": true, "$dynamicRef": true, "$dynamicAnchor": true,
	"$vocabulary": true, "$comment": true, "$defs": true,
	// applicator
	"prefixItems": true, "items": true, "contains": true, "additionalProperties": true, "properties": true,
	"patternProperties": true, "dependentSchemas": true, "propertyNames": true, "if": true, "then": true,
	"else": true, "allOf": true, "anyOf": true, "oneOf": true, "not": true,
	// unevaluated
	"unevaluatedItems": true, "unevaluatedProperties": true,
	// validation
	"type": true, "const": true, "enum": true, "multipleOf": true, "maximum": true, "exclusiveMaximum": true,
	"minimum": true, "exclusiveMinimum": true, "maxLength": true, "minLength": true, "pattern": true,
	"maxItems": true, "minItems": true, "uniqueItems": true, "maxContains": true, "minContains": true,
	"maxProperties": true, "minProperties": true, "required": true, "dependentRequired": true,
	// meta-data
	"title": true, "description": true, "default": true, "deprecated": true, "readOnly": true,
	"writeOnly": true, "examples": true,
	// format-annotation, content
	"format": true, "contentEncoding": true, "contentMediaType": true, "contentSchema": true,
}

// seed002Keywords are the keywords seed 002's own contracts use beyond
// the vocabulary; its tools' argument schemas keep them, as the seed shows
// (TestUpdateSpaceContractMatchesSeed002).
var seed002Keywords = map[string]bool{"example": true}

// vocabularyErrors lists every keyword of the schema s (at path) that a
// strict 2020-12 validator would refuse, and every examples that is not an
// array, descending into every subschema.
func vocabularyErrors(path string, s any, extra map[string]bool) []string {
	obj, ok := s.(map[string]any)
	if !ok {
		if _, isBool := s.(bool); isBool {
			return nil
		}
		return []string{fmt.Sprintf("%s: %T is not a schema", path, s)}
	}
	var errs []string
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := obj[k]
		if !vocabulary2020[k] && !extra[k] {
			errs = append(errs, fmt.Sprintf("%s: keyword %q is not in the JSON Schema 2020-12 vocabulary", path, k))
			continue
		}
		switch k {
		case "examples", "enum", "required", "prefixItems", "allOf", "anyOf", "oneOf":
			arr, isArr := v.([]any)
			if !isArr {
				errs = append(errs, fmt.Sprintf("%s.%s: %T, want an array", path, k, v))
				continue
			}
			if slices.Contains([]string{"prefixItems", "allOf", "anyOf", "oneOf"}, k) {
				for i, sub := range arr {
					errs = append(errs, vocabularyErrors(fmt.Sprintf("%s.%s[%d]", path, k, i), sub, extra)...)
				}
			}
		case "properties", "patternProperties", "$defs", "dependentSchemas":
			m, isMap := v.(map[string]any)
			if !isMap {
				errs = append(errs, fmt.Sprintf("%s.%s: %T, want an object", path, k, v))
				continue
			}
			for name, sub := range m {
				errs = append(errs, vocabularyErrors(path+"."+k+"."+name, sub, extra)...)
			}
		case "items", "additionalProperties", "contains", "propertyNames", "if", "then", "else", "not",
			"unevaluatedItems", "unevaluatedProperties", "contentSchema":
			errs = append(errs, vocabularyErrors(path+"."+k, v, extra)...)
		}
	}
	return errs
}

// TestToolSchemasUse2020Vocabulary: every inputSchema and outputSchema
// that tools/list serves compiles under a strict JSON Schema 2020-12
// validator, which refuses unknown keywords: seed-000 tools say examples
// (an array), never the OpenAPI-style example. Seed-002 tools' arguments
// keep the seed's example, and only that.
func TestToolSchemasUse2020Vocabulary(t *testing.T) {
	e := newEnv(t)
	sid := e.initialize(t, "")
	r := e.post(t, toolsListBody, session(sid, e.alice.BoxKey))
	var list struct {
		Result struct {
			Tools []struct {
				Name         string         `json:"name"`
				InputSchema  map[string]any `json:"inputSchema"`
				OutputSchema map[string]any `json:"outputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.body, &list); err != nil || len(list.Result.Tools) == 0 {
		t.Fatalf("tools/list: HTTP %d %s (%v), want the tools", r.status, r.body, err)
	}
	seed002 := map[string]bool{}
	for _, tool := range e.reg.Tools() {
		seed002[tool.Name] = tool.IntegerRevisions() && tool.Input.Properties["data"] != nil
	}
	for _, tool := range list.Result.Tools {
		var inputExtra map[string]bool
		if seed002[tool.Name] {
			inputExtra = seed002Keywords
		}
		for _, err := range vocabularyErrors(tool.Name+".inputSchema", tool.InputSchema, inputExtra) {
			t.Error(err)
		}
		if tool.OutputSchema == nil {
			t.Errorf("%s: no outputSchema", tool.Name)
			continue
		}
		for _, err := range vocabularyErrors(tool.Name+".outputSchema", tool.OutputSchema, nil) {
			t.Error(err)
		}
	}
}

// TestToolSchemasCompileUnderAjvStrict has Ajv, in strict mode, compile
// every schema of tools/list as the TypeScript SDK client receives it
// (testdata/tsclient/strictschemas.mjs). Only seed-002 argument schemas
// may use "example", the seed's keyword.
func TestToolSchemasCompileUnderAjvStrict(t *testing.T) {
	t.Parallel() // its own server and client processes
	dir := tsClientDir(t)
	e := newEnv(t)
	var exampleTools []string
	for _, tool := range e.reg.Tools() {
		if tool.IntegerRevisions() && tool.Input.Properties["data"] != nil {
			exampleTools = append(exampleTools, tool.Name)
		}
	}
	allowed, err := json.Marshal(exampleTools)
	if err != nil {
		t.Fatal(err)
	}
	out, err := runNode(t, dir, []string{"AGENTBOX_URL=" + e.url, "AGENTBOX_KEY=" + e.alice.BoxKey,
		"AGENTBOX_EXAMPLE_TOOLS=" + string(allowed)}, "node", "strictschemas.mjs")
	var report struct {
		Tools, Compiled int
		Problems        []string
	}
	if jerr := json.Unmarshal([]byte(lastLine(out)), &report); jerr != nil {
		t.Fatalf("node strictschemas.mjs: %v; output %q", err, out)
	}
	for _, p := range report.Problems {
		t.Error(p)
	}
	if n := len(e.reg.Tools()); report.Tools != n || report.Compiled != 2*n {
		t.Errorf("Ajv strict: %d tools listed, %d schemas compiled; want %d and %d", report.Tools, report.Compiled, n, 2*n)
	}
}
