package enricheval_test

import (
	"path/filepath"
	"testing"

	"github.com/groundcrew/groundcrew/e2e/enricheval"
)

// TestTuningSet runs the tuning parts of the enrichment and research sets
// through the real search and grounding services, offline, and holds the
// figures the relevance bar was calibrated for (the held-out parts are run
// by make eval and recorded in BENCHMARKS.md): citation precision at least
// 0.95, recall at least 0.9, abstention at least 0.9; every covered topic
// citing its runbooks and answering half its sections.
func TestTuningSet(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the search and grounding services")
	}
	root := enricheval.Root()
	corpus, err := enricheval.LoadCorpus([]string{filepath.Join(root, "examples", "runbooks")}, filepath.Join(root, "docs", "runbooks"))
	if err != nil {
		t.Fatal(err)
	}
	set, err := enricheval.LoadAlerts(filepath.Join(root, "eval", "enrichment-tuning.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Alerts) < 40 {
		t.Fatalf("%d tuning alerts, want at least 40", len(set.Alerts))
	}
	env, err := enricheval.Start(t.Context(), t.TempDir(), corpus, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Close)
	var outs []enricheval.Outcome
	for _, a := range set.Alerts {
		o, err := env.Enrich(t.Context(), a)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, o)
	}
	f := enricheval.ScoreAlerts(outs)
	for _, m := range f.Misses {
		t.Log(m)
	}
	t.Logf("precision %.3f recall %.3f abstention %.3f", f.Precision(), f.Recall(), f.Abstention())
	if f.Precision() < 0.95 || f.Recall() < 0.9 || f.Abstention() < 0.9 {
		t.Errorf("precision %.3f, recall %.3f, abstention %.3f; want at least 0.95, 0.9 and 0.9", f.Precision(), f.Recall(), f.Abstention())
	}

	// Research on the tuning topics: every covered topic cites its
	// runbooks and answers at least half its sections; every uncovered one
	// cites nothing and says so once.
	topics, err := enricheval.LoadTopics(filepath.Join(root, "eval", "research-tuning.json"))
	if err != nil {
		t.Fatal(err)
	}
	var touts []enricheval.TopicOutcome
	for _, tp := range topics.Topics {
		o, err := env.Research(t.Context(), tp)
		if err != nil {
			t.Fatal(err)
		}
		touts = append(touts, o)
	}
	rf := enricheval.ScoreTopics(touts)
	for _, m := range rf.Misses {
		t.Log(m)
	}
	if rf.Both != rf.Covered || rf.SaidOnce != rf.Uncovered {
		t.Errorf("research: %d of %d covered topics cite their runbooks and answer half their sections, %d of %d uncovered say so once",
			rf.Both, rf.Covered, rf.SaidOnce, rf.Uncovered)
	}
}

// TestScoreAlerts checks the figures' arithmetic on hand-made outcomes.
func TestScoreAlerts(t *testing.T) {
	outs := []enricheval.Outcome{
		{Alert: enricheval.Alert{ID: "a", Runbooks: []string{"disk"}, Acceptable: []string{"wal"}}, Cited: []string{"disk", "wal"}, Status: "PROCESSED"},
		{Alert: enricheval.Alert{ID: "b", Runbooks: []string{"dns"}}, Cited: []string{"tls"}, Status: "PROCESSED"},
		{Alert: enricheval.Alert{ID: "c"}, Status: "NEEDS_REVIEW"},
		{Alert: enricheval.Alert{ID: "d"}, Cited: []string{"disk"}, Status: "NEEDS_REVIEW"},
	}
	f := enricheval.ScoreAlerts(outs)
	if f.Cited != 4 || f.Relevant != 2 || f.Wanted != 2 || f.Found != 1 || f.Uncovered != 2 || f.Abstained != 1 {
		t.Errorf("figures = %+v", f)
	}
	if f.Precision() != 0.5 || f.Recall() != 0.5 || f.Abstention() != 0.5 {
		t.Errorf("precision %v recall %v abstention %v; want 0.5 each", f.Precision(), f.Recall(), f.Abstention())
	}
}

// TestRendered: an Alertmanager alert is rendered as the notifier does.
func TestRendered(t *testing.T) {
	a := enricheval.Alert{Format: "alertmanager",
		Labels:      map[string]string{"alertname": "RedisMemoryHigh", "severity": "warning", "instance": "cache-3:6379", "service": "redis", "team": "core"},
		Annotations: map[string]string{"summary": "Redis memory at 95%", "description": "used_memory is high.", "runbook_url": "https://r.example/redis"}}
	want := "[FIRING] RedisMemoryHigh (warning): Redis memory at 95%\nused_memory is high.\ninstance=cache-3:6379 service=redis team=core\nRunbook: https://r.example/redis"
	if got := a.Rendered(); got != want {
		t.Errorf("Rendered() = %q, want %q", got, want)
	}
}
