package search_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/services/search/internal/search"
)

// fakeEngine answers from a function and counts calls.
type fakeEngine struct {
	name   string
	calls  atomic.Int64
	search func(ctx context.Context, q search.Query) ([]search.Result, error)
	health error
	last   atomic.Pointer[search.Query]
}

func (f *fakeEngine) Name() string { return f.name }

func (f *fakeEngine) Search(ctx context.Context, q search.Query) ([]search.Result, error) {
	f.calls.Add(1)
	f.last.Store(&q)
	return f.search(ctx, q)
}

type healthyEngine struct{ *fakeEngine }

func (h healthyEngine) Healthy(context.Context) error { return h.health }

func answering(name string, results ...search.Result) *fakeEngine {
	return &fakeEngine{name: name, search: func(context.Context, search.Query) ([]search.Result, error) {
		return results, nil
	}}
}

func failing(name string, err error) *fakeEngine {
	return &fakeEngine{name: name, search: func(context.Context, search.Query) ([]search.Result, error) {
		return nil, err
	}}
}

func result(n int) search.Result {
	return search.Result{
		Title:   fmt.Sprintf("Title %d", n),
		Snippet: fmt.Sprintf("Snippet %d", n),
		URL:     fmt.Sprintf("https://example.com/%d", n),
		Score:   float64(100 - n),
	}
}

func newService(t *testing.T, cfg search.Config) *search.Service {
	t.Helper()
	s, err := search.NewService(cfg)
	if err != nil {
		t.Fatalf("NewService() error = %v", err)
	}
	return s
}

func TestSearchRejectsBadInput(t *testing.T) {
	s := newService(t, search.Config{Engines: []search.Engine{answering("local", result(1))}})
	tests := []struct {
		name      string
		q         search.Query
		wantField string
		wantText  string
	}{
		{"empty", search.Query{Text: "", MaxResults: 3}, "query", "empty"},
		{"whitespace", search.Query{Text: " \t\n\u00a0 ", MaxResults: 3}, "query", "empty"},
		{"too long", search.Query{Text: strings.Repeat("é", 1001), MaxResults: 3}, "query", "1001 characters long; the limit is 1000"},
		{"invalid utf-8", search.Query{Text: "a\xffb", MaxResults: 3}, "query", "UTF-8"},
		{"negative max", search.Query{Text: "q", MaxResults: -1}, "max_results", "between 0 and 10"},
		{"max too big", search.Query{Text: "q", MaxResults: 11}, "max_results", "got 11"},
		{"bad allowed domain", search.Query{Text: "q", MaxResults: 3, AllowedDomains: []string{"example.com", "not a domain"}}, "allowed_domains[1]", "not a host name"},
		{"empty blocked domain", search.Query{Text: "q", MaxResults: 3, BlockedDomains: []string{""}}, "blocked_domains[0]", "empty"},
		{"negative max age", search.Query{Text: "q", MaxResults: 3, MaxAge: -time.Hour}, "max_age", "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Search(t.Context(), tt.q)
			var ia *search.InvalidArgumentError
			if !errors.Is(err, search.ErrInvalidQuery) || !errors.As(err, &ia) {
				t.Fatalf("Search() error = %v, want an InvalidArgumentError", err)
			}
			if ia.Field != tt.wantField || !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("Search() error = %q (field %q), want field %q and text %q", err, ia.Field, tt.wantField, tt.wantText)
			}
		})
	}
}

func TestSearchAcceptsQueryAtLimit(t *testing.T) {
	e := answering("local", result(1))
	s := newService(t, search.Config{Engines: []search.Engine{e}})
	if _, err := s.Search(t.Context(), search.Query{Text: strings.Repeat("é", 1000), MaxResults: 1}); err != nil {
		t.Errorf("Search(1000 characters) error = %v, want nil", err)
	}
}

func TestSearchEngineSelectionErrors(t *testing.T) {
	s := newService(t, search.Config{Engines: []search.Engine{answering("local", result(1))}})
	tests := []struct {
		engine   string
		wantIs   error
		wantText string
	}{
		{"exa", search.ErrEngineNotConfigured, "engine exa is not configured: set EXA_API_KEY"},
		{"Brave", search.ErrEngineNotConfigured, "engine brave is not configured: set BRAVE_API_KEY"},
		{"searxng", search.ErrEngineNotConfigured, "set SEARXNG_URL"},
		{"tavily", search.ErrEngineNotConfigured, "set TAVILY_API_KEY"},
		{"google", search.ErrUnknownEngine, `unknown engine "google": known engines are auto, searxng, exa, tavily, brave, local`},
	}
	for _, tt := range tests {
		_, err := s.Search(t.Context(), search.Query{Text: "q", MaxResults: 1, Engine: tt.engine})
		if !errors.Is(err, tt.wantIs) || err.Error() != tt.wantText && !strings.Contains(err.Error(), tt.wantText) {
			t.Errorf("Search(engine %q) error = %v, want %v containing %q", tt.engine, err, tt.wantIs, tt.wantText)
		}
	}

	empty := newService(t, search.Config{})
	_, err := empty.Search(t.Context(), search.Query{Text: "q", MaxResults: 1})
	if !errors.Is(err, search.ErrEngineNotConfigured) {
		t.Errorf("Search(auto, no engines) error = %v, want ErrEngineNotConfigured", err)
	}
}

func TestSearchZeroResultsCallsNoEngine(t *testing.T) {
	e := answering("local", result(1))
	s := newService(t, search.Config{Engines: []search.Engine{e}})

	got, err := s.Search(t.Context(), search.Query{Text: "anything", MaxResults: 0})
	if err != nil {
		t.Fatalf("Search() error = %v", err)
	}
	if diff := cmp.Diff(search.Response{}, got); diff != "" {
		t.Errorf("Search() mismatch (-want +got):\n%s", diff)
	}
	if n := e.calls.Load(); n != 0 {
		t.Errorf("engine calls = %d, want 0", n)
	}
}

func TestSearchCleansFiltersAndDeduplicates(t *testing.T) {
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	raw := []search.Result{
		{Title: "  Go \n Blog ", Snippet: "All\tabout   Go.", URL: "https://www.Go.dev/blog/?utm_source=x#top", Score: 9},
		{Title: "Go Blog again", Snippet: "Same page", URL: "https://www.go.dev/blog", Score: 8},            // duplicate
		{Title: "", Snippet: "no title", URL: "https://go.dev/a", Score: 7},                                 // dropped
		{Title: "No snippet", Snippet: "  ", URL: "https://go.dev/b", Score: 6},                             // dropped
		{Title: "FTP", Snippet: "wrong scheme", URL: "ftp://go.dev/c", Score: 5},                            // dropped
		{Title: "Relative", Snippet: "no host", URL: "/d", Score: 4},                                        // dropped
		{Title: "Blocked", Snippet: "spam", URL: "https://ads.spam.example/e", Score: 3},                    // filtered
		{Title: "Old", Snippet: "stale", URL: "https://pkg.go.dev/old", PublishedAt: now.AddDate(-2, 0, 0)}, // filtered
		{Title: "Elsewhere", Snippet: "not allowed", URL: "https://golang.org.evil.net/f", Score: 2},        // filtered
		{Title: "Pkg", Snippet: "Packages", URL: "https://pkg.go.dev/net/http", Score: 1, PublishedAt: now}, // kept
		{Title: "Third", Snippet: "One too many", URL: "https://go.dev/third", Score: 0.5},                  // over max
		{Title: "Bad\xffUTF", Snippet: "ctrl\x00chars", URL: "https://go.dev/utf", Score: 0.1},              // over max
	}
	e := answering("exa", raw...)
	s := newService(t, search.Config{Engines: []search.Engine{e}, Now: func() time.Time { return now }})

	got, err := s.Search(t.Context(), search.Query{
		Text: "  golang \n blog ", MaxResults: 2, Engine: "exa",
		AllowedDomains: []string{"go.dev", "spam.example", "golang.org"},
		BlockedDomains: []string{"ADS.spam.example"},
		MaxAge:         365 * 24 * time.Hour,
	})
	if err != nil {
		t.Fatalf("Search() error = %v", err)
	}
	want := search.Response{
		Engine: "exa",
		Results: []search.Result{
			{Title: "Go Blog", Snippet: "All about Go.", URL: "https://www.go.dev/blog/", DisplayURL: "https://www.go.dev/blog/", SourceDomain: "go.dev", Score: 9},
			{Title: "Pkg", Snippet: "Packages", URL: "https://pkg.go.dev/net/http", DisplayURL: "https://pkg.go.dev/net/http", SourceDomain: "pkg.go.dev", Score: 1, PublishedAt: now},
		},
		Dropped:    4,
		Filtered:   3,
		Duplicates: 1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Search() mismatch (-want +got):\n%s", diff)
	}
	q := e.last.Load()
	wantQ := search.Query{
		Text: "golang blog", MaxResults: 6, Engine: "exa",
		AllowedDomains: []string{"go.dev", "golang.org", "spam.example"},
		BlockedDomains: []string{"ads.spam.example"},
		MaxAge:         365 * 24 * time.Hour,
	}
	if diff := cmp.Diff(wantQ, *q); diff != "" {
		t.Errorf("engine query mismatch (-want +got):\n%s", diff)
	}
}

func TestSearchAutoFallsBack(t *testing.T) {
	searxng := failing("searxng", errors.New("HTTP 502"))
	exa := failing("exa", context.DeadlineExceeded)
	brave := answering("brave", result(1))
	local := answering("local", result(2))
	s := newService(t, search.Config{Engines: []search.Engine{local, brave, exa, searxng}})

	got, err := s.Search(t.Context(), search.Query{Text: "q", MaxResults: 3})
	if err != nil {
		t.Fatalf("Search() error = %v", err)
	}
	if got.Engine != "brave" || !cmp.Equal(got.FallbackFrom, []string{"searxng", "exa"}) {
		t.Errorf("Search() answered by %q after %v, want brave after [searxng exa]", got.Engine, got.FallbackFrom)
	}
	if n := local.calls.Load(); n != 0 {
		t.Errorf("local engine calls = %d, want 0", n)
	}
}

func TestSearchCustomAutoOrder(t *testing.T) {
	exa := answering("exa", result(1))
	local := answering("local", result(2))
	s := newService(t, search.Config{Engines: []search.Engine{exa, local}, AutoOrder: []string{"local", "exa"}})
	got, err := s.Search(t.Context(), search.Query{Text: "q", MaxResults: 1, Engine: "AUTO"})
	if err != nil || got.Engine != "local" {
		t.Errorf("Search() = %q, %v; want local", got.Engine, err)
	}
}

func TestSearchEngineErrors(t *testing.T) {
	tests := []struct {
		name    string
		engines []search.Engine
		engine  string
		want    string
		wantIs  error
	}{
		{
			name:    "all auto engines fail",
			engines: []search.Engine{failing("exa", errors.New("exa: HTTP 401: Invalid API key")), failing("local", context.DeadlineExceeded)},
			want:    "search engine local failed after falling back from exa: exa: exa: HTTP 401: Invalid API key; local: context deadline exceeded",
			wantIs:  context.DeadlineExceeded,
		},
		{
			name:    "named engine fails",
			engines: []search.Engine{failing("exa", errors.New("boom")), answering("local", result(1))},
			engine:  "exa",
			want:    "search engine exa failed (no fallback tried: engine exa was requested by name): exa: boom",
		},
		{
			name:    "only engine fails",
			engines: []search.Engine{failing("tavily", errors.New("boom"))},
			want:    "search engine tavily failed (no fallback tried: no other engine is configured): tavily: boom",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newService(t, search.Config{Engines: tt.engines})
			_, err := s.Search(t.Context(), search.Query{Text: "q", MaxResults: 1, Engine: tt.engine})
			var ee *search.EngineError
			if !errors.As(err, &ee) {
				t.Fatalf("Search() error = %v, want an EngineError", err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Search() error = %q, want %q", got, tt.want)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.wantIs)
			}
		})
	}
}

func TestSearchReturnsAtDeadlineWhenEngineHangs(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	// This engine ignores its context entirely: the Service alone must
	// stop the caller from waiting past the deadline.
	hung := &fakeEngine{name: "searxng", search: func(context.Context, search.Query) ([]search.Result, error) {
		<-release
		return nil, errors.New("too late")
	}}
	s := newService(t, search.Config{Engines: []search.Engine{hung, answering("local", result(1))}, EngineTimeout: time.Hour})

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := s.Search(ctx, search.Query{Text: "q", MaxResults: 1})
	var ee *search.EngineError
	if !errors.As(err, &ee) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Search() error = %v, want an EngineError wrapping DeadlineExceeded", err)
	}
	if ee.Engine != "searxng" || ee.FallbackTried {
		t.Errorf("EngineError = %+v, want engine searxng without fallback", ee)
	}
	if !strings.Contains(err.Error(), "searxng") || !strings.Contains(err.Error(), "no fallback tried") {
		t.Errorf("error %q does not name the engine and the missing fallback", err)
	}
}

func TestSearchFallsBackWhenEngineTimesOut(t *testing.T) {
	slow := &fakeEngine{name: "exa", search: func(ctx context.Context, q search.Query) ([]search.Result, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	s := newService(t, search.Config{Engines: []search.Engine{slow, answering("local", result(1))}, EngineTimeout: 20 * time.Millisecond})
	got, err := s.Search(t.Context(), search.Query{Text: "q", MaxResults: 1})
	if err != nil {
		t.Fatalf("Search() error = %v", err)
	}
	if got.Engine != "local" || !cmp.Equal(got.FallbackFrom, []string{"exa"}) {
		t.Errorf("Search() answered by %q after %v, want local after [exa]", got.Engine, got.FallbackFrom)
	}
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestSearchCache(t *testing.T) {
	clk := &clock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	e := answering("local", result(1), result(2))
	s := newService(t, search.Config{Engines: []search.Engine{e}, CacheTTL: time.Minute, CacheSize: 2, Now: clk.Now})
	q := search.Query{Text: "Disk Full", MaxResults: 2}

	first, err := s.Search(t.Context(), q)
	if err != nil || first.Cached {
		t.Fatalf("first Search() = cached %v, %v; want uncached", first.Cached, err)
	}
	// Same query modulo case and whitespace, same filters: a hit.
	second, err := s.Search(t.Context(), search.Query{Text: " disk   full ", MaxResults: 2, Engine: "auto"})
	if err != nil || !second.Cached {
		t.Fatalf("second Search() = cached %v, %v; want cached", second.Cached, err)
	}
	second.Cached = false
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("cached response differs (-first +second):\n%s", diff)
	}
	// Callers may modify what they get without corrupting the cache.
	second.Results[0].Title = "changed"
	if third, _ := s.Search(t.Context(), q); third.Results[0].Title != "Title 1" {
		t.Errorf("cache entry was modified through a returned response")
	}
	// Different filters or max results: a miss.
	if r, _ := s.Search(t.Context(), search.Query{Text: "disk full", MaxResults: 2, BlockedDomains: []string{"x.org"}}); r.Cached {
		t.Errorf("Search() with other filters was served from the cache")
	}
	if n := e.calls.Load(); n != 2 {
		t.Errorf("engine calls = %d, want 2", n)
	}
	// Expired entries are fetched again.
	clk.Advance(time.Minute)
	if r, _ := s.Search(t.Context(), q); r.Cached {
		t.Errorf("Search() after the TTL was served from the cache")
	}
	// A third distinct key evicts the least recently used one.
	_, _ = s.Search(t.Context(), search.Query{Text: "other", MaxResults: 1})
	got := s.Stats()
	want := search.Stats{CacheHits: 2, CacheMisses: 4, EngineCalls: 4, CacheEntries: 2, CacheEvictions: 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Stats() mismatch (-want +got):\n%s", diff)
	}
}

func TestSearchCoalescesConcurrentMisses(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	e := &fakeEngine{name: "local", search: func(context.Context, search.Query) ([]search.Result, error) {
		close(started)
		<-release
		return []search.Result{result(1)}, nil
	}}
	s := newService(t, search.Config{Engines: []search.Engine{e}})

	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			r, err := s.Search(t.Context(), search.Query{Text: "storm", MaxResults: 1})
			if err == nil && len(r.Results) != 1 {
				err = fmt.Errorf("got %d results", len(r.Results))
			}
			errs <- err
		})
	}
	<-started
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Search() error = %v", err)
		}
	}
	if got := e.calls.Load(); got != 1 {
		t.Errorf("engine calls = %d, want 1", got)
	}
	st := s.Stats()
	if st.CacheHits+st.CacheMisses != n || st.EngineCalls != 1 {
		t.Errorf("Stats() = %+v, want %d lookups and 1 engine call", st, n)
	}
}

func TestSearchDoesNotCacheErrors(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	e := &fakeEngine{name: "local", search: func(context.Context, search.Query) ([]search.Result, error) {
		if fail.Load() {
			return nil, errors.New("down")
		}
		return []search.Result{result(1)}, nil
	}}
	s := newService(t, search.Config{Engines: []search.Engine{e}})
	q := search.Query{Text: "q", MaxResults: 1}
	if _, err := s.Search(t.Context(), q); err == nil {
		t.Fatal("Search() error = nil, want the engine error")
	}
	fail.Store(false)
	if r, err := s.Search(t.Context(), q); err != nil || r.Cached || len(r.Results) != 1 {
		t.Errorf("Search() after recovery = %+v, %v; want a fresh result", r, err)
	}
}

func TestEngines(t *testing.T) {
	exa := failing("exa", errors.New("HTTP 503"))
	searxng := healthyEngine{&fakeEngine{name: "searxng", health: errors.New("GET /healthz: 502")}}
	local := answering("local", result(1))
	custom := answering("mirror", result(1))
	s := newService(t, search.Config{Engines: []search.Engine{exa, searxng, local, custom}})
	_, _ = s.Search(t.Context(), search.Query{Text: "q", MaxResults: 1, Engine: "exa"})

	got := s.Engines(t.Context())
	want := []search.EngineStatus{
		{Name: "searxng", Configured: true, EnvVar: "SEARXNG_URL", Detail: "GET /healthz: 502", AutoRank: 1},
		{Name: "exa", Configured: true, EnvVar: "EXA_API_KEY", Detail: "last call failed: HTTP 503", AutoRank: 2},
		{Name: "tavily", EnvVar: "TAVILY_API_KEY", Detail: "not configured: set TAVILY_API_KEY"},
		{Name: "brave", EnvVar: "BRAVE_API_KEY", Detail: "not configured: set BRAVE_API_KEY"},
		{Name: "local", Configured: true, EnvVar: "DATA_DIR", Healthy: true, AutoRank: 3},
		{Name: "mirror", Configured: true, Healthy: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Engines() mismatch (-want +got):\n%s", diff)
	}
}

type fakeIndexer struct{ docs []search.Document }

func (f *fakeIndexer) Upsert(_ context.Context, docs []search.Document) (search.IndexResult, error) {
	f.docs = append(f.docs, docs...)
	return search.IndexResult{Indexed: len(docs)}, nil
}

func TestIndexDocuments(t *testing.T) {
	noIndex := newService(t, search.Config{})
	if _, err := noIndex.IndexDocuments(t.Context(), []search.Document{{URL: "https://a.example"}}); !errors.Is(err, search.ErrEngineNotConfigured) {
		t.Errorf("IndexDocuments() without indexer error = %v, want ErrEngineNotConfigured", err)
	}

	idx := &fakeIndexer{}
	e := answering("local", result(1))
	s := newService(t, search.Config{Engines: []search.Engine{e}, Indexer: idx})
	if _, err := s.IndexDocuments(t.Context(), nil); !errors.Is(err, search.ErrInvalidQuery) {
		t.Errorf("IndexDocuments(nil) error = %v, want ErrInvalidQuery", err)
	}
	q := search.Query{Text: "q", MaxResults: 1}
	_, _ = s.Search(t.Context(), q)
	got, err := s.IndexDocuments(t.Context(), []search.Document{{URL: "https://a.example", Text: "t"}})
	if err != nil || got.Indexed != 1 {
		t.Fatalf("IndexDocuments() = %+v, %v; want 1 indexed", got, err)
	}
	// Indexing invalidates cached results so new documents are findable.
	if r, _ := s.Search(t.Context(), q); r.Cached {
		t.Errorf("Search() after IndexDocuments was served from the cache")
	}
}

func TestNewServiceRejectsDuplicateEngines(t *testing.T) {
	_, err := search.NewService(search.Config{Engines: []search.Engine{answering("exa"), answering("exa")}})
	if err == nil {
		t.Error("NewService() error = nil, want an error for a duplicate engine")
	}
}

// TestSearchTreatsIRIAndEncodedFormAsOne checks that results carry the
// ASCII form in URL and the readable one in DisplayURL, that an IRI and its
// percent-encoded form are one result, and that media types and icons are
// cleaned.
func TestSearchTreatsIRIAndEncodedFormAsOne(t *testing.T) {
	raw := []search.Result{
		{Title: "Überwachung", Snippet: "IRI form", URL: "https://de.wikipedia.org/wiki/Überwachung_(Informatik)", Score: 3,
			MimeType: "text/html; charset=UTF-8", FaviconURL: "/static/favicon/wikipedia.ico"},
		{Title: "Überwachung", Snippet: "encoded form", URL: "https://de.wikipedia.org/wiki/%C3%9Cberwachung_(Informatik)", Score: 2},
		{Title: "Bücher", Snippet: "IDN host", URL: "https://BÜCHER.example/", Score: 1, MimeType: "nonsense", FaviconURL: "data:image/png;base64,AA"},
		{Title: "Bücher", Snippet: "punycode host", URL: "https://xn--bcher-kva.example", Score: 0.5},
	}
	s := newService(t, search.Config{Engines: []search.Engine{answering("exa", raw...)}})
	got, err := s.Search(t.Context(), search.Query{Text: "überwachung", MaxResults: 5, Engine: "exa"})
	if err != nil {
		t.Fatalf("Search() error = %v", err)
	}
	want := search.Response{
		Engine: "exa",
		Results: []search.Result{
			{Title: "Überwachung", Snippet: "IRI form", URL: "https://de.wikipedia.org/wiki/%C3%9Cberwachung_(Informatik)",
				DisplayURL: "https://de.wikipedia.org/wiki/Überwachung_(Informatik)", SourceDomain: "de.wikipedia.org", Score: 3,
				MimeType: "text/html", FaviconURL: "https://de.wikipedia.org/static/favicon/wikipedia.ico"},
			{Title: "Bücher", Snippet: "IDN host", URL: "https://xn--bcher-kva.example/", DisplayURL: "https://bücher.example/",
				SourceDomain: "xn--bcher-kva.example", Score: 1},
		},
		Duplicates: 2,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Search() mismatch (-want +got):\n%s", diff)
	}
}
