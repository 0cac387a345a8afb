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
