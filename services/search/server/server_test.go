package server

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/groundcrew/groundcrew/platform/httpretry"
	"github.com/groundcrew/groundcrew/platform/telemetry"
	"github.com/groundcrew/groundcrew/services/search/internal/enginehttp"
	"github.com/groundcrew/groundcrew/services/search/internal/search"
)

// TestWebEnginesCountRequestsPerEngine configures every web engine against
// one fake provider that rate-limits each engine's first request and
// refuses the retry: each engine's attempts are counted under its own
// name.
func TestWebEnginesCountRequestsPerEngine(t *testing.T) {
	var (
		mu   sync.Mutex
		seen = map[string]bool{}
	)
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		first := !seen[r.URL.Path]
		seen[r.URL.Path] = true
		mu.Unlock()
		if first {
			// Retry at once, so the test does not wait for a backoff.
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(fake.Close)

	reg := prometheus.NewPedanticRegistry()
	providers, err := telemetry.NewProviderMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		// Each engine calls its own path on the fake, so first requests
		// are told apart.
		SearxngURL: fake.URL + "/searxng",
		ExaAPIKey:  "exa-key", ExaBaseURL: fake.URL + "/exa",
		TavilyAPIKey: "tavily-key", TavilyBaseURL: fake.URL + "/tavily",
		BraveAPIKey: "brave-key", BraveBaseURL: fake.URL + "/brave",
	}
	engines, err := webEngines(cfg, func(engine string) *httpretry.Client {
		return enginehttp.NewRetryClient(providers.Client(nil, engine, 0))
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range engines {
		names = append(names, e.Name())
		if _, err := e.Search(t.Context(), search.Query{Text: "too many clients", MaxResults: 3}); err == nil {
			t.Errorf("%s: Search succeeded against a provider answering 401", e.Name())
		}
	}
	if got, want := strings.Join(names, ","), "searxng,exa,tavily,brave"; got != want {
		t.Fatalf("engines = %s, want %s", got, want)
	}

	var want strings.Builder
	want.WriteString("# HELP provider_requests_total HTTP requests to providers (every attempt), by provider and HTTP status code, timeout, canceled or transport.\n")
	want.WriteString("# TYPE provider_requests_total counter\n")
	for _, code := range []string{"401", "429"} {
		for _, name := range []string{"brave", "exa", "searxng", "tavily"} {
			want.WriteString(`provider_requests_total{code="` + code + `",provider="` + name + `"} 1` + "\n")
		}
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want.String()), "provider_requests_total"); err != nil {
		t.Error(err)
	}
}

// TestWebEnginesDoNotFollowRedirectsToAnotherHost points every web engine
// at a provider that redirects (307, which resends the body) to a second
// loopback server: no engine may reach it, so its API key stays home.
func TestWebEnginesDoNotFollowRedirectsToAnotherHost(t *testing.T) {
	var (
		mu        sync.Mutex
		leaked    []string
		elsewhere = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			leaked = append(leaked, r.URL.Path+" "+r.Header.Get("X-Api-Key")+r.Header.Get("X-Subscription-Token")+r.Header.Get("Authorization"))
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"results":[]}`))
		}))
	)
	t.Cleanup(elsewhere.Close)
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	t.Cleanup(provider.Close)

	cfg := Config{
		SearxngURL: provider.URL + "/searxng",
		ExaAPIKey:  "exa-key", ExaBaseURL: provider.URL + "/exa",
		TavilyAPIKey: "tavily-key", TavilyBaseURL: provider.URL + "/tavily",
		BraveAPIKey: "brave-key", BraveBaseURL: provider.URL + "/brave",
	}
	engines, err := webEngines(cfg, func(string) *httpretry.Client {
		return enginehttp.NewRetryClient(provider.Client())
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(engines) != 4 {
		t.Fatalf("%d engines configured, want 4", len(engines))
	}
	for _, e := range engines {
		_, err := e.Search(t.Context(), search.Query{Text: "where does my key go", MaxResults: 3})
		var se *enginehttp.StatusError
		if !errors.As(err, &se) || se.StatusCode != http.StatusTemporaryRedirect || !strings.Contains(se.Message, "not followed") {
			t.Errorf("%s: Search error = %v, want a 307 StatusError saying the redirect was not followed", e.Name(), err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(leaked) != 0 {
		t.Errorf("requests reached the other host: %q", leaked)
	}
}

func TestIndexDatabaseURL(t *testing.T) {
	for _, tt := range []struct {
		cfg           Config
		url, variable string
	}{
		{Config{}, "", ""},
		{Config{DatabaseURL: "postgres://shared/db"}, "postgres://shared/db", "DATABASE_URL"},
		{Config{DatabaseURL: "postgres://shared/db", SearchDatabaseURL: "postgres://search/db"}, "postgres://search/db", "SEARCH_DATABASE_URL"},
	} {
		if url, variable := tt.cfg.IndexDatabaseURL(); url != tt.url || variable != tt.variable {
			t.Errorf("IndexDatabaseURL() = %q, %q; want %q, %q", url, variable, tt.url, tt.variable)
		}
	}
}

func TestOpenIndexRefusesOtherDatabases(t *testing.T) {
	_, _, err := openIndex(t.Context(), Config{SearchDatabaseURL: "sqlite:///tmp/x.db"}, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "SEARCH_DATABASE_URL") || !strings.Contains(err.Error(), "PostgreSQL") {
		t.Errorf("openIndex() error = %v, want one naming SEARCH_DATABASE_URL and PostgreSQL", err)
	}
}
