package alert

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGenericMetadataBound(t *testing.T) {
	// The encoded form counts: {"k":"…"} is 8 bytes around the value.
	fits := map[string]any{"k": strings.Repeat("a", MaxMetadataBytes-8)}
	if _, err := Generic("disk full", fits); err != nil {
		t.Fatalf("metadata of exactly %d bytes refused: %v", MaxMetadataBytes, err)
	}
	over := map[string]any{"k": strings.Repeat("a", MaxMetadataBytes-7)}
	_, err := Generic("disk full", over)
	fe, ok := errors.AsType[*FieldError](err)
	if !ok || fe.Field != "metadata" || !strings.Contains(fe.Description, "16 KiB") {
		t.Fatalf("metadata of %d bytes: err = %v, want a FieldError on metadata naming the bound", MaxMetadataBytes+1, err)
	}
}

func TestGrafanaMetadataBound(t *testing.T) {
	p := GrafanaPayload{Alerts: []GrafanaAlert{{AlertmanagerAlert: AlertmanagerAlert{Status: "firing"}, Values: map[string]any{"A": strings.Repeat("9", MaxMetadataBytes)}}}}
	_, err := FromGrafana(p)
	if fe, ok := errors.AsType[*FieldError](err); !ok || fe.Field != "alerts[0]" {
		t.Fatalf("err = %v, want a FieldError on alerts[0]", err)
	}
}

func TestLinks(t *testing.T) {
	tests := []struct {
		name string
		md   map[string]any
		want []Link
	}{
		{
			name: "alertmanager annotations and generatorURL",
			md: map[string]any{
				"annotations":  map[string]any{"runbook_url": "https://runbooks.example.com/checkout", "dashboard_url": "https://grafana.example.com/d/abc"},
				"generatorURL": "http://prometheus:9090/graph?g0.expr=up",
			},
			want: []Link{
				{LinkRunbook, "https://runbooks.example.com/checkout"},
				{LinkDashboard, "https://grafana.example.com/d/abc"},
				{LinkSource, "http://prometheus:9090/graph?g0.expr=up"},
			},
		},
		{
			name: "grafana links",
			md: map[string]any{
				"annotations":  map[string]any{"runbook_url": "https://wiki.example.com/disk"},
				"dashboardURL": "https://grafana.example.com/d/disk", "panelURL": "https://grafana.example.com/d/disk?viewPanel=2",
				"generatorURL": "https://grafana.example.com/alerting/grafana/abc/view", "silenceURL": "https://grafana.example.com/alerting/silence/new",
			},
			want: []Link{
				{LinkRunbook, "https://wiki.example.com/disk"},
				{LinkDashboard, "https://grafana.example.com/d/disk"},
				{LinkPanel, "https://grafana.example.com/d/disk?viewPanel=2"},
				{LinkSource, "https://grafana.example.com/alerting/grafana/abc/view"},
				{LinkSilence, "https://grafana.example.com/alerting/silence/new"},
			},
		},
		{
			name: "generic metadata, runbook_url before runbook, junk left out",
			md: map[string]any{
				"runbook": "https://old.example.com/r", "runbook_url": "https://new.example.com/r",
				"dashboard_url": "javascript:alert(1)", "generatorURL": "not a url",
			},
			want: []Link{{LinkRunbook, "https://new.example.com/r"}},
		},
		{name: "none", md: map[string]any{"team": "shop"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Links(&Alert{Metadata: tt.md})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Links() = %v (-want +got):\n%s", got, diff)
			}
		})
	}
}

func TestEvidenceURLs(t *testing.T) {
	links := []Link{
		{LinkDashboard, "https://d.example/"}, {LinkRunbook, "https://r.example/"},
		{LinkSilence, "https://s.example/"}, {LinkSource, "https://g.example/"},
	}
	got := EvidenceURLs(links)
	want := []string{"https://r.example/", "https://d.example/", "https://g.example/"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("EvidenceURLs() = %v (-want +got):\n%s", got, diff)
	}
}
