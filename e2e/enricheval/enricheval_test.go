package enricheval_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/groundcrew/groundcrew/e2e/enricheval"
)

// tuningParts are the parts relevance is now tuned on, each over its
// corpus: the tuning parts and the older held-out parts, each run blind
// once before it became tuning material (BENCHMARKS.md), over
// examples/runbooks; the fourth held-out part over examples/runbooks and
// its own runbooks; the fifth over those and its own.
var tuningParts = []struct {
	runbooks []string
	alerts   []string
	topics   []string
}{
	{
		runbooks: []string{"examples/runbooks"},
		alerts:   []string{"eval/enrichment-tuning.json", "eval/enrichment-heldout.json", "eval/enrichment-heldout2.json", "eval/enrichment-heldout3.json"},
		topics:   []string{"eval/research-tuning.json", "eval/research-heldout.json"},
	},
	{
		runbooks: []string{"examples/runbooks", "eval/heldout4/runbooks"},
		alerts:   []string{"eval/heldout4/alerts.json"},
		topics:   []string{"eval/heldout4/research.json"},
	},
	{
		runbooks: []string{"examples/runbooks", "eval/heldout4/runbooks", "eval/heldout5/runbooks"},
		alerts:   []string{"eval/heldout5/alerts.json"},
		topics:   []string{"eval/heldout5/research.json"},
	},
}

// TestTuningSet runs the tuning parts of the enrichment and research sets
// through the real search and grounding services, offline, and holds the
// figures the relevance bar was calibrated for (the newest held-out part
// is run by make eval and recorded in BENCHMARKS.md): on each part,
// citation precision at least 0.95, recall at least 0.9, abstention at
// least 0.9; every covered topic citing its runbooks and answering half
// its sections.
func TestTuningSet(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the search and grounding services")
	}
	root := enricheval.Root()
	for _, part := range tuningParts {
		var dirs []string
		for _, d := range part.runbooks {
			dirs = append(dirs, filepath.Join(root, d))
		}
		corpus, err := enricheval.LoadCorpus(dirs, filepath.Join(root, "docs", "runbooks"))
		if err != nil {
			t.Fatal(err)
		}
		env, err := enricheval.Start(t.Context(), t.TempDir(), corpus, nil)
		if err != nil {
			t.Fatal(err)
		}
		tuneAlerts(t, env, root, part.alerts)
		tuneTopics(t, env, root, part.topics)
		// A topic the service refuses (over 500 characters) is scored
		// as a report citing nothing, and the set goes on.
		long := enricheval.Topic{ID: "long", Topic: strings.Repeat("disk full on db-1 ", 30), Runbooks: []string{"disk-full"}}
		if o, err := env.Research(t.Context(), long); err != nil || !strings.HasPrefix(o.Status, "REFUSED") || len(o.Cited) != 0 {
			t.Errorf("Research(%d characters) = %+v, %v; want a refused outcome citing nothing", len(long.Topic), o, err)
		}
		env.Close()
	}
}

func tuneAlerts(t *testing.T, env *enricheval.Env, root string, files []string) {
	t.Helper()
	for _, file := range files {
		set, err := enricheval.LoadAlerts(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		if len(set.Alerts) < 30 {
			t.Fatalf("%s: %d alerts, want at least 30", file, len(set.Alerts))
		}
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
			t.Log(file, m)
		}
		t.Logf("%s: precision %.3f recall %.3f abstention %.3f", file, f.Precision(), f.Recall(), f.Abstention())
		if f.Precision() < 0.95 || f.Recall() < 0.9 || f.Abstention() < 0.9 {
			t.Errorf("%s: precision %.3f, recall %.3f, abstention %.3f; want at least 0.95, 0.9 and 0.9", file, f.Precision(), f.Recall(), f.Abstention())
		}
	}
}

// tuneTopics: every covered topic cites its runbooks and answers at least
// half its sections; every uncovered one cites nothing and says so once.
func tuneTopics(t *testing.T, env *enricheval.Env, root string, files []string) {
	t.Helper()
	for _, file := range files {
		topics, err := enricheval.LoadTopics(filepath.Join(root, file))
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
			t.Log(file, m)
		}
		if rf.Both != rf.Covered || rf.SaidOnce != rf.Uncovered {
			t.Errorf("%s: %d of %d covered topics cite their runbooks and answer half their sections, %d of %d uncovered say so once",
				file, rf.Both, rf.Covered, rf.SaidOnce, rf.Uncovered)
		}
	}
}

// TestScoreTopics checks the research figures' arithmetic on hand-made
// outcomes: a citation off a topic's labels counts against precision, an
// acceptable one does not, and an uncovered topic's citation is off.
func TestScoreTopics(t *testing.T) {
	outs := []enricheval.TopicOutcome{
		{Topic: enricheval.Topic{ID: "a", Runbooks: []string{"disk"}, Acceptable: []string{"wal"}}, Cited: []string{"disk", "wal", "tls"}, Sections: 4, Answered: 2},
		{Topic: enricheval.Topic{ID: "b", Runbooks: []string{"dns"}}, Cited: []string{"tls"}, Sections: 4, Answered: 1},
		{Topic: enricheval.Topic{ID: "c"}, NoEvidenceNotes: 1},
		{Topic: enricheval.Topic{ID: "d"}, Cited: []string{"disk"}, NoEvidenceNotes: 0},
	}
	f := enricheval.ScoreTopics(outs)
	if f.Covered != 2 || f.Uncovered != 2 || f.CitesRunbooks != 1 || f.HalfAnswered != 1 || f.Both != 1 || f.SaidOnce != 1 {
		t.Errorf("figures = %+v", f)
	}
	if f.Citations != 5 || f.OnLabel != 2 || f.CitationPrecision() != 0.4 {
		t.Errorf("citations %d on label %d precision %v; want 5, 2, 0.4", f.Citations, f.OnLabel, f.CitationPrecision())
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

// TestLoadCorpus: several directories are one corpus, and a runbook
// without front matter is indexed as search-index indexes it (a URL from
// its path, the title left to the search service's first heading).
func TestLoadCorpus(t *testing.T) {
	team, extra, own := t.TempDir(), t.TempDir(), t.TempDir()
	write := func(dir, name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(team, "disk.md", "---\ntitle: Disk full\nurl: https://r.example/disk\n---\nAlert: `DiskFull` fires when a disk is full.\n")
	write(extra, "nfs-stale.md", "# NFS mounts hanging\n\nClients report Stale file handle.\n")
	write(extra, "notes.txt", "---\ntitle: \"Memcached: evictions\"\n---\nchecklist\n")
	write(own, "gc.md", "---\ntitle: groundcrew down\nurl: https://r.example/gc\n---\nbody\n")
	c, err := enricheval.LoadCorpus([]string{team, extra}, own)
	if err != nil {
		t.Fatal(err)
	}
	nfs := enricheval.DefaultBaseURL + filepath.Base(extra) + "/nfs-stale.md"
	want := map[string]string{"https://r.example/disk": "disk", nfs: "nfs-stale",
		enricheval.DefaultBaseURL + filepath.Base(extra) + "/notes.txt": "notes", "https://r.example/gc": "gc"}
	if len(c.Docs) != 4 || len(c.Names) != 4 {
		t.Fatalf("%d documents, names %v; want 4", len(c.Docs), c.Names)
	}
	for u, n := range want {
		if c.Names[u] != n {
			t.Errorf("Names[%s] = %q, want %q (names %v)", u, c.Names[u], n, c.Names)
		}
	}
	for _, d := range c.Docs {
		switch d.GetUrl() {
		case nfs:
			if d.GetTitle() != "" || !strings.HasPrefix(d.GetText(), "# NFS mounts hanging") {
				t.Errorf("nfs-stale: title %q, text %q", d.GetTitle(), d.GetText())
			}
		case "https://r.example/gc":
			if d.GetMetadata().GetFields()["collection"].GetStringValue() != enricheval.GroundcrewCollection {
				t.Errorf("groundcrew's runbook is not in its collection: %v", d.GetMetadata())
			}
		default:
			if d.GetMetadata() != nil {
				t.Errorf("%s: metadata %v, want none", d.GetUrl(), d.GetMetadata())
			}
			if d.GetUrl() != nfs && strings.Contains(d.GetTitle(), `"`) {
				t.Errorf("%s: title %q keeps its quotes", d.GetUrl(), d.GetTitle())
			}
		}
	}
	if _, err := enricheval.LoadCorpus([]string{team, t.TempDir()}, own); err == nil {
		t.Error("LoadCorpus() with an empty directory: no error")
	}
}
