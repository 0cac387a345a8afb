package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	ragv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/rag/v1"
)

// errorBody is a gRPC status as the gateway writes it.
type errorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Details []struct {
		Type            string `json:"@type"`
		FieldViolations []struct {
			Field       string `json:"field"`
			Description string `json:"description"`
		} `json:"fieldViolations"`
	} `json:"details"`
}

// Every 400 a client can cause with its input carries a BadRequest
// naming the field as the client spelt it, whether the gateway could not
// decode the request or a backend's validation refused it, and no message
// starts with protojson's "proto:".
func TestBadRequestsNameTheField(t *testing.T) {
	h := newHarness(t, testConfig())
	tests := []struct {
		name, method, path, body string
		wantField, wantDesc      string
	}{
		{"wrong type in the body", "POST", "/v1/search", `{"query":"q","maxResults":"abc"}`, "maxResults", "int32"},
		{"wrong type, nested", "POST", "/v1/ground", `{"text":"t","roundConfig":{"maxResults":"ten"}}`, "roundConfig.maxResults", "int32"},
		{"snake_case as sent", "POST", "/v1/ground", `{"text":"t","round_config":{"max_results":"ten"}}`, "round_config.max_results", "int32"},
		{"unknown enum in the body", "POST", "/v1/search", `{"query":"q","engine":"bing"}`, "engine", `invalid value "bing": want one of AUTO, LOCAL`},
		{"bad JSON", "POST", "/v1/search", `{"query":"q",}`, "", "invalid JSON"},
		{"unknown enum in the query", "GET", "/v1/approvals?status=bogus", "", "status", `invalid value "bogus": want one of PENDING, APPROVED`},
		{"wrong type in the query", "GET", "/v1/approvals?pageSize=lots", "", "pageSize", `want an integer`},
		{"the webhook's body is the update", "POST", "/v1/telegram/webhook", `{"update_id":"x"}`, "update_id", "int64"},
		{"backend validation, nested", "POST", "/v1/ground", `{"text":"t","roundConfig":{"maxResults":11}}`, "roundConfig.maxResults", "10"},
		{"backend validation, in a list", "POST", "/v1/collections/books/documents", `{"documents":[{"url":"https://a.example/x","title":"a","text":"t"},{"url":"ftp://b.example/y","title":"b","text":"t"}]}`, "documents[1].url", "http"},
		{"backend validation of a query parameter", "GET", "/v1/approvals?pageSize=1000", "", "pageSize", "100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := do(t, tt.method, h.url+tt.path, tt.body)
			if got.code != http.StatusBadRequest {
				t.Fatalf("%s %s = %d %s, want 400", tt.method, tt.path, got.code, got.body)
			}
			var st errorBody
			if err := json.Unmarshal([]byte(got.body), &st); err != nil {
				t.Fatalf("body %s: %v", got.body, err)
			}
			if strings.HasPrefix(st.Message, "proto:") || strings.Contains(got.body, "proto:") || strings.Contains(got.body, "(line ") {
				t.Errorf("body %s keeps protojson's prefix or position", got.body)
			}
			if strings.Contains(got.body, "buf.validate") {
				t.Errorf("body %s repeats the violations in proto names", got.body)
			}
			if len(st.Details) == 0 || !strings.HasSuffix(st.Details[0].Type, "google.rpc.BadRequest") || len(st.Details[0].FieldViolations) == 0 {
				t.Fatalf("body %s has no BadRequest field violation", got.body)
			}
			v := st.Details[0].FieldViolations[0]
			if v.Field != tt.wantField || !strings.Contains(v.Description, tt.wantDesc) {
				t.Errorf("violation %+v, want field %q with %q", v, tt.wantField, tt.wantDesc)
			}
			if tt.wantField != "" && !strings.Contains(st.Message, tt.wantField) {
				t.Errorf("message %q does not name %s", st.Message, tt.wantField)
			}
		})
	}
}

func TestJSONPath(t *testing.T) {
	for _, tt := range []struct {
		got, want string
	}{
		{jsonPath((&groundingv1.GroundRequest{}).ProtoReflect().Descriptor(), "round_config.max_results", "*"), "roundConfig.maxResults"},
		{jsonPath((&ragv1.IngestDocumentsRequest{}).ProtoReflect().Descriptor(), "documents[2].url", "*"), "documents[2].url"},
		{jsonPath((&notifierv1.IngestAlertmanagerRequest{}).ProtoReflect().Descriptor(), `alerts[0].labels["a.b[c]"]`, "*"), `alerts[0].labels["a.b[c]"]`},
		{jsonPath((&notifierv1.IngestAlertmanagerRequest{}).ProtoReflect().Descriptor(), "alerts[1].generator_url", "*"), "alerts[1].generatorURL"},
		{jsonPath((&notifierv1.HandleTelegramUpdateRequest{}).ProtoReflect().Descriptor(), "update.edited_message.text", "update"), "editedMessage.text"},
		{jsonPath((&notifierv1.HandleTelegramUpdateRequest{}).ProtoReflect().Descriptor(), "update", "update"), "update"},
		{jsonPath((&groundingv1.ListApprovalsRequest{}).ProtoReflect().Descriptor(), "page_size", ""), "pageSize"},
		{jsonPath((&groundingv1.ListApprovalsRequest{}).ProtoReflect().Descriptor(), "no_such.field", ""), "no_such.field"},
		{jsonPath((&groundingv1.GroundRequest{}).ProtoReflect().Descriptor(), "", "*"), ""},
	} {
		if tt.got != tt.want {
			t.Errorf("jsonPath = %q, want %q", tt.got, tt.want)
		}
	}
}
