package codec

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/grpc-ecosystem/grpc-gateway/v2/utilities"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	ragv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/rag/v1"
	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
)

// A body the gateway cannot decode names the field as the client spelt it,
// and says what is wrong without protojson's prefix or positions.
func TestDecodeErrorsNameTheField(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		msg       proto.Message
		wantField string
		wantDesc  string
	}{
		{"wrong type", `{"query":"q","maxResults":"abc"}`, &searchv1.SearchRequest{}, "maxResults", `invalid value for int32 field maxResults: "abc"`},
		{"nested", `{"text":"t","roundConfig":{"enableSearch":true,"maxResults":"many"}}`, &groundingv1.GroundRequest{}, "roundConfig.maxResults", "int32"},
		{"as the client spelt it", "{\n  \"text\": \"t\",\n  \"round_config\": {\"max_results\": []}\n}", &groundingv1.GroundRequest{}, "round_config.max_results", "int32"},
		{"after normalising (unknown field, enum case)", `{"extra":1,"query":"q","engine":"local","maxResults":true}`, &searchv1.SearchRequest{}, "maxResults", "int32"},
		{"in a list", `{"collection":"c","documents":[{"url":"https://a.example"},{"url":5}]}`, &ragv1.IngestDocumentsRequest{}, "documents[1].url", "string"},
		{"in a map", `{"alerts":[{"status":"firing","labels":{"alertname":"X","team":7}}]}`, &notifierv1.IngestAlertmanagerRequest{}, `alerts[0].labels["team"]`, "string"},
		{"unknown enum value", `{"query":"q","engine":"bing"}`, &searchv1.SearchRequest{}, "engine", `invalid value "bing": want one of AUTO, LOCAL, SEARXNG, EXA, TAVILY, BRAVE`},
		{"unknown enum value in a nested message", `{"text":"t","roundConfig":{"engine":"google"}}`, &groundingv1.GroundRequest{}, "roundConfig.engine", `want one of`},
		{"metadata not an object", `{"text":"x","metadata":[1]}`, &notifierv1.IngestAlertRequest{}, "metadata", "must be a JSON object"},
		{"syntax error", `{"query": }`, &searchv1.SearchRequest{}, "query", "invalid JSON: invalid character '}'"},
		{"syntax error after white space", "\n\n  {\"query\": \"q\",\n \"maxResults\": tru }", &searchv1.SearchRequest{}, "maxResults", "invalid JSON"},
		{"wrong type after white space", "\n  {\"query\": \"q\",\n \"maxResults\": \"x\"}", &searchv1.SearchRequest{}, "maxResults", "int32"},
		{"not JSON at all", `hello`, &searchv1.SearchRequest{}, "", "invalid JSON: invalid character 'h'"},
		{"escaped key", `{"te\u0078t":5}`, &notifierv1.IngestAlertRequest{}, "text", "string"},
	}
	j := NewJSON(DefaultMaxDepth)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := j.Unmarshal([]byte(tt.in), tt.msg)
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Unmarshal(%s) = %v (%T), want a *FieldError", tt.in, err, err)
			}
			if fe.Field != tt.wantField || !strings.Contains(fe.Description, tt.wantDesc) {
				t.Errorf("Unmarshal(%s) = field %q, %q; want field %q, a description containing %q", tt.in, fe.Field, fe.Description, tt.wantField, tt.wantDesc)
			}
			if strings.Contains(err.Error(), "proto:") || strings.Contains(err.Error(), "(line ") {
				t.Errorf("error %q keeps protojson's prefix or position", err)
			}
		})
	}
	var de *DepthError
	if err := NewJSON(8).Unmarshal([]byte(`{"a":[[[[[[[[[[1]]]]]]]]]]}`), &notifierv1.IngestAlertRequest{}); !errors.As(err, &de) {
		t.Errorf("too deep: %v, want a *DepthError", err)
	}
}

// Query parameters: an unknown enum value lists the valid ones, as in a
// body; a value of the wrong kind says which kind; the parameter is named
// as the client spelt it; enum names in any case, and numbers, still work.
func TestQueryErrorsNameTheParameter(t *testing.T) {
	tests := []struct {
		query     string
		wantField string
		wantDesc  string
	}{
		{"status=bogus", "status", `invalid value "bogus": want one of PENDING, APPROVED, REJECTED`},
		{"status=pending&pageSize=abc", "pageSize", `invalid value "abc": want an integer`},
		{"page_size=1.5", "page_size", `want an integer`},
		{"pageSize=1&pageSize=2", "pageSize", `more than once`},
		{"status=pending&pageSize=10&runId=r1", "", ""},
		{"status=2", "", ""},
	}
	for _, tt := range tests {
		values, _ := url.ParseQuery(tt.query)
		msg := &groundingv1.ListApprovalsRequest{}
		err := QueryParser{}.Parse(msg, values, utilities.NewDoubleArray(nil))
		if tt.wantField == "" && tt.wantDesc == "" {
			if err != nil {
				t.Errorf("?%s: %v, want none", tt.query, err)
			}
			continue
		}
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tt.wantField || !strings.Contains(fe.Description, tt.wantDesc) {
			t.Errorf("?%s: %v, want field %q with %q", tt.query, err, tt.wantField, tt.wantDesc)
		}
	}
	values, _ := url.ParseQuery("status=pending&pageSize=10")
	msg := &groundingv1.ListApprovalsRequest{}
	if err := (QueryParser{}).Parse(msg, values, utilities.NewDoubleArray(nil)); err != nil || msg.GetStatus() != groundingv1.ApprovalRequest_PENDING || msg.GetPageSize() != 10 {
		t.Errorf("?status=pending&pageSize=10 = %v, %v", msg, err)
	}
}

// Errors are written code, message, details, with only what is set inside
// a detail; an error without details still says "details": [].
func TestMarshalStatus(t *testing.T) {
	br, err := anypb.New(&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "pageSize", Description: "want an integer"}}})
	if err != nil {
		t.Fatal(err)
	}
	j := NewJSON(DefaultMaxDepth)
	for _, tt := range []struct {
		st   *statuspb.Status
		want string
	}{
		{&statuspb.Status{Code: 3, Message: "invalid request: pageSize: want an integer", Details: []*anypb.Any{br}},
			`{"code":3,"message":"invalid request: pageSize: want an integer","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"pageSize","description":"want an integer"}]}]}`},
		{&statuspb.Status{Code: 5, Message: "alert not found"}, `{"code":5,"message":"alert not found","details":[]}`},
	} {
		got, err := j.Marshal(tt.st)
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatalf("%s: %v", got, err)
		}
		_ = json.Unmarshal([]byte(tt.want), &b)
		if diff := cmp.Diff(b, a); diff != "" {
			t.Errorf("Marshal(%v) = %s (-want +got):\n%s", tt.st, got, diff)
		}
	}
}
