package grounding

import (
	"errors"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the grounding service's domain metrics.
type Metrics struct {
	roundSeconds   *prometheus.HistogramVec
	providerErrors *prometheus.CounterVec
}

// NewMetrics registers the metrics on reg:
//
//	grounding_round_duration_seconds{engine,status,method}  histogram
//	grounding_provider_errors_total{code}                   counter
//
// code is the provider's HTTP status ("429", "503"), "timeout" or
// "transport"; every failed attempt counts, retried or not.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		roundSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "grounding_round_duration_seconds",
			Help:    "Duration of Ground rounds, storing included.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"engine", "status", "method"}),
		providerErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grounding_provider_errors_total",
			Help: "Failed model provider requests by HTTP status code, timeout or transport.",
		}, []string{"code"}),
	}
	for _, c := range []prometheus.Collector{m.roundSeconds, m.providerErrors} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// ObserveRound records one round.
func (m *Metrics) ObserveRound(engine Engine, st Status, method string, d time.Duration) {
	if m == nil {
		return
	}
	m.roundSeconds.WithLabelValues(engine.String(), st.String(), method).Observe(d.Seconds())
}

// ProviderAttemptFailed counts one failed provider request: code is the
// HTTP status, or 0 for a transport error or timeout (timedOut).
func (m *Metrics) ProviderAttemptFailed(code int, timedOut bool) {
	if m == nil {
		return
	}
	label := "transport"
	switch {
	case code != 0:
		label = strconv.Itoa(code)
	case timedOut:
		label = "timeout"
	}
	m.providerErrors.WithLabelValues(label).Inc()
}

// providerErrorText is the client-safe text for a failed generation.
func providerErrorText(err error) string {
	if pe, ok := errors.AsType[*ProviderError](err); ok {
		return pe.Error()
	}
	return "model provider failed"
}
