package notifiergrpc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
)

// TestGrafanaCorpus replays Grafana's unified-alerting webhook payloads
// (internal/alert/testdata/grafana, Grafana 12's webhook contact point,
// payload version "1") through IngestGrafana, decoded as the gateway
// decodes the body (protojson, unknown fields such as a per-alert orgId
// discarded), and follows each alert to DELIVERED.
func TestGrafanaCorpus(t *testing.T) {
	tests := []struct {
		file      string
		alerts    int
		firstLine []string // each alert's first line
		status    string
		metadata  map[string]string // string metadata of the first alert
		values    bool              // the first alert carries values
		inText    string            // the first alert's text holds it
	}{
		{
			file: "firing.json", alerts: 2, status: "firing",
			firstLine: []string{"[FIRING] Checkout p99 latency high (critical): Checkout p99 latency above 1.5 s", "[FIRING] Checkout p99 latency high (critical): Checkout p99 latency above 1.5 s"},
			metadata: map[string]string{
				"silenceURL":   "https://grafana.example.com/alerting/silence/new?alertmanager=grafana&matcher=__alert_rule_uid__%3Dbe3kq9x2m4s1sd&matcher=service%3Dcheckout-api&orgId=1",
				"dashboardURL": "https://grafana.example.com/d/checkout-overview?from=1764097150000&orgId=1&to=1764100750000",
				"panelURL":     "https://grafana.example.com/d/checkout-overview?from=1764097150000&orgId=1&to=1764100750000&viewPanel=4",
				"imageURL":     "https://grafana.example.com/public/img/attachments/Ymx0z8pQ4sKkV2c1.png",
				"valueString":  "[ var='A' labels={service=checkout-api} value=2.4127 ], [ var='C' labels={service=checkout-api} value=1 ]",
				"generatorURL": "https://grafana.example.com/alerting/grafana/be3kq9x2m4s1sd/view?orgId=1",
				"externalURL":  "https://grafana.example.com/",
				"receiver":     "groundcrew",
				"startsAt":     "2026-11-25T20:04:10.157076Z",
			},
			values: true,
			inText: "Value: [ var='A' labels={service=checkout-api} value=2.4127 ]",
		},
		{
			file: "resolved.json", alerts: 1, status: "resolved",
			firstLine: []string{"[RESOLVED] Checkout p99 latency high (critical): Checkout p99 latency above 1.5 s"},
			metadata: map[string]string{
				"endsAt":      "2026-11-25T20:31:10.157076Z",
				"valueString": "[ var='A' labels={service=checkout-api} value=0.6211 ], [ var='C' labels={service=checkout-api} value=0 ]",
			},
			values: true,
		},
		{
			file: "firing_nodata_truncated.json", alerts: 1, status: "firing",
			firstLine: []string{"[FIRING] DatasourceNoData (warning): Disk usage query returned no data"},
			metadata:  map[string]string{"silenceURL": "https://grafana.example.com/alerting/silence/new?alertmanager=grafana&matcher=alertname%3DDatasourceNoData&matcher=datasource_uid%3DP1809F7CD0C75ACF3&orgId=1"},
		},
	}
	files, err := os.ReadDir(filepath.Join("..", "alert", "testdata", "grafana"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(tests) {
		t.Errorf("%d corpus files, %d in the table", len(files), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "alert", "testdata", "grafana", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			var req notifierv1.IngestGrafanaRequest
			if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(data, &req); err != nil {
				t.Fatalf("decoding: %v", err)
			}
			c := withPipeline(t)
			res, err := c.IngestGrafana(context.Background(), &req)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.GetAlerts()) != tt.alerts {
				t.Fatalf("%d alerts, want %d", len(res.GetAlerts()), tt.alerts)
			}
			for i, a := range res.GetAlerts() {
				if a.GetSource() != "grafana" || a.GetAlertStatus() != tt.status {
					t.Errorf("alert %d: source %q status %q", i, a.GetSource(), a.GetAlertStatus())
				}
				if first, _, _ := strings.Cut(a.GetText(), "\n"); first != tt.firstLine[i] {
					t.Errorf("alert %d first line %q, want %q", i, first, tt.firstLine[i])
				}
				md := a.GetMetadata().GetFields()
				if md["groupKey"].GetStringValue() != req.GetGroupKey() || md["orgId"].GetNumberValue() != 1 {
					t.Errorf("alert %d metadata lacks the group key or orgId: %v", i, md)
				}
				waitDelivered(t, c, a.GetId())
			}
			first := res.GetAlerts()[0]
			md := first.GetMetadata().GetFields()
			for k, want := range tt.metadata {
				if got := md[k].GetStringValue(); got != want {
					t.Errorf("metadata %s = %q, want %q", k, got, want)
				}
			}
			if v := md["values"].GetStructValue().GetFields(); tt.values != (len(v) > 0) {
				t.Errorf("values = %v, want present %v", v, tt.values)
			}
			if tt.inText != "" && !strings.Contains(first.GetText(), tt.inText) {
				t.Errorf("text lacks %q:\n%s", tt.inText, first.GetText())
			}
		})
	}
}
