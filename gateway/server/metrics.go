package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/prometheus/client_golang/prometheus"
)

// httpMetrics counts and times requests per route pattern (not per path, so
// ids do not explode the label set).
type httpMetrics struct {
	duration *prometheus.HistogramVec
	// refused counts what the edge refuses before a route runs, by
	// reason: unauthenticated_per_client, unauthenticated_total,
	// webhook_secret, key_budget.
	refused *prometheus.CounterVec
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gateway_http_request_duration_seconds",
			Help:    "REST request latency through the gateway, by route pattern and status code.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"method", "route", "code"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gateway_requests_refused_total",
			Help: "Requests the edge refused before any route ran: unauthenticated_per_client (429) and unauthenticated_total (503), the bounds on requests without a key; webhook_secret (401); key_budget (429).",
		}, []string{"reason"}),
	}
	for _, reason := range []string{"unauthenticated_per_client", "unauthenticated_total", "webhook_secret", "key_budget"} {
		m.refused.WithLabelValues(reason)
	}
	if reg != nil {
		reg.MustRegister(m.duration, m.refused)
	}
	return m
}

// refusal counts one refusal for reason.
func (m *httpMetrics) refusal(reason string) { m.refused.WithLabelValues(reason).Inc() }

func (m *httpMetrics) middleware(next runtime.HandlerFunc) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		start := time.Now()
		rec := &codeRecorder{ResponseWriter: w, code: http.StatusOK}
		next(rec, r, params)
		route, ok := runtime.HTTPPathPattern(r.Context())
		if !ok {
			route = "unmatched"
		}
		m.duration.WithLabelValues(r.Method, route, strconv.Itoa(rec.code)).Observe(time.Since(start).Seconds())
	}
}

type codeRecorder struct {
	http.ResponseWriter
	code    int
	written bool
}

func (c *codeRecorder) WriteHeader(code int) {
	if !c.written {
		c.code, c.written = code, true
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *codeRecorder) Write(p []byte) (int, error) {
	c.written = true
	return c.ResponseWriter.Write(p)
}

func (c *codeRecorder) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (c *codeRecorder) Unwrap() http.ResponseWriter { return c.ResponseWriter }
