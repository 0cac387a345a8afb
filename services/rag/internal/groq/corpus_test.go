package groq

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/services/rag/internal/answer"
	"github.com/groundcrew/groundcrew/services/rag/internal/providerhttp/wiretest"
)

// corpusKey is the API key of the corpus tests; no error may show it.
const corpusKey = "gsk_corpusKEY0123456789abcdefghijklmnopqrstuvwxyzAB"

// TestCorpus replays Groq's responses as its documentation gives them
// (testdata/*.http: a completion with x_groq, usage timing,
// system_fingerprint and service_tier; the streamed form with x_groq.usage
// on the last chunk; the error bodies {"error":{message,type,code}} of
// 401, 429 with retry-after, the context-length 400, 413 and 503) through
// the adapter, each with the outcome it must have.
func TestCorpus(t *testing.T) {
	tests := []struct {
		file     string
		stream   bool
		want     answer.Draft
		deltas   string // what the streamed pieces add up to
		wantErr  []string
		requests int
	}{
		{file: "chat_completion.http", want: answer.Draft{
			Text:  "Sending on a closed channel causes a run-time panic [1]. A channel is closed with the built-in function close [2].",
			Cited: []int{1, 0}, Primary: 1, Model: "llama-3.3-70b-versatile"}, requests: 1},
		// The model invents markers: [7] with two excerpts, [0], a
		// repeat, and brackets in code that are no citations.
		{file: "chat_completion_invented_markers.http", want: answer.Draft{
			Text:  "Sending on a closed channel panics [1]. Close it first:\n```go\nclose(ch) // see ch[1]\n```\nThe `s[3]` form indexes [2].",
			Cited: []int{1, 0}, Primary: 1, Dropped: 3, Model: "llama-3.3-70b-versatile"}, requests: 1},
		{file: "chat_completion_stream.http", stream: true, want: answer.Draft{
			Text:  "Sending on a closed channel causes a run-time panic [1]. A channel is closed with close [2].",
			Cited: []int{1, 0}, Primary: 1, Dropped: 1, Model: "llama-3.3-70b-versatile"},
			deltas: "Sending on a closed channel causes a run-time panic [1]. A channel is closed with close [2].", requests: 1},
		// Not retried: the key is wrong.
		{file: "error_401_invalid_api_key.http", wantErr: []string{"401", "invalid_api_key"}, requests: 1},
		// retry-after 20 s is longer than the asker should wait: fail at
		// once (the extractive writer answers instead).
		{file: "error_429_rate_limit.http", wantErr: []string{"429", "rate_limit_exceeded"}, requests: 1},
		{file: "error_429_rate_limit.http", stream: true, wantErr: []string{"429", "rate_limit_exceeded"}, requests: 1},
		// Not retried: the prompt will not get shorter.
		{file: "error_400_context_length_exceeded.http", wantErr: []string{"400", "context_length_exceeded"}, requests: 1},
		{file: "error_413_request_too_large.http", wantErr: []string{"413", "Request too large"}, requests: 1},
		// Retried once (MaxRetries 1), then given up.
		{file: "error_503_unavailable.http", wantErr: []string{"503", "Service Unavailable"}, requests: 2},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s stream=%v", tt.file, tt.stream), func(t *testing.T) {
			srv := wiretest.Replay(t, "testdata/"+tt.file)
			g, err := New(Config{APIKey: corpusKey, Model: "llama-3.3-70b-versatile", BaseURL: srv.URL + "/openai/v1",
				HTTPClient: srv.Client(), MaxRetries: 1, MaxRetryWait: time.Second, NewNonce: func() string { return testNonce }})
			if err != nil {
				t.Fatal(err)
			}
			var (
				got    answer.Draft
				deltas strings.Builder
			)
			if tt.stream {
				got, err = g.GenerateStream(t.Context(), question, chunks, func(s string) { deltas.WriteString(s) })
			} else {
				got, err = g.Generate(t.Context(), question, chunks)
			}
			if n := len(srv.Requests()); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
			for _, r := range srv.Requests() {
				if r.Path != "/openai/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer "+corpusKey {
					t.Errorf("request to %s with Authorization %q", r.Path, r.Header.Get("Authorization"))
				}
			}
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("no error, got %+v", got)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if strings.Contains(err.Error(), corpusKey) {
					t.Errorf("error shows the API key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("draft (-want +got):\n%s", diff)
			}
			if tt.stream && deltas.String() != tt.deltas {
				t.Errorf("deltas add up to %q, want %q", deltas.String(), tt.deltas)
			}
		})
	}
}

// TestErrorsScrubbed: a server (or proxy) that echoes the request's path
// and headers in its error body leaves no trace of the key in the error
// the adapter returns.
func TestErrorsScrubbed(t *testing.T) {
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadGateway)
		var hs []string
		for k, v := range r.Header {
			hs = append(hs, k+": "+strings.Join(v, ","))
		}
		fmt.Fprintf(w, `{"error":{"message":"upstream refused %s %s?key=%s with headers %s","type":"proxy_error"}}`,
			r.Method, r.URL.Path, corpusKey, strings.Join(hs, "; "))
	}))
	t.Cleanup(echo.Close)
	g, err := New(Config{APIKey: corpusKey, BaseURL: echo.URL + "/openai/v1", HTTPClient: echo.Client(), MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, stream := range []bool{false, true} {
		if stream {
			_, err = g.GenerateStream(t.Context(), question, chunks, func(string) {})
		} else {
			_, err = g.Generate(t.Context(), question, chunks)
		}
		if err == nil {
			t.Fatal("no error from a 502")
		}
		if strings.Contains(err.Error(), corpusKey) || strings.Contains(err.Error(), "corpusKEY") {
			t.Errorf("stream=%v: error shows the key: %v", stream, err)
		}
		if !strings.Contains(err.Error(), "/openai/v1/chat/completions") {
			t.Errorf("stream=%v: error lost the useful rest: %v", stream, err)
		}
	}
}

// TestRedirectToAnotherHostRefused: a redirect to another host is not
// followed (the key would go with it); one within the origin is.
func TestRedirectToAnotherHostRefused(t *testing.T) {
	var leaked []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked = append(leaked, r.Header.Get("Authorization"))
		http.Error(w, "elsewhere", http.StatusOK)
	}))
	t.Cleanup(other.Close)
	srv := wiretest.Replay(t, "testdata/chat_completion.http")
	mux := http.NewServeMux()
	mux.HandleFunc("/away/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/home/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/openai/v1/chat/completions", http.StatusTemporaryRedirect)
	})
	mux.Handle("/openai/v1/", srv.Config.Handler)
	front := httptest.NewServer(mux)
	t.Cleanup(front.Close)
	for _, tt := range []struct {
		base string
		ok   bool
	}{{front.URL + "/away", false}, {front.URL + "/home", true}} {
		g, err := New(Config{APIKey: corpusKey, BaseURL: tt.base, MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		_, err = g.Generate(t.Context(), question, chunks)
		if (err == nil) != tt.ok {
			t.Errorf("%s: err = %v, want success %v", tt.base, err, tt.ok)
		}
	}
	if len(leaked) > 0 {
		t.Errorf("the other host received %d requests, with Authorization %q", len(leaked), leaked)
	}
}
