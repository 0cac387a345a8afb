package gemini_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/services/grounding/internal/grounding"
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
