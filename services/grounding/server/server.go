// Package server runs groundcrew's grounding service: grounding writes short cited summaries from collected evidence, stores them for audit, writes the chat agent's replies and runs research.
package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/entrypoint"
	"github.com/groundcrew/groundcrew/platform/grpcclient"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/telemetry"
	"github.com/groundcrew/groundcrew/services/grounding/internal/gemini"
	"github.com/groundcrew/groundcrew/services/grounding/internal/grounding"
	"github.com/groundcrew/groundcrew/services/grounding/internal/groundinggrpc"
	"github.com/groundcrew/groundcrew/services/grounding/internal/pagefetch"
	"github.com/groundcrew/groundcrew/services/grounding/internal/searchclient"
	"github.com/groundcrew/groundcrew/services/grounding/internal/store"
)

// Config is the grounding service's configuration, read from the environment.
type Config struct {
	config.Common
	ResearchConfig

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
	// MaxSources is how many sources a grounded answer keeps (1..10).
	MaxSources int `env:"GROUNDING_MAX_SOURCES" envDefault:"3"`
	// RoundTimeout bounds a Ground round whose request sets no timeout_ms.
	RoundTimeout time.Duration `env:"GROUNDING_ROUND_TIMEOUT" envDefault:"30s"`
	// QueryTimeout bounds Gemini's part of DeriveQuery; past it the
	// offline keyword query is returned.
	QueryTimeout time.Duration `env:"GROUNDING_QUERY_TIMEOUT" envDefault:"5s"`
	// ArtifactRetention is the raw-data period: after it raw provider
	// responses and fetched page HTML are archived as ArchiveMode says; the
	// messages themselves are kept.
	ArtifactRetention time.Duration `env:"GROUNDING_ARTIFACT_RETENTION" envDefault:"4320h"`
	// ArchiveMode is compress (gzip into DATA_DIR/archive) or desensitize
	// (keep only the shape, in place).
	ArchiveMode string `env:"GROUNDING_ARCHIVE_MODE" envDefault:"compress"`
	// MessageRetention purges message bodies, evidence and artifacts after
	// it ("keep", the default, or 0 keeps them).
	MessageRetention string `env:"GROUNDING_MESSAGE_RETENTION" envDefault:"keep"`
	// RetentionInterval is how often the artifact retention job runs.
	RetentionInterval time.Duration `env:"GROUNDING_RETENTION_INTERVAL" envDefault:"1h"`
	// FetchPages: grounding fetches the pages it cites (public http(s)
	// addresses only) for their titles, snippets and the restricted
	// raw_html artifact. False fetches none (native sources are then titled
	// with their domain and have no snippet); Gemini's redirect links are
	// resolved either way, which contacts only the redirect host.
	FetchPages bool `env:"GROUNDING_FETCH_PAGES" envDefault:"true"`
	// FetchTimeout bounds one page fetch or redirect resolution.
	FetchTimeout time.Duration `env:"GROUNDING_FETCH_TIMEOUT" envDefault:"5s"`
	// SearchAddr, RagAddr and NotifierAddr are the services grounding calls.
	SearchAddr   string `env:"SEARCH_ADDR" envDefault:"127.0.0.1:50051"`
	RagAddr      string `env:"RAG_ADDR" envDefault:"127.0.0.1:50053"`
	NotifierAddr string `env:"NOTIFIER_ADDR" envDefault:"127.0.0.1:50054"`

	// parsed is what Validate read from the variables that have a syntax
	// of their own; Run uses it and parses nothing again.
	parsed settings
}

// settings are the typed values of the variables Validate parses.
type settings struct {
	ok            bool              // Validate filled them in
	archiveMode   store.ArchiveMode // GROUNDING_ARCHIVE_MODE
	messageMaxAge time.Duration     // GROUNDING_MESSAGE_RETENTION; 0 keeps
	redirectHosts []string          // Gemini's redirect hosts
}

// Validate checks what types cannot, and keeps the values it parsed for
// Run (config.Load calls it on the loaded struct).
func (c *Config) Validate() error {
	var s settings
	errs := []error{c.Common.Validate()}
	for name, addr := range map[string]string{"GROUNDING_ADDR": c.Addr, "GROUNDING_ADMIN_ADDR": c.AdminAddr, "GROUNDING_LISTEN_ADDR": c.ListenAddr} {
		if addr == "" && name == "GROUNDING_LISTEN_ADDR" {
			continue
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			errs = append(errs, fmt.Errorf("%s: must be host:port, got %q", name, addr))
		}
	}
	if c.MaxSources < 1 || c.MaxSources > 10 {
		errs = append(errs, fmt.Errorf("GROUNDING_MAX_SOURCES: must be between 1 and 10, got %d", c.MaxSources))
	}
	for name, d := range map[string]time.Duration{
		"GROUNDING_ROUND_TIMEOUT": c.RoundTimeout, "GROUNDING_QUERY_TIMEOUT": c.QueryTimeout, "GROUNDING_ARTIFACT_RETENTION": c.ArtifactRetention,
		"GROUNDING_RETENTION_INTERVAL": c.RetentionInterval, "GROUNDING_FETCH_TIMEOUT": c.FetchTimeout,
	} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s: must be a positive duration, got %s", name, d))
		}
	}
	var err error
	if s.archiveMode, err = store.ParseArchiveMode(c.ArchiveMode); err != nil {
		errs = append(errs, fmt.Errorf("GROUNDING_ARCHIVE_MODE: %w", err))
	}
	if s.messageMaxAge, err = c.messageRetention(); err != nil {
		errs = append(errs, fmt.Errorf("GROUNDING_MESSAGE_RETENTION: %w", err))
	}
	// Gemini's redirect links come from Google's host, and from the
	// configured base URL's (a mirror or a stand-in serves its own).
	s.redirectHosts = []string{pagefetch.GeminiRedirector}
	if c.GeminiBaseURL != "" {
		u, err := url.Parse(c.GeminiBaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("GOOGLE_GEMINI_BASE_URL: must be an http(s) URL, got %q", c.GeminiBaseURL))
		} else {
			s.redirectHosts = append(s.redirectHosts, u.Hostname())
		}
	}
	errs = append(errs, c.ResearchConfig.ValidateResearch())
	if err := errors.Join(errs...); err != nil {
		return err
	}
	s.ok = true
	c.parsed = s
	return nil
}

// messageRetention is GROUNDING_MESSAGE_RETENTION: 0 for keep.
func (c Config) messageRetention() (time.Duration, error) {
	if v := strings.TrimSpace(c.MessageRetention); v == "" || strings.EqualFold(v, "keep") {
		return 0, nil
	}
	d, err := time.ParseDuration(c.MessageRetention)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("must be keep or a positive duration such as 8760h, got %q", c.MessageRetention)
	}
	return d, nil
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
	return run(ctx, cfg, logger, nil)
}

// run is Run; ready, when not nil, is called with the server once it
// listens (tests use it to find the address).
func run(ctx context.Context, cfg Config, logger *slog.Logger, ready func(*grpcserver.Server)) error {
	if !cfg.parsed.ok {
		// A Config not made by config.Load: parse it here, once.
		if err := cfg.Validate(); err != nil {
			return err
		}
	}
	logger.Info("starting", "config", config.LogValue(cfg))
	srv, tp, cleanup, err := entrypoint.NewServer(ctx, "grounding", cfg.Common,
		grpcserver.Config{GRPCAddr: cfg.GRPCListenAddr(), AdminAddr: cfg.AdminAddr}, logger)
	if err != nil {
		return err
	}
	defer cleanup()

	db, err := sqlstore.Open(ctx, cfg.DatabaseURL, cfg.DataDir, "grounding", logger)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	if err := store.Migrate(ctx, db); err != nil {
		return err
	}
	artifacts, err := store.NewArtifacts(filepath.Join(cfg.DataDir, "artifacts"), cfg.GeminiAPIKey)
	if err != nil {
		return err
	}
	st := store.New(db, artifacts)

	searchConn, err := grpcclient.Dial(cfg.SearchAddr, tp, grpcclient.Secure(cfg.Transport)...)
	if err != nil {
		return fmt.Errorf("SEARCH_ADDR: %w", err)
	}
	defer func() { _ = searchConn.Close() }()

	metrics, err := grounding.NewMetrics(srv.Registry())
	if err != nil {
		return fmt.Errorf("registering metrics: %w", err)
	}
	providers, err := telemetry.NewProviderMetrics(srv.Registry())
	if err != nil {
		return fmt.Errorf("registering metrics: %w", err)
	}
	// One Gemini client serves grounding and research alike; model stays a
	// nil interface (not a nil *gemini.Client) when there is no key.
	var (
		model grounding.Model
		gc    *gemini.Client
	)
	if cfg.GeminiAPIKey != "" {
		gc, err = gemini.New(ctx, gemini.Config{
			APIKey: cfg.GeminiAPIKey, Model: cfg.GeminiModel, BaseURL: cfg.GeminiBaseURL,
			OnAttemptError: metrics.ProviderAttemptFailed, Logger: logger.With("component", "gemini"),
			// Gemini calls are traced, carry the trace context and are
			// counted (grounding_provider_errors_total stays, for the
			// dashboards that read it).
			HTTPClient: providers.Client(tp, "gemini", 0),
		})
		if err != nil {
			return err
		}
		model = gc
		logger.Info("grounding with Gemini", "model", cfg.GeminiModel, "base_url", cmp.Or(cfg.GeminiBaseURL, "Google's endpoint"))
	} else {
		logger.Info("GEMINI_API_KEY is not set: grounding with the offline extractive summariser over search evidence", "method", grounding.MethodExtractive)
	}
	pages := pagefetch.New(pagefetch.Config{Timeout: cfg.FetchTimeout, RedirectHosts: cfg.parsed.redirectHosts, NoFetch: !cfg.FetchPages})
	svc, err := grounding.New(grounding.Options{
		Searcher: searchclient.New(searchv1.NewSearchServiceClient(searchConn)), Model: model, Store: st, Pages: pages,
		Logger: logger, Metrics: metrics, MaxSources: cfg.MaxSources, RoundTimeout: cfg.RoundTimeout, QueryTimeout: cfg.QueryTimeout,
	})
	if err != nil {
		return err
	}

	groundingv1.RegisterGroundingServiceServer(srv, groundinggrpc.NewGroundingService(svc, logger))
	stopResearch, err := startResearch(ctx, cfg, logger, srv, tp, gc, searchConn)
	if err != nil {
		return fmt.Errorf("starting research: %w", err)
	}
	defer stopResearch()

	// The retention job stops before the database closes (defers run last
	// in, first out).
	var wg sync.WaitGroup
	defer wg.Wait()
	jobCtx, stopJobs := context.WithCancel(ctx)
	defer stopJobs()
	retention := &store.Retention{
		Store: st, MaxAge: cfg.ArtifactRetention, Mode: cfg.parsed.archiveMode, MessageMaxAge: cfg.parsed.messageMaxAge, Interval: cfg.RetentionInterval, Logger: logger,
	}
	wg.Go(func() { retention.Run(jobCtx) })
	if ready != nil {
		wg.Go(func() {
			select {
			case <-srv.Ready():
				ready(srv)
			case <-jobCtx.Done():
			}
		})
	}
	return srv.Run(ctx)
}
