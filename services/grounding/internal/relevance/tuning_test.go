package relevance

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
)

// evalAlert is an alert of the labelled evaluation set (eval/, see
// docs/evaluation.md).
type evalAlert struct {
	ID          string            `json:"id"`
	Format      string            `json:"format"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	Value       string            `json:"value"`
	Text        string            `json:"text"`
	Runbooks    []string          `json:"runbooks"`
	Acceptable  []string          `json:"acceptable"`
}

// rendered is the alert's text as the notifier builds it.
func (a evalAlert) rendered() string {
	if a.Format == "text" {
		return a.Text
	}
	name := a.Labels["alertname"]
	if name == "" {
		name = a.Labels["rulename"]
	}
	var b strings.Builder
	b.WriteString("[FIRING] " + name)
	if s := a.Labels["severity"]; s != "" {
		b.WriteString(" (" + s + ")")
	}
	if s := a.Annotations["summary"]; s != "" {
		b.WriteString(": " + s)
	}
	if d := a.Annotations["description"]; d != "" && d != a.Annotations["summary"] {
		b.WriteString("\n" + d)
	}
	var kv []string
	for _, k := range []string{"instance", "job", "namespace", "pod", "container", "service", "deployment", "cluster", "node", "env", "environment", "region", "team"} {
		if v := a.Labels[k]; v != "" {
			kv = append(kv, k+"="+v)
		}
	}
	if len(kv) > 0 {
		b.WriteString("\n" + strings.Join(kv, " "))
	}
	if a.Value != "" {
		b.WriteString("\nValue: " + a.Value)
	}
	return b.String()
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..")
}

type runbook struct {
	name string
	src  Source
}

// loadRunbooks reads the runbooks of dirs (under the repository root) and
// groundcrew's own: the title from the front matter, or else the first
// heading, as the search service takes it.
func loadRunbooks(t *testing.T, dirs ...string) []runbook {
	t.Helper()
	var out []runbook
	for _, dir := range append(dirs, "docs/runbooks") {
		files, err := filepath.Glob(filepath.Join(repoRoot(), dir, "*.md"))
		if err != nil || len(files) == 0 {
			t.Fatalf("runbooks in %s: %v", dir, err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var title string
			body := string(b)
			if rest, ok := strings.CutPrefix(body, "---\n"); ok {
				head, tail, _ := strings.Cut(rest, "\n---\n")
				body = tail
				for line := range strings.SplitSeq(head, "\n") {
					if v, ok := strings.CutPrefix(line, "title:"); ok {
						title = strings.Trim(strings.TrimSpace(v), `"`)
					}
				}
			}
			if title == "" {
				for line := range strings.SplitSeq(body, "\n") {
					if h, ok := strings.CutPrefix(line, "# "); ok {
						title = strings.TrimSpace(h)
						break
					}
				}
			}
			text := strings.NewReplacer("`", "", "#", "", "**", "").Replace(body)
			out = append(out, runbook{strings.TrimSuffix(filepath.Base(f), ".md"), Prepare(Source{Title: title, Text: text})})
		}
	}
	return out
}

func loadAlerts(t *testing.T, file string) []evalAlert {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(), file))
	if err != nil {
		t.Fatal(err)
	}
	var set struct{ Alerts []evalAlert }
	if err := json.Unmarshal(b, &set); err != nil {
		t.Fatal(err)
	}
	return set.Alerts
}

// tuningParts are the enrichment parts relevance is now tuned on, each
// over its corpus: the tuning part and the three older held-out parts
// over examples/runbooks, the fourth held-out part over examples/runbooks
// and its own runbooks, the fifth and the sixth over those and their
// own; each held-out part was run blind once before (BENCHMARKS.md).
var tuningParts = []struct {
	runbooks []string
	alerts   []string
}{
	{[]string{"examples/runbooks"}, []string{"eval/enrichment-tuning.json", "eval/enrichment-heldout.json", "eval/enrichment-heldout2.json", "eval/enrichment-heldout3.json"}},
	{[]string{"examples/runbooks", "eval/heldout4/runbooks"}, []string{"eval/heldout4/alerts.json"}},
	{[]string{"examples/runbooks", "eval/heldout4/runbooks", "eval/heldout5/runbooks"}, []string{"eval/heldout5/alerts.json"}},
	{[]string{"examples/runbooks", "eval/heldout4/runbooks", "eval/heldout5/runbooks", "eval/heldout6/runbooks"}, []string{"eval/heldout6/alerts.json"}},
}

// TestTuningSet scores every alert of the tuning parts against every
// runbook of its corpus, as if the search service returned the whole
// corpus, and holds the figures the bar was calibrated for: of the
// runbooks scoring at or above the bar (at most three per alert, best
// first), precision at least 0.95; every required runbook among them for
// at least 0.9 of the pairs; and no runbook at all for at least 0.9 of the
// alerts nothing is about.
func TestTuningSet(t *testing.T) {
	var cited, relevant, wanted, found, uncovered, abstained int
	for _, part := range tuningParts {
		books := loadRunbooks(t, part.runbooks...)
		var alerts []evalAlert
		for _, file := range part.alerts {
			alerts = append(alerts, loadAlerts(t, file)...)
		}
		c, r, w, f, u, a := scoreTuning(t, books, alerts)
		cited, relevant, wanted, found, uncovered, abstained = cited+c, relevant+r, wanted+w, found+f, uncovered+u, abstained+a
	}
	p, r, ab := float64(relevant)/float64(cited), float64(found)/float64(wanted), float64(abstained)/float64(uncovered)
	t.Logf("precision %.3f (%d/%d) recall %.3f (%d/%d) abstention %.3f (%d/%d)", p, relevant, cited, r, found, wanted, ab, abstained, uncovered)
	if p < 0.95 || r < 0.9 || ab < 0.9 {
		t.Errorf("precision %.3f, recall %.3f, abstention %.3f; want at least 0.95, 0.9, 0.9", p, r, ab)
	}
}

// scoreTuning scores alerts against books and counts the citations, the
// relevant ones, the required runbooks and those found, the alerts
// nothing is about and those with no citation.
func scoreTuning(t *testing.T, books []runbook, alerts []evalAlert) (cited, relevant, wanted, found, uncovered, abstained int) {
	for _, a := range alerts {
		s := Parse(a.rendered())
		type scored struct {
			name string
			sc   Score
		}
		var all []scored
		for _, rb := range books {
			all = append(all, scored{rb.name, s.Score(rb.src)})
		}
		sort.SliceStable(all, func(i, j int) bool { return all[i].sc.Value > all[j].sc.Value })
		var got []string
		scores := make([]Score, 0, 5)
		for _, x := range all[:5] {
			scores = append(scores, x.sc)
		}
		for _, i := range Select(scores)[:min(3, len(Select(scores)))] {
			got = append(got, all[i].name)
		}
		t.Logf("%s %v got %v; top %s %.3f %+v, %s %.3f, %s %.3f", a.ID, a.Runbooks, got,
			all[0].name, all[0].sc.Value, all[0].sc, all[1].name, all[1].sc.Value, all[2].name, all[2].sc.Value)
		if len(a.Runbooks) == 0 {
			uncovered++
			if len(got) == 0 {
				abstained++
			} else {
				t.Logf("  MISS %s: nothing is about it, got %v", a.ID, got)
			}
		}
		for _, r := range a.Runbooks {
			wanted++
			if slices.Contains(got, r) {
				found++
			} else {
				t.Logf("  MISS %s: %s not relevant", a.ID, r)
			}
		}
		for _, g := range got {
			cited++
			if slices.Contains(a.Runbooks, g) || slices.Contains(a.Acceptable, g) {
				relevant++
			} else {
				t.Logf("  MISS %s: %s cited", a.ID, g)
			}
		}
	}
	return cited, relevant, wanted, found, uncovered, abstained
}
