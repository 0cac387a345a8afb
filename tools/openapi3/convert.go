package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
)

// Names of what Convert adds to components.
const (
	statusSchema         = "googleRpcStatus"
	badRequestSchema     = "googleRpcBadRequest"
	fieldViolationSchema = "googleRpcFieldViolation"
	bearerScheme         = "bearer"
)

// Convert turns the Swagger 2.0 document into the gateway's OpenAPI 3
// document and validates the result. The output is deterministic (sorted
// keys, fixed indentation), so regenerating an unchanged API changes nothing.
func Convert(ctx context.Context, v2 []byte) ([]byte, error) {
	var doc2 openapi2.T
	if err := json.Unmarshal(v2, &doc2); err != nil {
		return nil, fmt.Errorf("reading the Swagger 2.0 document: %w", err)
	}
	doc3, err := openapi2conv.ToV3(&doc2)
	if err != nil {
		return nil, fmt.Errorf("converting to OpenAPI 3: %w", err)
	}
	raw, err := json.Marshal(doc3)
	if err != nil {
		return nil, err
	}
	// The additions are made on the plain JSON tree: they are few, and a
	// tree says exactly what ends up in the document.
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	if err := complete(doc); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := Validate(ctx, out.Bytes()); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// Validate loads an OpenAPI 3 document with kin-openapi, resolving every
// reference, and checks it against the specification.
func Validate(ctx context.Context, doc []byte) error {
	loader := openapi3.NewLoader()
	loader.Context = ctx
	t, err := loader.LoadFromData(doc)
	if err != nil {
		return fmt.Errorf("loading the OpenAPI 3 document: %w", err)
	}
	if err := t.Validate(ctx); err != nil {
		return fmt.Errorf("the OpenAPI 3 document is invalid: %w", err)
	}
	return nil
}

type obj = map[string]any

func child(m obj, key string) obj {
	c, ok := m[key].(obj)
	if !ok {
		c = obj{}
		m[key] = c
	}
	return c
}

func ref(schema string) obj { return obj{"$ref": "#/components/schemas/" + schema} }

// complete adds the gateway's parts to the converted document.
func complete(doc obj) error {
	// openapi2conv writes 3.0.3. The converted document uses nothing 3.0
	// and 3.1 disagree on (no nullable, exclusive bounds or binary
	// formats; Validate checks it as 3.1), so it is declared 3.1.0.
	doc["openapi"] = "3.1.0"
	doc["info"] = obj{
		"title":   "groundcrew API",
		"version": "v1",
		"description": "Grounded answers, RAG, alert enrichment and delivery, through the groundcrew gateway. " +
			"JSON is protojson (lowerCamelCase out; either spelling in). Errors are google.rpc.Status JSON; " +
			"bad input is HTTP 400 with a google.rpc.BadRequest detail listing the field violations. " +
			"Routes that stream (`:askStream`, `:watch`) answer Server-Sent Events when asked with `Accept: text/event-stream`.",
	}
	comps := child(doc, "components")
	schemas := child(comps, "schemas")
	if _, ok := schemas[statusSchema]; !ok {
		return fmt.Errorf("the converted document has no %s schema (protoc-gen-openapiv2 writes it for every error response)", statusSchema)
	}
	addErrorSchemas(schemas)

	child(comps, "securitySchemes")[bearerScheme] = obj{
		"type": "http", "scheme": "bearer",
		"description": "`Authorization: Bearer <key>`: required on /v1/ routes (except the Telegram webhook) when GATEWAY_API_KEYS is set.",
	}
	doc["security"] = []any{obj{bearerScheme: []any{}}}

	errorBody := func(desc string) obj {
		return obj{"description": desc, "content": obj{"application/json": obj{"schema": ref(statusSchema)}}}
	}
	responses := child(comps, "responses")
	responses["BadRequest"] = errorBody("Bad input: the google.rpc.Status details hold a google.rpc.BadRequest whose fieldViolations name each invalid field.")
	responses["Unauthorized"] = errorBody("No key, or a key that is not one of GATEWAY_API_KEYS.")
	responses["Forbidden"] = errorBody("The key lacks the scope this route needs.")
	responses["TooManyRequests"] = errorBody("Rate limited; Retry-After says when to try again.")

	paths := child(doc, "paths")
	for _, p := range sortedKeys(paths) {
		item, _ := paths[p].(obj)
		for _, method := range sortedKeys(item) {
			op, ok := item[method].(obj)
			if !ok {
				continue
			}
			res := child(op, "responses")
			res["400"] = obj{"$ref": "#/components/responses/BadRequest"}
			if p == "/v1/telegram/webhook" {
				// Telegram calls it with its own secret header, never a key.
				op["security"] = []any{}
			} else {
				res["401"] = obj{"$ref": "#/components/responses/Unauthorized"}
				res["403"] = obj{"$ref": "#/components/responses/Forbidden"}
			}
			res["429"] = obj{"$ref": "#/components/responses/TooManyRequests"}
			if isStream(p) {
				addEventStream(res)
			}
		}
	}
	probe := func(summary, id string) obj {
		status := obj{"type": "object", "properties": obj{"status": obj{"type": "string"}}}
		return obj{"get": obj{
			"summary": summary, "operationId": id, "tags": []any{"Gateway"}, "security": []any{},
			"responses": obj{
				"200": obj{"description": "OK", "content": obj{"application/json": obj{"schema": status}}},
				"503": obj{"description": "Not ready", "content": obj{"application/json": obj{"schema": status}}},
			},
		}}
	}
	paths["/healthz"] = probe("Liveness: the gateway is up.", "Gateway_Healthz")
	paths["/readyz"] = probe("Readiness: every backend reports SERVING; the body names each.", "Gateway_Readyz")

	tags, _ := doc["tags"].([]any)
	doc["tags"] = append(tags, obj{"name": "Gateway", "description": "The gateway's own probes."})
	return nil
}

// addErrorSchemas describes google.rpc.Status details as they arrive: the
// protovalidate interceptor puts a google.rpc.BadRequest there, and any
// other detail is a protobuf Any with its @type.
func addErrorSchemas(schemas obj) {
	schemas[fieldViolationSchema] = obj{
		"type":        "object",
		"description": "One invalid field: its path in the request (e.g. `roundConfig.maxResults`) and why.",
		"properties": obj{
			"field":       obj{"type": "string"},
			"description": obj{"type": "string"},
			"reason":      obj{"type": "string"},
		},
		"required": []any{"field", "description"},
	}
	schemas[badRequestSchema] = obj{
		"type":        "object",
		"description": "google.rpc.BadRequest, the detail of every HTTP 400.",
		"properties": obj{
			"@type":           obj{"type": "string", "enum": []any{"type.googleapis.com/google.rpc.BadRequest"}},
			"fieldViolations": obj{"type": "array", "items": ref(fieldViolationSchema)},
		},
		"required": []any{"@type"},
	}
	status := schemas[statusSchema].(obj)
	props := child(status, "properties")
	props["details"] = obj{
		"type":        "array",
		"description": "Error details: a google.rpc.BadRequest for bad input; other kinds as protobuf Any.",
		"items":       obj{"anyOf": []any{ref(badRequestSchema), ref("protobufAny")}},
	}
}

func isStream(path string) bool {
	return strings.HasSuffix(path, ":askStream") || strings.HasSuffix(path, ":watch")
}

// addEventStream documents the Server-Sent Events form of a streaming
// route: each event's data is one message of the stream, as JSON.
func addEventStream(res obj) {
	ok, _ := res["200"].(obj)
	if ok == nil {
		return
	}
	content := child(ok, "content")
	js, _ := content["application/json"].(obj)
	if js == nil {
		return
	}
	content["text/event-stream"] = obj{"schema": obj{
		"type":        "string",
		"description": "Server-Sent Events: one `data:` line per stream message, holding the JSON of the application/json form's `result`.",
	}}
	ok["description"] = "A stream: newline-delimited JSON by default, Server-Sent Events with `Accept: text/event-stream`."
}

func sortedKeys(m obj) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
