package server

import (
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/telemetry"
	"github.com/groundcrew/groundcrew/services/rag/internal/answer"
	"github.com/groundcrew/groundcrew/services/rag/internal/groq"
)

func load(t *testing.T, env map[string]string) (Config, error) {
	t.Helper()
	return config.Load[Config](config.MapLookup(env))
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string // "" for valid
	}{
		{"defaults", nil, ""},
		{"unknown provider", map[string]string{"EMBEDDINGS_PROVIDER": "cohere"}, "EMBEDDINGS_PROVIDER: must be local, gemini or openai"},
		{"gemini without key", map[string]string{"EMBEDDINGS_PROVIDER": "gemini"}, "GEMINI_API_KEY"},
		{"gemini with key", map[string]string{"EMBEDDINGS_PROVIDER": "gemini", "GEMINI_API_KEY": "k"}, ""},
		{"openai without url", map[string]string{"EMBEDDINGS_PROVIDER": "openai"}, "EMBEDDINGS_BASE_URL"},
		{"quotas unlimited", map[string]string{"RAG_MAX_COLLECTIONS": "0", "RAG_MAX_DOCUMENTS_PER_COLLECTION": "0", "RAG_MAX_CHUNKS": "0"}, ""},
		{"negative chunk quota", map[string]string{"RAG_MAX_CHUNKS": "-1"}, "RAG_MAX_CHUNKS: must be 0 (unlimited) or more"},
		{"negative document quota", map[string]string{"RAG_MAX_DOCUMENTS_PER_COLLECTION": "-5"}, "RAG_MAX_DOCUMENTS_PER_COLLECTION"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, tt.env)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Load = %v, want valid", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Load = %v, want an error naming %q", err, tt.want)
			}
		})
	}
}

func TestBackends(t *testing.T) {
	emb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Input []string `json:"input"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		var data []any
		for i := range body.Input {
			data = append(data, map[string]any{"index": i, "embedding": []float64{1, 2, 3}})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	t.Cleanup(emb.Close)
	tests := []struct {
		name                      string
		env                       map[string]string
		store, embedder, answerer string
		generatorIsGroq           bool
		// providers are the clients asked for; requests what they sent
		// while starting (the openai embedder probes the vector size).
		providers []string
		requests  string
	}{
		{"offline defaults", nil, "embedded", "local (local-hash-v1-384", "extractive", false, nil, ""},
		{"groq and openai embeddings", map[string]string{"GROQ_API_KEY": "gsk", "EMBEDDINGS_PROVIDER": "openai",
			"EMBEDDINGS_BASE_URL": emb.URL + "/v1", "EMBEDDINGS_MODEL": "nomic"},
			"embedded", "openai-compatible (openai:nomic-3", "groq (llama-3.3-70b-versatile", true,
			[]string{"openai-embeddings", "groq"}, `provider_requests_total{code="200",provider="openai-embeddings"} 1`},
		{"gemini embeddings", map[string]string{"EMBEDDINGS_PROVIDER": "gemini", "GEMINI_API_KEY": "k", "EMBEDDINGS_BASE_URL": emb.URL},
			"embedded", "gemini (gemini:gemini-embedding-001-768", "extractive", false, []string{"gemini-embeddings"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"DATA_DIR": t.TempDir()}
			for k, v := range tt.env {
				env[k] = v
			}
			cfg, err := load(t, env)
			if err != nil {
				t.Fatal(err)
			}
			reg := prometheus.NewPedanticRegistry()
			pm, err := telemetry.NewProviderMetrics(reg)
			if err != nil {
				t.Fatal(err)
			}
			var asked []string
			b, err := newBackends(t.Context(), cfg, slog.New(slog.DiscardHandler), func(provider string) *http.Client {
				asked = append(asked, provider)
				return pm.Client(nil, provider, 0)
			})
			if err != nil {
				t.Fatal(err)
			}
			defer b.close()
			if diff := cmp.Diff(tt.providers, asked); diff != "" {
				t.Errorf("provider clients (-want +got):\n%s", diff)
			}
			want := ""
			if tt.requests != "" {
				want = "# HELP provider_requests_total HTTP requests to providers (every attempt), by provider and HTTP status code, timeout, canceled or transport.\n" +
					"# TYPE provider_requests_total counter\n" + tt.requests + "\n"
			}
			if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "provider_requests_total"); err != nil {
				t.Error(err)
			}
			if !strings.HasPrefix(b.storeDesc, tt.store) || !strings.HasPrefix(b.embedderDesc, tt.embedder) || !strings.HasPrefix(b.answererDesc, tt.answerer) {
				t.Errorf("backends = %q, %q, %q; want prefixes %q, %q, %q", b.storeDesc, b.embedderDesc, b.answererDesc, tt.store, tt.embedder, tt.answerer)
			}
			_, isGroq := b.generator.(*groq.Generator)
			_, isExtractive := b.generator.(*answer.Extractive)
			if isGroq != tt.generatorIsGroq || isExtractive == tt.generatorIsGroq {
				t.Errorf("generator %T", b.generator)
			}
		})
	}
}

func TestQdrantUnreachable(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	cfg, err := load(t, map[string]string{"DATA_DIR": t.TempDir(), "QDRANT_URL": "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newBackends(t.Context(), cfg, slog.New(slog.DiscardHandler), nil); err == nil || !strings.Contains(err.Error(), "QDRANT_URL") {
		t.Errorf("newBackends = %v, want an error naming QDRANT_URL", err)
	}
}
