package grounding_test

import (
	"slices"
	"testing"

	"github.com/groundcrew/groundcrew/services/grounding/internal/grounding"
)

// TestGroundNoRelevantSource: search finds sources, none about the alert
// (the nearest runbook shares a word or two with it): the message cites
// nothing, is NEEDS_REVIEW with grounding.NoRelevantSource, offline and
// with a model alike, and the model's own web search is not tried
// instead.
func TestGroundNoRelevantSource(t *testing.T) {
	const redis = "[FIRING] RedisMemoryHigh (warning): Redis memory usage at 95% on cache-3\ninstance=cache-3:6379 service=redis"
	for _, withModel := range []bool{false, true} {
		var model *fakeModel
		f := newFixture(t, nil)
		if withModel {
			model = &fakeModel{gen: &grounding.Generation{Text: "Redis is out of memory [1]."}}
			f = newFixture(t, model)
		}
		m, err := f.svc.Ground(t.Context(), grounding.GroundRequest{Text: redis})
		if err != nil {
			t.Fatal(err)
		}
		if m.Status != grounding.StatusNeedsReview || m.Error != grounding.NoRelevantSource || len(m.Citations) != 0 || len(m.Context.Results) != 0 {
			t.Errorf("model %v: status %v error %q citations %v results %v; want needs review, %q, nothing cited",
				withModel, m.Status, m.Error, m.Citations, m.Context.Results, grounding.NoRelevantSource)
		}
		if model != nil && slices.ContainsFunc(model.prompts, func(p grounding.Prompt) bool { return p.WebSearch }) {
			t.Errorf("the model's web search was tried for an alert nothing is about")
		}
	}
}

// TestGroundGroundcrewCollection: groundcrew's own runbooks are searched
// only for groundcrew's own alerts (alertname Groundcrew…, or
// service=groundcrew); every search asks for whole documents.
func TestGroundGroundcrewCollection(t *testing.T) {
	tests := []struct {
		text    string
		exclude bool
	}{
		{"[FIRING] GroundcrewServiceDown (critical): grounding is down\njob=grounding", false},
		{"[FIRING] TargetDown (warning): notifier is down\njob=notifier service=groundcrew", false},
		{"[FIRING] NodeFilesystemAlmostOutOfSpace (warning): Disk almost full on db-1\ninstance=db-1", true},
		{"Disk almost full on db-1", true},
	}
	for _, tt := range tests {
		f := newFixture(t, nil)
		if _, err := f.svc.Ground(t.Context(), grounding.GroundRequest{Text: tt.text}); err != nil {
			t.Fatal(err)
		}
		got := f.search.requests[0]
		if excluded := slices.Contains(got.ExcludeCollections, grounding.GroundcrewCollection); excluded != tt.exclude || !got.IncludeText {
			t.Errorf("%q: search %+v; want groundcrew's collection excluded %v and whole documents", tt.text, got, tt.exclude)
		}
	}
}

// TestGroundOfflineRunbookSummary: offline, the summary gives the cited
// runbook's first diagnostic step and then its mitigation, in the
// runbook's order, whatever sentences the answer itself picked.
func TestGroundOfflineRunbookSummary(t *testing.T) {
	f := newFixture(t, nil)
	f.search.results = []grounding.SearchResult{{
		Title: "Redis — memory usage near maxmemory", URL: "https://runbooks.example.com/redis-memory", SourceDomain: "runbooks.example.com",
		Snippet: "… compare used_memory with maxmemory …",
		Text: "Alert: RedisMemoryHigh fires when used_memory is above 90% of maxmemory for 5 minutes.\nDiagnose.\n" +
			"redis-cli INFO memory: compare used_memory with maxmemory.\nredis-cli --bigkeys finds the keys that grew; keys without a TTL are the usual cause.\n" +
			"Mitigate.\nSet TTLs on the keys that lack them and delete stale keys with UNLINK.\nSwitch maxmemory-policy to allkeys-lru for a cache.",
	}}
	m, err := f.svc.Ground(t.Context(), grounding.GroundRequest{Text: "[FIRING] RedisMemoryHigh (warning): Redis memory usage at 95% on cache-3"})
	if err != nil {
		t.Fatal(err)
	}
	want := "redis-cli INFO memory: compare used_memory with maxmemory. Set TTLs on the keys that lack them and delete stale keys with UNLINK."
	if m.Summary != want || len(m.Citations) != 1 {
		t.Errorf("summary %q (%d citations); want %q", m.Summary, len(m.Citations), want)
	}
	if m.Context.Results[0].Text != "" {
		t.Errorf("the message keeps the document's text: %q", m.Context.Results[0].Text)
	}
}

// TestGroundSearchesKeywords: when nothing the derived query found is
// about the alert, grounding searches again with the alert's keywords
// (its name's words split, the specific words of its text) and cites
// what that finds about it; when the first search found something, it
// searches once.
func TestGroundSearchesKeywords(t *testing.T) {
	const alert = "[FIRING] IstioHighRequestFailures (warning): High 5xx rate from cart to inventory\n7.4% of requests from cart to inventory return 503 (response_flags UC) over 5 minutes."
	const query = "IstioHighRequestFailures high 5xx rate cart inventory requests response_flags"
	checkout := grounding.SearchResult{Title: "Checkout — 5xx error rate high", URL: "https://runbooks.example.com/checkout-5xx",
		Text: "Alert: CheckoutErrorRateHigh fires when more than 2% of checkout requests return 5xx.\nDiagnose\nRead the checkout logs.\nMitigate\nRoll back the last deploy."}
	istio := grounding.SearchResult{Title: "Istio / Envoy: 503s with upstream reset or connection failure flags", URL: "https://runbooks.example.com/istio",
		Text: "When a caller sees a 503 that the application never logged, the sidecar produced it: Envoy writes the reason into the access log as response flags.\n" +
			"The alert that usually pages is IstioHighRequestFailures (5xx ratio from istio_requests_total above 5%).\nWhere to look first\nRead the caller's sidecar log.\nFixes by flag\nUC: set the idle timeout below the app's keep-alive."}
	f := newFixture(t, nil)
	f.search.results = []grounding.SearchResult{checkout}
	f.search.byQuery = map[string][]grounding.SearchResult{
		"istio high request failures 5xx cart inventory return": {istio, checkout},
	}
	m, err := f.svc.Ground(t.Context(), grounding.GroundRequest{Text: alert, Query: query})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Citations) == 0 || m.Citations[0].URL != istio.URL || m.Error != "" {
		t.Errorf("citations %v error %q; want the Istio runbook found by the keywords", m.Citations, m.Error)
	}
	if len(f.search.requests) != 2 || f.search.requests[1].Query != "istio high request failures 5xx cart inventory return" || !f.search.requests[1].IncludeText {
		t.Errorf("searches %+v; want the derived query, then the keywords with whole documents", f.search.requests)
	}

	// The first search found the Istio runbook: no second search.
	f = newFixture(t, nil)
	f.search.results = []grounding.SearchResult{istio}
	if _, err := f.svc.Ground(t.Context(), grounding.GroundRequest{Text: alert, Query: query}); err != nil {
		t.Fatal(err)
	}
	if len(f.search.requests) != 1 {
		t.Errorf("%d searches, want 1", len(f.search.requests))
	}
}
