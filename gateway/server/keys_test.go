package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace/noop"
)

// The keys that post alerts only because write still covers the alerts
// routes are named at start, without their secrets; so is what strict
// mode takes from them.
func TestStartupNamesKeysThatRelyOnWriteForAlerts(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	b := Backends{Search: Backend{Name: "search", Services: []string{"x"}, Conn: conn(t, addr)}}
	b.Grounding, b.Rag, b.Notifier = b.Search, b.Search, b.Search
	for _, tt := range []struct {
		strict bool
		want   string
	}{
		{false, "deprecated"},
		{true, "can no longer post alerts"},
	} {
		cfg := testConfig()
		cfg.APIKeys = []string{"ci:k-ci-secret-0123:read+write", "alertmanager:k-am-secret-0123:alerts", "console:k-ro-secret-0123:read", "k-bare-secret-0123"}
		cfg.AlertsScopeStrict = tt.strict
		var logs bytes.Buffer
		if _, err := NewHandler(context.Background(), cfg, b, slog.New(slog.NewTextHandler(&logs, nil)), nil, noop.NewTracerProvider()); err != nil {
			t.Fatal(err)
		}
		out := logs.String()
		if !strings.Contains(out, "level=WARN") || !strings.Contains(out, tt.want) || !strings.Contains(out, "keys=[ci]") {
			t.Errorf("strict=%v: start-up log %q, want a warning (%q) naming exactly [ci]", tt.strict, out, tt.want)
		}
		if strings.Contains(out, "secret-0123") {
			t.Errorf("strict=%v: start-up log %q holds a key", tt.strict, out)
		}
	}
}

// What the edge refuses before any route runs is counted by reason.
func TestRefusalsAreCounted(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	b := Backends{Search: Backend{Name: "search", Services: []string{"x"}, Conn: conn(t, addr)}}
	b.Grounding, b.Rag, b.Notifier = b.Search, b.Search, b.Search
	cfg := testConfig()
	cfg.APIKeys = []string{"ci:k-ci-0123456789:read"}
	cfg.KeyBudgets = []string{"ci:1/d"}
	cfg.TelegramWebhookSecret = "webhook-secret-0123456789"
	reg := prometheus.NewRegistry()
	h, err := NewHandler(context.Background(), cfg, b, slog.New(slog.NewTextHandler(io.Discard, nil)), reg, noop.NewTracerProvider())
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	do(t, "POST", ts.URL+"/v1/telegram/webhook", `{"update_id":1}`, "X-Telegram-Bot-Api-Secret-Token", "wrong")
	do(t, "POST", ts.URL+"/v1/telegram/webhook", `{"update_id":1}`)
	for range 3 {
		do(t, "POST", ts.URL+"/v1/search", `{"query":"q"}`, "Authorization", "Bearer k-ci-0123456789")
	}
	want := map[string]float64{"webhook_secret": 2, "key_budget": 2, "unauthenticated_per_client": 0, "unauthenticated_total": 0}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "gateway_requests_refused_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			got[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("gateway_requests_refused_total (-want +got):\n%s", diff)
	}
}
