package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	ragv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/rag/v1"
	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
	"github.com/groundcrew/groundcrew/platform/grpcclient"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/platform/jobqueue"
	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/services/grounding/internal/gemini"
	"github.com/groundcrew/groundcrew/services/grounding/internal/groundinggrpc"
	"github.com/groundcrew/groundcrew/services/grounding/internal/notifierclient"
	"github.com/groundcrew/groundcrew/services/grounding/internal/ragclient"
	"github.com/groundcrew/groundcrew/services/grounding/internal/research"
	"github.com/groundcrew/groundcrew/services/grounding/internal/researchstore"
	"github.com/groundcrew/groundcrew/services/grounding/internal/searchclient"
)

// ResearchConfig is the research workflow's part of Config, embedded in it.
// (The type is exported because platform/config skips unexported embedded
// structs, whose variables would then be silently ignored.)
type ResearchConfig struct {
	// ResearchApprovalTimeout is how long an approval waits for a person
	// before it escalates and its action is skipped.
	ResearchApprovalTimeout time.Duration `env:"RESEARCH_APPROVAL_TIMEOUT" envDefault:"5m"`
	// ResearchSummaryRisk is the risk level of the send_summary action:
	// reversible (posted at once), reversible_with_delay or irreversible
	// (both wait for an approval). A posted message can be deleted, but only
	// after the chat may have read it, hence the default.
	ResearchSummaryRisk string `env:"RESEARCH_SUMMARY_RISK" envDefault:"reversible_with_delay"`
	// ResearchChatID is the chat research summaries and approvals go to;
	// empty means the notifier's default chat.
	ResearchChatID string `env:"RESEARCH_CHAT_ID"`
	// ResearchSummaryChats are further chats a run may be started with a
	// send_summary action to (comma-separated); RESEARCH_CHAT_ID is always
	// allowed.
	ResearchSummaryChats []string `env:"RESEARCH_SUMMARY_CHATS" envSeparator:","`
	// ResearchWorkers is how many research jobs run at once.
	ResearchWorkers int `env:"RESEARCH_WORKERS" envDefault:"4"`
	// ResearchPollInterval is how often idle research workers look for jobs.
	ResearchPollInterval time.Duration `env:"RESEARCH_POLL_INTERVAL" envDefault:"200ms"`
	// ResearchLookupConcurrency is how many searches and retrievals one
	// research step has in flight at once; 1 runs them one after another.
	ResearchLookupConcurrency int `env:"RESEARCH_LOOKUP_CONCURRENCY" envDefault:"10"`
}

// defaultResearchConfig matches the envDefault tags above.
var defaultResearchConfig = ResearchConfig{
	ResearchApprovalTimeout:   research.DefaultApprovalTimeout,
	ResearchSummaryRisk:       string(research.ReversibleWithDelay),
	ResearchWorkers:           4,
	ResearchPollInterval:      200 * time.Millisecond,
	ResearchLookupConcurrency: research.DefaultLookupConcurrency,
}

// ValidateResearch checks what the types cannot; Config.Validate should
// include it.
func (c ResearchConfig) ValidateResearch() error {
	var errs []error
	if c.ResearchApprovalTimeout <= 0 {
		errs = append(errs, fmt.Errorf("RESEARCH_APPROVAL_TIMEOUT: must be positive, got %s", c.ResearchApprovalTimeout))
	}
	if _, err := research.ParseRiskLevel(c.ResearchSummaryRisk); err != nil {
		errs = append(errs, fmt.Errorf("RESEARCH_SUMMARY_RISK: %w", err))
	}
	if c.ResearchWorkers < 1 {
		errs = append(errs, fmt.Errorf("RESEARCH_WORKERS: must be at least 1, got %d", c.ResearchWorkers))
	}
	if c.ResearchPollInterval <= 0 {
		errs = append(errs, fmt.Errorf("RESEARCH_POLL_INTERVAL: must be positive, got %s", c.ResearchPollInterval))
	}
	if c.ResearchLookupConcurrency < 1 {
		errs = append(errs, fmt.Errorf("RESEARCH_LOOKUP_CONCURRENCY: must be at least 1, got %d", c.ResearchLookupConcurrency))
	}
	return errors.Join(errs...)
}

// startResearch registers ResearchService on srv and starts its durable
// workers; stop ends them. gc, when not nil, plans and critiques with
// Gemini (falling back to the offline planner and critic when it fails);
// nil means offline. search is the connection to the search service that
// grounding already holds (one connection serves both).
func startResearch(ctx context.Context, cfg Config, logger *slog.Logger, srv *grpcserver.Server, tp trace.TracerProvider, gc *gemini.Client, search *grpc.ClientConn) (stop func(), err error) {
	return startResearchWith(ctx, cfg, cfg.ResearchConfig, logger, srv, tp, gc, search)
}

// startResearchWith is startResearch with the research settings given
// explicitly, for tests.
func startResearchWith(ctx context.Context, cfg Config, rc ResearchConfig, logger *slog.Logger, srv *grpcserver.Server, tp trace.TracerProvider, gc *gemini.Client, searchConn *grpc.ClientConn) (stop func(), err error) {
	if err := rc.ValidateResearch(); err != nil {
		return nil, err
	}
	logger = logger.With("component", "research")
	var cleanups []func()
	cleanup := func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	defer func() {
		if err != nil {
			cleanup()
		}
	}()

	db, err := sqlstore.Open(ctx, cfg.DatabaseURL, cfg.DataDir, "research", logger)
	if err != nil {
		return nil, fmt.Errorf("opening research database: %w", err)
	}
	cleanups = append(cleanups, func() { _ = db.Close() })
	store, err := researchstore.Open(ctx, db, logger, researchstore.Options{
		Workers:      rc.ResearchWorkers,
		PollInterval: rc.ResearchPollInterval,
	})
	if err != nil {
		return nil, err
	}
	// The research queue's depth is read from its database at each scrape;
	// unregistered before the database closes.
	depth := jobqueue.NewDepthCollector(db, researchstore.Queue, logger)
	if err := srv.Registry().Register(depth); err != nil {
		return nil, fmt.Errorf("registering research queue metrics: %w", err)
	}
	cleanups = append(cleanups, func() { srv.Registry().Unregister(depth) })

	dial := func(name, addr string) (*grpc.ClientConn, error) {
		conn, err := grpcclient.Dial(addr, tp, grpcclient.Secure(cfg.Transport)...)
		if err != nil {
			return nil, fmt.Errorf("%s service: %w", name, err)
		}
		cleanups = append(cleanups, func() { _ = conn.Close() })
		return conn, nil
	}
	ragConn, err := dial("rag", cfg.RagAddr)
	if err != nil {
		return nil, err
	}
	notifierConn, err := dial("notifier", cfg.NotifierAddr)
	if err != nil {
		return nil, err
	}

	var (
		planner research.Planner = research.OfflinePlanner{}
		critic  research.Critic  = research.OfflineCritic{}
		method                   = "offline"
	)
	if gc != nil {
		planner = research.FallbackPlanner{Primary: gemini.Planner{Client: gc}, Logger: logger}
		critic = research.FallbackCritic{Primary: gemini.Critic{Client: gc}, Logger: logger}
		method = "gemini " + gc.Name() + ", offline fallback"
	}
	metrics, err := research.NewMetrics(srv.Registry())
	if err != nil {
		return nil, fmt.Errorf("registering research metrics: %w", err)
	}
	svc, err := research.New(research.Deps{
		Metrics:   metrics,
		Store:     store,
		Planner:   planner,
		Critic:    critic,
		Searcher:  searchclient.New(searchv1.NewSearchServiceClient(searchConn)).Evidence(),
		Retriever: ragclient.New(ragv1.NewRagServiceClient(ragConn)),
		Notifier:  notifierclient.New(notifierv1.NewNotifierServiceClient(notifierConn)),
		Logger:    logger,
	}, research.Config{
		ApprovalTimeout:   rc.ResearchApprovalTimeout,
		SummaryRisk:       research.RiskLevel(rc.ResearchSummaryRisk),
		SummaryChat:       rc.ResearchChatID,
		SummaryChats:      rc.ResearchSummaryChats,
		LookupConcurrency: rc.ResearchLookupConcurrency,
	})
	if err != nil {
		return nil, err
	}
	groundingv1.RegisterResearchServiceServer(srv, groundinggrpc.NewResearch(svc, logger))
	if err := store.Start(ctx, svc); err != nil {
		return nil, err
	}
	logger.InfoContext(ctx, "research workers started", "planner", method, "critic", method,
		"approval_timeout", rc.ResearchApprovalTimeout.String(), "summary_risk", rc.ResearchSummaryRisk,
		"lookup_concurrency", rc.ResearchLookupConcurrency)

	return func() {
		// Running steps get the grace period to commit; a step cut short
		// runs again from its last committed state after the next start.
		sctx, cancel := context.WithTimeout(context.Background(), max(cfg.GracePeriod, time.Second))
		defer cancel()
		if err := store.Stop(sctx); err != nil {
			logger.Warn("stopping research workers", "error", err)
		}
		cleanup()
	}, nil
}
