package brave_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/services/search/internal/brave"
	"github.com/groundcrew/groundcrew/services/search/internal/enginehttp"
	"github.com/groundcrew/groundcrew/services/search/internal/enginehttp/enginetest"
	"github.com/groundcrew/groundcrew/services/search/internal/search"
)

var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func newClient(t *testing.T, srv *enginetest.Server, sl *enginetest.Sleeps) *brave.Client {
	t.Helper()
	c, err := brave.New(brave.Config{
		APIKey: "BSA-test", BaseURL: srv.URL, Retry: enginetest.RetryClient(srv, sl),
		Now: func() time.Time { return now },
	})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	return c
}

func TestSearch(t *testing.T) {
	srv := enginetest.NewServer(t, enginetest.Reply{Fixture: "search_success.json"})
	got, err := newClient(t, srv, &enginetest.Sleeps{}).Search(t.Context(), search.Query{
		Text: "grafana alert no data state", MaxResults: 6,
		AllowedDomains: []string{"grafana.com"}, BlockedDomains: []string{"pinterest.com"},
		MaxAge: 7 * 24 * time.Hour,
	})
	if err != nil {
		t.Fatalf("Search() error = %v", err)
	}
	want := []search.Result{
		{
			Title:       "Configure no data and error handling | Grafana documentation",
			Snippet:     "When an alert rule evaluation returns no data, Grafana sets the state to NoData by default & you can change it to Alerting, OK or Keep Last State.",
			URL:         "https://grafana.com/docs/grafana/latest/alerting/fundamentals/alert-rule-evaluation/nodata-and-error-states/",
			FaviconURL:  "https://imgs.search.brave.com/def/favicon.png",
			Score:       1,
			PublishedAt: time.Date(2025, 1, 21, 14, 5, 9, 0, time.UTC),
		},
		{
			Title:      `Grafana alert stuck in "No Data" - Grafana Labs Community Forums`,
			Snippet:    "The query returned no series for the last 5 minutes, so the rule went to NoData.",
			URL:        "https://community.grafana.com/t/grafana-alert-stuck-in-no-data/98231",
			FaviconURL: "https://imgs.search.brave.com/jkl/favicon.png",
			Score:      2.0 / 3,
		},
		{
			Title:       "Alerting on missing data",
			Snippet:     "Use absent() to alert when a series disappears.",
			URL:         "https://www.robustperception.io/alerting-on-gauges-in-prometheus-2-0/",
			FaviconURL:  "https://imgs.search.brave.com/mno/favicon.png",
			Score:       1.0 / 3,
			PublishedAt: time.Date(2017, 11, 2, 0, 0, 0, 0, time.UTC),
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Search() mismatch (-want +got):\n%s", diff)
	}

	req := srv.Request(0)
	if req.Method != "GET" || req.Path != "/res/v1/web/search" || req.Header.Get("X-Subscription-Token") != "BSA-test" ||
		req.Header.Get("Accept") != "application/json" {
		t.Errorf("request = %s %s with headers %v", req.Method, req.Path, req.Header)
	}
	wantQuery := map[string][]string{
		"q":                {"grafana alert no data state site:grafana.com -site:pinterest.com"},
		"count":            {"6"},
		"safesearch":       {"moderate"},
		"text_decorations": {"false"},
		"freshness":        {"2025-05-25to2025-06-01"},
	}
	if diff := cmp.Diff(wantQuery, map[string][]string(req.Query)); diff != "" {
		t.Errorf("query parameters mismatch (-want +got):\n%s", diff)
	}
}

func TestSearchCutsLongQueries(t *testing.T) {
	srv := enginetest.NewServer(t, enginetest.Reply{Fixture: "search_success.json"})
	long := strings.Repeat("word ", 200)
	if _, err := newClient(t, srv, &enginetest.Sleeps{}).Search(t.Context(), search.Query{Text: long, MaxResults: 50}); err != nil {
		t.Fatalf("Search() error = %v", err)
	}
	q := srv.Request(0).Query
	if words := strings.Fields(q.Get("q")); len(words) != brave.MaxQueryWords || len(q.Get("q")) > brave.MaxQueryChars {
		t.Errorf("q has %d words, %d characters; want at most %d and %d", len(words), len(q.Get("q")), brave.MaxQueryWords, brave.MaxQueryChars)
	}
	if got := q.Get("count"); got != "20" {
		t.Errorf("count = %s, want 20", got)
	}
}

func TestSearchRetriesAfter429(t *testing.T) {
	tests := []struct {
		name     string
		header   map[string]string
		wantWait time.Duration
	}{
		{"retry-after", map[string]string{"Retry-After": "2"}, 2 * time.Second},
		{"per-second window", map[string]string{
			"X-RateLimit-Limit": "1, 2000", "X-RateLimit-Remaining": "0, 1883", "X-RateLimit-Reset": "1, 1419704",
		}, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := enginetest.NewServer(t,
				enginetest.Reply{Status: 429, Header: tt.header, Fixture: "error_429.json"},
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
			if diff := cmp.Diff([]time.Duration{tt.wantWait}, sl.Waits()); diff != "" {
				t.Errorf("waits mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSearchErrors(t *testing.T) {
	tests := []struct {
		name      string
		reply     enginetest.Reply
		wantCalls int
		want      string
	}{
		{"500 retried then reported", enginetest.Reply{Status: 500, Fixture: "error_500.json"}, 3,
			"brave: HTTP 500 Internal Server Error: INTERNAL_ERROR: An internal error occurred while processing the request."},
		{"invalid token is a 422, not retried", enginetest.Reply{Status: 422, Fixture: "error_422_token.json"}, 1,
			"brave: HTTP 422 Unprocessable Entity: SUBSCRIPTION_TOKEN_INVALID: The provided subscription token is invalid. (check BRAVE_API_KEY)"},
		{"validation error", enginetest.Reply{Status: 422, Fixture: "error_422_validation.json"}, 1,
			"brave: HTTP 422 Unprocessable Entity: VALIDATION: Unable to validate request parameter(s); [query count]: Input should be less than or equal to 20"},
		{"monthly quota exhausted is not waited for", enginetest.Reply{Status: 429, Fixture: "error_429_quota.json", Header: map[string]string{
			"X-RateLimit-Limit": "1, 2000", "X-RateLimit-Remaining": "1, 0", "X-RateLimit-Reset": "1, 1419704",
		}}, 1, "brave: HTTP 429 Too Many Requests: RATE_LIMITED: Request quota limit exceeded for plan."},
		{"401 from a proxy", enginetest.Reply{Status: 401, Body: "Unauthorized"}, 1,
			"brave: HTTP 401 Unauthorized: Unauthorized (check BRAVE_API_KEY)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := enginetest.NewServer(t, tt.reply)
			_, err := newClient(t, srv, &enginetest.Sleeps{}).Search(t.Context(), search.Query{Text: "q", MaxResults: 3})
			if err == nil || err.Error() != tt.want {
				t.Errorf("Search() error = %v, want %q", err, tt.want)
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
	if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "brave: ") {
		t.Errorf("Search() error = %v, want brave: … context deadline exceeded", err)
	}
}

func TestRateLimitWait(t *testing.T) {
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
		wantOK bool
	}{
		{"nothing", nil, 0, false},
		{"retry-after wins", map[string]string{"Retry-After": "4", "X-RateLimit-Reset": "1, 100"}, 4 * time.Second, true},
		{"second window exhausted", map[string]string{"X-RateLimit-Remaining": "0, 10", "X-RateLimit-Reset": "1, 100"}, time.Second, true},
		{"month exhausted", map[string]string{"X-RateLimit-Remaining": "0, 0", "X-RateLimit-Reset": "1, 100"}, 100 * time.Second, true},
		{"no remaining header", map[string]string{"X-RateLimit-Reset": "3, 100"}, 100 * time.Second, true},
		{"garbage", map[string]string{"X-RateLimit-Reset": "soon"}, 0, false},
	}
	for _, tt := range tests {
		resp := &http.Response{Header: http.Header{}}
		for k, v := range tt.header {
			resp.Header.Set(k, v)
		}
		got, ok := brave.RateLimitWait(resp, now)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("%s: RateLimitWait() = %v, %v; want %v, %v", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
}

// TestMain fails the package when a file under testdata/ is not replayed.
func TestMain(m *testing.M) { os.Exit(enginetest.RunCorpus(m)) }

// TestErrorCorpus replays Brave's documented error answers (with the
// rate-limit headers its 429s carry) and checks how each is classified.
func TestErrorCorpus(t *testing.T) {
	enginetest.RunErrorCases(t, "BSA-test", []enginetest.ErrorCase{
		{Fixture: "error_401.json", Status: http.StatusUnauthorized, Class: enginehttp.ErrAuth, Calls: 1,
			Message: "SUBSCRIPTION_TOKEN_INVALID: The provided subscription token is invalid. (check BRAVE_API_KEY)"},
		{Fixture: "error_403.json", Status: http.StatusForbidden, Class: enginehttp.ErrAuth, Calls: 1,
			Message: "OPTION_NOT_IN_PLAN: The option extra_snippets is not subscribed in the plan."},
		{Fixture: "error_422_token.json", Status: http.StatusUnprocessableEntity, Class: enginehttp.ErrAuth, Calls: 1,
			Message: "(check BRAVE_API_KEY)"},
		{Fixture: "error_422_validation.json", Status: http.StatusUnprocessableEntity, Class: enginehttp.ErrBadRequest, Calls: 1,
			Message: "VALIDATION: Unable to validate request parameter(s)"},
		{Fixture: "error_429.json", Status: http.StatusTooManyRequests, Header: map[string]string{
			"X-RateLimit-Limit": "1, 2000", "X-RateLimit-Policy": "1;w=1, 2000;w=2592000",
			"X-RateLimit-Remaining": "0, 1883", "X-RateLimit-Reset": "30, 1419704",
		}, Class: enginehttp.ErrRateLimited, RetryAfter: 30 * time.Second, Calls: 1, Message: "RATE_LIMITED: Request rate limit exceeded for plan."},
		{Fixture: "error_429_quota.json", Status: http.StatusTooManyRequests, Header: map[string]string{
			"X-RateLimit-Limit": "1, 2000", "X-RateLimit-Policy": "1;w=1, 2000;w=2592000",
			"X-RateLimit-Remaining": "1, 0", "X-RateLimit-Reset": "1, 1419704",
		}, Class: enginehttp.ErrRateLimited, RetryAfter: 1419704 * time.Second, Calls: 1, Message: "Request quota limit exceeded"},
		{Fixture: "error_500.json", Status: http.StatusInternalServerError, Class: enginehttp.ErrUnavailable, Calls: 3, Message: "INTERNAL_ERROR"},
		{Fixture: "error_503.json", Status: http.StatusServiceUnavailable, Header: map[string]string{"Retry-After": "1"},
			Class: enginehttp.ErrUnavailable, RetryAfter: time.Second, Calls: 3, Message: "SERVICE_UNAVAILABLE"},
	}, func(srv *enginetest.Server, sl *enginetest.Sleeps) error {
		_, err := newClient(t, srv, sl).Search(t.Context(), search.Query{Text: "q", MaxResults: 3})
		return err
	})
}

// TestErrorsNeverCarryTheKey replays errors from a stand-in that echoes
// the request, headers included, in its error body.
func TestErrorsNeverCarryTheKey(t *testing.T) {
	enginetest.RunEchoCases(t, "BSA-test", func(echo string) string {
		b, _ := json.Marshal(map[string]any{"type": "ErrorResponse", "error": map[string]any{"id": "e1", "status": 401, "code": "ECHO", "detail": echo}})
		return string(b)
	}, func(srv *enginetest.Server, sl *enginetest.Sleeps) error {
		_, err := newClient(t, srv, sl).Search(t.Context(), search.Query{Text: "q", MaxResults: 3})
		return err
	})
}
