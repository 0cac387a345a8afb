package codec

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
)

func TestUnmarshal(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		msg     proto.Message
		want    proto.Message
		wantErr string
	}{
		{
			name: "upper-case enum, fast path",
			in:   `{"query":"q","engine":"LOCAL"}`,
			msg:  &searchv1.SearchRequest{},
			want: &searchv1.SearchRequest{Query: "q", Engine: searchv1.Engine_LOCAL},
		},
		{
			name: "lower-case enum",
			in:   `{"query":"q","engine":"local","maxResults":3}`,
			msg:  &searchv1.SearchRequest{},
			want: &searchv1.SearchRequest{Query: "q", Engine: searchv1.Engine_LOCAL, MaxResults: proto.Int32(3)},
		},
		{
			name: "nested enums and snake_case names",
			in:   `{"text":"t","round_config":{"engine":"native","contextScale":"high"}}`,
			msg:  &groundingv1.GroundRequest{},
			want: &groundingv1.GroundRequest{Text: "t", RoundConfig: &groundingv1.RoundConfig{
				Engine: groundingv1.RoundConfig_NATIVE, ContextScale: groundingv1.RoundConfig_HIGH,
			}},
		},
		{
			name: "dashes for underscores",
			in:   `{"id":"m","reviewerId":"r","status":"needs-review"}`,
			msg:  &groundingv1.ReviewAnnotatedMessageRequest{},
			want: &groundingv1.ReviewAnnotatedMessageRequest{Id: "m", ReviewerId: "r", Status: groundingv1.AnnotatedMessage_NEEDS_REVIEW},
		},
		{
			name:    "unknown enum name is an error, not the default",
			in:      `{"query":"q","engine":"bing"}`,
			msg:     &searchv1.SearchRequest{},
			wantErr: `engine: invalid value "bing": want one of AUTO, LOCAL`,
		},
		{
			name: "unknown fields ignored at every level, metadata kept whole",
			in: `{"version":"4","status":"firing","receiver":"r","externalURL":"http://am","newTopLevel":1,
				"alerts":[{"status":"firing","labels":{"alertname":"X"},"generatorURL":"http://g","futureField":{"a":1}}]}`,
			msg: &notifierv1.IngestAlertmanagerRequest{},
			want: &notifierv1.IngestAlertmanagerRequest{Version: "4", Status: "firing", Receiver: "r", ExternalUrl: "http://am",
				Alerts: []*notifierv1.AlertmanagerAlert{{Status: "firing", Labels: map[string]string{"alertname": "X"}, GeneratorUrl: "http://g"}}},
		},
		{
			name:    "wrong type stays an error",
			in:      `{"text":5}`,
			msg:     &notifierv1.IngestAlertRequest{},
			wantErr: "text",
		},
		{
			name:    "metadata must be an object",
			in:      `{"text":"x","metadata":[1]}`,
			msg:     &notifierv1.IngestAlertRequest{},
			wantErr: "metadata",
		},
	}
	j := NewJSON(DefaultMaxDepth)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := j.Unmarshal([]byte(tt.in), tt.msg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Unmarshal() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Unmarshal() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, tt.msg, protocmp.Transform()); diff != "" {
				t.Errorf("Unmarshal() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSSEMarshal(t *testing.T) {
	s := NewSSE(NewJSON(DefaultMaxDepth))
	got, err := s.Marshal(map[string]any{"result": &searchv1.EngineStatus{Engine: searchv1.Engine_LOCAL, Configured: true}})
	if err != nil {
		t.Fatal(err)
	}
	// protojson varies its whitespace between builds on purpose, so compare
	// the JSON, not the bytes.
	text, ok := strings.CutPrefix(string(got), "data: ")
	if !ok || strings.Contains(text, "\n") {
		t.Fatalf("Marshal() = %q, want one `data: ` line", got)
	}
	var gotJSON, wantJSON any
	if err := json.Unmarshal([]byte(text), &gotJSON); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal([]byte(`{"result":{"engine":"LOCAL","configured":true,"healthy":false,"configVariable":"","detail":"","autoOrder":0}}`), &wantJSON)
	if diff := cmp.Diff(wantJSON, gotJSON); diff != "" {
		t.Errorf("Marshal() mismatch (-want +got):\n%s", diff)
	}
	if string(s.Delimiter()) != "\n\n" {
		t.Errorf("Delimiter() = %q", s.Delimiter())
	}
}
