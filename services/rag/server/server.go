// Package server runs groundcrew's rag service: rag ingests documents into collections and answers questions about one collection, with one primary source and an honest out-of-scope.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"google.golang.org/grpc"

	ragv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/rag/v1"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/entrypoint"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/platform/telemetry"
	"github.com/groundcrew/groundcrew/services/rag/internal/answer"
	"github.com/groundcrew/groundcrew/services/rag/internal/rag"
	"github.com/groundcrew/groundcrew/services/rag/internal/raggrpc"
)

// Config is the rag service's configuration, read from the environment.
type Config struct {
	config.Common

	// Addr is where other services dial rag; it listens there too unless
	// ListenAddr says otherwise.
	Addr string `env:"RAG_ADDR" envDefault:"127.0.0.1:50053"`
	// ListenAddr overrides the gRPC listen address, e.g. ":50053" in a
	// container.
	ListenAddr string `env:"RAG_LISTEN_ADDR"`
	// AdminAddr serves /metrics, /healthz and /readyz.
	AdminAddr string `env:"RAG_ADMIN_ADDR" envDefault:"127.0.0.1:9093"`

	// GroqAPIKey enables Groq answers; without it the offline extractive
	// answerer answers. When Groq fails before writing any text, the
	// extractive answerer answers instead.
	GroqAPIKey  string `env:"GROQ_API_KEY" secret:"true"`
	GroqModel   string `env:"GROQ_MODEL" envDefault:"llama-3.3-70b-versatile"`
	GroqBaseURL string `env:"GROQ_BASE_URL" envDefault:"https://api.groq.com/openai/v1"`
	// GroqMaxRetries is how often a rate-limited (429, honouring
	// Retry-After) or failed Groq request is retried.
	GroqMaxRetries int `env:"GROQ_MAX_RETRIES" envDefault:"2"`
	// GroqTimeout bounds each Groq request.
	GroqTimeout time.Duration `env:"GROQ_TIMEOUT" envDefault:"60s"`

	// EmbeddingsProvider is local (default), gemini or openai.
	EmbeddingsProvider string `env:"EMBEDDINGS_PROVIDER" envDefault:"local"`
	// EmbeddingsBaseURL is the provider's API root: required for openai
	// (e.g. http://localhost:11434/v1), optional for gemini.
	EmbeddingsBaseURL string `env:"EMBEDDINGS_BASE_URL"`
	// EmbeddingsModel defaults to gemini-embedding-001 (gemini) or
	// text-embedding-3-small (openai).
	EmbeddingsModel string `env:"EMBEDDINGS_MODEL"`
	// EmbeddingsDimensions is the vector size: gemini's
	// OutputDimensionality (default 768); for openai it is sent as
	// dimensions when set and otherwise learnt from the server.
	EmbeddingsDimensions int `env:"EMBEDDINGS_DIMENSIONS"`
	// EmbeddingsAPIKey authenticates to the embeddings provider; for
	// gemini, GEMINI_API_KEY is used when it is empty.
	EmbeddingsAPIKey string `env:"EMBEDDINGS_API_KEY" secret:"true"`
	GeminiAPIKey     string `env:"GEMINI_API_KEY" secret:"true"`

	// QdrantURL selects Qdrant (its gRPC endpoint, e.g.
	// http://localhost:6334); empty means the embedded index under
	// DATA_DIR.
	QdrantURL    string `env:"QDRANT_URL"`
	QdrantAPIKey string `env:"QDRANT_API_KEY" secret:"true"`

	// Quotas (0 = unlimited): writes past them fail with
	// RESOURCE_EXHAUSTED instead of exhausting memory. MaxChunks bounds
	// the chunks the embedded index holds in memory over all collections
	// (about 1.6 kB each with the local embedder: 164 MB at 100,000 chunks).
	MaxCollections int `env:"RAG_MAX_COLLECTIONS" envDefault:"1000"`
	MaxDocuments   int `env:"RAG_MAX_DOCUMENTS_PER_COLLECTION" envDefault:"100000"`
	MaxChunks      int `env:"RAG_MAX_CHUNKS" envDefault:"1000000"`
	// MaxCollectionsPerKey bounds the collections one API key (the
	// gateway's actor) may create, so that one writer cannot take every
	// collection of RAG_MAX_COLLECTIONS.
	MaxCollectionsPerKey int `env:"RAG_MAX_COLLECTIONS_PER_KEY" envDefault:"100"`
}

// Limits are the configured quotas.
func (c Config) Limits() rag.Limits {
	return rag.Limits{MaxCollections: c.MaxCollections, MaxDocuments: c.MaxDocuments, MaxChunks: c.MaxChunks, MaxCollectionsPerKey: c.MaxCollectionsPerKey}
}

// Validate checks what types cannot.
func (c Config) Validate() error {
	errs := []error{c.Common.Validate()}
	for name, addr := range map[string]string{"RAG_ADDR": c.Addr, "RAG_ADMIN_ADDR": c.AdminAddr, "RAG_LISTEN_ADDR": c.ListenAddr} {
		if addr == "" && name == "RAG_LISTEN_ADDR" {
			continue
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			errs = append(errs, fmt.Errorf("%s: must be host:port, got %q", name, addr))
		}
	}
	switch c.EmbeddingsProvider {
	case "local":
	case "gemini":
		if c.EmbeddingsAPIKey == "" && c.GeminiAPIKey == "" {
			errs = append(errs, errors.New("EMBEDDINGS_PROVIDER=gemini needs EMBEDDINGS_API_KEY or GEMINI_API_KEY"))
		}
	case "openai":
		if c.EmbeddingsBaseURL == "" {
			errs = append(errs, errors.New("EMBEDDINGS_PROVIDER=openai needs EMBEDDINGS_BASE_URL (e.g. http://localhost:11434/v1)"))
		}
	default:
		errs = append(errs, fmt.Errorf("EMBEDDINGS_PROVIDER: must be local, gemini or openai, got %q", c.EmbeddingsProvider))
	}
	for name, v := range map[string]int{"RAG_MAX_COLLECTIONS": c.MaxCollections, "RAG_MAX_DOCUMENTS_PER_COLLECTION": c.MaxDocuments, "RAG_MAX_CHUNKS": c.MaxChunks, "RAG_MAX_COLLECTIONS_PER_KEY": c.MaxCollectionsPerKey} {
		if v < 0 {
			errs = append(errs, fmt.Errorf("%s: must be 0 (unlimited) or more, got %d", name, v))
		}
	}
	if c.EmbeddingsDimensions < 0 {
		errs = append(errs, fmt.Errorf("EMBEDDINGS_DIMENSIONS: must not be negative, got %d", c.EmbeddingsDimensions))
	}
	return errors.Join(errs...)
}

// GRPCListenAddr is where the gRPC server listens.
func (c Config) GRPCListenAddr() string {
	if c.ListenAddr != "" {
		return c.ListenAddr
	}
	return c.Addr
}

// maxRequestBytes bounds one gRPC request. An ingest batch carries whole
// documents (the Go specification is 300 kB of HTML); gRPC's default of
// 4 MiB would reject ordinary batches, and rag-ingest keeps its batches
// well under this.
const maxRequestBytes = 64 << 20

// Run serves the rag service until ctx is done.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	logger.Info("starting", "config", config.LogValue(cfg))
	srv, tp, cleanup, err := entrypoint.NewServer(ctx, "rag", cfg.Common,
		grpcserver.Config{GRPCAddr: cfg.GRPCListenAddr(), AdminAddr: cfg.AdminAddr}, logger,
		grpcserver.WithServerOptions(grpc.MaxRecvMsgSize(maxRequestBytes)))
	if err != nil {
		return err
	}
	defer cleanup()
	providers, err := telemetry.NewProviderMetrics(srv.Registry())
	if err != nil {
		return err
	}
	// Groq and embedding calls are traced, carry the trace context and are
	// counted per provider.
	b, err := newBackends(ctx, cfg, logger, func(provider string) *http.Client {
		return providers.Client(tp, provider, 0)
	})
	if err != nil {
		return err
	}
	defer b.close()
	logger.Info("rag backends", "store", b.storeDesc, "embedder", b.embedderDesc, "answerer", b.answererDesc)

	// One Asker serves every question: the configured writer, with the
	// extractive writer as its fallback.
	asker := answer.NewAsker(b.store, answer.Options{Generator: b.generator, Logger: logger})
	ragv1.RegisterRagServiceServer(srv, raggrpc.NewRagService(b.lib, b.store, raggrpc.Options{
		Asker:          asker,
		EmbeddingModel: b.embedder.Name(),
		Logger:         logger,
	}))
	return srv.Run(ctx)
}
