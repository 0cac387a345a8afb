package tavily_test

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

	"github.com/groundcrew/groundcrew/services/search/internal/enginehttp"
	"github.com/groundcrew/groundcrew/services/search/internal/enginehttp/enginetest"
	"github.com/groundcrew/groundcrew/services/search/internal/search"
	"github.com/groundcrew/groundcrew/services/search/internal/tavily"
)

func newClient(t *testing.T, srv *enginetest.Server, sl *enginetest.Sleeps) *tavily.Client {
	t.Helper()
	c, err := tavily.New(tavily.Config{APIKey: "tvly-test", BaseURL: srv.URL, Retry: enginetest.RetryClient(srv, sl)})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	return c
}

func TestSearch(t *testing.T) {
	srv := enginetest.NewServer(t, enginetest.Reply{Fixture: "search_success.json"})
	got, err := newClient(t, srv, &enginetest.Sleeps{}).Search(t.Context(), search.Query{
		Text: "postgres disk full no space left on device", MaxResults: 8,
		AllowedDomains: []string{"postgresql.org"}, BlockedDomains: []string{"pinterest.com"},
		MaxAge: 3 * 24 * time.Hour,
	})
	if err != nil {
		t.Fatalf("Search() error = %v", err)
	}
	want := []search.Result{
		{
			Title:      "PostgreSQL: Documentation: 17: 24.2. Disk Full Failure",
			Snippet:    "The most important disk monitoring task of a database administrator is to make sure the disk doesn't become full. A filled data disk will not result in data corruption, but it might prevent useful activity from occurring.",
			URL:        "https://www.postgresql.org/docs/current/disk-full.html",
			Score:      0.86005926,
			FaviconURL: "https://www.postgresql.org/favicon.ico",
		},
		{
			Title:       "PostgreSQL: could not write to file: No space left on device",
			Snippet:     "Check which tablespace is full with df -h and clean up WAL files only through pg_archivecleanup, never by deleting them by hand.",
			URL:         "https://stackoverflow.com/questions/29865797/postgresql-no-space-left-on-device#answer-1",
			Score:       0.7284,
			PublishedAt: time.Date(2024, 5, 14, 8, 12, 0, 0, time.UTC),
		},
		{Snippet: "How to free disk space after deleting rows.", URL: "https://dba.stackexchange.com/questions/104145/", Score: 0.51},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Search() mismatch (-want +got):\n%s", diff)
	}

	req := srv.Request(0)
	if req.Method != "POST" || req.Path != "/search" || req.Header.Get("Authorization") != "Bearer tvly-test" {
		t.Errorf("request = %s %s with headers %v", req.Method, req.Path, req.Header)
	}
	var gotBody map[string]any
	if err := json.Unmarshal(req.Body, &gotBody); err != nil {
		t.Fatal(err)
	}
	wantBody := map[string]any{
		"query": "postgres disk full no space left on device", "topic": "general", "search_depth": "basic",
		"max_results": 8.0, "time_range": "week",
		"include_domains": []any{"postgresql.org"}, "exclude_domains": []any{"pinterest.com"},
		"include_answer": false, "include_raw_content": false, "include_images": false, "include_favicon": true,
	}
	if diff := cmp.Diff(wantBody, gotBody); diff != "" {
		t.Errorf("request body mismatch (-want +got):\n%s", diff)
	}
}

func TestSearchRetriesAfter429(t *testing.T) {
	srv := enginetest.NewServer(t,
		enginetest.Reply{Status: 429, Header: map[string]string{"Retry-After": "5"}, Fixture: "error_429.json"},
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
	if diff := cmp.Diff([]time.Duration{5 * time.Second}, sl.Waits()); diff != "" {
		t.Errorf("waits mismatch (-want +got):\n%s", diff)
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
			"tavily: HTTP 500 Internal Server Error: Internal Server Error"},
		{"401 not retried", enginetest.Reply{Status: 401, Fixture: "error_401.json"}, 1,
			"tavily: HTTP 401 Unauthorized: Unauthorized: missing or invalid API key. (check TAVILY_API_KEY)"},
		{"432 plan limit not retried", enginetest.Reply{Status: 432, Fixture: "error_432.json"}, 1,
			"tavily: HTTP 432: This request exceeds your plan's set usage limit. Please upgrade your plan or contact support@tavily.com (Tavily plan limit reached)"},
		{"400 not retried", enginetest.Reply{Status: 400, Fixture: "error_400.json"}, 1,
			"tavily: HTTP 400 Bad Request: Query is invalid."},
		{"validation error", enginetest.Reply{Status: 422, Body: `{"detail":"max_results must be <= 20"}`}, 1,
			"tavily: HTTP 422 Unprocessable Entity: max_results must be <= 20"},
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
	if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "tavily: ") {
		t.Errorf("Search() error = %v, want tavily: … context deadline exceeded", err)
	}
}

// TestMain fails the package when a file under testdata/ is not replayed.
func TestMain(m *testing.M) { os.Exit(enginetest.RunCorpus(m)) }

// TestSearchFull replays an answer with every optional part filled in
// (answer, images with descriptions, raw_content, follow-up questions,
// usage, response_time as a string): the results are what counts.
func TestSearchFull(t *testing.T) {
	srv := enginetest.NewServer(t, enginetest.Reply{Fixture: "search_full.json"})
	got, err := newClient(t, srv, &enginetest.Sleeps{}).Search(t.Context(), search.Query{Text: "kafka consumer lag growing", MaxResults: 2})
	if err != nil {
		t.Fatalf("Search() error = %v", err)
	}
	want := []search.Result{
		{
			Title:       "Kafka Consumer Lag: what it is and how to reduce it",
			Snippet:     "Lag is the difference between the last offset written and the offset a consumer group has committed.",
			URL:         "https://www.confluent.io/blog/kafka-consumer-lag/",
			Score:       0.91234,
			PublishedAt: time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC),
			FaviconURL:  "https://www.confluent.io/favicon.ico",
		},
		{
			Title:      "Consumer configs | Apache Kafka",
			Snippet:    "max.poll.records: The maximum number of records returned in a single call to poll().",
			URL:        "https://kafka.apache.org/documentation/#consumerconfigs",
			Score:      0.6402,
			FaviconURL: "https://kafka.apache.org/favicon.ico",
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Search() mismatch (-want +got):\n%s", diff)
	}
}

// TestErrorCorpus replays Tavily's documented error answers and checks
// how each is classified.
func TestErrorCorpus(t *testing.T) {
	enginetest.RunErrorCases(t, "tvly-test", []enginetest.ErrorCase{
		{Fixture: "error_400.json", Status: http.StatusBadRequest, Class: enginehttp.ErrBadRequest, Calls: 1, Message: "Query is invalid."},
		{Fixture: "error_401.json", Status: http.StatusUnauthorized, Class: enginehttp.ErrAuth, Calls: 1, Message: "(check TAVILY_API_KEY)"},
		{Fixture: "error_403.json", Status: http.StatusForbidden, Class: enginehttp.ErrAuth, Calls: 1, Message: "Forbidden: this API key is not allowed"},
		{Fixture: "error_429.json", Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "60"},
			Class: enginehttp.ErrRateLimited, RetryAfter: time.Minute, Calls: 1, Message: "excessive requests"},
		{Fixture: "error_432.json", Status: tavily.StatusPlanLimit, Class: enginehttp.ErrQuota, Calls: 1, Message: "(Tavily plan limit reached)"},
		{Fixture: "error_433.json", Status: tavily.StatusPayAsYouGoLimit, Class: enginehttp.ErrQuota, Calls: 1, Message: "pay-as-you-go limit"},
		{Fixture: "error_500.json", Status: http.StatusInternalServerError, Class: enginehttp.ErrUnavailable, Calls: 3, Message: "HTTP 500"},
		{Fixture: "error_502.json", Status: http.StatusBadGateway, Class: enginehttp.ErrUnavailable, Calls: 3, Message: "Bad Gateway"},
	}, func(srv *enginetest.Server, sl *enginetest.Sleeps) error {
		_, err := newClient(t, srv, sl).Search(t.Context(), search.Query{Text: "q", MaxResults: 3})
		return err
	})
}

// TestErrorsNeverCarryTheKey replays errors from a stand-in that echoes
// the request, headers included, in its error body.
func TestErrorsNeverCarryTheKey(t *testing.T) {
	enginetest.RunEchoCases(t, "tvly-test", func(echo string) string {
		b, _ := json.Marshal(map[string]any{"detail": map[string]string{"error": echo}})
		return string(b)
	}, func(srv *enginetest.Server, sl *enginetest.Sleeps) error {
		_, err := newClient(t, srv, sl).Search(t.Context(), search.Query{Text: "q", MaxResults: 3})
		return err
	})
}
