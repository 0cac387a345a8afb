// Package server runs groundcrew's search service: search finds evidence: a local full-text index by default, web engines when configured.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/entrypoint"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/platform/httpretry"
	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/telemetry"
	"github.com/groundcrew/groundcrew/services/search/internal/brave"
	"github.com/groundcrew/groundcrew/services/search/internal/enginehttp"
	"github.com/groundcrew/groundcrew/services/search/internal/exa"
	"github.com/groundcrew/groundcrew/services/search/internal/localindex"
	"github.com/groundcrew/groundcrew/services/search/internal/pgindex"
	"github.com/groundcrew/groundcrew/services/search/internal/search"
	"github.com/groundcrew/groundcrew/services/search/internal/searchgrpc"
	"github.com/groundcrew/groundcrew/services/search/internal/searxng"
	"github.com/groundcrew/groundcrew/services/search/internal/tavily"
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

	// EngineTimeout bounds one engine call, retries included.
	EngineTimeout time.Duration `env:"SEARCH_ENGINE_TIMEOUT" envDefault:"8s"`
	// Timeout bounds a whole search, fallbacks included, when the caller
	// set no earlier deadline.
	Timeout time.Duration `env:"SEARCH_TIMEOUT" envDefault:"20s"`
	// SearchDatabaseURL keeps the local index in PostgreSQL
	// (postgres://…) instead of bleve under DATA_DIR, so that any number of
	// replicas share it; DatabaseURL is used when it is empty.
	SearchDatabaseURL string `env:"SEARCH_DATABASE_URL" secret:"true"`
	DatabaseURL       string `env:"DATABASE_URL" secret:"true"`

	// CacheTTL and CacheSize bound the result cache (0 TTL: default,
	// negative: off).
	CacheTTL  time.Duration `env:"SEARCH_CACHE_TTL" envDefault:"60s"`
	CacheSize int           `env:"SEARCH_CACHE_SIZE" envDefault:"1024"`
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

// IndexDatabaseURL is the database the local index lives in:
// SEARCH_DATABASE_URL, else DATABASE_URL; empty for the bleve index.
func (c Config) IndexDatabaseURL() (url, variable string) {
	if c.SearchDatabaseURL != "" {
		return c.SearchDatabaseURL, "SEARCH_DATABASE_URL"
	}
	if c.DatabaseURL != "" {
		return c.DatabaseURL, "DATABASE_URL"
	}
	return "", ""
}

// localIndex is what the service needs of its local index, bleve or
// PostgreSQL.
type localIndex interface {
	search.Engine
	search.DocumentIndexer
	searchgrpc.Counter
}

// openIndex opens the local index: in PostgreSQL when a database is
// configured, else the bleve index under DATA_DIR. close releases it.
func openIndex(ctx context.Context, cfg Config, logger *slog.Logger) (localIndex, func(), error) {
	if dbURL, variable := cfg.IndexDatabaseURL(); dbURL != "" {
		if !strings.HasPrefix(dbURL, "postgres://") && !strings.HasPrefix(dbURL, "postgresql://") {
			return nil, nil, fmt.Errorf("%s: the local index needs PostgreSQL (postgres://…); unset it for the embedded index under DATA_DIR", variable)
		}
		db, err := sqlstore.Open(ctx, dbURL, "", "search", logger)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", variable, err)
		}
		ix, err := pgindex.Open(ctx, db, pgindex.Options{})
		if err != nil {
			_ = db.Close()
			return nil, nil, fmt.Errorf("%s: opening the local index: %w", variable, err)
		}
		logger.Info("local index on PostgreSQL: replicas on this database share it", "from", variable)
		return ix, func() {
			if err := db.Close(); err != nil {
				logger.Error("closing the local index database", "error", err)
			}
		}, nil
	}
	indexDir := filepath.Join(cfg.DataDir, "search-index")
	ix, err := localindex.Open(indexDir, localindex.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("opening the local index in %s: %w", indexDir, err)
	}
	logger.Info("local index in DATA_DIR (bleve): one replica; set SEARCH_DATABASE_URL to share it between replicas", "dir", indexDir)
	return ix, func() {
		if err := ix.Close(); err != nil {
			logger.Error("closing the local index", "error", err)
		}
	}, nil
}

// Run serves the search service until ctx is done.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	logger.Info("starting", "config", config.LogValue(cfg))
	index, closeIndex, err := openIndex(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer closeIndex()
	srv, tp, cleanup, err := entrypoint.NewServer(ctx, "search", cfg.Common,
		grpcserver.Config{GRPCAddr: cfg.GRPCListenAddr(), AdminAddr: cfg.AdminAddr}, logger)
	if err != nil {
		return err
	}
	defer cleanup()
	providers, err := telemetry.NewProviderMetrics(srv.Registry())
	if err != nil {
		return err
	}
	// Engine calls are traced, carry the trace context to the provider and
	// are counted per engine; the retry wrapper sits on top, so every
	// attempt counts.
	engines, err := webEngines(cfg, func(engine string) *httpretry.Client {
		return enginehttp.NewRetryClient(providers.Client(tp, engine, 0))
	})
	if err != nil {
		return err
	}
	names := []string{search.EngineLocal}
	for _, e := range engines {
		names = append(names, e.Name())
	}
	logger.Info("search engines", "configured", names, "auto_order", search.DefaultAutoOrder)
	svc, err := search.NewService(search.Config{
		Engines:       append(engines, index),
		Indexer:       index,
		CacheTTL:      cfg.CacheTTL,
		CacheSize:     cfg.CacheSize,
		EngineTimeout: cfg.EngineTimeout,
		SearchTimeout: cfg.Timeout,
		Logger:        logger,
	})
	if err != nil {
		return fmt.Errorf("building the search service: %w", err)
	}

	registerMetrics(srv.Registry(), svc)
	searchv1.RegisterSearchServiceServer(srv, searchgrpc.NewSearchService(svc, index, logger))
	return srv.Run(ctx)
}

// webEngines builds the web engines whose configuration is present; retry
// gives each engine its HTTP client, by engine name.
func webEngines(cfg Config, retry func(engine string) *httpretry.Client) ([]search.Engine, error) {
	var out []search.Engine
	if cfg.SearxngURL != "" {
		c, err := searxng.New(searxng.Config{BaseURL: cfg.SearxngURL, Timeout: cfg.EngineTimeout, Retry: retry(search.EngineSearxng)})
		if err != nil {
			return nil, fmt.Errorf("SEARXNG_URL: %w", err)
		}
		out = append(out, c)
	}
	if cfg.ExaAPIKey != "" {
		c, err := exa.New(exa.Config{APIKey: cfg.ExaAPIKey, BaseURL: cfg.ExaBaseURL, Timeout: cfg.EngineTimeout, Retry: retry(search.EngineExa)})
		if err != nil {
			return nil, fmt.Errorf("EXA_API_KEY/EXA_BASE_URL: %w", err)
		}
		out = append(out, c)
	}
	if cfg.TavilyAPIKey != "" {
		c, err := tavily.New(tavily.Config{APIKey: cfg.TavilyAPIKey, BaseURL: cfg.TavilyBaseURL, Timeout: cfg.EngineTimeout, Retry: retry(search.EngineTavily)})
		if err != nil {
			return nil, fmt.Errorf("TAVILY_API_KEY/TAVILY_BASE_URL: %w", err)
		}
		out = append(out, c)
	}
	if cfg.BraveAPIKey != "" {
		c, err := brave.New(brave.Config{APIKey: cfg.BraveAPIKey, BaseURL: cfg.BraveBaseURL, Timeout: cfg.EngineTimeout, Retry: retry(search.EngineBrave)})
		if err != nil {
			return nil, fmt.Errorf("BRAVE_API_KEY/BRAVE_BASE_URL: %w", err)
		}
		out = append(out, c)
	}
	return out, nil
}

// registerMetrics exposes the service's cache and engine counters.
func registerMetrics(reg prometheus.Registerer, svc *search.Service) {
	counter := func(name, help string, f func(search.Stats) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return float64(f(svc.Stats())) })
	}
	reg.MustRegister(
		counter("search_cache_hits_total", "Searches answered from the result cache.", func(s search.Stats) uint64 { return s.CacheHits }),
		counter("search_cache_misses_total", "Searches not answered from the result cache.", func(s search.Stats) uint64 { return s.CacheMisses }),
		counter("search_engine_calls_total", "Searches that called engines (one per flight).", func(s search.Stats) uint64 { return s.EngineCalls }),
		counter("search_coalesced_total", "Searches that shared an identical search's engine call.", func(s search.Stats) uint64 { return s.Coalesced }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "search_cache_entries", Help: "Responses in the result cache."},
			func() float64 { return float64(svc.Stats().CacheEntries) }),
	)
}
