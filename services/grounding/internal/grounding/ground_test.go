package grounding_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/grounding/internal/grounding"
	"github.com/groundcrew/groundcrew/services/grounding/internal/store"
)

var discard = slog.New(slog.DiscardHandler)

// fakeSearch answers every query with the same results, or a query of
// byQuery with its own; as the search service, with their documents'
// whole text only when the request asks for it.
type fakeSearch struct {
	mu       sync.Mutex
	results  []grounding.SearchResult
	byQuery  map[string][]grounding.SearchResult
	err      error
	requests []grounding.SearchRequest
}

func (f *fakeSearch) Search(_ context.Context, req grounding.SearchRequest) (grounding.SearchResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, req)
	if f.err != nil {
		return grounding.SearchResponse{}, f.err
	}
	results := f.results
	if r, ok := f.byQuery[req.Query]; ok {
		results = r
	}
	results = slices.Clone(results[:min(len(results), req.MaxResults)])
	for i := range results {
		if !req.IncludeText {
			results[i].Text = ""
		}
	}
	return grounding.SearchResponse{Results: results, Engine: req.Engine}, nil
}

// fakeModel returns a scripted generation and records prompts.
type fakeModel struct {
	mu      sync.Mutex
	gen     *grounding.Generation
	err     error
	block   bool // wait for the context to end, then fail
	prompts []grounding.Prompt
	derive  grounding.DerivedQuery
	// deadlines are the context deadlines the model was called with.
	deadlines []time.Time
}

func (f *fakeModel) sawDeadline(ctx context.Context) {
	dl, _ := ctx.Deadline()
	f.mu.Lock()
	f.deadlines = append(f.deadlines, dl)
	f.mu.Unlock()
}

func (f *fakeModel) Name() string { return "fake-model" }

func (f *fakeModel) Generate(ctx context.Context, p grounding.Prompt) (*grounding.Generation, error) {
	f.sawDeadline(ctx)
	f.mu.Lock()
	f.prompts = append(f.prompts, p)
	f.mu.Unlock()
	if f.block {
		<-ctx.Done()
		return nil, &grounding.ProviderError{Attempts: 1, Err: ctx.Err()}
	}
	if f.err != nil {
		return nil, f.err
	}
	g := *f.gen
	return &g, nil
}

func (f *fakeModel) DeriveQuery(ctx context.Context, _ string) (grounding.DerivedQuery, error) {
	f.sawDeadline(ctx)
	if f.block {
		<-ctx.Done()
		return grounding.DerivedQuery{}, &grounding.ProviderError{Attempts: 1, Err: ctx.Err()}
	}
	if f.err != nil {
		return grounding.DerivedQuery{}, f.err
	}
	return f.derive, nil
}

var evidence = []grounding.SearchResult{
	{Title: "PostgreSQL: max_connections", URL: "https://www.postgresql.org/docs/current/runtime-config-connection.html", SourceDomain: "postgresql.org",
		Snippet: "max_connections determines the maximum number of concurrent connections to the database server. The default is typically 100 connections. When the limit is reached, new clients get the error too many clients already."},
	{Title: "Too many Postgres connections: pool them", URL: "https://www.pgbouncer.org/", SourceDomain: "pgbouncer.org",
		Snippet: "PgBouncer is a lightweight connection pooler for PostgreSQL. Pooling lets many application clients share a small number of server connections, so max_connections is not reached and clients stop getting FATAL: sorry, too many clients already."},
	{Title: "Connection storms: too many clients", URL: "https://blog.example.com/storms", SourceDomain: "blog.example.com",
		Snippet: "A connection storm happens when many clients reconnect to Postgres at once after a failover, exhausting max_connections within seconds."},
	{Title: "Unrelated", URL: "https://other.example.com/", SourceDomain: "other.example.com", Snippet: "Bananas are rich in potassium and grow in tropical regions."},
}

const alert = "[FIRING:1] PostgresTooManyConnections db-prod-1 (10.0.3.7): FATAL: sorry, too many clients already; max_connections reached"

type fixture struct {
	svc    *grounding.Service
	search *fakeSearch
	store  *store.Store
}

func newFixture(t *testing.T, model grounding.Model) fixture {
	t.Helper()
	return newFixtureWith(t, model, nil)
}

// newFixtureWith is newFixture with pages fetched through pages.
func newFixtureWith(t *testing.T, model grounding.Model, pages grounding.Pages) fixture {
	t.Helper()
	dir := t.TempDir()
	db, err := sqlstore.Open(t.Context(), sqlstoretest.URL(t, "grounding"), dir, "grounding", discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := store.Migrate(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	arts, err := store.NewArtifacts(filepath.Join(dir, "artifacts"))
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(db, arts)
	fs := &fakeSearch{results: evidence}
	opts := grounding.Options{Searcher: fs, Store: st, Logger: discard, Pages: pages}
	if model != nil {
		opts.Model = model
	}
	svc, err := grounding.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return fixture{svc: svc, search: fs, store: st}
}

func ptr[T any](v T) *T { return &v }

func checkStored(t *testing.T, f fixture, m *grounding.Message) {
	t.Helper()
	got, err := f.store.Get(t.Context(), m.ID)
	if err != nil {
		t.Fatalf("Get(%s): %v", m.ID, err)
	}
	if diff := cmp.Diff(m, got); diff != "" {
		t.Errorf("stored message differs (-returned +stored):\n%s", diff)
	}
}

func checkCitations(t *testing.T, m *grounding.Message) {
	t.Helper()
	runes := []rune(m.Text)
	allowed := map[string]bool{}
	for _, r := range m.Context.Results {
		allowed[r.URL] = true
	}
	for _, c := range m.Citations {
		if !allowed[c.URL] {
			t.Errorf("citation to %s, not in the evidence", c.URL)
		}
		if c.StartIndex < 0 || c.EndIndex > len(runes) || c.StartIndex >= c.EndIndex {
			t.Errorf("citation span [%d,%d) outside text of %d characters", c.StartIndex, c.EndIndex, len(runes))
		}
		if c.ConfidenceScore < 0 || c.ConfidenceScore > 1 {
			t.Errorf("citation confidence %v outside [0,1]", c.ConfidenceScore)
		}
	}
	if m.Confidence != nil && (*m.Confidence < 0 || *m.Confidence > 1) {
		t.Errorf("confidence %v outside [0,1]", *m.Confidence)
	}
	if n := utf8.RuneCountInString(m.Summary); n > grounding.SummaryMaxChars {
		t.Errorf("summary has %d characters, want ≤ %d", n, grounding.SummaryMaxChars)
	}
}

func TestGroundOffline(t *testing.T) {
	f := newFixture(t, nil)
	m, err := f.svc.Ground(t.Context(), grounding.GroundRequest{
		Text: alert, Round: grounding.RoundConfig{Engine: grounding.EngineLocal, MaxResults: ptr(5)}, CreatedBy: "test",
	})
	if err != nil {
		t.Fatalf("Ground: %v", err)
	}
	if m.Status != grounding.StatusProcessed || m.Model != grounding.MethodExtractive || m.Engine != grounding.EngineLocal {
		t.Errorf("status %v model %q engine %v; want processed, extractive, local (error %q)", m.Status, m.Model, m.Engine, m.Error)
	}
	if len(m.Citations) == 0 || len(m.Context.Results) != grounding.DefaultMaxSources || m.Summary == "" || m.Confidence == nil {
		t.Errorf("message = %+v; want citations, 3 sources, a summary and a confidence", m)
	}
	if got := f.search.requests[0]; got.MaxResults != 5 || got.Engine != grounding.EngineLocal || got.Query == "" {
		t.Errorf("search request = %+v", got)
	}
	for _, c := range m.Citations {
		if got := string([]rune(m.Text)[c.StartIndex:c.EndIndex]); got != c.Snippet {
			t.Errorf("text[%d:%d] = %q, want the snippet %q", c.StartIndex, c.EndIndex, got, c.Snippet)
		}
	}
	checkCitations(t, m)
	checkStored(t, f, m)
	if _, err := f.store.Artifacts().Read(m.ArtifactPath); err != nil {
		t.Errorf("artifact: %v", err)
	}
}

func TestGroundNoSearch(t *testing.T) {
	for name, rc := range map[string]grounding.RoundConfig{
		"search off":    {EnableSearch: ptr(false)},
		"no results":    {MaxResults: ptr(0)},
		"off and local": {EnableSearch: ptr(false), Engine: grounding.EngineLocal},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, nil)
			m, err := f.svc.Ground(t.Context(), grounding.GroundRequest{Text: alert, Round: rc})
			if err != nil {
				t.Fatal(err)
			}
			if len(f.search.requests) != 0 {
				t.Errorf("searched %d times, want none", len(f.search.requests))
			}
			if m.Status != grounding.StatusProcessed || len(m.Citations) != 0 || m.Confidence != nil || m.Text == "" {
				t.Errorf("message = %+v; want processed, text, no citations, no confidence", m)
			}
		})
	}
}

func TestGroundOfflineNoEvidence(t *testing.T) {
	f := newFixture(t, nil)
	f.search.err = errors.New("unavailable")
	m, err := f.svc.Ground(t.Context(), grounding.GroundRequest{Text: alert})
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != grounding.StatusNeedsReview || m.Error == "" || len(m.Citations) != 0 {
		t.Errorf("message = %+v; want needs review with a reason", m)
	}
	checkStored(t, f, m)
}

func TestGroundModelCitations(t *testing.T) {
	tests := []struct {
		name       string
		text       string
		wantStatus grounding.Status
		wantText   string
		wantSpans  [][3]int // start, end, source
	}{
		{
			name:       "valid",
			text:       "Postgres allows max_connections concurrent connections [1]. A pooler such as PgBouncer shares few server connections among many clients [2].",
			wantStatus: grounding.StatusProcessed,
			wantText:   "Postgres allows max_connections concurrent connections [1]. A pooler such as PgBouncer shares few server connections among many clients [2].",
			wantSpans:  [][3]int{{0, 54, 1}, {60, 135, 2}},
		},
		{
			name:       "invented source dropped",
			text:       "Postgres allows max_connections concurrent connections [1][7]. Reconnect storms exhaust connections [9].",
			wantStatus: grounding.StatusNeedsReview,
			wantText:   "Postgres allows max_connections concurrent connections [1]. Reconnect storms exhaust connections.",
			wantSpans:  [][3]int{{0, 54, 1}},
		},
		{
			name:       "no citations",
			text:       "Something is wrong with the database.",
			wantStatus: grounding.StatusNeedsReview,
			wantText:   "Something is wrong with the database.",
		},
		{
			name:       "list form and non-ASCII",
			text:       "连接数已满 😱 max_connections reached[1, 3].",
			wantStatus: grounding.StatusProcessed,
			wantText:   "连接数已满 😱 max_connections reached [1][3].",
			wantSpans:  [][3]int{{0, 31, 1}, {0, 31, 3}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := &fakeModel{gen: &grounding.Generation{Text: tt.text, Raw: []byte(`{"raw":true}`)}}
			f := newFixture(t, model)
			m, err := f.svc.Ground(t.Context(), grounding.GroundRequest{
				Text: alert, Round: grounding.RoundConfig{Engine: grounding.EngineExa},
			})
			if err != nil {
				t.Fatal(err)
			}
			if m.Text != tt.wantText {
				t.Errorf("text = %q, want %q", m.Text, tt.wantText)
			}
			var spans [][3]int
			for _, c := range m.Citations {
				spans = append(spans, [3]int{c.StartIndex, c.EndIndex, c.SourceIndex})
			}
			if diff := cmp.Diff(tt.wantSpans, spans); diff != "" {
				t.Errorf("citation spans (-want +got):\n%s", diff)
			}
			if m.Status != tt.wantStatus {
				t.Errorf("status = %v (%s), want %v", m.Status, m.Error, tt.wantStatus)
			}
			if strings.Contains(m.Summary, "[") {
				t.Errorf("summary %q keeps citation markers", m.Summary)
			}
			checkCitations(t, m)
			checkStored(t, f, m)
			if m.Model != "fake-model" || m.Engine != grounding.EngineExa {
				t.Errorf("model %q engine %v", m.Model, m.Engine)
			}
			p := model.prompts[0]
			if !strings.Contains(p.Turns[0].Parts[0], "SOURCE [3]>>>\nConnection storms") || strings.Contains(p.Turns[0].Parts[0], "[4]") {
				t.Errorf("prompt does not list exactly 3 sources:\n%s", p.Turns[0].Parts[0])
			}
		})
	}
}

func TestGroundSummaryTrimmed(t *testing.T) {
	long := strings.Repeat("Connection pooling reduces the number of server connections that clients need [2]. ", 6)
	f := newFixture(t, &fakeModel{gen: &grounding.Generation{Text: long}})
	m, err := f.svc.Ground(t.Context(), grounding.GroundRequest{Text: alert, Round: grounding.RoundConfig{Engine: grounding.EngineLocal}})
	if err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(m.Summary); n > 250 || strings.Count(m.Summary, ".") > 3 || !strings.HasSuffix(m.Summary, "need.") {
		t.Errorf("summary %q (%d characters): want ≤ 250 characters, ≤ 3 sentences, ending at a sentence", m.Summary, n)
	}
}

func TestGroundProviderFailure(t *testing.T) {
	pe := &grounding.ProviderError{Code: 429, Status: "RESOURCE_EXHAUSTED", Attempts: 3, Raw: []byte(`{"error":{"code":429}}`), Err: errors.New("quota for project 1234 key AIza…")}
	f := newFixture(t, &fakeModel{err: pe})
	m, err := f.svc.Ground(t.Context(), grounding.GroundRequest{Text: alert, Round: grounding.RoundConfig{Engine: grounding.EngineLocal}})
	if err != nil {
		t.Fatalf("Ground: %v", err)
	}
	want := "model provider answered 429 RESOURCE_EXHAUSTED after 3 attempt(s)"
	if m.Status != grounding.StatusFailed || m.Error != want || m.Text != "" || m.Confidence != nil {
		t.Errorf("message = %+v; want FAILED with error %q", m, want)
	}
	raw, err := f.store.Artifacts().Read(m.ArtifactPath)
	if err != nil || !strings.Contains(string(raw), "429") {
		t.Errorf("artifact = %q, %v; want the provider's error body", raw, err)
	}
	checkStored(t, f, m)
}

func TestGroundTimeoutBoundsRound(t *testing.T) {
	f := newFixture(t, &fakeModel{block: true})
	start := time.Now()
	m, err := f.svc.Ground(t.Context(), grounding.GroundRequest{
		Text: alert, Round: grounding.RoundConfig{Engine: grounding.EngineLocal, Timeout: 50 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != grounding.StatusFailed || !strings.Contains(m.Error, "timed out") {
		t.Errorf("status %v error %q; want FAILED, timed out", m.Status, m.Error)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Ground took %v with a 50ms round timeout", d)
	}
	checkStored(t, f, m)
}

func TestGroundBudgets(t *testing.T) {
	blockRE := regexp.MustCompile(`(?s)<<<BEGIN [0-9a-f]{16} SOURCE \[\d+\]>>>\n[^\n]*\n[^\n]*\n(.*?)\n<<<END [0-9a-f]{16}>>>`)
	sourceText := func(p grounding.Prompt) []string {
		var texts []string
		for _, m := range blockRE.FindAllStringSubmatch(p.Turns[0].Parts[0], -1) {
			texts = append(texts, m[1])
		}
		return texts
	}
	long := strings.Repeat("Connection limits protect the server from overload. ", 100)
	ev := []grounding.SearchResult{
		{Title: "Connection limits A", URL: "https://a.example/", Snippet: long},
		{Title: "Connection limits B", URL: "https://b.example/", Snippet: long},
	}
	tests := []struct {
		name        string
		rc          grounding.RoundConfig
		maxPer      int
		wantOutToks int
	}{
		{"low", grounding.RoundConfig{ContextScale: grounding.ScaleLow}, 300, 0},
		{"medium", grounding.RoundConfig{}, 1000, 0},
		{"high", grounding.RoundConfig{ContextScale: grounding.ScaleHigh}, 4000, 0},
		{"budget", grounding.RoundConfig{ContextScale: grounding.ScaleHigh, BudgetTokens: 600}, 700, 150},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := &fakeModel{gen: &grounding.Generation{Text: "Limits protect the server [1]."}}
			f := newFixture(t, model)
			f.search.results = ev
			tt.rc.Engine = grounding.EngineLocal
			if _, err := f.svc.Ground(t.Context(), grounding.GroundRequest{Text: "connection limits", Round: tt.rc}); err != nil {
				t.Fatal(err)
			}
			p := model.prompts[0]
			if p.MaxOutputTokens != tt.wantOutToks {
				t.Errorf("MaxOutputTokens = %d, want %d", p.MaxOutputTokens, tt.wantOutToks)
			}
			texts := sourceText(p)
			if len(texts) != 2 {
				t.Fatalf("found %d source texts in prompt:\n%s", len(texts), p.Turns[0].Parts[0])
			}
			for _, s := range texts {
				if n := utf8.RuneCountInString(s); n > tt.maxPer || n < tt.maxPer/2 {
					t.Errorf("source text of %d characters, want %d/2..%d", n, tt.maxPer, tt.maxPer)
				}
			}
			if tt.rc.BudgetTokens > 0 {
				total := utf8.RuneCountInString(p.System) + utf8.RuneCountInString(p.Turns[0].Parts[0])
				if total > (tt.rc.BudgetTokens-p.MaxOutputTokens)*4 {
					t.Errorf("prompt of %d characters exceeds the budget of %d tokens", total, tt.rc.BudgetTokens)
				}
			}
		})
	}
}

func TestGroundNative(t *testing.T) {
	text := "Postgres caps connections. PgBouncer pools them. Storms exhaust the limit."
	gen := &grounding.Generation{
		Text: text,
		Chunks: []grounding.WebChunk{
			{URI: "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AAA", Title: "postgresql.org"},
			{URI: "https://vertexaisearch.cloud.google.com/grounding-api-redirect/BBB", Title: "www.PgBouncer.org"},
			{URI: "https://blog.example.com/storms", Title: "Connection storms"},
			{URI: "https://vertexaisearch.cloud.google.com/grounding-api-redirect/DDD", Title: "wiki.example"},
		},
		Supports: []grounding.Support{
			{Start: 0, End: 26, Chunks: []int{0}},
			{Start: 27, End: 48, Chunks: []int{1, 5}},
			{Start: 49, End: 74, Chunks: []int{2, 3}},
		},
		SearchQueries: []string{"postgres too many clients", "pgbouncer"},
	}
	f := newFixture(t, &fakeModel{gen: gen})
	m, err := f.svc.Ground(t.Context(), grounding.GroundRequest{Text: alert, Round: grounding.RoundConfig{Engine: grounding.EngineNative}})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.search.requests) != 0 {
		t.Errorf("engine native asked the search service: %+v", f.search.requests)
	}
	if m.Engine != grounding.EngineNative || m.Context.Query != "postgres too many clients; pgbouncer" {
		t.Errorf("engine %v query %q", m.Engine, m.Context.Query)
	}
	type cite struct {
		URL, Domain string
		Start, End  int
		Source      int
	}
	var got []cite
	for _, c := range m.Citations {
		got = append(got, cite{c.URL, c.Domain, c.StartIndex, c.EndIndex, c.SourceIndex})
	}
	want := []cite{
		{gen.Chunks[0].URI, "postgresql.org", 0, 26, 1},
		{gen.Chunks[1].URI, "pgbouncer.org", 27, 48, 2},
		{gen.Chunks[2].URI, "blog.example.com", 49, 74, 3},
		// Chunk 3 is over the three-source cap; chunk 5 does not exist.
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("citations (-want +got):\n%s", diff)
	}
	if m.Status != grounding.StatusNeedsReview || !strings.Contains(m.Error, "1 citation") {
		t.Errorf("status %v error %q; want needs review for the invented chunk", m.Status, m.Error)
	}
	// No provider scores: every citation takes the coverage, which is 1.
	if m.Confidence == nil || *m.Confidence != 1 {
		t.Errorf("confidence = %v, want 1", m.Confidence)
	}
	checkCitations(t, m)
	checkStored(t, f, m)
}

func TestGroundNativeOfflineFallsBack(t *testing.T) {
	f := newFixture(t, nil)
	m, err := f.svc.Ground(t.Context(), grounding.GroundRequest{Text: alert, Round: grounding.RoundConfig{Engine: grounding.EngineNative}})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.search.requests) != 1 || f.search.requests[0].Engine != grounding.EngineAuto || m.Engine != grounding.EngineAuto {
		t.Errorf("requests %+v engine %v; want one auto search", f.search.requests, m.Engine)
	}
}

func TestDeriveQuery(t *testing.T) {
	offline := newFixture(t, nil)
	if q := offline.svc.DeriveQuery(t.Context(), alert); q.Method != "keywords" || q.Query == "" || strings.Contains(q.Query, "10.0.3.7") {
		t.Errorf("offline DeriveQuery = %+v", q)
	}
	good := newFixture(t, &fakeModel{derive: grounding.DerivedQuery{Query: " postgres  too many clients ", Terms: []string{"postgres"}}})
	if q := good.svc.DeriveQuery(t.Context(), alert); q.Method != "gemini" || q.Query != "postgres too many clients" {
		t.Errorf("model DeriveQuery = %+v", q)
	}
	failing := newFixture(t, &fakeModel{err: errors.New("boom")})
	if q := failing.svc.DeriveQuery(t.Context(), alert); q.Method != "keywords" || q.Query == "" {
		t.Errorf("fallback DeriveQuery = %+v", q)
	}
	if q := offline.svc.DeriveQuery(t.Context(), "the and of"); q.Query == "" {
		t.Errorf("DeriveQuery of stop words = %+v, want the text's words", q)
	}
}

func TestReview(t *testing.T) {
	tests := []struct {
		from, to grounding.Status
		ok       bool
	}{
		{grounding.StatusProcessed, grounding.StatusApproved, true},
		{grounding.StatusNeedsReview, grounding.StatusRejected, true},
		{grounding.StatusApproved, grounding.StatusNeedsReview, true},
		{grounding.StatusFailed, grounding.StatusApproved, false},
		{grounding.StatusApproved, grounding.StatusApproved, false},
		{grounding.StatusProcessed, grounding.StatusFailed, false},
	}
	for _, tt := range tests {
		if got := grounding.CanTransition(tt.from, tt.to); got != tt.ok {
			t.Errorf("CanTransition(%v, %v) = %v, want %v", tt.from, tt.to, got, tt.ok)
		}
	}

	f := newFixture(t, nil)
	m, err := f.svc.Ground(t.Context(), grounding.GroundRequest{Text: alert})
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.svc.Review(t.Context(), m.ID, grounding.ReviewRequest{ReviewerID: "alice", Notes: "ok", Status: grounding.StatusApproved})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != grounding.StatusApproved || got.Review == nil || got.Review.PreviousStatus != m.Status || got.Review.ReviewerID != "alice" {
		t.Errorf("reviewed = status %v review %+v", got.Status, got.Review)
	}
	if _, err := f.svc.Review(t.Context(), m.ID, grounding.ReviewRequest{ReviewerID: "bob", Status: grounding.StatusApproved}); !errors.Is(err, grounding.ErrInvalidTransition) {
		t.Errorf("approving twice: error %v, want ErrInvalidTransition", err)
	}
}

func TestBuildChatPromptErrors(t *testing.T) {
	hist := []grounding.ChatMsg{
		{ID: "1", Speaker: "Ana", Parts: []grounding.ChatPart{{Text: "hi"}}},
		{ID: "2", IsAgent: true, Parts: []grounding.ChatPart{{Text: "hello"}}},
	}
	for target, want := range map[string]error{"9": grounding.ErrTargetNotFound, "2": grounding.ErrTargetIsAgent} {
		if _, err := grounding.BuildChatPrompt(grounding.ConverseRequest{History: hist, TargetID: target}, time.Now(), "n0nce"); !errors.Is(err, want) {
			t.Errorf("target %s: error %v, want %v", target, err, want)
		}
	}
}

func TestConverseOffline(t *testing.T) {
	f := newFixture(t, nil)
	reply, err := f.svc.Converse(t.Context(), grounding.ConverseRequest{
		History: []grounding.ChatMsg{
			{ID: "1", Speaker: "Ana", Parts: []grounding.ChatPart{{Text: "Why does Postgres say too many clients already? max_connections?"}}},
		},
		TargetID: "1",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(reply.Text, grounding.OfflineLabel) || reply.Model != grounding.MethodExtractive || len(reply.Citations) == 0 {
		t.Fatalf("reply = %+v; want a labelled extractive answer with citations", reply)
	}
	// Spans are the snippets, and the Sources list names exactly the
	// cited sources (not the banana page relevance dropped).
	checkReplyCitations(t, reply)
	if strings.Contains(reply.Text, "other.example.com") {
		t.Errorf("the reply lists a source relevance dropped:\n%s", reply.Text)
	}
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := grounding.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.ProviderAttemptFailed(429, false)
	m.ProviderAttemptFailed(429, false)
	m.ProviderAttemptFailed(0, true)
	m.ObserveRound(grounding.EngineLocal, grounding.StatusProcessed, "extractive", time.Millisecond)
	want := `
# HELP grounding_provider_errors_total Failed model provider requests by HTTP status code, timeout or transport.
# TYPE grounding_provider_errors_total counter
grounding_provider_errors_total{code="429"} 2
grounding_provider_errors_total{code="timeout"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "grounding_provider_errors_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(reg, "grounding_round_duration_seconds"); n != 1 {
		t.Errorf("%d round series, want 1", n)
	}
	var nilMetrics *grounding.Metrics
	nilMetrics.ProviderAttemptFailed(500, false) // a nil *Metrics records nothing
}

// TestSlowModelLeavesTimeToAnswer checks that the model's calls end before
// the caller's deadline, with time kept back for the offline fallback and
// the answer: a slow provider must cost the caller a worse answer, not its
// own DeadlineExceeded.
func TestSlowModelLeavesTimeToAnswer(t *testing.T) {
	model := &fakeModel{block: true}
	f := newFixture(t, model)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	callerDeadline, _ := ctx.Deadline()

	q := f.svc.DeriveQuery(ctx, alert)
	if q.Method == "gemini" || q.Query == "" {
		t.Errorf("DeriveQuery with a model that never answers = %+v, want the offline query", q)
	}
	m, err := f.svc.Ground(ctx, grounding.GroundRequest{Text: alert})
	if err != nil {
		t.Fatalf("Ground: %v", err)
	}
	if m.Status != grounding.StatusFailed {
		t.Errorf("Ground with a model that never answers: status %v, want failed", m.Status)
	}
	if ctx.Err() != nil {
		t.Errorf("the caller's deadline passed before both calls answered")
	}
	model.mu.Lock()
	defer model.mu.Unlock()
	if len(model.deadlines) != 2 {
		t.Fatalf("model called %d times, want 2 (derive, generate)", len(model.deadlines))
	}
	for i, dl := range model.deadlines {
		if dl.IsZero() || callerDeadline.Sub(dl) < 100*time.Millisecond {
			t.Errorf("model call %d had deadline %v, want at least 100ms before the caller's %v", i, dl, callerDeadline)
		}
	}
}

// TestQueryTimeoutBoundsTheModel checks GROUNDING_QUERY_TIMEOUT: without a
// caller deadline the model still gets only QueryTimeout.
func TestQueryTimeoutBoundsTheModel(t *testing.T) {
	model := &fakeModel{block: true}
	f := newFixture(t, model)
	svc, err := grounding.New(grounding.Options{Searcher: f.search, Store: f.store, Logger: discard, Model: model, QueryTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	q := svc.DeriveQuery(t.Context(), alert)
	if q.Query == "" {
		t.Fatalf("DeriveQuery = %+v, want the offline query", q)
	}
	model.mu.Lock()
	defer model.mu.Unlock()
	if dl := model.deadlines[0]; dl.IsZero() || dl.After(start.Add(time.Second)) {
		t.Errorf("model deadline %v, want about 50ms after %v", dl, start)
	}
}
