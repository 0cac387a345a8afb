package gemini_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/services/grounding/internal/grounding"
	"github.com/groundcrew/groundcrew/services/grounding/internal/pagefetch"
)

// wireReply is a corpus file of testdata/wire served with its HTTP status.
func wireReply(t *testing.T, name string, status int) reply {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "wire", name))
	if err != nil {
		t.Fatal(err)
	}
	return reply{status, string(b)}
}

// TestWireCorpus replays every file of testdata/wire — generateContent
// responses and error bodies in the shape the Gemini API reference
// (v1beta) documents them — through the adapter, with the outcome each
// must have.
func TestWireCorpus(t *testing.T) {
	type want struct {
		text          string
		finish        string
		chunks        []grounding.WebChunk
		supports      []grounding.Support
		queries       []string
		prompt, out   int
		noAnswer      string // ErrNoAnswer, with this in its text
		code          int    // a *ProviderError with this HTTP code
		status        string
		attempts      int
		waits         []time.Duration
		retryWaitOnly bool // waits are backoff: only their count is checked
	}
	redirect := "https://vertexaisearch.cloud.google.com/grounding-api-redirect/"
	tests := []struct {
		file   string
		status int
		want   want
	}{
		{"grounded_search.json", 200, want{
			text:   "Postgres refuses new clients once max_connections is reached. A pooler such as PgBouncer lets many clients share a few server connections.",
			finish: "STOP",
			chunks: []grounding.WebChunk{
				{URI: redirect + "AUZIYQGvM7pD1dGkTq6Y0bQ3m4fW9vXzKJ8c2sLrN1oPaEiHtUwYxZ5bC7dF0gH2jK4lM6nO8pQ", Title: "postgresql.org"},
				{URI: redirect + "AUZIYQHx2Lk9mN4bV7cX1zA3sD5fG8hJ0kL2qW4eR6tY8uI0oP3aS5dF7gH9jK1lZ3xC5vB7", Title: "pgbouncer.org"},
				{URI: redirect + "AUZIYQEq1Wr3Ty5Ui7Op9As2Df4Gh6Jk8Lz0Xc2Vb4Nm6Qw8Er0Ty2Ui4Op6As8Df0Gh2Jk4", Title: "stackoverflow.com"},
			},
			supports: []grounding.Support{
				{Start: 0, End: 61, Text: "Postgres refuses new clients once max_connections is reached.", Chunks: []int{0, 2}},
				{Start: 62, End: 138, Text: "A pooler such as PgBouncer lets many clients share a few server connections.", Chunks: []int{1}},
			},
			queries: []string{"postgres too many clients already", "pgbouncer connection pooling"},
			prompt:  312, out: 41,
		}},
		{"stop_with_thought.json", 200, want{
			text: "Postgres refuses new clients once max_connections is reached [1].", finish: "STOP", prompt: 402, out: 17,
		}},
		{"finish_max_tokens.json", 200, want{
			text: "Postgres refuses new clients once max_connections is reached [1]. A pooler such as", finish: "MAX_TOKENS", prompt: 402, out: 16,
		}},
		{"finish_max_tokens_thoughts_only.json", 200, want{noAnswer: "finish reason MAX_TOKENS", attempts: 1}},
		{"finish_safety.json", 200, want{noAnswer: "finish reason SAFETY", attempts: 1}},
		{"finish_recitation.json", 200, want{noAnswer: "finish reason RECITATION", attempts: 1}},
		{"prompt_blocked.json", 200, want{noAnswer: "prompt blocked: SAFETY", attempts: 1}},
		{"error_400_invalid_argument.json", 400, want{code: 400, status: "INVALID_ARGUMENT", attempts: 1}},
		{"error_400_api_key_invalid.json", 400, want{code: 400, status: "INVALID_ARGUMENT", attempts: 1}},
		{"error_429_resource_exhausted.json", 429, want{code: 429, status: "RESOURCE_EXHAUSTED", attempts: 4, waits: []time.Duration{3 * time.Second, 3 * time.Second, 3 * time.Second}}},
		{"error_500_internal.json", 500, want{code: 500, status: "INTERNAL", attempts: 4, waits: make([]time.Duration, 3), retryWaitOnly: true}},
		{"error_503_unavailable.json", 503, want{code: 503, status: "UNAVAILABLE", attempts: 4, waits: make([]time.Duration, 3), retryWaitOnly: true}},
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "wire", "*.json"))
	if len(files) != len(tests) {
		t.Errorf("%d corpus files, %d replayed: every file needs its case", len(files), len(tests))
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.file, ".json"), func(t *testing.T) {
			rep := wireReply(t, tt.file, tt.status)
			f := newFakeGemini(t, rep)
			w := &waits{}
			gen, err := newClient(t, f, w, nil).Generate(t.Context(), grounding.Prompt{
				Turns: []grounding.Turn{{Role: grounding.RoleUser, Parts: []string{"too many clients"}}},
			})
			want := tt.want
			if want.noAnswer != "" || want.code != 0 {
				pe, ok := errors.AsType[*grounding.ProviderError](err)
				if !ok {
					t.Fatalf("err = %v, want a *ProviderError", err)
				}
				if pe.Attempts != want.attempts || pe.Code != want.code || pe.Status != want.status || string(pe.Raw) != rep.body {
					t.Errorf("provider error: code %d status %q after %d attempts, raw kept %v; want %d %q after %d",
						pe.Code, pe.Status, pe.Attempts, string(pe.Raw) == rep.body, want.code, want.status, want.attempts)
				}
				if want.noAnswer != "" && (!errors.Is(err, grounding.ErrNoAnswer) || !strings.Contains(pe.Err.Error(), want.noAnswer)) {
					t.Errorf("err %v; want no answer (%s)", pe.Err, want.noAnswer)
				}
				if len(w.d) != len(want.waits) || (!want.retryWaitOnly && !cmp.Equal(w.d, want.waits)) {
					t.Errorf("waits %v, want %v", w.d, want.waits)
				}
				if len(f.requests()) != want.attempts {
					t.Errorf("%d requests, want %d", len(f.requests()), want.attempts)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := want
			got.text, got.finish, got.chunks, got.supports, got.queries = gen.Text, gen.FinishReason, gen.Chunks, gen.Supports, gen.SearchQueries
			got.prompt, got.out = gen.PromptTokens, gen.OutputTokens
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(want)); diff != "" {
				t.Errorf("generation (-want +got):\n%s", diff)
			}
			if string(gen.Raw) != rep.body {
				t.Error("the raw body is not kept for the artifact")
			}
		})
	}
}

// TestWireMaxTokensNeedsReview: an answer Gemini cut at the output limit
// is stored for review, saying so.
func TestWireMaxTokensNeedsReview(t *testing.T) {
	f := newFakeGemini(t, wireReply(t, "finish_max_tokens.json", 200))
	svc := service(t, newClient(t, f, &waits{}, nil), evidence)
	m, err := svc.Ground(t.Context(), grounding.GroundRequest{
		Text: "FATAL: sorry, too many clients already", Round: grounding.RoundConfig{Engine: grounding.EngineLocal},
	})
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != grounding.StatusNeedsReview || !strings.Contains(m.Error, "answer cut at the output limit") || len(m.Citations) != 1 {
		t.Errorf("status %v (%q), %d citations", m.Status, m.Error, len(m.Citations))
	}
}

// TestWireBlockedIsFailed: a blocked prompt or answer is a FAILED message
// whose error says the model returned no answer, never the withheld text.
func TestWireBlockedIsFailed(t *testing.T) {
	for _, file := range []string{"prompt_blocked.json", "finish_safety.json", "finish_recitation.json"} {
		f := newFakeGemini(t, wireReply(t, file, 200))
		svc := service(t, newClient(t, f, &waits{}, nil), evidence)
		m, err := svc.Ground(t.Context(), grounding.GroundRequest{Text: "too many clients", Round: grounding.RoundConfig{Engine: grounding.EngineLocal}})
		if err != nil {
			t.Fatal(err)
		}
		if m.Status != grounding.StatusFailed || m.Error != "model provider returned no answer after 1 attempt(s)" || m.Text != "" {
			t.Errorf("%s: status %v error %q text %q", file, m.Status, m.Error, m.Text)
		}
	}
}

// TestWireGroundedSourcesResolved replays grounded_search.json through a
// Ground round with Gemini's own search, its redirect links pointing at a
// local stand-in of vertexaisearch.cloud.google.com: the stored citations
// name the pages the links stand for, titled with each page's own title
// and quoted from the page, never a redirect link, a bare-domain title or
// the model's sentence.
func TestWireGroundedSourcesResolved(t *testing.T) {
	pages := map[string]string{
		"/docs/current/runtime-config-connection.html": `<html><head><title>PostgreSQL: Documentation: 18: 19.3. Connections and Authentication</title></head>` +
			`<body><p>max_connections (integer) Determines the maximum number of concurrent connections to the database server. The default is typically 100 connections.</p></body></html>`,
		"/usage.html":                 `<html><head><title>PgBouncer command-line usage</title></head><body><p>PgBouncer is a lightweight connection pooler: many clients share a few server connections.</p></body></html>`,
		"/questions/too-many-clients": `<html><head><title>postgresql - FATAL: sorry, too many clients already - Stack Overflow</title></head><body><p>New clients are refused once max_connections is reached; raise it or pool connections.</p></body></html>`,
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(site.Close)
	dest := []string{site.URL + "/docs/current/runtime-config-connection.html", site.URL + "/usage.html", site.URL + "/questions/too-many-clients"}
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i, token := range []string{"AUZIYQGvM7", "AUZIYQHx2L", "AUZIYQEq1W"} {
			if strings.HasPrefix(r.URL.Path, "/grounding-api-redirect/"+token) {
				http.Redirect(w, r, dest[i], http.StatusFound)
				return
			}
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(redirector.Close)
	redirectorURL := strings.Replace(redirector.URL, "127.0.0.1", "localhost", 1)
	rep := wireReply(t, "grounded_search.json", 200)
	rep.body = strings.ReplaceAll(rep.body, "https://vertexaisearch.cloud.google.com", redirectorURL)
	f := newFakeGemini(t, rep)
	fetcher := pagefetch.New(pagefetch.Config{
		RedirectHosts: []string{pagefetch.GeminiRedirector, "localhost"},
		AllowAddr:     func(a netip.Addr) bool { return a.IsLoopback() },
	})
	svc, _ := serviceWithPages(t, newClient(t, f, &waits{}, nil), nil, fetcher)
	m, err := svc.Ground(t.Context(), grounding.GroundRequest{Text: "FATAL: sorry, too many clients already", Round: grounding.RoundConfig{Engine: grounding.EngineNative}})
	if err != nil {
		t.Fatal(err)
	}
	type cite struct{ URL, Title, Snippet string }
	var got []cite
	for _, c := range m.Citations {
		got = append(got, cite{c.URL, c.Title, c.Snippet})
		if !c.HasRawHTML {
			t.Errorf("%s: page HTML not kept", c.URL)
		}
	}
	want := []cite{
		{dest[0], "PostgreSQL: Documentation: 18: 19.3. Connections and Authentication", "max_connections (integer) Determines the maximum number of concurrent connections to the database server. The default is typically 100 connections."},
		{dest[2], "postgresql - FATAL: sorry, too many clients already - Stack Overflow", "New clients are refused once max_connections is reached; raise it or pool connections."},
		{dest[1], "PgBouncer command-line usage", "PgBouncer is a lightweight connection pooler: many clients share a few server connections."},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("citations (-want +got):\n%s", diff)
	}
	if m.Engine != grounding.EngineNative || m.Context.Query != "postgres too many clients already; pgbouncer connection pooling" {
		t.Errorf("engine %v query %q", m.Engine, m.Context.Query)
	}
}
