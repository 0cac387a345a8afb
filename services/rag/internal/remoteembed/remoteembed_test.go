package remoteembed

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/groundcrew/groundcrew/services/rag/internal/rag"
)

var (
	_ rag.Embedder = (*Gemini)(nil)
	_ rag.Embedder = (*OpenAI)(nil)
)

// vectorFor is what the fake servers return for a text: not unit length,
// and different per text, so order and normalisation can be checked.
func vectorFor(text string, dims int) []float64 {
	v := make([]float64, dims)
	v[0] = 3
	v[1] = 4
	v[2] = float64(len(text))
	return v
}

// approx compares float32 components up to rounding.
var approx = cmpopts.EquateApprox(0, 1e-6)

func unit(v []float64) []float32 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x / math.Sqrt(s))
	}
	return out
}

// recorder keeps what a fake server received.
type recorder struct {
	mu      sync.Mutex
	bodies  []map[string]any
	headers []http.Header
	paths   []string
}

func (r *recorder) record(req *http.Request) map[string]any {
	var body map[string]any
	raw, _ := io.ReadAll(req.Body)
	_ = json.Unmarshal(raw, &body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bodies = append(r.bodies, body)
	r.headers = append(r.headers, req.Header.Clone())
	r.paths = append(r.paths, req.URL.Path)
	return body
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strings.Repeat("x", i+1)
	}
	return out
}

func TestGemini(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := rec.record(r)
		if !strings.HasSuffix(r.URL.Path, "/models/gemini-embedding-001:batchEmbedContents") {
			http.Error(w, `{"error":{"code":404,"message":"no"}}`, http.StatusNotFound)
			return
		}
		var embs []any
		for _, q := range body["requests"].([]any) {
			req := q.(map[string]any)
			text := req["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)["text"].(string)
			dims := int(req["outputDimensionality"].(float64))
			embs = append(embs, map[string]any{"values": vectorFor(text, dims)})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"embeddings": embs})
	}))
	t.Cleanup(srv.Close)

	g, err := NewGemini(t.Context(), Config{APIKey: "AIza-test", BaseURL: srv.URL + "/", Dimensions: 8, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if g.Name() != "gemini:gemini-embedding-001-8" || g.Dimensions() != 8 {
		t.Errorf("Name, Dimensions = %q, %d", g.Name(), g.Dimensions())
	}
	in := texts(150)
	got, err := g.Embed(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 150 {
		t.Fatalf("%d vectors, want 150", len(got))
	}
	for i, v := range got {
		if diff := cmp.Diff(unit(vectorFor(in[i], 8)), v, approx); diff != "" {
			t.Fatalf("vector %d (-want +got):\n%s", i, diff)
		}
	}
	// Two batches: 100 then 50, each request carrying the model and size.
	if len(rec.bodies) != 2 || len(rec.bodies[0]["requests"].([]any)) != 100 || len(rec.bodies[1]["requests"].([]any)) != 50 {
		t.Fatalf("requests: %d, want batches of 100 and 50", len(rec.bodies))
	}
	first := rec.bodies[0]["requests"].([]any)[0].(map[string]any)
	if first["model"] != "models/gemini-embedding-001" || first["outputDimensionality"] != float64(8) {
		t.Errorf("request = %v, want the model and outputDimensionality 8", first)
	}
	if k := rec.headers[0].Get("x-goog-api-key"); k != "AIza-test" {
		t.Errorf("x-goog-api-key = %q", k)
	}
}

func TestGeminiNeedsKey(t *testing.T) {
	if _, err := NewGemini(t.Context(), Config{}); err == nil {
		t.Error("NewGemini without a key succeeded")
	}
}

// openAIServer answers /v1/embeddings in OpenAI's format, in reverse
// index order (the spec allows any order), after failing `fail` times
// with a 429.
func openAIServer(t *testing.T, rec *recorder, fail int) *httptest.Server {
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := rec.record(r)
		if r.URL.Path != "/v1/embeddings" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		mu.Lock()
		failing := fail > 0
		fail--
		mu.Unlock()
		if failing {
			w.Header().Set("Retry-After-Ms", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"message":"rate limited"}}`)
			return
		}
		dims := 6
		if d, ok := body["dimensions"].(float64); ok {
			dims = int(d)
		}
		input := body["input"].([]any)
		var data []any
		for i := len(input) - 1; i >= 0; i-- {
			data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": vectorFor(input[i].(string), dims)})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": body["model"],
			"usage": map[string]any{"prompt_tokens": 1, "total_tokens": 1}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestOpenAI(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		wantDims int
		wantName string
		probe    int // requests made at construction
	}{
		{"probed size, no key", Config{Model: "nomic-embed-text"}, 6, "openai:nomic-embed-text-6", 1},
		{"explicit size", Config{Model: "text-embedding-3-small", Dimensions: 4, APIKey: "sk-test"}, 4, "openai:text-embedding-3-small-4", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			srv := openAIServer(t, rec, 1)
			cfg := tt.cfg
			cfg.BaseURL, cfg.HTTPClient = srv.URL+"/v1", srv.Client()
			e, err := NewOpenAI(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if e.Dimensions() != tt.wantDims || e.Name() != tt.wantName {
				t.Errorf("Dimensions, Name = %d, %q; want %d, %q", e.Dimensions(), e.Name(), tt.wantDims, tt.wantName)
			}
			in := texts(70)
			got, err := e.Embed(t.Context(), in)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range got {
				if diff := cmp.Diff(unit(vectorFor(in[i], tt.wantDims)), v, approx); diff != "" {
					t.Fatalf("vector %d (-want +got):\n%s", i, diff)
				}
			}
			// One 429 retried, then the batches of 64 and 6 (after the
			// probe, if any).
			bodies := rec.bodies[1+tt.probe:]
			if len(bodies) != 2 || len(bodies[0]["input"].([]any)) != 64 || len(bodies[1]["input"].([]any)) != 6 {
				t.Fatalf("%d requests after the probe and the retried 429, want 2 batches of 64 and 6", len(bodies))
			}
			b := bodies[0]
			if b["model"] != cfg.Model || b["encoding_format"] != "float" {
				t.Errorf("body = %v, want the model and float encoding", b)
			}
			if _, sent := b["dimensions"]; sent != (cfg.Dimensions > 0) {
				t.Errorf("dimensions sent = %v, want %v", sent, cfg.Dimensions > 0)
			}
			auth := rec.headers[len(rec.headers)-1].Get("Authorization")
			if (cfg.APIKey != "") != (auth == "Bearer "+cfg.APIKey) {
				t.Errorf("Authorization = %q with key %q", auth, cfg.APIKey)
			}
		})
	}
}

func TestOpenAIBadConfig(t *testing.T) {
	rec := &recorder{}
	srv := openAIServer(t, rec, 0)
	for _, cfg := range []Config{{}, {BaseURL: "localhost:11434"}, {BaseURL: srv.URL + "/wrong", HTTPClient: srv.Client(), MaxRetries: -1}} {
		if _, err := NewOpenAI(t.Context(), cfg); err == nil {
			t.Errorf("NewOpenAI(%+v) succeeded", cfg)
		}
	}
}
