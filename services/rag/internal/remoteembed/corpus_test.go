package remoteembed

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/services/rag/internal/providerhttp/wiretest"
	"github.com/groundcrew/groundcrew/services/rag/internal/rag"
)

// corpusKey is the corpus tests' API key; no error may show it.
const corpusKey = "sk-proj-corpusKEY0123456789abcdefghijklmnopqrstuvwxyz"

// corpusVectors are the two vectors of the corpus's successful
// responses, before normalisation.
var corpusVectors = [][]float64{
	{0.0123, -0.0456, 0.0789, -0.0312, 0.0654, -0.0987, 0.0211, 0.0432},
	{-0.0532, 0.0145, -0.0267, 0.0891, -0.0413, 0.0276, -0.0698, 0.0154},
}

// TestCorpus replays the embeddings providers' responses as their
// documentation gives them (testdata/*.http: the OpenAI-compatible
// embeddings list with object, data[].embedding, model and usage, and
// its error bodies; Gemini's batchEmbedContents, which the genai client
// uses for every Gemini API embedding, and its google.rpc error bodies
// with ErrorInfo, QuotaFailure and RetryInfo) through the adapters, each
// with the outcome it must have. Retries are off: one request each.
func TestCorpus(t *testing.T) {
	tests := []struct {
		provider string // openai or gemini
		file     string
		wantErr  []string
	}{
		{"openai", "openai_embeddings.http", nil},
		{"openai", "openai_error_401_invalid_api_key.http", []string{"401", "invalid_api_key", "Incorrect API key provided"}},
		{"openai", "openai_error_429_rate_limit.http", []string{"429", "rate_limit_exceeded"}},
		{"openai", "openai_error_400_context_length.http", []string{"400", "maximum context length"}},
		{"openai", "openai_error_503.http", []string{"503", "overloaded"}},
		{"gemini", "gemini_batch_embed_contents.http", nil},
		{"gemini", "gemini_error_400_api_key_invalid.http", []string{"400", "INVALID_ARGUMENT", "API key not valid"}},
		{"gemini", "gemini_error_429_resource_exhausted.http", []string{"429", "RESOURCE_EXHAUSTED"}},
		{"gemini", "gemini_error_503_unavailable.http", []string{"503", "UNAVAILABLE"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			srv := wiretest.Replay(t, "testdata/"+tt.file)
			var (
				emb rag.Embedder
				err error
			)
			cfg := Config{APIKey: corpusKey, BaseURL: srv.URL, Dimensions: 8, MaxRetries: -1, HTTPClient: srv.Client()}
			if tt.provider == "openai" {
				cfg.BaseURL += "/v1"
				emb, err = NewOpenAI(t.Context(), cfg)
			} else {
				emb, err = NewGemini(t.Context(), cfg)
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := emb.Embed(t.Context(), []string{"A send on a closed channel panics.", "Maps are not comparable."})
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			checkRequest(t, tt.provider, reqs[0])
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("no error, got %d vectors", len(got))
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if strings.Contains(err.Error(), "corpusKEY") {
					t.Errorf("error shows the API key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := [][]float32{unit(corpusVectors[0]), unit(corpusVectors[1])}
			if diff := cmp.Diff(want, got, approx); diff != "" {
				t.Errorf("vectors (-want +got):\n%s", diff)
			}
		})
	}
}

// checkRequest asserts the documented request: path, key header and body.
func checkRequest(t *testing.T, provider string, r wiretest.Request) {
	t.Helper()
	var body map[string]any
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("request body: %v", err)
	}
	switch provider {
	case "openai":
		if r.Path != "/v1/embeddings" || r.Header.Get("Authorization") != "Bearer "+corpusKey {
			t.Errorf("request %s with Authorization %q", r.Path, r.Header.Get("Authorization"))
		}
		if body["model"] != DefaultOpenAIModel || body["encoding_format"] != "float" || body["dimensions"] != 8.0 || len(body["input"].([]any)) != 2 {
			t.Errorf("request body %v", body)
		}
	case "gemini":
		if r.Path != "/v1beta/models/"+DefaultGeminiModel+":batchEmbedContents" || r.Header.Get("X-Goog-Api-Key") != corpusKey {
			t.Errorf("request %s with x-goog-api-key %q", r.Path, r.Header.Get("X-Goog-Api-Key"))
		}
		reqs, _ := body["requests"].([]any)
		if len(reqs) != 2 || reqs[0].(map[string]any)["outputDimensionality"] != 8.0 {
			t.Errorf("request body %v", body)
		}
	}
}

// TestErrorsScrubbedAndRedirectsRefused: a server echoing the request's
// path, query and headers in its error leaves no trace of the key in the
// error, and a redirect to another host is never followed with the key.
func TestErrorsScrubbedAndRedirectsRefused(t *testing.T) {
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var hs []string
		for k, v := range r.Header {
			hs = append(hs, k+": "+strings.Join(v, ","))
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"code":400,"message":"refused %s?%s with %s","status":"INVALID_ARGUMENT","type":"invalid_request_error"}}`,
			r.URL.Path, r.URL.RawQuery, strings.Join(hs, "; "))
	}))
	t.Cleanup(echo.Close)
	var leaked []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked = append(leaked, r.Header.Get("Authorization")+r.Header.Get("X-Goog-Api-Key"))
	}))
	t.Cleanup(other.Close)
	away := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(away.Close)
	for _, base := range []string{echo.URL, away.URL} {
		for _, provider := range []string{"openai", "gemini"} {
			cfg := Config{APIKey: corpusKey, BaseURL: base, Dimensions: 8, MaxRetries: -1}
			var err error
			if provider == "openai" {
				var e *OpenAI
				if e, err = NewOpenAI(context.Background(), cfg); err == nil {
					_, err = e.Embed(t.Context(), []string{"x"})
				}
			} else {
				var g *Gemini
				if g, err = NewGemini(context.Background(), cfg); err == nil {
					_, err = g.Embed(t.Context(), []string{"x"})
				}
			}
			if err == nil {
				t.Fatalf("%s at %s: no error", provider, base)
			}
			if strings.Contains(err.Error(), "corpusKEY") {
				t.Errorf("%s at %s: error shows the key: %v", provider, base, err)
			}
		}
	}
	if len(leaked) > 0 {
		t.Errorf("another host received the key: %q", leaked)
	}
}
