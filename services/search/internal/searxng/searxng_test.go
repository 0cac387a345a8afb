package searxng_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/services/search/internal/enginehttp"
	"github.com/groundcrew/groundcrew/services/search/internal/enginehttp/enginetest"
	"github.com/groundcrew/groundcrew/services/search/internal/search"
	"github.com/groundcrew/groundcrew/services/search/internal/searxng"
)

func newClient(t *testing.T, srv *enginetest.Server, sl *enginetest.Sleeps) *searxng.Client {
	t.Helper()
	c, err := searxng.New(searxng.Config{BaseURL: srv.URL + "/", Retry: enginetest.RetryClient(srv, sl), Language: "en"})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	return c
}

func TestSearch(t *testing.T) {
	srv := enginetest.NewServer(t, enginetest.Reply{Fixture: "search_success.json"})
	got, err := newClient(t, srv, &enginetest.Sleeps{}).Search(t.Context(), search.Query{
		Text: "nginx 502 bad gateway upstream prematurely closed", MaxResults: 10, MaxAge: 90 * 24 * time.Hour,
	})
	if err != nil {
		t.Fatalf("Search() error = %v", err)
	}
	want := []search.Result{
		{
			Title:   "Debugging | NGINX",
			Snippet: "When upstream prematurely closed connection while reading response header, check the upstream application logs & timeouts.",
			URL:     "https://www.nginx.com/resources/wiki/start/topics/tutorials/debugging/",
			Score:   7.5,
		},
		{
			Title:       "nginx: upstream prematurely closed connection while reading response header",
			Snippet:     "I'm getting 502 Bad Gateway errors from nginx in front of uwsgi. The error log says upstream prematurely closed connection.",
			URL:         "https://serverfault.com/questions/543999/nginx-upstream-prematurely-closed-connection",
			Score:       3,
			PublishedAt: time.Date(2013, 10, 4, 0, 0, 0, 0, time.UTC),
		},
		{
			Title:       "Intermittent 502 with keepalive upstreams",
			URL:         "https://github.com/nginx/nginx/issues/301",
			Score:       0.25,
			PublishedAt: time.Date(2024, 8, 19, 11, 22, 33, 0, time.UTC),
		},
		{
			Title:    "Upstream keepalive tuning (PDF)",
			Snippet:  "Tuning keepalive connections to upstream servers.",
			URL:      "https://nginx.org/resources/upstream-keepalive.pdf",
			Score:    0.2,
			MimeType: "application/pdf",
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Search() mismatch (-want +got):\n%s", diff)
	}
	req := srv.Request(0)
	wantQuery := map[string][]string{
		"q": {"nginx 502 bad gateway upstream prematurely closed"}, "format": {"json"}, "pageno": {"1"},
		"categories": {"general"}, "time_range": {"year"}, "language": {"en"},
	}
	if req.Method != "GET" || req.Path != "/search" {
		t.Errorf("request = %s %s, want GET /search", req.Method, req.Path)
	}
	if diff := cmp.Diff(wantQuery, map[string][]string(req.Query)); diff != "" {
		t.Errorf("query parameters mismatch (-want +got):\n%s", diff)
	}
}

func TestSearchTrimsToMaxResults(t *testing.T) {
	srv := enginetest.NewServer(t, enginetest.Reply{Fixture: "search_success.json"})
	got, err := newClient(t, srv, &enginetest.Sleeps{}).Search(t.Context(), search.Query{Text: "q", MaxResults: 2})
	if err != nil || len(got) != 2 {
		t.Errorf("Search() = %d results, %v; want 2", len(got), err)
	}
}

func TestSearchEmptyIsNotAnError(t *testing.T) {
	srv := enginetest.NewServer(t, enginetest.Reply{Fixture: "search_empty.json"})
	got, err := newClient(t, srv, &enginetest.Sleeps{}).Search(t.Context(), search.Query{Text: "q", MaxResults: 2})
	if err != nil || len(got) != 0 {
		t.Errorf("Search() = %v, %v; want no results and no error", got, err)
	}
}

func TestSearchRetriesAfter429(t *testing.T) {
	srv := enginetest.NewServer(t,
		enginetest.Reply{Status: 429, Header: map[string]string{"Retry-After": "1", "Content-Type": "text/plain"}, Fixture: "error_429.txt"},
		enginetest.Reply{Fixture: "search_success.json"},
	)
	sl := &enginetest.Sleeps{}
	got, err := newClient(t, srv, sl).Search(t.Context(), search.Query{Text: "q", MaxResults: 3})
	if err != nil {
		t.Fatalf("Search() error = %v", err)
	}
	if len(got) != 3 || srv.Calls() != 2 {
		t.Errorf("got %d results after %d calls, want 3 after 2", len(got), srv.Calls())
	}
	if diff := cmp.Diff([]time.Duration{time.Second}, sl.Waits()); diff != "" {
		t.Errorf("waits mismatch (-want +got):\n%s", diff)
	}
}

func TestSearchErrors(t *testing.T) {
	html := map[string]string{"Content-Type": "text/html; charset=utf-8"}
	tests := []struct {
		name      string
		reply     enginetest.Reply
		wantCalls int
		want      string
	}{
		{"500 retried then reported", enginetest.Reply{Status: 500, Header: html, Fixture: "error_500.html"}, 3,
			"searxng: HTTP 500 Internal Server Error: 500 Internal Server Error Internal Server Error The server encountered an internal error"},
		{"json format disabled", enginetest.Reply{Status: 403, Header: html, Fixture: "error_403.html"}, 1,
			"(enable the json format under search.formats in SearXNG's settings.yml)"},
		{"limiter without retry-after", enginetest.Reply{Status: 429, Header: map[string]string{"Content-Type": "text/plain"}, Fixture: "error_429.txt"}, 3,
			"searxng: HTTP 429 Too Many Requests: Too Many Requests (SearXNG's limiter blocked this client"},
		{"all upstream engines failed", enginetest.Reply{Fixture: "search_unresponsive.json"}, 1,
			"searxng: no results; upstream engines failed: google: timeout, duckduckgo: CAPTCHA, brave: too many requests"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := enginetest.NewServer(t, tt.reply)
			_, err := newClient(t, srv, &enginetest.Sleeps{}).Search(t.Context(), search.Query{Text: "q", MaxResults: 3})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Search() error = %v, want it to contain %q", err, tt.want)
			}
			if got := srv.Calls(); got != tt.wantCalls {
				t.Errorf("server calls = %d, want %d", got, tt.wantCalls)
			}
		})
	}
}

func TestSearchRespectsDeadline(t *testing.T) {
	srv := enginetest.NewServer(t, enginetest.Reply{Hang: true})
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := newClient(t, srv, &enginetest.Sleeps{}).Search(ctx, search.Query{Text: "q", MaxResults: 3})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "searxng: ") {
		t.Errorf("Search() error = %v, want searxng: … context deadline exceeded", err)
	}
}

func TestHealthy(t *testing.T) {
	ok := enginetest.NewServer(t, enginetest.Reply{Body: "OK", Header: map[string]string{"Content-Type": "text/plain"}})
	if err := newClient(t, ok, &enginetest.Sleeps{}).Healthy(t.Context()); err != nil {
		t.Errorf("Healthy() = %v, want nil", err)
	}
	if p := ok.Request(0).Path; p != "/healthz" {
		t.Errorf("health check path = %q, want /healthz", p)
	}
	down := enginetest.NewServer(t, enginetest.Reply{Status: 503, Body: "Service Unavailable"})
	err := newClient(t, down, &enginetest.Sleeps{}).Healthy(t.Context())
	if err == nil || down.Calls() != 1 {
		t.Errorf("Healthy() = %v after %d calls, want an error after 1", err, down.Calls())
	}
}

func TestNewValidatesURL(t *testing.T) {
	for _, u := range []string{"", "searxng:8080", "ftp://x", "http://"} {
		if _, err := searxng.New(searxng.Config{BaseURL: u}); err == nil || !strings.Contains(err.Error(), "SEARXNG_URL") {
			t.Errorf("New(%q) error = %v, want one naming SEARXNG_URL", u, err)
		}
	}
}

// TestMain fails the package when a file under testdata/ is not replayed.
func TestMain(m *testing.M) { os.Exit(enginetest.RunCorpus(m)) }

// TestSearchFull replays an answer with answers, corrections, infoboxes,
// suggestions and an unresponsive engine beside the results: the results
// are what counts, and an engine that failed while others answered is not
// an error.
func TestSearchFull(t *testing.T) {
	srv := enginetest.NewServer(t, enginetest.Reply{Fixture: "search_full.json"})
	got, err := newClient(t, srv, &enginetest.Sleeps{}).Search(t.Context(), search.Query{Text: "what is http 503", MaxResults: 5})
	if err != nil {
		t.Fatalf("Search() error = %v", err)
	}
	want := []search.Result{
		{
			Title:       "503 Service Unavailable - HTTP | MDN",
			Snippet:     "The HTTP 503 Service Unavailable server error response code indicates that the server is not ready to handle the request.",
			URL:         "https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/503",
			Score:       9,
			PublishedAt: time.Date(2025, 7, 4, 0, 0, 0, 0, time.UTC),
		},
		{
			Title:   "List of HTTP status codes - Wikipedia",
			Snippet: "503 Service Unavailable: the server cannot handle the request (because it is overloaded or down for maintenance).",
			URL:     "https://en.wikipedia.org/wiki/List_of_HTTP_status_codes#503",
			Score:   0.5,
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Search() mismatch (-want +got):\n%s", diff)
	}
}

// TestErrorCorpus replays the answers a SearXNG instance gives when it
// refuses (json format off, limiter) or fails, and checks how each is
// classified.
func TestErrorCorpus(t *testing.T) {
	html := map[string]string{"Content-Type": "text/html; charset=utf-8"}
	enginetest.RunErrorCases(t, "", []enginetest.ErrorCase{
		{Fixture: "error_403.html", Status: http.StatusForbidden, Header: html, Class: enginehttp.ErrAuth, Calls: 1, Message: "enable the json format"},
		{Fixture: "error_429.txt", Status: http.StatusTooManyRequests, Header: map[string]string{"Content-Type": "text/plain", "Retry-After": "300"},
			Class: enginehttp.ErrRateLimited, RetryAfter: 5 * time.Minute, Calls: 1, Message: "Too Many Requests"},
		{Fixture: "error_500.html", Status: http.StatusInternalServerError, Header: html, Class: enginehttp.ErrUnavailable, Calls: 3, Message: "Internal Server Error"},
	}, func(srv *enginetest.Server, sl *enginetest.Sleeps) error {
		_, err := newClient(t, srv, sl).Search(t.Context(), search.Query{Text: "q", MaxResults: 3})
		return err
	})
}

// TestErrorsNeverCarryThePassword replays errors from a stand-in that
// echoes the request, the basic-auth header included, for an instance
// whose URL carries a password.
func TestErrorsNeverCarryThePassword(t *testing.T) {
	enginetest.RunEchoCases(t, "s3cret-pass", func(echo string) string { return echo }, func(srv *enginetest.Server, sl *enginetest.Sleeps) error {
		c, err := searxng.New(searxng.Config{BaseURL: strings.Replace(srv.URL, "http://", "http://ops:s3cret-pass@", 1), Retry: enginetest.RetryClient(srv, sl)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Search(t.Context(), search.Query{Text: "q", MaxResults: 3})
		return err
	})
}

func TestNewHidesThePassword(t *testing.T) {
	_, err := searxng.New(searxng.Config{BaseURL: "ftp://ops:s3cret-pass@searx.example"})
	if err == nil || strings.Contains(err.Error(), "s3cret-pass") {
		t.Errorf("New() error = %v, want one without the password", err)
	}
}
