package grounding_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/groundcrew/groundcrew/services/grounding/internal/grounding"
	"github.com/groundcrew/groundcrew/services/grounding/internal/runbooktest"
)

// indexedRunbooks is runbookSearch that also looks documents up by URL,
// as the search service's GetDocuments does: only indexed URLs are found.
type indexedRunbooks struct {
	runbookSearch
	lookups  *[][]string
	excluded *[][]string
}

func (s indexedRunbooks) Documents(_ context.Context, urls, exclude []string) ([]grounding.SearchResult, error) {
	*s.lookups = append(*s.lookups, urls)
	*s.excluded = append(*s.excluded, exclude)
	var out []grounding.SearchResult
	for _, u := range urls {
		for _, rb := range s.books {
			if rb.URL == u {
				out = append(out, grounding.SearchResult{
					Title: rb.Title, URL: rb.URL, SourceDomain: "runbooks.groundcrew.example",
					Snippet: rb.Text[:min(len(rb.Text), 300)], Text: rb.Text,
				})
			}
		}
	}
	return out, nil
}

// ledgerRunbook is a team's runbook for its own alert whose title and text
// share no word with the alert: the relevance score alone rejects it.
var ledgerRunbook = runbooktest.Doc{
	Title: "Payments team on-call notes",
	URL:   "https://runbooks.groundcrew.example/payments-oncall",
	Text: "Payments team on-call notes.\nDiagnose.\nOpen the settlement dashboard and compare yesterday's batch with the bank file.\n" +
		"Mitigate.\nRe-run the settlement export for the missing day.",
}

const ledgerAlert = "[FIRING] LedgerDrift (critical): nightly totals differ from the bank\nservice=billing"

func teamService(t *testing.T) (*grounding.Service, *[][]string, *[][]string) {
	t.Helper()
	books := append(runbooktest.Load(t), ledgerRunbook)
	var lookups, excluded [][]string
	f := newFixture(t, nil)
	svc, err := grounding.New(grounding.Options{
		Searcher: indexedRunbooks{runbookSearch{books}, &lookups, &excluded}, Store: f.store, Logger: discard,
	})
	if err != nil {
		t.Fatal(err)
	}
	return svc, &lookups, &excluded
}

func ground(t *testing.T, svc *grounding.Service, text string, urls ...string) *grounding.Message {
	t.Helper()
	q := svc.DeriveQuery(t.Context(), text)
	m, err := svc.Ground(t.Context(), grounding.GroundRequest{
		Text: text, Query: q.Query, Round: grounding.RoundConfig{Engine: grounding.EngineAuto}, EvidenceURLs: urls,
	})
	if err != nil {
		t.Fatalf("Ground: %v", err)
	}
	return m
}

func citedURLs(m *grounding.Message) []string {
	var out []string
	for _, c := range m.Citations {
		out = append(out, c.URL)
	}
	return out
}

// TestTeamRunbookFirst: an alert whose evidence_urls name an indexed
// runbook that the relevance filter alone rejects still cites it first,
// and the summary is its first diagnostic step and its mitigation.
func TestTeamRunbookFirst(t *testing.T) {
	svc, lookups, excluded := teamService(t)

	// The relevance filter alone: the team's runbook is not cited.
	plain := ground(t, svc, ledgerAlert)
	if slices.Contains(citedURLs(plain), ledgerRunbook.URL) {
		t.Fatalf("without evidence_urls the runbook is cited (%q): the test no longer shows the exemption", citedURLs(plain))
	}

	dashboard := "https://grafana.example.com/d/ledger?orgId=1"
	m := ground(t, svc, ledgerAlert, ledgerRunbook.URL, dashboard)
	if got := citedURLs(m); len(got) == 0 || got[0] != ledgerRunbook.URL {
		t.Fatalf("citations %q, want %s first", got, ledgerRunbook.URL)
	}
	if len(m.Context.Results) == 0 || m.Context.Results[0].URL != ledgerRunbook.URL {
		t.Errorf("evidence %+v, want %s first", m.Context.Results, ledgerRunbook.URL)
	}
	want := "Open the settlement dashboard and compare yesterday's batch with the bank file. Re-run the settlement export for the missing day."
	if m.Summary != want {
		t.Errorf("summary = %q, want %q", m.Summary, want)
	}
	if m.Status != grounding.StatusProcessed {
		t.Errorf("status = %v (%q), want PROCESSED", m.Status, m.Error)
	}
	if slices.Contains(citedURLs(m), dashboard) {
		t.Errorf("the dashboard link, not in the index, is cited: %q", citedURLs(m))
	}
	checkCitations(t, m)
	if len(*lookups) != 1 || !slices.Equal((*lookups)[0], []string{ledgerRunbook.URL, dashboard}) {
		t.Errorf("lookups = %q, want one of both links", *lookups)
	}
	if !slices.Equal((*excluded)[0], []string{grounding.GroundcrewCollection}) {
		t.Errorf("lookup excluded %q, want groundcrew's own runbooks left out of a user's alert", (*excluded)[0])
	}
}

// TestTeamRunbookBesideRelevant: the team's runbook leads, and results the
// relevance filter keeps still follow it.
func TestTeamRunbookBesideRelevant(t *testing.T) {
	svc, _, _ := teamService(t)
	alert := "Disk almost full on node ip-10-0-3-17: /var/lib/docker 95% used"
	plain := ground(t, svc, alert)
	if len(plain.Citations) == 0 {
		t.Fatalf("no citation without evidence_urls: %v %q", plain.Status, plain.Error)
	}
	m := ground(t, svc, alert, ledgerRunbook.URL)
	got := citedURLs(m)
	if len(got) < 2 || got[0] != ledgerRunbook.URL || !slices.Contains(got[1:], plain.Citations[0].URL) {
		t.Errorf("citations %q, want %s first and then %s", got, ledgerRunbook.URL, plain.Citations[0].URL)
	}
	checkCitations(t, m)
}

// TestTeamRunbookNotIndexed: a runbook_url that is not in the index
// changes nothing: the same evidence, citations and summary as without it.
func TestTeamRunbookNotIndexed(t *testing.T) {
	svc, lookups, _ := teamService(t)
	for _, alert := range []string{
		"Disk almost full on node ip-10-0-3-17: /var/lib/docker 95% used",
		ledgerAlert,
	} {
		plain := ground(t, svc, alert)
		m := ground(t, svc, alert, "https://wiki.example.com/runbooks/not-indexed", "https://grafana.example.com/d/abc")
		if !slices.Equal(citedURLs(m), citedURLs(plain)) || m.Summary != plain.Summary || m.Status != plain.Status || m.Error != plain.Error {
			t.Errorf("%q with an unindexed runbook_url: citations %q, summary %q, %v %q; without: %q, %q, %v %q",
				alert, citedURLs(m), m.Summary, m.Status, m.Error, citedURLs(plain), plain.Summary, plain.Status, plain.Error)
		}
	}
	if len(*lookups) != 2 {
		t.Errorf("lookups = %q, want one per round with links", *lookups)
	}
	// Links that are not web addresses are not looked up.
	before := len(*lookups)
	ground(t, svc, ledgerAlert, "runbooks/ledger.md")
	if len(*lookups) != before {
		t.Errorf("a relative link was looked up: %q", (*lookups)[before:])
	}
}

// TestTeamRunbookWithModel: with a model, the team's runbook is source [1]
// and the prompt says so; its citations come first.
func TestTeamRunbookWithModel(t *testing.T) {
	books := append(runbooktest.Load(t), ledgerRunbook)
	var lookups, excluded [][]string
	model := &fakeModel{gen: &grounding.Generation{
		Text: "Compare the nightly batch with the bank file [1]. Check the other notes too [1].", FinishReason: "STOP",
	}}
	f := newFixture(t, model)
	svc, err := grounding.New(grounding.Options{
		Searcher: indexedRunbooks{runbookSearch{books}, &lookups, &excluded}, Store: f.store, Logger: discard, Model: model,
	})
	if err != nil {
		t.Fatal(err)
	}
	m := ground(t, svc, ledgerAlert, ledgerRunbook.URL)
	if got := citedURLs(m); len(got) == 0 || got[0] != ledgerRunbook.URL {
		t.Fatalf("citations %q, want %s first", got, ledgerRunbook.URL)
	}
	p := model.prompts[len(model.prompts)-1]
	if !strings.Contains(p.System, "Source [1] is the runbook the alert itself links to") {
		t.Errorf("system instruction does not name the alert's own runbook: %q", p.System)
	}
	if !strings.Contains(p.Turns[0].Parts[0], "SOURCE [1]>>>\n"+ledgerRunbook.Title) {
		t.Errorf("source [1] is not the team's runbook: %q", p.Turns[0].Parts[0])
	}
}
