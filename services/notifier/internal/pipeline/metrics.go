package pipeline

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the pipeline's Prometheus metrics.
type Metrics struct {
	accepted       *prometheus.CounterVec
	deduplicated   *prometheus.CounterVec
	delivered      *prometheus.CounterVec
	failed         *prometheus.CounterVec
	deliveryErrors *prometheus.CounterVec
	enrichSeconds  *prometheus.HistogramVec
	// groupMessages counts alert group messages sent, by kind (root,
	// reply); enrichCacheHits the grounding calls the enrichment cache
	// saved.
	groupMessages   *prometheus.CounterVec
	enrichCacheHits prometheus.Counter
	// digested counts alerts delivered in a storm digest.
	digested prometheus.Counter
}

// NewMetrics creates the metrics and registers them on reg (nil: not
// registered, for tests). Metrics already registered on reg are reused.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		accepted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "notifier_alerts_accepted_total", Help: "Alerts stored by intake, by source.",
		}, []string{"source"}),
		deduplicated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "notifier_alerts_deduplicated_total", Help: "Alerts recorded as repeats and not delivered, by source.",
		}, []string{"source"}),
		delivered: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "notifier_alerts_delivered_total", Help: "Alerts delivered, by source and destination kind (telegram or log).",
		}, []string{"source", "destination"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "notifier_alerts_failed_total", Help: "Alerts whose delivery failed for good, by source.",
		}, []string{"source"}),
		deliveryErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "notifier_delivery_errors_total", Help: "Failed delivery attempts, by error code (Telegram's error code, network, timeout, …).",
		}, []string{"code"}),
		enrichSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "notifier_enrichment_duration_seconds",
			Help:    "Time spent enriching an alert through grounding, by outcome (ok, error, timeout).",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30},
		}, []string{"outcome"}),
		groupMessages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "notifier_group_messages_total", Help: "Alert group messages sent, by kind (root, reply).",
		}, []string{"kind"}),
		digested: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "notifier_alerts_digested_total", Help: "Alerts collapsed into a storm digest (NOTIFIER_DIGEST_THRESHOLD).",
		}),
		enrichCacheHits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "notifier_enrichment_cache_hits_total", Help: "Grounding calls saved: alert groups enriched from NOTIFIER_ENRICH_CACHE_TTL's cache.",
		}),
	}
	if reg != nil {
		m.accepted = register(reg, m.accepted)
		m.deduplicated = register(reg, m.deduplicated)
		m.delivered = register(reg, m.delivered)
		m.failed = register(reg, m.failed)
		m.deliveryErrors = register(reg, m.deliveryErrors)
		m.enrichSeconds = register(reg, m.enrichSeconds)
		m.groupMessages = register(reg, m.groupMessages)
		m.enrichCacheHits = register(reg, m.enrichCacheHits)
		m.digested = register(reg, m.digested)
	}
	return m
}

func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
	}
	return c
}
