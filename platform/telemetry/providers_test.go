package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/groundcrew/groundcrew/platform/httpretry"
	"github.com/groundcrew/groundcrew/platform/telemetry"
)

// provider is a fake provider: /status/N answers N, /stall answers once the
// client has given up.
func provider(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stall" {
			<-r.Context().Done()
			return
		}
		code, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/status/"))
		if err != nil {
			code = http.StatusNotFound
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// closedURL is the URL of a server that is no longer listening.
func closedURL(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	return srv.URL
}

func newMetrics(t *testing.T) (*prometheus.Registry, *telemetry.ProviderMetrics) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	m, err := telemetry.NewProviderMetrics(reg)
	if err != nil {
		t.Fatalf("NewProviderMetrics: %v", err)
	}
	return reg, m
}

// requestCounts renders provider_requests_total as the exposition format
// lines GatherAndCompare expects.
func requestCounts(lines ...string) string {
	return "# HELP provider_requests_total HTTP requests to providers (every attempt), by provider and HTTP status code, timeout, canceled or transport.\n" +
		"# TYPE provider_requests_total counter\n" + strings.Join(lines, "\n") + "\n"
}

// observations is how many durations the histogram holds for provider.
func observations(t *testing.T, reg prometheus.Gatherer, provider string) uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "provider_request_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "provider" && l.GetValue() == provider {
					return m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return 0
}

func TestProviderMetricsCountsEachOutcome(t *testing.T) {
	srv := provider(t)
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })

	tests := []struct {
		name    string
		url     string
		timeout time.Duration // the client's
		ctx     func(t *testing.T) context.Context
		want    string
	}{
		{name: "ok", url: srv.URL + "/status/200", want: "200"},
		{name: "rate limited", url: srv.URL + "/status/429", want: "429"},
		{name: "server error", url: srv.URL + "/status/500", want: "500"},
		{name: "nobody listening", url: closedURL(t), want: "transport"},
		{name: "caller's deadline", url: srv.URL + "/stall", want: "timeout", ctx: func(t *testing.T) context.Context {
			ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
			t.Cleanup(cancel)
			return ctx
		}},
		{name: "client's timeout", url: srv.URL + "/stall", timeout: 50 * time.Millisecond, want: "timeout"},
		{name: "caller cancelled", url: srv.URL + "/status/200", want: "canceled", ctx: func(t *testing.T) context.Context {
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			return ctx
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, m := newMetrics(t)
			ctx := t.Context()
			if tt.ctx != nil {
				ctx = tt.ctx(t)
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, tt.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := m.Client(tp, "exa", tt.timeout).Do(req)
			if err == nil {
				_ = resp.Body.Close()
			}
			want := requestCounts(`provider_requests_total{code="` + tt.want + `",provider="exa"} 1`)
			if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "provider_requests_total"); err != nil {
				t.Error(err)
			}
			if got := observations(t, reg, "exa"); got != 1 {
				t.Errorf("duration observations = %d, want 1", got)
			}
		})
	}
}

func TestProviderMetricsCountsEveryRetryAttempt(t *testing.T) {
	var attempts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if attempts.Add(1) < 3 {
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	t.Cleanup(srv.Close)
	reg, m := newMetrics(t)
	retry := &httpretry.Client{
		HTTP:        m.Client(nil, "tavily", 0),
		MaxAttempts: 3,
		Sleep:       func(context.Context, time.Duration) error { return nil },
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := retry.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	want := requestCounts(
		`provider_requests_total{code="200",provider="tavily"} 1`,
		`provider_requests_total{code="429",provider="tavily"} 2`,
	)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "provider_requests_total"); err != nil {
		t.Error(err)
	}
}

func TestNewProviderMetricsTwiceOnOneRegistryShares(t *testing.T) {
	srv := provider(t)
	reg, first := newMetrics(t)
	second, err := telemetry.NewProviderMetrics(reg)
	if err != nil {
		t.Fatalf("second NewProviderMetrics: %v", err)
	}
	for _, m := range []*telemetry.ProviderMetrics{first, second} {
		resp, err := m.Client(nil, "groq", 0).Get(srv.URL + "/status/200")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	want := requestCounts(`provider_requests_total{code="200",provider="groq"} 2`)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "provider_requests_total"); err != nil {
		t.Error(err)
	}
}

func TestNewProviderMetricsConflictingCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	// Same name, different labels: not the same metric, so not reusable.
	reg.MustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{Name: "provider_requests_total", Help: "other"}, []string{"engine"}))
	if _, err := telemetry.NewProviderMetrics(reg); err == nil {
		t.Error("NewProviderMetrics over a conflicting collector: error = nil")
	}
}

// TestUntracedClientRecordsNoURL sends a Telegram-style request, token in
// the path: the client must neither trace it nor record the path.
func TestUntracedClientRecordsNoURL(t *testing.T) {
	gotTraceparent := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotTraceparent <- r.Header.Get("traceparent")
	}))
	t.Cleanup(srv.Close)
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	ctx, span := tp.Tracer("test").Start(t.Context(), "caller")
	defer span.End()

	reg, m := newMetrics(t)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/bot7100000001:SECRET-token/sendMessage", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.UntracedClient("telegram", time.Minute).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if tp := <-gotTraceparent; tp != "" {
		t.Errorf("traceparent = %q, want none from the untraced client", tp)
	}
	want := requestCounts(`provider_requests_total{code="200",provider="telegram"} 1`)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "provider_requests_total"); err != nil {
		t.Error(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if s := mf.String(); strings.Contains(s, "SECRET") || strings.Contains(s, "sendMessage") {
			t.Errorf("metric family %s records the URL: %s", mf.GetName(), s)
		}
	}
}

func TestProviderMetricsClientIsTraced(t *testing.T) {
	gotTraceparent := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotTraceparent <- r.Header.Get("traceparent")
	}))
	t.Cleanup(srv.Close)
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	ctx, span := tp.Tracer("test").Start(t.Context(), "caller")
	defer span.End()

	_, m := newMetrics(t)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Client(tp, "gemini", 0).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if got := <-gotTraceparent; !strings.Contains(got, span.SpanContext().TraceID().String()) {
		t.Errorf("traceparent = %q, want the caller's trace %s", got, span.SpanContext().TraceID())
	}
}

func TestNilProviderMetricsStillSends(t *testing.T) {
	srv := provider(t)
	var m *telemetry.ProviderMetrics
	resp, err := m.Client(nil, "exa", 0).Get(srv.URL + "/status/204")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("status = %d, want 204", resp.StatusCode)
	}
}
