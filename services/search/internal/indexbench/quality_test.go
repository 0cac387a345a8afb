package indexbench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/groundcrew/groundcrew/services/search/internal/search"
)

// repoRoot is the repository's root, from this package's directory.
const repoRoot = "../../../.."

// runbook is one labelled runbook: its name (file name without .md) and
// document.
type runbook struct {
	name string
	doc  search.Document
}

// loadRunbooks reads the runbooks the enrichment set labels: the team's
// (examples/runbooks) and groundcrew's own (docs/runbooks).
func loadRunbooks(t testing.TB) []runbook {
	var out []runbook
	for _, dir := range []string{"examples/runbooks", "docs/runbooks"} {
		files, err := filepath.Glob(filepath.Join(repoRoot, dir, "*.md"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no runbooks in %s: %v", dir, err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			fm, body := frontMatter(string(b))
			name := strings.TrimSuffix(filepath.Base(f), ".md")
			url := fm["url"]
			if url == "" {
				url = "https://runbooks.example/" + name
			}
			out = append(out, runbook{name, search.Document{URL: url, Title: fm["title"], Text: body}})
		}
	}
	return out
}

// frontMatter splits a leading "---" block of "key: value" lines off s.
func frontMatter(s string) (map[string]string, string) {
	fm := map[string]string{}
	rest, ok := strings.CutPrefix(s, "---\n")
	if !ok {
		return fm, s
	}
	head, body, ok := strings.Cut(rest, "\n---\n")
	if !ok {
		return fm, s
	}
	for line := range strings.SplitSeq(head, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fm[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return fm, body
}

// alert is one labelled alert of eval/enrichment-*.json.
type alert struct {
	ID          string            `json:"id"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	Text        string            `json:"text"`
	Runbooks    []string          `json:"runbooks"`
}

func loadAlerts(t testing.TB) []alert {
	var out []alert
	for _, part := range []string{"tuning", "heldout"} {
		b, err := os.ReadFile(filepath.Join(repoRoot, "eval", "enrichment-"+part+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var set struct {
			Alerts []alert `json:"alerts"`
		}
		if err := json.Unmarshal(b, &set); err != nil {
			t.Fatal(err)
		}
		out = append(out, set.Alerts...)
	}
	return out
}

var camel = regexp.MustCompile(`([a-z0-9])([A-Z])`)

// query is what the search service is asked for an alert: the alert name
// split into words, its summary and description (or a generic alert's
// text). Both indexes get the same query; grounding derives its own from
// these words.
func (a alert) query() string {
	parts := []string{camel.ReplaceAllString(a.Labels["alertname"], "$1 $2"), a.Annotations["summary"], a.Annotations["description"], a.Text}
	q := strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
	return strings.TrimFunc(q, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// figures are hit@1, hit@5 and MRR over the alerts that have runbooks.
type figures struct {
	n                int
	hit1, hit5, mrr  float64
	missed, misfirst []string
}

func (f figures) String() string {
	return fmt.Sprintf("n=%d hit@1=%.3f hit@5=%.3f MRR=%.3f", f.n, f.hit1, f.hit5, f.mrr)
}

// measure indexes the runbooks and ranks each alert's query.
func measure(t testing.TB, e engine, books []runbook, alerts []alert) figures {
	ix := e.open(t)
	docs := make([]search.Document, len(books))
	byURL := map[string]string{}
	for i, b := range books {
		docs[i] = b.doc
		canon, _ := search.CanonicalURL(b.doc.URL)
		byURL[canon] = b.name
	}
	if res, err := ix.Upsert(t.Context(), docs); err != nil || res.Indexed != len(docs) {
		t.Fatalf("%s: Upsert() = %+v, %v", e.name, res, err)
	}
	var f figures
	for _, a := range alerts {
		if len(a.Runbooks) == 0 {
			continue
		}
		f.n++
		got, err := ix.Search(t.Context(), search.Query{Text: a.query(), MaxResults: 10})
		if err != nil {
			t.Fatalf("%s: Search(%q): %v", e.name, a.query(), err)
		}
		rank := 0
		for i, r := range got {
			canon, _ := search.CanonicalURL(r.URL)
			if slices.Contains(a.Runbooks, byURL[canon]) {
				rank = i + 1
				break
			}
		}
		switch {
		case rank == 1:
			f.hit1++
		case rank == 0 || rank > 5:
			f.missed = append(f.missed, a.ID)
		default:
			f.misfirst = append(f.misfirst, a.ID)
		}
		if rank >= 1 && rank <= 5 {
			f.hit5++
		}
		if rank > 0 {
			f.mrr += 1 / float64(rank)
		}
	}
	f.hit1 /= float64(f.n)
	f.hit5 /= float64(f.n)
	f.mrr /= float64(f.n)
	return f
}

// TestQualitySideBySide ranks the labelled alerts' queries on each index
// and holds PostgreSQL within 0.05 of bleve's hit@5 (issue 27's target).
// Run with -v for the figures BENCHMARKS.md records.
func TestQualitySideBySide(t *testing.T) {
	books, alerts := loadRunbooks(t), loadAlerts(t)
	got := map[string]figures{}
	for _, e := range engines(t) {
		f := measure(t, e, books, alerts)
		got[e.name] = f
		t.Logf("%-8s %s (runbooks %d); not in the top 5: %v; not first: %v", e.name, f, len(books), f.missed, f.misfirst)
	}
	b := got["bleve"]
	// When written (105 labelled alerts): bleve 1.000, PostgreSQL 0.981
	// (BENCHMARKS.md).
	if b.hit5 < 0.95 {
		t.Errorf("bleve hit@5 = %.3f on the labelled set, below 0.95", b.hit5)
	}
	if p, ok := got["postgres"]; ok && p.hit5 < b.hit5-0.05 {
		t.Errorf("PostgreSQL hit@5 %.3f is more than 0.05 below bleve's %.3f", p.hit5, b.hit5)
	}
}
