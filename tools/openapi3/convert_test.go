package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

const (
	committedV2 = "../../gen/openapi/groundcrew.swagger.json"
	committedV3 = "../../gen/openapi/groundcrew.openapi.json"
)

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCommittedDocumentIsValidAndCurrent loads the committed document with
// kin-openapi, validates it, and checks it is what Convert writes from the
// committed Swagger document (else `make generate` was not run).
func TestCommittedDocumentIsValidAndCurrent(t *testing.T) {
	ctx := context.Background()
	committed := readFile(t, committedV3)
	if err := Validate(ctx, committed); err != nil {
		t.Fatal(err)
	}
	got, err := Convert(ctx, readFile(t, committedV2))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, committed) {
		t.Errorf("%s is not what the generator writes from %s: run 'make generate'", committedV3, committedV2)
	}
	again, err := Convert(ctx, readFile(t, committedV2))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, again) {
		t.Error("Convert is not deterministic")
	}
}

type document struct {
	OpenAPI    string `json:"openapi"`
	Security   []map[string][]string
	Paths      map[string]map[string]operation
	Components struct {
		Schemas         map[string]json.RawMessage
		SecuritySchemes map[string]struct{ Type, Scheme string }
	}
}

type operation struct {
	OperationID string `json:"operationId"`
	Security    *[]map[string][]string
	Responses   map[string]json.RawMessage
}

func load(t *testing.T) document {
	t.Helper()
	var doc document
	if err := json.Unmarshal(readFile(t, committedV3), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestEveryDesignRouteIsPresent checks that every route the REST edge
// promises its clients is in the converted document.
func TestEveryDesignRouteIsPresent(t *testing.T) {
	doc := load(t)
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	want := map[string][]string{
		"/healthz": {"get"}, "/readyz": {"get"},
		"/v1/search": {"post"}, "/v1/search/documents": {"post"},
		"/v1/ground": {"post"}, "/v1/ground:query": {"post"},
		"/v1/messages/{id}": {"get"}, "/v1/messages": {"get"}, "/v1/messages/{id}:review": {"post"},
		"/v1/converse": {"post"}, "/v1/research": {"post"}, "/v1/research/{id}": {"get"},
		"/v1/approvals": {"get"}, "/v1/approvals/{id}:decide": {"post"},
		"/v1/collections/{collection}/documents": {"post"}, "/v1/collections/{collection}:retrieve": {"post"},
		"/v1/collections/{collection}:ask": {"post"},
		"/v1/alerts":                       {"post", "get"}, "/v1/alerts:alertmanager": {"post"}, "/v1/alerts/{id}": {"get"},
		"/v1/notifications:format": {"post"}, "/v1/telegram/webhook": {"post"},
		// Added in the second round.
		"/v1/alert-groups": {"get"}, "/v1/alert-groups/{id}": {"get"},
		"/v1/alert-groups/{id}:silence": {"post"}, "/v1/alert-groups/{id}:ack": {"post"},
		"/v1/research/{id}/report": {"get"},
	}
	for path, methods := range want {
		for _, m := range methods {
			if _, ok := doc.Paths[path][m]; !ok {
				t.Errorf("the document lacks %s %s", strings.ToUpper(m), path)
			}
		}
	}
}

func TestErrorsAndSecurity(t *testing.T) {
	doc := load(t)
	if s := doc.Components.SecuritySchemes[bearerScheme]; s.Type != "http" || s.Scheme != "bearer" {
		t.Errorf("security scheme %q = %+v, want http bearer", bearerScheme, s)
	}
	if len(doc.Security) != 1 || doc.Security[0][bearerScheme] == nil {
		t.Errorf("global security = %v, want the bearer scheme", doc.Security)
	}
	for _, name := range []string{statusSchema, badRequestSchema, fieldViolationSchema} {
		if _, ok := doc.Components.Schemas[name]; !ok {
			t.Errorf("schema %s is missing", name)
		}
	}
	var status struct {
		Properties struct {
			Details struct {
				Items struct {
					AnyOf []struct {
						Ref string `json:"$ref"`
					} `json:"anyOf"`
				}
			}
		}
	}
	if err := json.Unmarshal(doc.Components.Schemas[statusSchema], &status); err != nil {
		t.Fatal(err)
	}
	if refs := status.Properties.Details.Items.AnyOf; len(refs) == 0 || refs[0].Ref != "#/components/schemas/"+badRequestSchema {
		t.Errorf("googleRpcStatus.details items = %+v, want google.rpc.BadRequest first", refs)
	}
	ids := map[string]bool{}
	for path, item := range doc.Paths {
		for method, op := range item {
			if op.OperationID == "" || ids[op.OperationID] {
				t.Errorf("%s %s: operationId %q is empty or repeated", method, path, op.OperationID)
			}
			ids[op.OperationID] = true
			if strings.HasPrefix(path, "/v1/") {
				if _, ok := op.Responses["400"]; !ok {
					t.Errorf("%s %s has no 400 response", method, path)
				}
			}
			open := op.Security != nil && len(*op.Security) == 0
			if wantOpen := !strings.HasPrefix(path, "/v1/") || path == "/v1/telegram/webhook"; open != wantOpen {
				t.Errorf("%s %s: open = %v, want %v", method, path, open, wantOpen)
			}
		}
	}
}

func TestEnumsKeepTheirValues(t *testing.T) {
	doc := load(t)
	for _, tc := range []struct {
		schema string
		values []string
	}{
		{"AlertStatus", []string{"RECEIVED", "ENRICHING", "DELIVERING", "DELIVERED", "FAILED", "DUPLICATE"}},
		{"RiskLevel", []string{"REVERSIBLE", "REVERSIBLE_WITH_DELAY", "IRREVERSIBLE"}},
		{"DecideApprovalRequestDecision", []string{"APPROVE", "REJECT"}},
	} {
		// protoc-gen-openapiv2 prefixes names only as much as it must
		// ("v1…" when two packages share a name), so match the suffix.
		var raw json.RawMessage
		for name, schema := range doc.Components.Schemas {
			if strings.HasSuffix(name, tc.schema) {
				raw = schema
			}
		}
		if raw == nil {
			t.Errorf("no schema named …%s", tc.schema)
			continue
		}
		var s struct{ Enum []string }
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatalf("%s: %v", tc.schema, err)
		}
		for _, v := range tc.values {
			if !slices.Contains(s.Enum, v) {
				t.Errorf("%s enum = %v, lacks %s", tc.schema, s.Enum, v)
			}
		}
	}
}

func TestConvertRejectsBadInput(t *testing.T) {
	for name, in := range map[string]string{
		"not json":         "{",
		"no status schema": `{"swagger":"2.0","info":{"title":"t","version":"1"},"paths":{}}`,
		"dangling $ref":    `{"swagger":"2.0","info":{"title":"t","version":"1"},"paths":{"/x":{"get":{"operationId":"x","responses":{"200":{"description":"ok","schema":{"$ref":"#/definitions/missing"}}}}}},"definitions":{"googleRpcStatus":{"type":"object"}}}`,
	} {
		if _, err := Convert(context.Background(), []byte(in)); err == nil {
			t.Errorf("%s: Convert succeeded, want an error", name)
		}
	}
}
