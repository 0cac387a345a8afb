package grounding_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/groundcrew/groundcrew/services/grounding/internal/grounding"
	"github.com/groundcrew/groundcrew/services/grounding/internal/runbooktest"
)

// TestGroundOfflineRelevantUnquoted: relevance keeps a runbook as being
// about the alert, but none of the sentences the summariser reads shares
// the query's words (the alert is a log line the runbook quotes further
// down, after its overview). The answer is that runbook's own first
// diagnostic step and its mitigation, in its order (its one section when
// it has one), cited to it, never "no evidence matched"; a source
// relevance dropped is not quoted.
func TestGroundOfflineRelevantUnquoted(t *testing.T) {
	bananas := grounding.SearchResult{Title: "Unrelated", URL: "https://other.example.com/", SourceDomain: "other.example.com",
		Snippet: "Bananas are rich in potassium and grow in tropical regions."}
	tests := []struct {
		name    string
		runbook string
		alert   string
		want    []string // in the summary, in this order
	}{
		{
			name:    "diagnose and mitigate sections",
			runbook: "clickhouse-too-many-parts.md",
			alert: "2026.11.26 03:14:52.117921 [ 4127 ] {} <Error> executeQuery: Code: 252. DB::Exception: Too many parts (3012 with average size of 48.21 KiB) " +
				"in table 'events.page_views'. Merges are processing significantly slower than inserts. (TOO_MANY_PARTS) (version 24.8.4.13 (official build))",
			want: []string{"SELECT table, partition, count() FROM system.parts", "Make the writers batch"},
		},
		{
			name:    "a fix section only",
			runbook: "minio-drive-offline.md",
			alert:   "API: SYSTEM() Time: 03:14:52 UTC 11/26/2026 Error: Drive https://minio-3.storage:9000/data/disk5 returned an unexpected error: file access denied, please investigate - drive will be offline",
			want:    []string{"Replace or remount the disk"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rb := runbooktest.ReadFile(t, filepath.Join("testdata", "runbooks", tt.runbook))
			f := newFixture(t, nil)
			f.search.results = []grounding.SearchResult{
				bananas,
				{Title: rb.Title, URL: rb.URL, SourceDomain: "wiki.example.com", Snippet: rb.Text[:200], Text: rb.Text},
			}
			q := f.svc.DeriveQuery(t.Context(), tt.alert)
			m, err := f.svc.Ground(t.Context(), grounding.GroundRequest{Text: tt.alert, Query: q.Query})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("query %q\nsummary: %s\ntext: %s", q.Query, m.Summary, m.Text)
			if m.Status != grounding.StatusProcessed || m.Error != "" {
				t.Errorf("status %v %q; want PROCESSED", m.Status, m.Error)
			}
			if len(m.Citations) != 1 || m.Citations[0].URL != rb.URL {
				t.Fatalf("citations %v; want one, to %s", citedURLs(m), rb.URL)
			}
			at := 0
			for _, w := range tt.want {
				i := strings.Index(m.Summary[at:], w)
				if i < 0 {
					t.Fatalf("summary %q lacks %q (after offset %d)", m.Summary, w, at)
				}
				at += i + len(w)
			}
			// The cited passage is the runbook's own words, each step cut
			// at a word boundary when both do not fit.
			for part := range strings.SplitSeq(m.Citations[0].Snippet, "… ") {
				if part = strings.TrimRight(part, ".…"); !strings.Contains(rb.Text, part) {
					t.Errorf("cited passage %q is not the runbook's", part)
				}
			}
			if got := string([]rune(m.Text)[m.Citations[0].StartIndex:m.Citations[0].EndIndex]); got != m.Citations[0].Snippet {
				t.Errorf("text[%d:%d] = %q, want the snippet %q", m.Citations[0].StartIndex, m.Citations[0].EndIndex, got, m.Citations[0].Snippet)
			}
			if strings.Contains(m.Text, "Bananas") {
				t.Errorf("the answer quotes a source relevance dropped: %q", m.Text)
			}
			checkCitations(t, m)

			// Nothing about the alert: as before, no relevant runbook and
			// nothing cited.
			f.search.results = []grounding.SearchResult{bananas}
			m, err = f.svc.Ground(t.Context(), grounding.GroundRequest{Text: tt.alert, Query: q.Query})
			if err != nil {
				t.Fatal(err)
			}
			if m.Status != grounding.StatusNeedsReview || m.Error != grounding.NoRelevantSource || len(m.Citations) != 0 || m.Text != "" {
				t.Errorf("with no relevant source: status %v %q, citations %v, text %q; want NEEDS_REVIEW %q, nothing cited",
					m.Status, m.Error, citedURLs(m), m.Text, grounding.NoRelevantSource)
			}
		})
	}
}
