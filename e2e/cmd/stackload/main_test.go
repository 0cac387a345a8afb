package main

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// TestQueuedSumsEveryJobState reads a real Prometheus exposition, the way
// the notifier's admin server writes it, and sums the queue gauges only.
func TestQueuedSumsEveryJobState(t *testing.T) {
	reg := prometheus.NewRegistry()
	jobs := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "jobqueue_jobs", Help: "Jobs."}, []string{"queue", "state"})
	other := prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobqueue_jobs_other", Help: "Not a queue gauge."})
	reg.MustRegister(jobs, other)
	jobs.WithLabelValues("default", "available").Set(3)
	jobs.WithLabelValues("default", "running").Set(2)
	jobs.WithLabelValues("default", "retryable").Set(1)
	other.Set(100)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)

	if n, err := queued(srv.URL); err != nil || n != 6 {
		t.Errorf("queued() = %d, %v; want 6", n, err)
	}

	empty := httptest.NewServer(promhttp.HandlerFor(prometheus.NewRegistry(), promhttp.HandlerOpts{}))
	t.Cleanup(empty.Close)
	if n, err := queued(empty.URL); err == nil {
		t.Errorf("queued() without the gauges = %d, want an error", n)
	}

	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("jobqueue_jobs{queue=\"default\" 3\n"))
	}))
	t.Cleanup(garbage.Close)
	if n, err := queued(garbage.URL); err == nil {
		t.Errorf("queued() on a malformed exposition = %d, want an error", n)
	}
}
