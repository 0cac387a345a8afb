package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	ragv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/rag/v1"
	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
)

// bodyRoute is one REST route that takes a JSON body, read from the
// google.api.http option of the RPC it maps to.
type bodyRoute struct {
	rpc, method, path string
	// body is the message the JSON body fills: the request itself for
	// `body: "*"`, the named field's message otherwise.
	body protoreflect.MessageDescriptor
}

// bodyRoutes lists every RPC of the groundcrew services whose HTTP rule
// takes a message body.
func bodyRoutes(t *testing.T) []bodyRoute {
	t.Helper()
	var out []bodyRoute
	for _, svc := range []string{
		searchv1.SearchService_ServiceDesc.ServiceName,
		groundingv1.GroundingService_ServiceDesc.ServiceName,
		groundingv1.ResearchService_ServiceDesc.ServiceName,
		ragv1.RagService_ServiceDesc.ServiceName,
		notifierv1.NotifierService_ServiceDesc.ServiceName,
	} {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc))
		if err != nil {
			t.Fatal(err)
		}
		methods := d.(protoreflect.ServiceDescriptor).Methods()
		for i := range methods.Len() {
			m := methods.Get(i)
			rule, _ := proto.GetExtension(m.Options(), annotations.E_Http).(*annotations.HttpRule)
			if rule == nil || rule.GetBody() == "" {
				continue
			}
			method, path := "POST", rule.GetPost()
			switch {
			case rule.GetPut() != "":
				method, path = "PUT", rule.GetPut()
			case rule.GetPatch() != "":
				method, path = "PATCH", rule.GetPatch()
			}
			if path == "" {
				t.Fatalf("%s: a body on a rule that is not POST, PUT or PATCH", m.FullName())
			}
			body := m.Input()
			if rule.GetBody() != "*" {
				fd := body.Fields().ByName(protoreflect.Name(rule.GetBody()))
				if fd == nil || fd.Message() == nil {
					t.Fatalf("%s: body field %q is not a message", m.FullName(), rule.GetBody())
				}
				body = fd.Message()
			}
			out = append(out, bodyRoute{rpc: string(m.FullName()), method: method, path: path, body: body})
		}
	}
	return out
}

// withUnknownFields returns a JSON object for md with a field md does not
// have at the top and, where md has a message field holding another
// message field, one two levels down, plus the same document without them.
func withUnknownFields(md protoreflect.MessageDescriptor) (with, without string, nested bool) {
	top := map[string]any{"fieldNoProtoHas": map[string]any{"a": 1}}
	bare := map[string]any{}
	if f1, f2 := nestedPath(md); f1 != nil {
		nested = true
		bare[f1.JSONName()] = map[string]any{f2.JSONName(): map[string]any{}}
		top[f1.JSONName()] = map[string]any{f2.JSONName(): map[string]any{"nestedFieldNoProtoHas": []any{1, "x"}}}
	}
	a, _ := json.Marshal(top)
	b, _ := json.Marshal(bare)
	return string(a), string(b), nested
}

// nestedPath finds a singular message field of md whose message has a
// singular message field of its own (neither a well-known type).
func nestedPath(md protoreflect.MessageDescriptor) (protoreflect.FieldDescriptor, protoreflect.FieldDescriptor) {
	plain := func(fd protoreflect.FieldDescriptor) bool {
		return fd.Message() != nil && !fd.IsList() && !fd.IsMap() &&
			!strings.HasPrefix(string(fd.Message().FullName()), "google.protobuf.")
	}
	fields := md.Fields()
	for i := range fields.Len() {
		f1 := fields.Get(i)
		if !plain(f1) {
			continue
		}
		inner := f1.Message().Fields()
		for j := range inner.Len() {
			if f2 := inner.Get(j); plain(f2) {
				return f1, f2
			}
		}
	}
	return nil, nil
}

// TestEveryBodyRouteIgnoresUnknownFields holds the one decoding rule: on
// every route that takes a body, whatever its body mapping ("*" or a
// field, as the Telegram webhook's "update"), a field the proto does not
// have, at the top or nested, changes nothing about the answer. Before,
// routes mapping a field as their body answered 400 "unknown field", so
// the bot refused every real Telegram update that carried a field ours
// did not.
func TestEveryBodyRouteIgnoresUnknownFields(t *testing.T) {
	h := newHarness(t, testConfig())
	routes := bodyRoutes(t)
	if len(routes) < 15 {
		t.Fatalf("found only %d routes with a body", len(routes))
	}
	nested := 0
	for _, r := range routes {
		path := r.path
		for strings.Contains(path, "{") {
			i, j := strings.Index(path, "{"), strings.Index(path, "}")
			path = path[:i] + "x1" + path[j+1:]
		}
		with, without, deep := withUnknownFields(r.body)
		if deep {
			nested++
		}
		t.Run(r.rpc, func(t *testing.T) {
			want := do(t, r.method, h.url+path, without)
			got := do(t, r.method, h.url+path, with)
			if strings.Contains(got.body, "unknown field") || strings.Contains(got.body, "NoProtoHas") {
				t.Fatalf("%s %s with unknown fields = %d %s", r.method, path, got.code, got.body)
			}
			if got.code != want.code {
				t.Errorf("%s %s = %d with unknown fields, %d without (%s)", r.method, path, got.code, want.code, got.body)
			}
			if got.code == http.StatusBadRequest && !strings.Contains(got.body, "violation") && !strings.Contains(got.body, "fieldViolations") {
				t.Errorf("%s %s = 400 without a field violation: %s", r.method, path, got.body)
			}
		})
	}
	if nested == 0 {
		t.Error("no route had a nested message to put an unknown field in; the test lost its second half")
	}
}

// TestTelegramUpdateWithRealFields posts a button press as Telegram sends
// it (chat_instance, the message with its reply_markup, is_premium on the
// user): the notifier receives the update, not a 400.
func TestTelegramUpdateWithRealFields(t *testing.T) {
	h := newHarness(t, testConfig())
	update := `{"update_id":10000,"callback_query":{"id":"4382bfdwdsb323b2d9","from":{"id":1111111,"is_bot":false,
		"first_name":"Ann","username":"ann","language_code":"en","is_premium":true,"added_to_attachment_menu":true},
		"message":{"message_id":42,"message_thread_id":7,"from":{"id":999,"is_bot":true,"first_name":"groundcrew","username":"gc_bot"},
		"chat":{"id":-1001234567890,"title":"alerts","type":"supergroup","is_forum":true},"date":1764120000,
		"text":"HighLatency","entities":[{"offset":0,"length":11,"type":"bold"}],
		"reply_markup":{"inline_keyboard":[[{"text":"Ack","callback_data":"ack:1"},{"text":"Silence 1h","callback_data":"sil:1"}]]}},
		"chat_instance":"-1234567890123456789","data":"ack:1"}}`
	got := do(t, "POST", h.url+"/v1/telegram/webhook", update)
	if got.code != http.StatusOK {
		t.Fatalf("POST /v1/telegram/webhook = %d %s, want 200", got.code, got.body)
	}
	h.notifier.mu.Lock()
	u := h.notifier.lastUpdate
	h.notifier.mu.Unlock()
	if u.GetUpdateId() != 10000 || u.GetCallbackQuery().GetData() != "ack:1" || u.GetCallbackQuery().GetMessage().GetMessageId() != 42 {
		t.Errorf("the notifier got update %v, want the button press (update 10000, data ack:1, message 42)", u)
	}
}
