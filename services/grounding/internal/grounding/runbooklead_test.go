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
	for _, tt := range unquotedRunbookCases {
		t.Run(tt.name, func(t *testing.T) {
			rb := runbooktest.ReadFile(t, filepath.Join("testdata", "runbooks", tt.runbook))
			f := newFixture(t, nil)
			f.search.results = []grounding.SearchResult{
				unrelatedResult,
				{Title: rb.Title, URL: rb.URL, SourceDomain: "wiki.example.com", Snippet: rb.Text[:200], Text: rb.Text},
			}
			q := f.svc.DeriveQuery(t.Context(), tt.input)
			m, err := f.svc.Ground(t.Context(), grounding.GroundRequest{Text: tt.input, Query: q.Query})
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
			wantInOrder(t, "summary", m.Summary, tt.want)
			wantRunbookWords(t, m.Citations[0].Snippet, rb.Text)
			if got := string([]rune(m.Text)[m.Citations[0].StartIndex:m.Citations[0].EndIndex]); got != m.Citations[0].Snippet {
				t.Errorf("text[%d:%d] = %q, want the snippet %q", m.Citations[0].StartIndex, m.Citations[0].EndIndex, got, m.Citations[0].Snippet)
			}
			if strings.Contains(m.Text, "Bananas") {
				t.Errorf("the answer quotes a source relevance dropped: %q", m.Text)
			}
			checkCitations(t, m)

			// Nothing about the alert: as before, no relevant runbook and
			// nothing cited.
			f.search.results = []grounding.SearchResult{unrelatedResult}
			m, err = f.svc.Ground(t.Context(), grounding.GroundRequest{Text: tt.input, Query: q.Query})
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

// unquotedRunbookCases are inputs (an alert, a chat message) whose runbook
// relevance finds but whose opening the summariser cannot quote: a server
// log line the runbook quotes only after its overview. want are what the
// answer says from the runbook, in this order.
var unquotedRunbookCases = []struct {
	name    string
	runbook string
	input   string
	want    []string
}{
	{
		name:    "diagnose and mitigate sections",
		runbook: "clickhouse-too-many-parts.md",
		input: "2026.11.26 03:14:52.117921 [ 4127 ] {} <Error> executeQuery: Code: 252. DB::Exception: Too many parts (3012 with average size of 48.21 KiB) " +
			"in table 'events.page_views'. Merges are processing significantly slower than inserts. (TOO_MANY_PARTS) (version 24.8.4.13 (official build))",
		want: []string{"SELECT table, partition, count() FROM system.parts", "Make the writers batch"},
	},
	{
		name:    "a fix section only",
		runbook: "minio-drive-offline.md",
		input:   "API: SYSTEM() Time: 03:14:52 UTC 11/26/2026 Error: Drive https://minio-3.storage:9000/data/disk5 returned an unexpected error: file access denied, please investigate - drive will be offline",
		want:    []string{"Replace or remount the disk"},
	},
}

// unrelatedResult is a search result about nothing an alert or a message
// says, which relevance leaves out.
var unrelatedResult = grounding.SearchResult{Title: "Unrelated", URL: "https://other.example.com/", SourceDomain: "other.example.com",
	Snippet: "Bananas are rich in potassium and grow in tropical regions."}

// wantInOrder fails unless text (the answer's what) holds each of want,
// in this order.
func wantInOrder(t *testing.T, what, text string, want []string) {
	t.Helper()
	at := 0
	for _, w := range want {
		i := strings.Index(text[at:], w)
		if i < 0 {
			t.Fatalf("%s %q lacks %q (after offset %d)", what, text, w, at)
		}
		at += i + len(w)
	}
}

// wantRunbookWords fails unless the cited passage is the runbook's own
// words, each step cut at a word boundary when both do not fit.
func wantRunbookWords(t *testing.T, snippet, runbook string) {
	t.Helper()
	for part := range strings.SplitSeq(snippet, "… ") {
		if part = strings.TrimRight(part, ".…"); !strings.Contains(runbook, part) {
			t.Errorf("cited passage %q is not the runbook's", part)
		}
	}
}
