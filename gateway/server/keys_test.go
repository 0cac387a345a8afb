package server

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"

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
