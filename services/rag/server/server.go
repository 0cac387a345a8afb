// Package server runs groundcrew's rag service: rag ingests documents into collections and answers questions about one collection, with one primary source and an honest out-of-scope.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"

	ragv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/rag/v1"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/entrypoint"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
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
	// answerer answers.
	GroqAPIKey  string `env:"GROQ_API_KEY" secret:"true"`
	GroqModel   string `env:"GROQ_MODEL" envDefault:"llama-3.3-70b-versatile"`
	GroqBaseURL string `env:"GROQ_BASE_URL" envDefault:"https://api.groq.com/openai/v1"`
	// EmbeddingsProvider is local (default), gemini or openai.
	EmbeddingsProvider string `env:"EMBEDDINGS_PROVIDER" envDefault:"local"`
	EmbeddingsBaseURL  string `env:"EMBEDDINGS_BASE_URL"`
	// QdrantURL selects Qdrant; empty means the embedded index under DATA_DIR.
	QdrantURL    string `env:"QDRANT_URL"`
	QdrantAPIKey string `env:"QDRANT_API_KEY" secret:"true"`
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
	return errors.Join(errs...)
}

// GRPCListenAddr is where the gRPC server listens.
func (c Config) GRPCListenAddr() string {
	if c.ListenAddr != "" {
		return c.ListenAddr
	}
	return c.Addr
}

// Run serves the rag service until ctx is done.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	logger.Info("starting", "config", config.LogValue(cfg))
	srv, _, cleanup, err := entrypoint.NewServer(ctx, "rag", cfg.Common,
		grpcserver.Config{GRPCAddr: cfg.GRPCListenAddr(), AdminAddr: cfg.AdminAddr}, logger)
	if err != nil {
		return err
	}
	defer cleanup()
	ragv1.RegisterRagServiceServer(srv, raggrpc.NewRagService())
	return srv.Run(ctx)
}
