package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/trace"
)

// Codes recorded for provider requests that got no HTTP response.
const (
	// CodeTimeout: the request's deadline (the caller's context or the
	// client's timeout) passed, or the network timed out.
	CodeTimeout = "timeout"
	// CodeCanceled: the caller cancelled the request.
	CodeCanceled = "canceled"
	// CodeTransport: any other failure to get a response (refused
	// connection, DNS, TLS, reset).
	CodeTransport = "transport"
)

// ProviderMetrics counts the HTTP requests a service sends to its
// providers (Gemini, Groq, search engines, Telegram):
//
//	provider_requests_total{provider,code}          counter
//	provider_request_duration_seconds{provider}     histogram
//
// code is the response's HTTP status ("200", "429") or, without a
// response, [CodeTimeout], [CodeCanceled] or [CodeTransport]. Every attempt
// counts: retry wrappers send each attempt through the transport again.
// Duration runs until the response headers arrive (a streamed body is not
// included), or until the attempt failed.
//
// Only the provider name and the outcome are recorded, never the URL: some
// providers (Telegram) put credentials in the path.
//
// A nil *ProviderMetrics records nothing; its clients still work.
type ProviderMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewProviderMetrics creates the metrics and registers them on reg (nil:
// not registered). When reg already holds them, for example because two
// components of one server each call NewProviderMetrics, the registered
// collectors are reused, so both count into the same series.
func NewProviderMetrics(reg prometheus.Registerer) (*ProviderMetrics, error) {
	m := &ProviderMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "provider_requests_total",
			Help: "HTTP requests to providers (every attempt), by provider and HTTP status code, timeout, canceled or transport.",
		}, []string{"provider", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "provider_request_duration_seconds",
			Help: "Time from sending a provider request to its response headers (or failure), by provider.",
			// From a fast search API to a long model generation.
			Buckets: []float64{.025, .05, .1, .25, .5, 1, 2.5, 5, 10, 20, 30, 60},
		}, []string{"provider"}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	if m.requests, err = registerOrReuse(reg, m.requests); err != nil {
		return nil, err
	}
	if m.duration, err = registerOrReuse(reg, m.duration); err != nil {
		return nil, err
	}
	return m, nil
}

// registerOrReuse registers c on reg, or returns the equal collector reg
// already has.
func registerOrReuse[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, fmt.Errorf("telemetry: registering provider metrics: %w", err)
}

// Client returns an HTTP client for provider, traced like [HTTPClient]
// and counted. timeout 0 means none (callers bound requests with their
// context).
func (m *ProviderMetrics) Client(tp trace.TracerProvider, provider string, timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: tracedTransport(tp, m.Transport(provider, newBaseTransport()))}
}

// UntracedClient returns a counted HTTP client for provider without
// tracing, for providers whose URLs carry secrets (client spans record the
// full URL). timeout 0 means none.
func (m *ProviderMetrics) UntracedClient(provider string, timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: m.Transport(provider, newBaseTransport())}
}

// Transport wraps base (nil: http.DefaultTransport) so that each request
// through it is counted for provider.
func (m *ProviderMetrics) Transport(provider string, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	if m == nil {
		return base
	}
	// Resolve the series once; RoundTrip then only looks up the code.
	return &countingTransport{
		base:     base,
		requests: m.requests.MustCurryWith(prometheus.Labels{"provider": provider}),
		duration: m.duration.WithLabelValues(provider),
	}
}

// countingTransport records each round trip's outcome and duration.
type countingTransport struct {
	base     http.RoundTripper
	requests *prometheus.CounterVec
	duration prometheus.Observer
}

// RoundTrip sends req through the base transport and records it.
func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.base.RoundTrip(req)
	t.duration.Observe(time.Since(start).Seconds())
	t.requests.WithLabelValues(requestCode(req.Context(), resp, err)).Inc()
	return resp, err
}

// requestCode is the code label for one round trip.
func requestCode(ctx context.Context, resp *http.Response, err error) string {
	if err == nil && resp != nil {
		return strconv.Itoa(resp.StatusCode)
	}
	// http.Client's Timeout reaches the transport as a context deadline,
	// so the context tells deadlines from cancellations whatever error the
	// transport wrapped.
	ctxErr := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctxErr, context.DeadlineExceeded) {
		return CodeTimeout
	}
	// http.Client also closes the request's Cancel channel on its own
	// timer at the same instant, and that can win: "request canceled"
	// before the context reports its deadline. Past the deadline, it was
	// the deadline.
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return CodeTimeout
	}
	if errors.Is(err, context.Canceled) || ctxErr != nil {
		return CodeCanceled
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return CodeTimeout
	}
	return CodeTransport
}

// newBaseTransport is a private copy of the default transport, so that
// one client's connection pool settings never leak into another's.
func newBaseTransport() *http.Transport {
	return http.DefaultTransport.(*http.Transport).Clone()
}

// tracedTransport wraps base in a client span per request that carries the
// trace context to the provider.
func tracedTransport(tp trace.TracerProvider, base http.RoundTripper) http.RoundTripper {
	return otelhttp.NewTransport(base,
		otelhttp.WithTracerProvider(tp),
		otelhttp.WithPropagators(Propagator()),
	)
}
