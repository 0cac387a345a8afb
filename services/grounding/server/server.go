// Package server runs groundcrew's grounding service: grounding writes short cited summaries from collected evidence, stores them for audit, writes the chat agent's replies and runs research.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/entrypoint"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/services/grounding/internal/groundinggrpc"
)

// Config is the grounding service's configuration, read from the environment.
type Config struct {
	config.Common

	// Addr is where other services dial grounding; it listens there too unless
	// ListenAddr says otherwise.
	Addr string `env:"GROUNDING_ADDR" envDefault:"127.0.0.1:50052"`
	// ListenAddr overrides the gRPC listen address, e.g. ":50052" in a
	// container.
	ListenAddr string `env:"GROUNDING_LISTEN_ADDR"`
	// AdminAddr serves /metrics, /healthz and /readyz.
	AdminAddr string `env:"GROUNDING_ADMIN_ADDR" envDefault:"127.0.0.1:9092"`

	// GeminiAPIKey enables Gemini; without it the offline extractive
	// summariser answers.
	GeminiAPIKey  string `env:"GEMINI_API_KEY" secret:"true"`
	GeminiModel   string `env:"GEMINI_MODEL" envDefault:"gemini-2.5-flash"`
	GeminiBaseURL string `env:"GOOGLE_GEMINI_BASE_URL"`
	// DatabaseURL selects Postgres (postgres://…); empty means SQLite under
	// DATA_DIR.
	DatabaseURL string `env:"DATABASE_URL" secret:"true"`
	// MaxSources is how many sources a grounded answer keeps.
	MaxSources int `env:"GROUNDING_MAX_SOURCES" envDefault:"3"`
	// SearchAddr, RagAddr and NotifierAddr are the services grounding calls.
	SearchAddr   string `env:"SEARCH_ADDR" envDefault:"127.0.0.1:50051"`
	RagAddr      string `env:"RAG_ADDR" envDefault:"127.0.0.1:50053"`
	NotifierAddr string `env:"NOTIFIER_ADDR" envDefault:"127.0.0.1:50054"`
}

// Validate checks what types cannot.
func (c Config) Validate() error {
	errs := []error{c.Common.Validate()}
	for name, addr := range map[string]string{"GROUNDING_ADDR": c.Addr, "GROUNDING_ADMIN_ADDR": c.AdminAddr, "GROUNDING_LISTEN_ADDR": c.ListenAddr} {
		if addr == "" && name == "GROUNDING_LISTEN_ADDR" {
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

// Run serves the grounding service until ctx is done.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	logger.Info("starting", "config", config.LogValue(cfg))
	srv, _, cleanup, err := entrypoint.NewServer(ctx, "grounding", cfg.Common,
		grpcserver.Config{GRPCAddr: cfg.GRPCListenAddr(), AdminAddr: cfg.AdminAddr}, logger)
	if err != nil {
		return err
	}
	defer cleanup()
	groundingv1.RegisterGroundingServiceServer(srv, groundinggrpc.NewGroundingService())
	groundingv1.RegisterResearchServiceServer(srv, groundinggrpc.NewResearchService())
	return srv.Run(ctx)
}
