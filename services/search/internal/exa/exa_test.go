package exa_test

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
	"github.com/groundcrew/groundcrew/services/search/internal/exa"
	"github.com/groundcrew/groundcrew/services/search/internal/search"
)

var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// TestMain fails the package when a file under testdata/ is not replayed.
func TestMain(m *testing.M) { os.Exit(enginetest.RunCorpus(m)) }

func newClient(t *testing.T, srv *enginetest.Server, sl *enginetest.Sleeps) *exa.Client {
	t.Helper()
	c, err := exa.New(exa.Config{
		APIKey:  "exa-test-key",
		BaseURL: srv.URL + "/",
		Retry:   enginetest.RetryClient(srv, sl),
		Now:     func() time.Time { return now },
	})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	return c
}

func TestSearch(t *testing.T) {
	srv := enginetest.NewServer(t, enginetest.Reply{Fixture: "search_success.json"})
	c := newClient(t, srv, &enginetest.Sleeps{})

	got, err := c.Search(t.Context(), search.Query{
		Text: "kubernetes crashloopbackoff", MaxResults: 5,
		AllowedDomains: []string{"kubernetes.io", "sysdig.com"}, BlockedDomains: []string{"spam.example"},
		MaxAge: 30 * 24 * time.Hour,
	})
	if err != nil {
		t.Fatalf("Search() error = %v", err)
	}
	want := []search.Result{
		{
			Title:       "Debug Pods | Kubernetes",
			Snippet:     "If your pod is in CrashLoopBackOff, look at the logs of the previous instance of the container with kubectl logs --previous.",
			URL:         "https://kubernetes.io/docs/tasks/debug/debug-application/debug-pods/",
			FaviconURL:  "https://kubernetes.io/icons/favicon-32.png",
			Score:       0.4170815050601959,
			PublishedAt: time.Date(2024, 11, 12, 0, 0, 0, 0, time.UTC),
		},
		{
			Title:       "What is Kubernetes CrashLoopBackOff? And how to fix it",
			Snippet:     "CrashLoopBackOff is a status message that indicates one of your pods is in a constant state of flux. … One or more containers are failing and restarting repeatedly.",
			URL:         "https://sysdig.com/blog/debug-kubernetes-crashloopbackoff/?utm_source=exa",
			Score:       0.4025,
			PublishedAt: time.Date(2023, 3, 6, 9, 30, 0, 0, time.UTC),
		},
		{URL: "https://stackoverflow.com/questions/41604499", Score: 0.391},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Search() mismatch (-want +got):\n%s", diff)
	}

	req := srv.Request(0)
	if req.Method != "POST" || req.Path != "/search" || req.Header.Get("X-Api-Key") != "exa-test-key" ||
		req.Header.Get("Content-Type") != "application/json" {
		t.Errorf("request = %s %s with headers %v", req.Method, req.Path, req.Header)
	}
	var gotBody map[string]any
	if err := json.Unmarshal(req.Body, &gotBody); err != nil {
		t.Fatal(err)
	}
	wantBody := map[string]any{
		"query": "kubernetes crashloopbackoff", "type": "auto", "numResults": 5.0,
		"includeDomains":     []any{"kubernetes.io", "sysdig.com"},
		"startPublishedDate": "2025-05-02T12:00:00.000Z",
		"contents":           map[string]any{"highlights": map[string]any{"numSentences": 3.0, "highlightsPerUrl": 1.0}},
	}
	if diff := cmp.Diff(wantBody, gotBody); diff != "" {
		t.Errorf("request body mismatch (-want +got):\n%s", diff)
	}
}

func TestSearchRetriesAfter429(t *testing.T) {
	srv := enginetest.NewServer(t,
		enginetest.Reply{Status: 429, Header: map[string]string{"Retry-After": "2"}, Fixture: "error_429.json"},
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
	if diff := cmp.Diff([]time.Duration{2 * time.Second}, sl.Waits()); diff != "" {
		t.Errorf("waits mismatch (-want +got):\n%s", diff)
	}
	if string(srv.Request(0).Body) != string(srv.Request(1).Body) {
		t.Errorf("retried body %s differs from %s", srv.Request(1).Body, srv.Request(0).Body)
	}
}

func TestSearchErrors(t *testing.T) {
	tests := []struct {
		name      string
		reply     enginetest.Reply
		wantCalls int
		want      string
	}{
		{
			name:      "500 retried then reported",
			reply:     enginetest.Reply{Status: 500, Fixture: "error_500.json"},
			wantCalls: 3,
			want:      "exa: HTTP 500 Internal Server Error: INTERNAL_ERROR: Internal Server Error [request 0f9e8d7c6b5a49382716f5e4d3c2b1a0]",
		},
		{
			name:      "401 not retried",
			reply:     enginetest.Reply{Status: 401, Fixture: "error_401.json"},
			wantCalls: 1,
			want:      "exa: HTTP 401 Unauthorized: INVALID_API_KEY: Invalid API key [request 5c1e0d8e7d0a4f0b9a1d2c3b4a596877] (check EXA_API_KEY)",
		},
		{
			name:      "429 beyond the longest wait",
			reply:     enginetest.Reply{Status: 429, Header: map[string]string{"Retry-After": "3600"}, Fixture: "error_429.json"},
			wantCalls: 1,
			want:      "exa: HTTP 429 Too Many Requests: RATE_LIMIT_EXCEEDED: You have exceeded your rate limit",
		},
		{
			name:      "gateway page instead of JSON",
			reply:     enginetest.Reply{Status: 502, Header: map[string]string{"Content-Type": "text/html"}, Body: "<html><body><h1>502 Bad Gateway</h1></body></html>"},
			wantCalls: 3,
			want:      "exa: HTTP 502 Bad Gateway: 502 Bad Gateway",
		},
		{
			name:      "malformed success body",
			reply:     enginetest.Reply{Body: `{"results": [`},
			wantCalls: 1,
			want:      "exa: decoding response",
		},
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
	if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "exa: ") {
		t.Errorf("Search() error = %v, want exa: … context deadline exceeded", err)
	}
}

func TestNewRequiresKey(t *testing.T) {
	if _, err := exa.New(exa.Config{APIKey: " "}); err == nil || !strings.Contains(err.Error(), "EXA_API_KEY") {
		t.Errorf("New() error = %v, want one naming EXA_API_KEY", err)
	}
}

// TestSearchContents replays an answer to a search that asked for every
// content kind: without highlights the summary is the snippet, and
// without either the text.
func TestSearchContents(t *testing.T) {
	srv := enginetest.NewServer(t, enginetest.Reply{Fixture: "search_contents.json"})
	got, err := newClient(t, srv, &enginetest.Sleeps{}).Search(t.Context(), search.Query{Text: "postgres max_connections pooling", MaxResults: 2})
	if err != nil {
		t.Fatalf("Search() error = %v", err)
	}
	want := []search.Result{
		{
			Title:       "PostgreSQL: Documentation: 17: 19.3. Connections and Authentication",
			Snippet:     "max_connections sets how many clients may connect at once; raising it costs shared memory, so pool connections instead.",
			URL:         "https://www.postgresql.org/docs/current/runtime-config-connection.html",
			FaviconURL:  "https://www.postgresql.org/favicon.ico",
			Score:       0.3846,
			PublishedAt: time.Date(2024, 9, 26, 0, 0, 0, 0, time.UTC),
		},
		{
			Title:      "PgBouncer config",
			Snippet:    "pool_mode: Specifies when a server connection can be reused by other clients. session, transaction or statement.",
			URL:        "https://www.pgbouncer.org/config.html",
			FaviconURL: "https://www.pgbouncer.org/favicon.ico",
			Score:      0.3711,
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Search() mismatch (-want +got):\n%s", diff)
	}
}

// TestErrorCorpus replays Exa's documented error answers and checks how
// each is classified.
func TestErrorCorpus(t *testing.T) {
	enginetest.RunErrorCases(t, "exa-test-key", []enginetest.ErrorCase{
		{Fixture: "error_400.json", Status: http.StatusBadRequest, Class: enginehttp.ErrBadRequest, Calls: 1,
			Message: "INVALID_REQUEST_BODY: Invalid request body: numResults must be less than or equal to 100"},
		{Fixture: "error_401.json", Status: http.StatusUnauthorized, Class: enginehttp.ErrAuth, Calls: 1,
			Message: "INVALID_API_KEY: Invalid API key [request 5c1e0d8e7d0a4f0b9a1d2c3b4a596877] (check EXA_API_KEY)"},
		{Fixture: "error_402.json", Status: http.StatusPaymentRequired, Class: enginehttp.ErrQuota, Calls: 1,
			Message: "NO_MORE_CREDITS"},
		{Fixture: "error_403.json", Status: http.StatusForbidden, Class: enginehttp.ErrAuth, Calls: 1,
			Message: "ACCESS_DENIED: Your API key does not have access to this feature"},
		{Fixture: "error_429.json", Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "120"},
			Class: enginehttp.ErrRateLimited, RetryAfter: 2 * time.Minute, Calls: 1, Message: "RATE_LIMIT_EXCEEDED"},
		{Fixture: "error_500.json", Status: http.StatusInternalServerError, Class: enginehttp.ErrUnavailable, Calls: 3,
			Message: "INTERNAL_ERROR: Internal Server Error"},
		{Fixture: "error_502.json", Status: http.StatusBadGateway, Class: enginehttp.ErrUnavailable, Calls: 3,
			Message: "UPSTREAM_ERROR"},
	}, func(srv *enginetest.Server, sl *enginetest.Sleeps) error {
		_, err := newClient(t, srv, sl).Search(t.Context(), search.Query{Text: "q", MaxResults: 3})
		return err
	})
}

// TestErrorsNeverCarryTheKey replays errors from a stand-in that echoes
// the request, headers included, in its error body.
func TestErrorsNeverCarryTheKey(t *testing.T) {
	enginetest.RunEchoCases(t, "exa-test-key", func(echo string) string {
		b, _ := json.Marshal(map[string]string{"requestId": "0a1b", "error": echo, "tag": "ECHO"})
		return string(b)
	}, func(srv *enginetest.Server, sl *enginetest.Sleeps) error {
		_, err := newClient(t, srv, sl).Search(t.Context(), search.Query{Text: "q", MaxResults: 3})
		return err
	})
}
