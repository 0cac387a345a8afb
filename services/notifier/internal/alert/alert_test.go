package alert

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func readFixture[T any](t testing.TB, name string) T {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("decoding %s: %v", name, err)
	}
	return v
}

// brief is what the tests compare: the parts intake decides.
type brief struct {
	Text, AlertStatus, Fingerprint, Source string
	Labels                                 map[string]string
}

func briefs(as []Alert) []brief {
	out := make([]brief, 0, len(as))
	for _, a := range as {
		out = append(out, brief{a.Text, a.AlertStatus, a.Fingerprint, a.Source, a.Labels})
	}
	return out
}

func TestFromAlertmanagerFixtures(t *testing.T) {
	tests := []struct {
		file string
		want []brief
	}{
		{
			file: "alertmanager_firing.json",
			want: []brief{
				{
					Text: "[FIRING] HighErrorRate (critical): High error rate on checkout-api: 5xx > 10% for 5m\n" +
						"5xx responses are 12.3% of all requests on checkout-api for the last 5 minutes.\n" +
						"instance=checkout-api-7d9f8b6c5-x2k4p:8080 job=checkout-api namespace=shop pod=checkout-api-7d9f8b6c5-x2k4p team=payments",
					AlertStatus: Firing, Fingerprint: "b2a1f0c3d4e5f607", Source: SourceAlertmanager,
					Labels: map[string]string{
						"alertname": "HighErrorRate", "instance": "checkout-api-7d9f8b6c5-x2k4p:8080", "job": "checkout-api",
						"namespace": "shop", "pod": "checkout-api-7d9f8b6c5-x2k4p", "severity": "critical", "team": "payments",
					},
				},
				{
					Text: "[FIRING] HighErrorRate (critical): High error rate on checkout-api: 5xx > 10% for 5m\n" +
						"5xx responses are 11.0% of all requests on checkout-api for the last 5 minutes.\n" +
						"instance=checkout-api-7d9f8b6c5-q8r2z:8080 job=checkout-api namespace=shop pod=checkout-api-7d9f8b6c5-q8r2z team=payments",
					AlertStatus: Firing, Fingerprint: "c9d8e7f6a5b4c3d2", Source: SourceAlertmanager,
					Labels: map[string]string{
						"alertname": "HighErrorRate", "instance": "checkout-api-7d9f8b6c5-q8r2z:8080", "job": "checkout-api",
						"namespace": "shop", "pod": "checkout-api-7d9f8b6c5-q8r2z", "severity": "critical", "team": "payments",
					},
				},
			},
		},
		{
			file: "alertmanager_resolved.json",
			want: []brief{{
				Text: "[RESOLVED] KubePodCrashLooping (warning): Pod is crash looping.\n" +
					"Pod batch/report-worker-5c6d7f-abcde (worker) is in waiting state (reason: \"CrashLoopBackOff\").\n" +
					"namespace=batch pod=report-worker-5c6d7f-abcde container=worker",
				AlertStatus: Resolved, Fingerprint: "0f1e2d3c4b5a6978", Source: SourceAlertmanager,
				Labels: map[string]string{
					"alertname": "KubePodCrashLooping", "container": "worker", "namespace": "batch",
					"pod": "report-worker-5c6d7f-abcde", "severity": "warning",
				},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := FromAlertmanager(readFixture[AlertmanagerPayload](t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, briefs(got)); diff != "" {
				t.Errorf("alerts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFromAlertmanagerMetadata(t *testing.T) {
	got, err := FromAlertmanager(readFixture[AlertmanagerPayload](t, "alertmanager_resolved.json"))
	if err != nil {
		t.Fatal(err)
	}
	md := got[0].Metadata
	if md["startsAt"] != "2025-03-14T08:02:11.5Z" || md["endsAt"] != "2025-03-14T08:47:41.5Z" {
		t.Errorf("times in metadata = %v, %v", md["startsAt"], md["endsAt"])
	}
	if _, err := json.Marshal(md); err != nil {
		t.Errorf("metadata is not JSON: %v", err)
	}
	firing, _ := FromAlertmanager(readFixture[AlertmanagerPayload](t, "alertmanager_firing.json"))
	if _, ok := firing[0].Metadata["endsAt"]; ok {
		t.Errorf("a firing alert's zero endsAt should be left out, got %v", firing[0].Metadata["endsAt"])
	}
}

func TestFromGrafanaFixtures(t *testing.T) {
	labels := map[string]string{
		"alertname": "Disk usage above 90%", "grafana_folder": "Infrastructure",
		"instance": "db-1:9100", "severity": "warning", "team": "db",
	}
	tests := []struct {
		file string
		want []brief
	}{
		{
			file: "grafana_firing.json",
			want: []brief{{
				Text: "[FIRING] Disk usage above 90% (warning): Disk almost full on db-1\n" +
					"Root filesystem on db-1 is 93% full.\n" +
					"instance=db-1:9100 team=db\n" +
					"Value: [ var='B' labels={instance=db-1:9100} value=93.12 ], [ var='C' labels={instance=db-1:9100} value=1 ]",
				AlertStatus: Firing, Fingerprint: "6b3e8a3a7c1d2e4f", Source: SourceGrafana, Labels: labels,
			}},
		},
		{
			file: "grafana_resolved.json",
			want: []brief{{
				Text: "[RESOLVED] Disk usage above 90% (warning): Disk almost full on db-1\n" +
					"Root filesystem on db-1 is 93% full.\n" +
					"instance=db-1:9100 team=db\n" +
					"Value: [ var='B' labels={instance=db-1:9100} value=71.4 ], [ var='C' labels={instance=db-1:9100} value=0 ]",
				AlertStatus: Resolved, Fingerprint: "6b3e8a3a7c1d2e4f", Source: SourceGrafana, Labels: labels,
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := FromGrafana(readFixture[GrafanaPayload](t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, briefs(got)); diff != "" {
				t.Errorf("alerts (-want +got):\n%s", diff)
			}
			if got[0].Metadata["dashboardURL"] == nil || got[0].Metadata["values"] == nil {
				t.Errorf("metadata lacks Grafana links or values: %v", got[0].Metadata)
			}
		})
	}
}

func TestFiringAndResolvedAreDifferentAlerts(t *testing.T) {
	f, _ := FromGrafana(readFixture[GrafanaPayload](t, "grafana_firing.json"))
	r, _ := FromGrafana(readFixture[GrafanaPayload](t, "grafana_resolved.json"))
	if f[0].DedupKey() == r[0].DedupKey() {
		t.Errorf("firing and resolved share dedup key %q", f[0].DedupKey())
	}
	if f[0].Fingerprint != r[0].Fingerprint {
		t.Errorf("fingerprints differ: %q vs %q", f[0].Fingerprint, r[0].Fingerprint)
	}
}

func TestBuildTextFallbacks(t *testing.T) {
	tests := []struct {
		name string
		in   AlertmanagerPayload
		want string
	}{
		{
			name: "no alertname, no summary",
			in:   AlertmanagerPayload{Alerts: []AlertmanagerAlert{{Status: "firing", Labels: map[string]string{"job": "node"}}}},
			want: "[FIRING] alert\njob=node",
		},
		{
			name: "common annotations fill in",
			in: AlertmanagerPayload{
				CommonAnnotations: map[string]string{"summary": "Too\nmany   restarts"},
				Alerts:            []AlertmanagerAlert{{Status: "RESOLVED", Labels: map[string]string{"alertname": "Restarts"}}},
			},
			want: "[RESOLVED] Restarts: Too many restarts",
		},
		{
			name: "description equal to summary is not repeated",
			in: AlertmanagerPayload{Alerts: []AlertmanagerAlert{{
				Status: "firing", Labels: map[string]string{"alertname": "X"},
				Annotations: map[string]string{"summary": "same", "description": " same "},
			}}},
			want: "[FIRING] X: same",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromAlertmanager(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got[0].Text != tt.want {
				t.Errorf("text = %q, want %q", got[0].Text, tt.want)
			}
			if got[0].Fingerprint == "" {
				t.Error("no fingerprint derived from labels")
			}
		})
	}
}

func TestPayloadErrors(t *testing.T) {
	tests := []struct {
		name  string
		in    AlertmanagerPayload
		field string
	}{
		{"no alerts", AlertmanagerPayload{}, "alerts"},
		{"bad status", AlertmanagerPayload{Alerts: []AlertmanagerAlert{{Status: "firing"}, {Status: "pending"}}}, "alerts[1].status"},
		{"too many", AlertmanagerPayload{Alerts: make([]AlertmanagerAlert, MaxPayloadAlerts+1)}, "alerts"},
		{"annotations over 16 KiB", AlertmanagerPayload{Alerts: []AlertmanagerAlert{
			{Status: "firing"},
			{Status: "firing", Annotations: map[string]string{"description": strings.Repeat("x", MaxMetadataBytes)}},
		}}, "alerts[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromAlertmanager(tt.in)
			fe, ok := errors.AsType[*FieldError](err)
			if !ok || !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want a FieldError wrapping ErrInvalid", err)
			}
			if fe.Field != tt.field {
				t.Errorf("field = %q, want %q", fe.Field, tt.field)
			}
		})
	}
}

func TestGeneric(t *testing.T) {
	long := strings.Repeat("é", MaxTextLen+10)
	tests := []struct {
		name          string
		text          string
		md            map[string]any
		wantText      string
		wantTruncated bool
		wantLabels    map[string]string
		wantErrField  string
	}{
		{name: "plain", text: "disk full", wantText: "disk full", wantLabels: map[string]string{}},
		{
			name: "string metadata become labels", text: "x",
			md:         map[string]any{"severity": "critical", "count": 3.0, "nested": map[string]any{"a": "b"}},
			wantText:   "x",
			wantLabels: map[string]string{"severity": "critical"},
		},
		{name: "exactly the limit", text: strings.Repeat("a", MaxTextLen), wantText: strings.Repeat("a", MaxTextLen), wantLabels: map[string]string{}},
		{
			name: "truncated", text: long, wantTruncated: true,
			wantText: strings.Repeat("é", MaxTextLen-1) + "…", wantLabels: map[string]string{},
		},
		{name: "blank", text: " \n\t", wantErrField: "text"},
		{name: "empty", text: "", wantErrField: "text"},
		{name: "invalid UTF-8", text: "a\xffb", wantErrField: "text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Generic(tt.text, tt.md)
			if tt.wantErrField != "" {
				fe, ok := errors.AsType[*FieldError](err)
				if !ok || fe.Field != tt.wantErrField {
					t.Fatalf("err = %v, want a FieldError on %q", err, tt.wantErrField)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Text != tt.wantText || got.TextTruncated != tt.wantTruncated {
				t.Errorf("text %d runes truncated=%v, want %d runes truncated=%v",
					utf8.RuneCountInString(got.Text), got.TextTruncated, utf8.RuneCountInString(tt.wantText), tt.wantTruncated)
			}
			if diff := cmp.Diff(tt.wantLabels, got.Labels, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGenericFingerprint(t *testing.T) {
	a, _ := Generic("disk full", map[string]any{"host": "a", "n": 1.0})
	b, _ := Generic("disk full", map[string]any{"n": 1.0, "host": "a"})
	c, _ := Generic("disk full", map[string]any{"host": "b", "n": 1.0})
	d, _ := Generic("disk full", nil)
	e, _ := Generic("disk full", map[string]any{})
	if a.Fingerprint != b.Fingerprint {
		t.Error("metadata key order changed the fingerprint")
	}
	if a.Fingerprint == c.Fingerprint {
		t.Error("different metadata, same fingerprint")
	}
	if d.Fingerprint != e.Fingerprint {
		t.Error("nil and empty metadata differ")
	}
}

// checkAlerts asserts what every parsed alert must satisfy.
func checkAlerts(t *testing.T, as []Alert) {
	t.Helper()
	for i, a := range as {
		if !utf8.ValidString(a.Text) || strings.TrimSpace(a.Text) == "" {
			t.Fatalf("alert %d: text %q is blank or not UTF-8", i, a.Text)
		}
		if n := utf8.RuneCountInString(a.Text); n > MaxTextLen {
			t.Fatalf("alert %d: text has %d characters", i, n)
		}
		if a.Fingerprint == "" || (a.AlertStatus != Firing && a.AlertStatus != Resolved && a.Source != SourceGeneric) {
			t.Fatalf("alert %d: fingerprint %q status %q", i, a.Fingerprint, a.AlertStatus)
		}
		if _, err := json.Marshal(a.Metadata); err != nil {
			t.Fatalf("alert %d: metadata not JSON: %v", i, err)
		}
	}
}

func seedFixtures(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"alerts":[{"status":"firing","labels":{"alertname":"\u0000\ud800"},"annotations":{"summary":"` + strings.Repeat("x", 5000) + `"}}]}`))
	f.Add([]byte(`{"alerts":[]}`))
}

func FuzzFromAlertmanager(f *testing.F) {
	seedFixtures(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var p AlertmanagerPayload
		if json.Unmarshal(data, &p) != nil {
			return
		}
		as, err := FromAlertmanager(p)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if len(as) != len(p.Alerts) {
			t.Fatalf("%d alerts for %d in the payload", len(as), len(p.Alerts))
		}
		checkAlerts(t, as)
		gp, ok := AlertmanagerGroup(p)
		checkGroup(t, gp, ok)
	})
}

// checkGroup checks what a payload's group gives the store and the
// formatter: a key and external URL that are valid UTF-8 without NUL
// (stored as PostgreSQL text, which refuses both), a title and query that
// are valid UTF-8, the title on one line.
func checkGroup(t *testing.T, gp GroupPayload, ok bool) {
	t.Helper()
	if !ok {
		return
	}
	g := Group{GroupKey: gp.GroupKey, GroupLabels: gp.GroupLabels, CommonLabels: gp.CommonLabels, CommonAnnotations: gp.CommonAnnotations, ExternalURL: gp.ExternalURL, Status: GroupFiring, Firing: 1}
	for name, v := range map[string]string{"groupKey": g.GroupKey, "externalURL": g.ExternalURL, "title": g.Title(), "query": g.GroupQuery()} {
		if !utf8.ValidString(v) || ((name == "groupKey" || name == "externalURL") && strings.ContainsRune(v, 0)) {
			t.Fatalf("%s %q is not valid UTF-8 (without NUL where stored)", name, v)
		}
	}
	if strings.ContainsAny(g.Title(), "\r\n") {
		t.Fatalf("title %q spans lines", g.Title())
	}
}

func FuzzFromGrafana(f *testing.F) {
	seedFixtures(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var p GrafanaPayload
		if json.Unmarshal(data, &p) != nil {
			return
		}
		as, err := FromGrafana(p)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		checkAlerts(t, as)
	})
}

func FuzzGeneric(f *testing.F) {
	f.Add("High error rate on checkout-api: 5xx > 10% for 5m", []byte(`{"severity":"critical"}`))
	f.Add(strings.Repeat("🔥", MaxTextLen+1), []byte(`{}`))
	f.Add(" ", []byte(`null`))
	f.Fuzz(func(t *testing.T, text string, md []byte) {
		var m map[string]any
		if json.Unmarshal(md, &m) != nil {
			return
		}
		a, err := Generic(text, m)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		checkAlerts(t, []Alert{a})
	})
}
