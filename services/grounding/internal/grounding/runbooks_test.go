package grounding_test

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/groundcrew/groundcrew/services/grounding/internal/grounding"
	"github.com/groundcrew/groundcrew/services/grounding/internal/relevance"
	"github.com/groundcrew/groundcrew/services/grounding/internal/runbooktest"
)

// runbookSearch ranks runbooks by how many query words they contain, like a
// lenient full-text engine: the right runbook first, then weaker matches
// that share a word or two with the query.
type runbookSearch struct{ books []runbooktest.Doc }

func (s runbookSearch) Search(_ context.Context, req grounding.SearchRequest) (grounding.SearchResponse, error) {
	words := strings.FieldsFunc(strings.ToLower(req.Query), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	type hit struct {
		rb    runbooktest.Doc
		score int
	}
	var hits []hit
	for _, rb := range s.books {
		doc := strings.ToLower(rb.Title + " " + rb.Text)
		n := 0
		for _, w := range words {
			if len(w) > 2 && strings.Contains(doc, w) {
				n++
			}
		}
		if n > 0 {
			hits = append(hits, hit{rb, n})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return cmp.Compare(b.score, a.score) })
	var resp grounding.SearchResponse
	resp.Engine = grounding.EngineLocal
	for _, h := range hits[:min(len(hits), req.MaxResults)] {
		resp.Results = append(resp.Results, grounding.SearchResult{
			Title: h.rb.Title, URL: h.rb.URL, SourceDomain: "runbooks.groundcrew.example",
			Snippet: h.rb.Text, Score: float64(h.score),
		})
	}
	return resp, nil
}

// TestGroundOfflineRunbooks enriches realistic alerts through the offline
// path (derived query, search, extractive summary) over the example
// runbooks: the summary must give advice from the right runbook, not
// restate the alert or quote an unrelated runbook.
func TestGroundOfflineRunbooks(t *testing.T) {
	books := runbooktest.Load(t)
	tests := []struct {
		alert  string
		want   string   // the runbook's URL
		advice []string // at least one must be in the summary
	}{
		{
			alert:  "High error rate on checkout-api: 5xx > 10% for 5m",
			want:   "https://runbooks.groundcrew.example/checkout-api-5xx",
			advice: []string{"payment-gateway", "roll back", "async_payments", "PAYMENTS_POOL_SIZE"},
		},
		{
			alert:  "PostgreSQL orders-db: too many connections (FATAL: sorry, too many clients already)",
			want:   "https://runbooks.groundcrew.example/postgres-too-many-connections",
			advice: []string{"PgBouncer", "pg_terminate_backend", "pool size", "idle in transaction"},
		},
		{
			alert:  "Pod payments-worker-7d9f in CrashLoopBackOff: OOMKilled, restarted 12 times",
			want:   "https://runbooks.groundcrew.example/kubernetes-crashloopbackoff",
			advice: []string{"raise the memory limit", "memory limit"},
		},
		{
			alert:  "Disk almost full on node ip-10-0-3-17: /var/lib/docker 95% used",
			want:   "https://runbooks.groundcrew.example/node-disk-full",
			advice: []string{"Rotate and compress logs", "Prune unused images", "replication slot", "Expand the volume", "df -h"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.want[strings.LastIndex(tt.want, "/")+1:], func(t *testing.T) {
			f := newFixture(t, nil)
			svc, err := grounding.New(grounding.Options{Searcher: runbookSearch{books}, Store: f.store, Logger: discard})
			if err != nil {
				t.Fatal(err)
			}
			q := svc.DeriveQuery(t.Context(), tt.alert)
			m, err := svc.Ground(t.Context(), grounding.GroundRequest{
				Text: tt.alert, Query: q.Query, Round: grounding.RoundConfig{Engine: grounding.EngineAuto}, CreatedBy: "test",
			})
			if err != nil {
				t.Fatalf("Ground: %v", err)
			}
			t.Logf("query %q\nsummary: %s\ntext: %s", q.Query, m.Summary, m.Text)
			if len(m.Context.Results) == 0 || m.Context.Results[0].URL != tt.want {
				t.Fatalf("evidence does not start with %s: %+v", tt.want, m.Context.Results)
			}
			right := m.Context.Results[0]
			if !slices.ContainsFunc(tt.advice, func(a string) bool { return strings.Contains(m.Summary, a) }) {
				t.Errorf("summary %q holds none of the remediation phrases %q", m.Summary, tt.advice)
			}
			if strings.Contains(m.Summary, right.Title) {
				t.Errorf("summary %q repeats the runbook title %q", m.Summary, right.Title)
			}
			if len(m.Citations) == 0 {
				t.Fatalf("no citations; status %v %q", m.Status, m.Error)
			}
			// The right runbook, cited because relevance judged it about
			// the alert, is not sent for review as "low confidence"
			// because its steps do not repeat the alert's words.
			if m.Confidence == nil {
				t.Fatalf("no confidence; status %v %q", m.Status, m.Error)
			}
			if m.Status != grounding.StatusProcessed || *m.Confidence < relevance.Bar {
				t.Errorf("status %v %q, confidence %v; want PROCESSED with confidence at least %v", m.Status, m.Error, *m.Confidence, relevance.Bar)
			}
			for _, c := range m.Citations {
				if c.URL != tt.want {
					t.Errorf("cites %s (%q); want only %s", c.URL, c.Snippet, tt.want)
				}
				if !strings.Contains(right.Snippet, strings.TrimSuffix(c.Snippet, ".")) {
					t.Errorf("cited sentence %q is not from %s", c.Snippet, tt.want)
				}
			}
			checkCitations(t, m)
		})
	}
}
