package gemini_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/grounding/internal/gemini"
	"github.com/groundcrew/groundcrew/services/grounding/internal/grounding"
	"github.com/groundcrew/groundcrew/services/grounding/internal/store"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

var discard = slog.New(slog.DiscardHandler)

const (
	testKey   = "test-key-123456"
	testModel = "gemini-test"
)

// reply is one scripted answer of the fake Gemini server.
type reply struct {
	status int
	body   string
}

// fakeGemini speaks Gemini's REST wire format: POST
// /v1beta/models/{model}:generateContent with the key in x-goog-api-key.
type fakeGemini struct {
	t       testing.TB
	mu      sync.Mutex
	replies []reply // the last one repeats
	bodies  [][]byte
	srv     *httptest.Server
}

func newFakeGemini(t testing.TB, replies ...reply) *fakeGemini {
	f := &fakeGemini{t: t, replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeGemini) serve(w http.ResponseWriter, r *http.Request) {
	want := "/v1beta/models/" + testModel + ":generateContent"
	if r.Method != http.MethodPost || r.URL.Path != want {
		http.Error(w, `{"error":{"code":404,"message":"no such method","status":"NOT_FOUND"}}`, http.StatusNotFound)
		return
	}
	if r.Header.Get("x-goog-api-key") != testKey {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":{"code":401,"message":"API key not valid","status":"UNAUTHENTICATED"}}`)
		return
	}
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	n := len(f.bodies)
	f.bodies = append(f.bodies, body)
	rep := f.replies[min(n, len(f.replies)-1)]
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(rep.status)
	_, _ = io.WriteString(w, rep.body)
}

func (f *fakeGemini) requests() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]byte(nil), f.bodies...)
}

// waits records the backoff waits instead of sleeping.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(_ context.Context, d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.d = append(w.d, d)
	return nil
}

func newClient(t testing.TB, f *fakeGemini, w *waits, onErr func(int, bool)) *gemini.Client {
	t.Helper()
	c, err := gemini.New(t.Context(), gemini.Config{
		APIKey: testKey, Model: testModel, BaseURL: f.srv.URL, Sleep: w.sleep, OnAttemptError: onErr, Logger: discard,
		NewNonce: func() string { return testNonce },
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ok(text string, metadata string) reply {
	parts, _ := json.Marshal([]map[string]string{{"text": text}})
	gm := ""
	if metadata != "" {
		gm = `,"groundingMetadata":` + metadata
	}
	return reply{200, `{"candidates":[{"content":{"role":"model","parts":` + string(parts) + `},"finishReason":"STOP","index":0` + gm +
		`}],"usageMetadata":{"promptTokenCount":42,"candidatesTokenCount":17,"totalTokenCount":59},"modelVersion":"` + testModel + `"}`}
}

var (
	rateLimited = reply{429, `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED",` +
		`"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"2s"}]}}`}
	serverError = reply{500, `{"error":{"code":500,"message":"An internal error has occurred. Please retry.","status":"INTERNAL"}}`}
	badRequest  = reply{400, `{"error":{"code":400,"message":"Invalid JSON payload","status":"INVALID_ARGUMENT"}}`}
)

func TestGenerateNativeOffsets(t *testing.T) {
	// Two text parts; segments count UTF-8 bytes from the start of their
	// part. Chinese characters are 3 bytes, the emoji 4.
	p1 := "数据库连接数已满😱。"
	p2 := "使用 PgBouncer 连接池。Pool 👩‍💻 ok."
	seg2 := "使用 PgBouncer 连接池。"
	seg3 := "Pool 👩‍💻 ok."
	metadata := `{
	  "webSearchQueries": ["postgres too many clients 连接数"],
	  "groundingChunks": [
	    {"web": {"uri": "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbC1", "title": "postgresql.org"}},
	    {"web": {"uri": "https://vertexaisearch.cloud.google.com/grounding-api-redirect/XyZ2", "title": "pgbouncer.org"}}
	  ],
	  "groundingSupports": [
	    {"segment": {"endIndex": ` + itoa(len(p1)) + `, "text": "` + p1 + `"}, "groundingChunkIndices": [0], "confidenceScores": [0.9]},
	    {"segment": {"partIndex": 1, "endIndex": ` + itoa(len(seg2)) + `, "text": "` + seg2 + `"}, "groundingChunkIndices": [1]},
	    {"segment": {"partIndex": 1, "startIndex": ` + itoa(len(seg2)) + `, "endIndex": ` + itoa(len(p2)) + `, "text": "` + seg3 + `"}, "groundingChunkIndices": [0, 1]},
	    {"segment": {"startIndex": 5, "endIndex": 9999}, "groundingChunkIndices": [0]}
	  ]
	}`
	two := ok("", metadata)
	two.body = strings.Replace(two.body, `"parts":[{"text":""}]`, `"parts":[{"text":"`+p1+`"},{"text":"`+p2+`"}]`, 1)
	f := newFakeGemini(t, two)
	c := newClient(t, f, &waits{}, nil)

	gen, err := c.Generate(t.Context(), grounding.Prompt{System: "s", Turns: []grounding.Turn{{Role: grounding.RoleUser, Parts: []string{"q"}}}, WebSearch: true})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	text := p1 + p2
	if gen.Text != text {
		t.Fatalf("text = %q, want %q", gen.Text, text)
	}
	n1, n2 := len([]rune(p1)), len([]rune(seg2))
	want := []grounding.Support{
		{Start: 0, End: n1, Text: p1, Chunks: []int{0}, Scores: []float64{0.8999999761581421}},
		{Start: n1, End: n1 + n2, Text: seg2, Chunks: []int{1}},
		{Start: n1 + n2, End: len([]rune(text)), Text: seg3, Chunks: []int{0, 1}},
		{Start: -1, End: -1, Chunks: []int{0}},
	}
	if diff := cmp.Diff(want, gen.Supports); diff != "" {
		t.Errorf("supports (-want +got):\n%s", diff)
	}
	for _, s := range want[:3] {
		if got := string([]rune(text)[s.Start:s.End]); got != s.Text {
			t.Errorf("text[%d:%d] = %q, want %q", s.Start, s.End, got, s.Text)
		}
	}
	if diff := cmp.Diff([]string{"postgres too many clients 连接数"}, gen.SearchQueries); diff != "" {
		t.Errorf("queries (-want +got):\n%s", diff)
	}
	if gen.PromptTokens != 42 || gen.OutputTokens != 17 || !bytes.Equal(gen.Raw, []byte(two.body)) {
		t.Errorf("usage %d/%d raw %q", gen.PromptTokens, gen.OutputTokens, gen.Raw)
	}
	var req map[string]any
	if err := json.Unmarshal(f.requests()[0], &req); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{map[string]any{"googleSearch": map[string]any{}}}, req["tools"]); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestRetries(t *testing.T) {
	tests := []struct {
		name       string
		replies    []reply
		wantErr    string
		wantCalls  int
		wantWaits  int
		wantCodes  []int
		firstWaitS float64 // 0: not checked
	}{
		{name: "429 then success", replies: []reply{rateLimited, ok("fine", "")}, wantCalls: 2, wantWaits: 1, wantCodes: []int{429}, firstWaitS: 2},
		{name: "503 twice then success", replies: []reply{{503, `{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`}, {503, `{}`}, ok("fine", "")}, wantCalls: 3, wantWaits: 2, wantCodes: []int{503, 503}},
		{name: "500 every time", replies: []reply{serverError}, wantErr: "model provider answered 500 INTERNAL after 4 attempt(s)", wantCalls: 4, wantWaits: 3, wantCodes: []int{500, 500, 500, 500}},
		{name: "400 is not retried", replies: []reply{badRequest}, wantErr: "model provider answered 400 INVALID_ARGUMENT after 1 attempt(s)", wantCalls: 1, wantCodes: []int{400}},
		{name: "blocked prompt", replies: []reply{{200, `{"promptFeedback":{"blockReason":"SAFETY"}}`}}, wantErr: "model provider returned no answer after 1 attempt(s)", wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeGemini(t, tt.replies...)
			w := &waits{}
			var codes []int
			c := newClient(t, f, w, func(code int, _ bool) { codes = append(codes, code) })
			gen, err := c.Generate(t.Context(), grounding.Prompt{Turns: []grounding.Turn{{Role: grounding.RoleUser, Parts: []string{"q"}}}})
			if tt.wantErr == "" {
				if err != nil || gen.Text != "fine" {
					t.Fatalf("Generate = %+v, %v; want fine", gen, err)
				}
			} else {
				pe, isPE := errors.AsType[*grounding.ProviderError](err)
				if !isPE || pe.Error() != tt.wantErr {
					t.Fatalf("Generate error = %v, want ProviderError %q", err, tt.wantErr)
				}
				if strings.Contains(pe.Error(), "internal error has occurred") {
					t.Errorf("error text leaks the provider message: %q", pe.Error())
				}
			}
			if got := len(f.requests()); got != tt.wantCalls {
				t.Errorf("%d requests, want %d", got, tt.wantCalls)
			}
			if len(w.d) != tt.wantWaits {
				t.Errorf("waits %v, want %d", w.d, tt.wantWaits)
			}
			if tt.firstWaitS > 0 && w.d[0] != time.Duration(tt.firstWaitS*float64(time.Second)) {
				t.Errorf("first wait %v, want the RetryInfo delay %vs", w.d[0], tt.firstWaitS)
			}
			if diff := cmp.Diff(tt.wantCodes, codes); diff != "" {
				t.Errorf("attempt error codes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRetryNeverOutlivesDeadline(t *testing.T) {
	slow := rateLimited
	slow.body = strings.Replace(slow.body, `"2s"`, `"60s"`, 1)
	f := newFakeGemini(t, slow, ok("late", ""))
	w := &waits{}
	c := newClient(t, f, w, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err := c.Generate(ctx, grounding.Prompt{Turns: []grounding.Turn{{Role: grounding.RoleUser, Parts: []string{"q"}}}})
	if pe, ok := errors.AsType[*grounding.ProviderError](err); !ok || pe.Code != 429 {
		t.Fatalf("error = %v, want a 429 ProviderError", err)
	}
	if len(w.d) != 0 || len(f.requests()) != 1 {
		t.Errorf("waited %v after %d requests; a 60s wait past a 10s deadline must not start", w.d, len(f.requests()))
	}
}

func TestDeriveQuery(t *testing.T) {
	f := newFakeGemini(t, ok(`{"query": "PostgresTooManyConnections too many clients", "terms": ["PostgresTooManyConnections", "too many clients"]}`, ""))
	c := newClient(t, f, &waits{}, nil)
	q, err := c.DeriveQuery(t.Context(), "[FIRING:1] PostgresTooManyConnections db-1: too many clients already")
	if err != nil {
		t.Fatal(err)
	}
	want := grounding.DerivedQuery{Query: "PostgresTooManyConnections too many clients", Terms: []string{"PostgresTooManyConnections", "too many clients"}}
	if diff := cmp.Diff(want, q); diff != "" {
		t.Errorf("DeriveQuery (-want +got):\n%s", diff)
	}
	checkGolden(t, "derive_query", f.requests()[0])
}

// checkGolden compares a request body, re-indented with sorted keys, with
// testdata/<name>.golden.
func checkGolden(t *testing.T, name string, body []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, body)
	}
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("request JSON differs from %s (-want +got):\n%s", path, diff)
	}
}

// service is a grounding.Service over the Gemini client, a real store and
// fixed evidence.
func service(t testing.TB, c grounding.Model, ev []grounding.SearchResult) *grounding.Service {
	t.Helper()
	svc, _ := serviceWithArtifacts(t, c, ev)
	return svc
}

// testNonce is the prompts' delimiter in golden files.
const testNonce = "n0nce5eed0000000"

func serviceWithArtifacts(t testing.TB, c grounding.Model, ev []grounding.SearchResult) (*grounding.Service, *store.Artifacts) {
	t.Helper()
	return serviceWithPages(t, c, ev, nil)
}

// serviceWithPages is serviceWithArtifacts with cited pages read through
// pages.
func serviceWithPages(t testing.TB, c grounding.Model, ev []grounding.SearchResult, pages grounding.Pages) (*grounding.Service, *store.Artifacts) {
	t.Helper()
	dir := t.TempDir()
	db, err := sqlstore.Open(t.Context(), sqlstoretest.URL(t, "gemini"), dir, "grounding", discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := store.Migrate(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	arts, err := store.NewArtifacts(filepath.Join(dir, "artifacts"), testKey)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := grounding.New(grounding.Options{
		Searcher: staticSearch(ev), Model: c, Store: store.New(db, arts), Logger: discard, Pages: pages,
		Now:      func() time.Time { return time.Date(2026, 5, 4, 9, 30, 0, 0, time.UTC) },
		NewNonce: func() string { return testNonce },
	})
	if err != nil {
		t.Fatal(err)
	}
	return svc, arts
}

type staticSearch []grounding.SearchResult

func (s staticSearch) Search(_ context.Context, req grounding.SearchRequest) (grounding.SearchResponse, error) {
	return grounding.SearchResponse{Results: s[:min(len(s), req.MaxResults)], Engine: req.Engine}, nil
}

var evidence = []grounding.SearchResult{
	{Title: "Too many clients already: max_connections", URL: "https://www.postgresql.org/docs/current/runtime-config-connection.html", SourceDomain: "postgresql.org",
		Snippet: "max_connections determines the maximum number of concurrent connections to the database server; past it, clients get FATAL: sorry, too many clients already."},
	{Title: "Too many clients already: PgBouncer", URL: "https://www.pgbouncer.org/", SourceDomain: "pgbouncer.org",
		Snippet: "PgBouncer is a lightweight connection pooler for PostgreSQL: too many clients share a few server connections."},
}

func TestGroundWithGemini(t *testing.T) {
	f := newFakeGemini(t, ok("PostgreSQL 拒绝新连接 😱 because max_connections is reached [1]. A pooler such as PgBouncer helps [2][5].", ""))
	svc := service(t, newClient(t, f, &waits{}, nil), evidence)
	m, err := svc.Ground(t.Context(), grounding.GroundRequest{
		Text: "FATAL: sorry, too many clients already", Round: grounding.RoundConfig{Engine: grounding.EngineLocal},
	})
	if err != nil {
		t.Fatal(err)
	}
	wantText := "PostgreSQL 拒绝新连接 😱 because max_connections is reached [1]. A pooler such as PgBouncer helps [2]."
	if m.Text != wantText || m.Status != grounding.StatusNeedsReview || m.Model != testModel {
		t.Errorf("text %q status %v model %q; want %q, needs review (invented [5]), %s", m.Text, m.Status, m.Model, wantText, testModel)
	}
	runes := []rune(m.Text)
	type span struct {
		Text string
		URL  string
	}
	var got []span
	for _, c := range m.Citations {
		got = append(got, span{string(runes[c.StartIndex:c.EndIndex]), c.URL})
	}
	want := []span{
		{"PostgreSQL 拒绝新连接 😱 because max_connections is reached", evidence[0].URL},
		{"A pooler such as PgBouncer helps", evidence[1].URL},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cited spans (-want +got):\n%s", diff)
	}
	checkGolden(t, "ground_local", f.requests()[0])
}

func TestGroundNativeWithGemini(t *testing.T) {
	text := "连接数已满 😱 means max_connections was reached. PgBouncer pools connections."
	first := "连接数已满 😱 means max_connections was reached."
	metadata := `{"webSearchQueries":["postgres too many clients"],
	  "groundingChunks":[{"web":{"uri":"https://vertexaisearch.cloud.google.com/grounding-api-redirect/AAA","title":"postgresql.org"}},
	                     {"web":{"uri":"https://www.pgbouncer.org/usage.html","title":"PgBouncer usage"}}],
	  "groundingSupports":[{"segment":{"endIndex":` + itoa(len(first)) + `,"text":"` + first + `"},"groundingChunkIndices":[0]},
	                       {"segment":{"startIndex":` + itoa(len(first)+1) + `,"endIndex":` + itoa(len(text)) + `,"text":"PgBouncer pools connections."},"groundingChunkIndices":[1]}]}`
	f := newFakeGemini(t, ok(text, metadata))
	svc := service(t, newClient(t, f, &waits{}, nil), nil)
	m, err := svc.Ground(t.Context(), grounding.GroundRequest{Text: "too many clients", Round: grounding.RoundConfig{Engine: grounding.EngineNative}})
	if err != nil {
		t.Fatal(err)
	}
	type cite struct {
		Span, URL, Domain string
		Start, End        int
	}
	var got []cite
	for _, c := range m.Citations {
		got = append(got, cite{string([]rune(m.Text)[c.StartIndex:c.EndIndex]), c.URL, c.Domain, c.StartIndex, c.EndIndex})
	}
	want := []cite{
		{first, "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AAA", "postgresql.org", 0, 42},
		{"PgBouncer pools connections.", "https://www.pgbouncer.org/usage.html", "pgbouncer.org", 43, 71},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("citations (-want +got):\n%s", diff)
	}
	if m.Status != grounding.StatusProcessed || m.Context.Query != "postgres too many clients" || m.Engine != grounding.EngineNative {
		t.Errorf("status %v (%s) query %q engine %v", m.Status, m.Error, m.Context.Query, m.Engine)
	}
}

func TestGroundGeminiFailureStoresFailedMessage(t *testing.T) {
	f := newFakeGemini(t, serverError)
	svc, arts := serviceWithArtifacts(t, newClient(t, f, &waits{}, nil), evidence)
	m, err := svc.Ground(t.Context(), grounding.GroundRequest{Text: "too many clients", Round: grounding.RoundConfig{Engine: grounding.EngineLocal}})
	if err != nil {
		t.Fatalf("Ground: %v", err)
	}
	if m.Status != grounding.StatusFailed || m.Error != "model provider answered 500 INTERNAL after 4 attempt(s)" {
		t.Errorf("status %v error %q", m.Status, m.Error)
	}
	raw, err := arts.Read(m.ArtifactPath)
	if err != nil || !strings.Contains(string(raw), `"status":"INTERNAL"`) {
		t.Errorf("artifact %q, %v; want the provider's error body", raw, err)
	}
	got, err := svc.Get(t.Context(), m.ID)
	if err != nil || got.Status != grounding.StatusFailed {
		t.Errorf("stored: %+v, %v", got, err)
	}
}
