package server

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
)

// TestRunReportsProviderAndQueueMetrics: Gemini requests are counted
// under provider "gemini" (every one the provider saw) and the research
// queue's depth is on /metrics.
func TestRunReportsProviderAndQueueMetrics(t *testing.T) {
	var calls atomic.Int64
	gemini := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"candidates":[{"content":{"role":"model","parts":[{"text":"max_connections was reached."}]},"finishReason":"STOP"}]}`))
	}))
	t.Cleanup(gemini.Close)

	c, srv, _ := runGrounding(t, map[string]string{
		"GEMINI_API_KEY": "k-123456", "GEMINI_MODEL": "gemini-test", "GOOGLE_GEMINI_BASE_URL": gemini.URL,
	})
	if _, err := c.Ground(t.Context(), &groundingv1.GroundRequest{Text: "too many clients already"}); err != nil {
		t.Fatal(err)
	}
	metrics := scrape(t, srv)

	m := regexp.MustCompile(`(?m)^provider_requests_total\{code="200",provider="gemini"\} (\d+)$`).FindStringSubmatch(metrics)
	if m == nil {
		t.Fatalf("/metrics lacks provider_requests_total for gemini:\n%s", metrics)
	}
	if got, want := m[1], strconv.FormatInt(calls.Load(), 10); got != want || want == "0" {
		t.Errorf("provider_requests_total{gemini,200} = %s, Gemini saw %s requests", got, want)
	}
	for _, want := range []string{
		`provider_request_duration_seconds_count{provider="gemini"} ` + m[1],
		`jobqueue_jobs{queue="grounding_research",state="available"} 0`,
		`jobqueue_jobs{queue="grounding_research",state="scheduled"} 0`,
		`jobqueue_jobs{queue="grounding_research",state="retryable"} 0`,
		`jobqueue_jobs{queue="grounding_research",state="running"} 0`,
		`jobqueue_collect_errors_total{queue="grounding_research"} 0`,
	} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(want) + `$`).MatchString(metrics) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
