// Package server runs groundcrew's search service: search finds evidence: a local full-text index by default, web engines when configured.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"

	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/entrypoint"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/services/search/internal/searchgrpc"
)

// Config is the search service's configuration, read from the environment.
type Config struct {
	config.Common

	// Addr is where other services dial search; it listens there too unless
	// ListenAddr says otherwise.
	Addr string `env:"SEARCH_ADDR" envDefault:"127.0.0.1:50051"`
	// ListenAddr overrides the gRPC listen address, e.g. ":50051" in a
	// container.
	ListenAddr string `env:"SEARCH_LISTEN_ADDR"`
	// AdminAddr serves /metrics, /healthz and /readyz.
	AdminAddr string `env:"SEARCH_ADMIN_ADDR" envDefault:"127.0.0.1:9091"`

	// SearxngURL is a self-hosted SearxNG instance; empty disables it.
	SearxngURL string `env:"SEARXNG_URL"`
	// ExaAPIKey enables Exa; ExaBaseURL points it elsewhere (tests, mirrors).
	ExaAPIKey  string `env:"EXA_API_KEY" secret:"true"`
	ExaBaseURL string `env:"EXA_BASE_URL" envDefault:"https://api.exa.ai"`
	// TavilyAPIKey enables Tavily.
	TavilyAPIKey  string `env:"TAVILY_API_KEY" secret:"true"`
	TavilyBaseURL string `env:"TAVILY_BASE_URL" envDefault:"https://api.tavily.com"`
	// BraveAPIKey enables Brave Search.
	BraveAPIKey  string `env:"BRAVE_API_KEY" secret:"true"`
	BraveBaseURL string `env:"BRAVE_BASE_URL" envDefault:"https://api.search.brave.com"`
}

// Validate checks what types cannot.
func (c Config) Validate() error {
	errs := []error{c.Common.Validate()}
	for name, addr := range map[string]string{"SEARCH_ADDR": c.Addr, "SEARCH_ADMIN_ADDR": c.AdminAddr, "SEARCH_LISTEN_ADDR": c.ListenAddr} {
		if addr == "" && name == "SEARCH_LISTEN_ADDR" {
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

// Run serves the search service until ctx is done.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	logger.Info("starting", "config", config.LogValue(cfg))
	srv, _, cleanup, err := entrypoint.NewServer(ctx, "search", cfg.Common,
		grpcserver.Config{GRPCAddr: cfg.GRPCListenAddr(), AdminAddr: cfg.AdminAddr}, logger)
	if err != nil {
		return err
	}
	defer cleanup()
	searchv1.RegisterSearchServiceServer(srv, searchgrpc.NewSearchService())
	return srv.Run(ctx)
}
