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
