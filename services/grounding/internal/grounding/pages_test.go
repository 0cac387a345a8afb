package grounding_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/services/grounding/internal/grounding"
	"github.com/groundcrew/groundcrew/services/grounding/internal/pagefetch"
)

// runbookHTML is the team's runbook page as its wiki serves it; the
// e-mail address must not survive into the stored raw_html.
const runbookHTML = `<!doctype html><html><head><title>Checkout API: high error rate — Runbooks</title>
<script>window.user = "ana@example.com";</script></head>
<body><h1>Checkout API: high error rate</h1>
<p>Page the owner at ana@example.com when the error budget burns.</p>
<p>The payments upstream is the usual cause of 5xx answers from checkout. Check its status page first, then roll back the last deploy.</p>
</body></html>`

// site is a redirector standing in for vertexaisearch.cloud.google.com
// (on "localhost") and the team's wiki (on 127.0.0.1).
type site struct {
	redirector, wiki *httptest.Server
	pages            grounding.Pages
}

func newSite(t *testing.T) *site {
	t.Helper()
	s := &site{}
	s.wiki = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/runbooks/checkout-api" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(runbookHTML))
	}))
	t.Cleanup(s.wiki.Close)
	s.redirector = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/grounding-api-redirect/RUNBOOK":
			w.Header().Set("Location", s.wiki.URL+"/runbooks/checkout-api")
			w.WriteHeader(http.StatusFound)
		case "/grounding-api-redirect/UNREADABLE":
			w.Header().Set("Location", s.wiki.URL+"/runbooks/missing")
			w.WriteHeader(http.StatusFound)
		default: // an expired link
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.redirector.Close)
	s.redirector.URL = strings.Replace(s.redirector.URL, "127.0.0.1", "localhost", 1)
	s.pages = pagefetch.New(pagefetch.Config{
		RedirectHosts: []string{pagefetch.GeminiRedirector, "localhost"},
		AllowAddr:     func(a netip.Addr) bool { return a.IsLoopback() },
	})
	return s
}

// TestGroundAutoWithModelSearchesEvidenceFirst: with a model configured,
// engine auto asks the search service with the round's (derived) query and
// gives its evidence to the model; the model's own search is not used.
func TestGroundAutoWithModelSearchesEvidenceFirst(t *testing.T) {
	model := &fakeModel{gen: &grounding.Generation{Text: "Postgres allows max_connections concurrent connections [1]."}}
	f := newFixture(t, model)
	m, err := f.svc.Ground(t.Context(), grounding.GroundRequest{Text: alert, Query: "postgres too many clients max_connections"})
	if err != nil {
		t.Fatal(err)
	}
	want := []grounding.SearchRequest{{
		Query: "postgres too many clients max_connections", MaxResults: grounding.DefaultMaxResults, Engine: grounding.EngineAuto,
		ExcludeCollections: []string{grounding.GroundcrewCollection}, IncludeText: true,
	}}
	if diff := cmp.Diff(want, f.search.requests); diff != "" {
		t.Errorf("search requests (-want +got):\n%s", diff)
	}
	if len(model.prompts) != 1 || model.prompts[0].WebSearch {
		t.Fatalf("prompts %+v; want one without the model's web search", model.prompts)
	}
	if !strings.Contains(model.prompts[0].Turns[0].Parts[0], evidence[0].Snippet[:40]) {
		t.Errorf("the evidence is not in the prompt:\n%s", model.prompts[0].Turns[0].Parts[0])
	}
	if len(m.Citations) != 1 || m.Citations[0].URL != evidence[0].URL || m.Status != grounding.StatusProcessed {
		t.Errorf("citations %+v status %v (%s)", m.Citations, m.Status, m.Error)
	}
	if m.Engine != grounding.EngineAuto || m.Context.Query != "postgres too many clients max_connections" {
		t.Errorf("engine %v query %q", m.Engine, m.Context.Query)
	}
}

// TestGroundAutoFallsBackToNativeResolved: when the search service finds
// nothing, the model's own search grounds the answer, and its sources are
// stored as their destinations: the redirect resolved, the page's own
// title, a snippet from the page (not the model's sentence), the page's
// HTML kept redacted; an expired link's source is left out.
func TestGroundAutoFallsBackToNativeResolved(t *testing.T) {
	s := newSite(t)
	text := "Checkout errors usually come from the payments upstream. Restart everything twice."
	first := "Checkout errors usually come from the payments upstream."
	model := &fakeModel{gen: &grounding.Generation{
		Text: text,
		Chunks: []grounding.WebChunk{
			{URI: s.redirector.URL + "/grounding-api-redirect/RUNBOOK", Title: "wiki.example.com"},
			{URI: s.redirector.URL + "/grounding-api-redirect/EXPIRED", Title: "blog.example.com"},
			// Another link to the same page.
			{URI: s.redirector.URL + "/grounding-api-redirect/RUNBOOK?again", Title: "wiki.example.com"},
		},
		Supports: []grounding.Support{
			{Start: 0, End: len(first), Text: first, Chunks: []int{0, 2}},
			{Start: len(first) + 1, End: len(text), Chunks: []int{1}},
		},
		SearchQueries: []string{"checkout api 5xx"},
	}}
	f := newFixtureWith(t, model, s.pages)
	f.search.results = nil
	m, err := f.svc.Ground(t.Context(), grounding.GroundRequest{Text: "High error rate on checkout-api", Query: "checkout-api 5xx"})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.search.requests) != 1 || f.search.requests[0].Query != "checkout-api 5xx" {
		t.Errorf("search requests %+v; want one with the derived query", f.search.requests)
	}
	if len(model.prompts) != 1 || !model.prompts[0].WebSearch || m.Engine != grounding.EngineNative {
		t.Fatalf("engine %v, prompts %+v; want the model's web search", m.Engine, model.prompts)
	}
	if !strings.Contains(model.prompts[0].Turns[0].Parts[0], "QUERY>>>\ncheckout-api 5xx\n") {
		t.Errorf("the derived query is not offered to the model's search:\n%s", model.prompts[0].Turns[0].Parts[0])
	}
	if len(m.Citations) != 1 {
		t.Fatalf("citations %+v; want the runbook's only", m.Citations)
	}
	c := m.Citations[0]
	wantURL := s.wiki.URL + "/runbooks/checkout-api"
	if c.URL != wantURL || c.Title != "Checkout API: high error rate — Runbooks" || c.Domain != "127.0.0.1" || c.SourceIndex != 1 {
		t.Errorf("citation %q %q %q [%d]", c.URL, c.Title, c.Domain, c.SourceIndex)
	}
	if want := "The payments upstream is the usual cause of 5xx answers from checkout. Check its status page first, then roll back the last deploy."; c.Snippet != want {
		t.Errorf("snippet %q, want the page's own passage %q", c.Snippet, want)
	}
	if len(m.Context.Results) != 1 || m.Context.Results[0].URL != wantURL {
		t.Errorf("results %+v", m.Context.Results)
	}
	if !c.HasRawHTML {
		t.Fatal("the cited page's HTML is not kept")
	}
	raw, err := f.store.RawHTML(t.Context(), m.ID, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(raw.HTML, "ana@example.com") || !strings.Contains(raw.HTML, "<h1>Checkout API: high error rate</h1>") || raw.URL != wantURL {
		t.Errorf("raw HTML of %s not the page redacted:\n%s", raw.URL, raw.HTML)
	}
	for _, c := range m.Citations {
		if strings.Contains(c.URL, "grounding-api-redirect") {
			t.Errorf("a redirect link was stored: %s", c.URL)
		}
	}
	checkStored(t, f, m)
}

// TestGroundNativeUnreadablePageHasNoSnippet: a destination that cannot be
// read keeps its URL and domain, but gets no snippet (never the model's
// sentence) and no raw HTML.
func TestGroundNativeUnreadablePageHasNoSnippet(t *testing.T) {
	s := newSite(t)
	text := "The model's own sentence about checkout."
	model := &fakeModel{gen: &grounding.Generation{
		Text:     text,
		Chunks:   []grounding.WebChunk{{URI: s.redirector.URL + "/grounding-api-redirect/UNREADABLE", Title: "wiki.example.com"}},
		Supports: []grounding.Support{{Start: 0, End: len(text), Text: text, Chunks: []int{0}}},
	}}
	f := newFixtureWith(t, model, s.pages)
	m, err := f.svc.Ground(t.Context(), grounding.GroundRequest{Text: "checkout", Round: grounding.RoundConfig{Engine: grounding.EngineNative}})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Citations) != 1 {
		t.Fatalf("citations %+v", m.Citations)
	}
	c := m.Citations[0]
	if c.URL != s.wiki.URL+"/runbooks/missing" || c.Snippet != "" || c.HasRawHTML || c.Title != "127.0.0.1" {
		t.Errorf("citation %+v; want the destination, its domain as title, no snippet and no HTML", c)
	}
}

// TestGroundKeepsCitedPagesHTML: the page of a cited search result is
// fetched and kept redacted as the citation's raw_html; an uncited one is
// not fetched.
func TestGroundKeepsCitedPagesHTML(t *testing.T) {
	s := newSite(t)
	model := &fakeModel{gen: &grounding.Generation{Text: "Payments upstream failures cause checkout 5xx answers [1]."}}
	f := newFixtureWith(t, model, s.pages)
	f.search.results = []grounding.SearchResult{
		{Title: "Checkout runbook", URL: s.wiki.URL + "/runbooks/checkout-api", Snippet: "The payments upstream is the usual cause of 5xx answers from checkout."},
		{Title: "Other", URL: s.wiki.URL + "/runbooks/other", Snippet: "Unrelated."},
	}
	m, err := f.svc.Ground(t.Context(), grounding.GroundRequest{Text: "checkout 5xx", Round: grounding.RoundConfig{Engine: grounding.EngineLocal}})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Citations) != 1 || !m.Citations[0].HasRawHTML || m.Citations[0].MimeType != "text/html" {
		t.Fatalf("citations %+v; want the runbook with its HTML", m.Citations)
	}
	raw, err := f.store.RawHTML(t.Context(), m.ID, m.Citations[0].ID)
	if err != nil || strings.Contains(raw.HTML, "ana@example.com") || !strings.Contains(raw.HTML, "roll back the last deploy") {
		t.Errorf("raw HTML %+v, %v", raw, err)
	}
	checkStored(t, f, m)
}
