// Package server runs groundcrew's notifier service: notifier takes alert webhooks, enriches them through grounding and delivers Telegram messages without losing an alert; it also hosts the Telegram bot webhook.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"golang.org/x/time/rate"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/entrypoint"
	"github.com/groundcrew/groundcrew/platform/grpcclient"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/platform/jobqueue"
	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/telemetry"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alertmanager"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alertwatch"
	"github.com/groundcrew/groundcrew/services/notifier/internal/approval"
	"github.com/groundcrew/groundcrew/services/notifier/internal/chat"
	"github.com/groundcrew/groundcrew/services/notifier/internal/deliverylog"
	"github.com/groundcrew/groundcrew/services/notifier/internal/format"
	"github.com/groundcrew/groundcrew/services/notifier/internal/groundingclient"
	"github.com/groundcrew/groundcrew/services/notifier/internal/groupaction"
	"github.com/groundcrew/groundcrew/services/notifier/internal/notifiergrpc"
	"github.com/groundcrew/groundcrew/services/notifier/internal/oncall"
	"github.com/groundcrew/groundcrew/services/notifier/internal/oncallbot"
	"github.com/groundcrew/groundcrew/services/notifier/internal/oncallgrpc"
	"github.com/groundcrew/groundcrew/services/notifier/internal/oncalljobs"
	"github.com/groundcrew/groundcrew/services/notifier/internal/oncallstore"
	"github.com/groundcrew/groundcrew/services/notifier/internal/outbound"
	"github.com/groundcrew/groundcrew/services/notifier/internal/pipeline"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
	"github.com/groundcrew/groundcrew/services/notifier/internal/taskjobs"
	"github.com/groundcrew/groundcrew/services/notifier/internal/telegram"
)

// Config is the notifier service's configuration, read from the environment.
type Config struct {
	config.Common

	// Addr is where other services dial notifier; it listens there too unless
	// ListenAddr says otherwise.
	Addr string `env:"NOTIFIER_ADDR" envDefault:"127.0.0.1:50054"`
	// ListenAddr overrides the gRPC listen address, e.g. ":50054" in a
	// container.
	ListenAddr string `env:"NOTIFIER_LISTEN_ADDR"`
	// AdminAddr serves /metrics, /healthz and /readyz.
	AdminAddr string `env:"NOTIFIER_ADMIN_ADDR" envDefault:"127.0.0.1:9094"`

	// TelegramBotToken enables Telegram delivery; without it messages go to
	// the delivery log.
	TelegramBotToken string `env:"TELEGRAM_BOT_TOKEN" secret:"true"`
	TelegramChatID   string `env:"TELEGRAM_CHAT_ID"`
	TelegramAPIURL   string `env:"TELEGRAM_API_URL" envDefault:"https://api.telegram.org"`
	// TelegramWebhookSecret is the secret token Telegram sends with every
	// webhook update (setWebhook's secret_token); required with a bot token
	// unless TelegramWebhookDisabled.
	TelegramWebhookSecret string `env:"TELEGRAM_WEBHOOK_SECRET" secret:"true"`
	// TelegramWebhookDisabled refuses every webhook update (403), for a bot
	// whose updates are not delivered by webhook; it replaces the secret.
	TelegramWebhookDisabled bool `env:"TELEGRAM_WEBHOOK_DISABLED" envDefault:"false"`
	// TelegramAllowedChats are the chat ids (comma-separated) where the
	// chat agent answers and buttons are accepted; unset means the
	// configured alert chats (TELEGRAM_CHAT_ID and NOTIFIER_ROUTES).
	TelegramAllowedChats string `env:"TELEGRAM_ALLOWED_CHATS"`
	// ResearchChatID and ResearchSummaryChats are grounding's research
	// chats (the same variables grounding reads): SendMessage may post
	// there too, so listing a research chat once is enough.
	ResearchChatID       string   `env:"RESEARCH_CHAT_ID"`
	ResearchSummaryChats []string `env:"RESEARCH_SUMMARY_CHATS" envSeparator:","`
	// TelegramApprovers are the Telegram user ids or usernames
	// (comma-separated) who may decide approvals; unset means anyone in an
	// allowed chat.
	TelegramApprovers string `env:"TELEGRAM_APPROVERS"`
	// ChatRate is each chat's reply budget for the chat agent, e.g. "20/h",
	// or "off".
	ChatRate string `env:"NOTIFIER_CHAT_RATE" envDefault:"20/h"`
	// DatabaseURL selects Postgres (postgres://…); empty means SQLite under
	// DATA_DIR.
	DatabaseURL string `env:"DATABASE_URL" secret:"true"`
	// GroundingAddr is the grounding service used for enrichment.
	GroundingAddr string `env:"GROUNDING_ADDR" envDefault:"127.0.0.1:50052"`
	// MaxSources is Ground's max_sources for enrichment (1..10) and the
	// number of sources a message shows at most.
	MaxSources int `env:"GROUNDING_MAX_SOURCES" envDefault:"3"`

	// Routes sends alerts to chats by label, e.g.
	// "severity=critical:-100123,team=db&env=prod:-100456" (see
	// telegram.ParseRoutes); unmatched alerts go to TELEGRAM_CHAT_ID.
	Routes string `env:"NOTIFIER_ROUTES"`
	// TelegramBotUsername is the bot's @username, for recognising mentions
	// in groups; empty means asking Telegram (getMe) at start.
	TelegramBotUsername string `env:"TELEGRAM_BOT_USERNAME"`
	// RatePerChat and RateOverall pace Telegram sends, in messages a second.
	RatePerChat float64 `env:"NOTIFIER_TELEGRAM_RATE_PER_CHAT" envDefault:"1"`
	RateOverall float64 `env:"NOTIFIER_TELEGRAM_RATE_OVERALL" envDefault:"30"`

	// DedupWindow is how long a repeat of an alert is recorded as a
	// duplicate instead of delivered; 0 disables deduplication.
	DedupWindow time.Duration `env:"NOTIFIER_DEDUP_WINDOW" envDefault:"10m"`
	// EnrichTimeout bounds grounding's enrichment of one alert.
	EnrichTimeout time.Duration `env:"NOTIFIER_ENRICH_TIMEOUT" envDefault:"20s"`
	// EnrichEngine is where enrichment's evidence comes from: auto (the
	// search service's local index and web engines, and Gemini's own
	// search only when they find nothing), native (Gemini's Google Search),
	// exa or local.
	EnrichEngine string `env:"NOTIFIER_ENRICH_ENGINE" envDefault:"auto"`
	// JobTimeout bounds one run of an alert's job (enrich, pace, deliver);
	// at least NOTIFIER_ENRICH_TIMEOUT + 10s.
	JobTimeout time.Duration `env:"NOTIFIER_JOB_TIMEOUT" envDefault:"2m"`
	// RescueAfter is, on PostgreSQL, how long an alert's job may stay
	// running before it is taken for crashed (its instance died mid-job)
	// and run again; 0 means NOTIFIER_JOB_TIMEOUT + 1m. On SQLite one
	// process owns the database and jobs left running are resumed at start.
	RescueAfter time.Duration `env:"NOTIFIER_RESCUE_AFTER" envDefault:"0s"`
	// MaxAttempts is how many delivery attempts an alert gets before it is
	// FAILED; the defaults retry for about an hour.
	MaxAttempts int `env:"NOTIFIER_DELIVERY_MAX_ATTEMPTS" envDefault:"16"`
	// RetryBaseDelay and RetryMaxDelay shape the retries: the n-th failed
	// attempt waits RetryBaseDelay·2^(n-1), at most RetryMaxDelay.
	RetryBaseDelay time.Duration `env:"NOTIFIER_RETRY_BASE_DELAY" envDefault:"1s"`
	RetryMaxDelay  time.Duration `env:"NOTIFIER_RETRY_MAX_DELAY" envDefault:"10m"`
	// Workers is how many alerts are processed at once.
	Workers int `env:"NOTIFIER_WORKERS" envDefault:"50"`
	// PollInterval is how often idle workers look for new jobs.
	PollInterval time.Duration `env:"NOTIFIER_POLL_INTERVAL" envDefault:"200ms"`

	// Persona is the chat agent's persona (system instruction).
	Persona string `env:"NOTIFIER_PERSONA" envDefault:"You are groundcrew, a concise on-call assistant in a Telegram chat. Answer briefly and cite sources when you use them."`
	// HistorySize is how many chat messages go to the model.
	HistorySize int `env:"NOTIFIER_CHAT_HISTORY_SIZE" envDefault:"500"`
	// TelegramStickers are the curated stickers the chat agent may answer
	// with: "file_id|emoji|set|description" entries separated by ';' (see
	// chat.ParseStickers); empty means none.
	TelegramStickers string `env:"TELEGRAM_STICKERS"`

	// AlertmanagerURL is Alertmanager's web root (API v2), for the alert
	// group buttons that create and expire silences; empty: no silencing.
	AlertmanagerURL string `env:"ALERTMANAGER_URL"`
	// EnrichCacheTTL is how long an alert group's enrichment is reused for
	// groups with the same alertname and common labels; 0 turns it off.
	EnrichCacheTTL time.Duration `env:"NOTIFIER_ENRICH_CACHE_TTL" envDefault:"30m"`
	// DigestThreshold is the backlog of a chat beyond which its waiting
	// alerts are collapsed into one storm digest message; 0 turns it off.
	DigestThreshold int `env:"NOTIFIER_DIGEST_THRESHOLD" envDefault:"20"`
	// AlertRetention is how long alerts that are done with (delivered,
	// failed, repeats) are kept, with their groups; 0 keeps them for ever.
	AlertRetention time.Duration `env:"NOTIFIER_ALERT_RETENTION" envDefault:"2160h"`
	// ActionUsers may press the alert group buttons: comma-separated
	// Telegram user ids or usernames; empty: anyone in an allowed chat.
	ActionUsers string `env:"NOTIFIER_ACTION_USERS"`
	// OnCallFile is a YAML file of on-call schedules and escalation
	// policies (the OnCallFile message) loaded at every start; empty: only
	// what the API stored.
	OnCallFile string `env:"NOTIFIER_ONCALL_FILE"`
	// OnCallWaitUnit is how long one of an escalation step's
	// wait_minutes lasts: 1m, shortened only for drills and tests.
	OnCallWaitUnit time.Duration `env:"NOTIFIER_ONCALL_WAIT_UNIT" envDefault:"1m"`

	// parsed is what Validate read from the variables that have a syntax
	// of their own; Run uses it and parses nothing again.
	parsed settings
}

// settings are the typed values of the variables Validate parses.
type settings struct {
	ok           bool                           // Validate filled them in
	routes       []telegram.Route               // NOTIFIER_ROUTES
	allowedChats []int64                        // TELEGRAM_ALLOWED_CHATS as given
	engine       groundingv1.RoundConfig_Engine // NOTIFIER_ENRICH_ENGINE
	actionUsers  approval.Approvers             // NOTIFIER_ACTION_USERS
	approvers    approval.Approvers             // TELEGRAM_APPROVERS
	chatRate     chat.Rate                      // NOTIFIER_CHAT_RATE
	stickers     []chat.Sticker                 // TELEGRAM_STICKERS
}

// Validate checks what types cannot, and keeps the values it parsed for
// Run (config.Load calls it on the loaded struct).
func (c *Config) Validate() error {
	var (
		s   settings
		err error
	)
	errs := []error{c.Common.Validate()}
	for name, addr := range map[string]string{"NOTIFIER_ADDR": c.Addr, "NOTIFIER_ADMIN_ADDR": c.AdminAddr, "NOTIFIER_LISTEN_ADDR": c.ListenAddr} {
		if addr == "" && name == "NOTIFIER_LISTEN_ADDR" {
			continue
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			errs = append(errs, fmt.Errorf("%s: must be host:port, got %q", name, addr))
		}
	}
	if s.routes, err = telegram.ParseRoutes(c.Routes); err != nil {
		errs = append(errs, fmt.Errorf("NOTIFIER_ROUTES: %w", err))
	}
	if c.TelegramChatID != "" && !telegram.ValidChatID(c.TelegramChatID) {
		errs = append(errs, fmt.Errorf("TELEGRAM_CHAT_ID: must be a chat id such as -100123 or @channelname, got %q", c.TelegramChatID))
	}
	errs = append(errs, c.validateTelegram(&s)...)
	if c.MaxSources < 1 || c.MaxSources > 10 {
		errs = append(errs, fmt.Errorf("GROUNDING_MAX_SOURCES: must be between 1 and 10, got %d", c.MaxSources))
	}
	if c.DedupWindow < 0 {
		errs = append(errs, fmt.Errorf("NOTIFIER_DEDUP_WINDOW: must not be negative, got %s", c.DedupWindow))
	}
	for name, d := range map[string]time.Duration{
		"NOTIFIER_ENRICH_TIMEOUT": c.EnrichTimeout, "NOTIFIER_JOB_TIMEOUT": c.JobTimeout, "NOTIFIER_POLL_INTERVAL": c.PollInterval,
		"NOTIFIER_RETRY_BASE_DELAY": c.RetryBaseDelay, "NOTIFIER_RETRY_MAX_DELAY": c.RetryMaxDelay,
	} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s: must be positive, got %s", name, d))
		}
	}
	for name, n := range map[string]int{"NOTIFIER_DELIVERY_MAX_ATTEMPTS": c.MaxAttempts, "NOTIFIER_WORKERS": c.Workers, "NOTIFIER_CHAT_HISTORY_SIZE": c.HistorySize} {
		if n < 1 {
			errs = append(errs, fmt.Errorf("%s: must be at least 1, got %d", name, n))
		}
	}
	if c.RetryMaxDelay < c.RetryBaseDelay {
		errs = append(errs, fmt.Errorf("NOTIFIER_RETRY_MAX_DELAY: must be at least NOTIFIER_RETRY_BASE_DELAY (%s), got %s", c.RetryBaseDelay, c.RetryMaxDelay))
	}
	// The job has to outlive enrichment and still deliver; saying so beats
	// the pipeline quietly raising the timeout (and the rescue window
	// derived from it).
	if least := c.EnrichTimeout + pipeline.DeliveryAllowance; c.EnrichTimeout > 0 && c.JobTimeout < least {
		errs = append(errs, fmt.Errorf("NOTIFIER_JOB_TIMEOUT: must be at least NOTIFIER_ENRICH_TIMEOUT + %s (%s), got %s", pipeline.DeliveryAllowance, least, c.JobTimeout))
	}
	if c.RescueAfter != 0 && c.RescueAfter <= c.JobTimeout {
		errs = append(errs, fmt.Errorf("NOTIFIER_RESCUE_AFTER: must be 0 (NOTIFIER_JOB_TIMEOUT + 1m) or longer than NOTIFIER_JOB_TIMEOUT (%s), got %s", c.JobTimeout, c.RescueAfter))
	}
	if c.AlertmanagerURL != "" {
		if _, err := alertmanager.New(c.AlertmanagerURL, nil); err != nil {
			errs = append(errs, err)
		}
	}
	if c.DigestThreshold < 0 {
		errs = append(errs, fmt.Errorf("NOTIFIER_DIGEST_THRESHOLD: must not be negative, got %d", c.DigestThreshold))
	}
	if c.OnCallWaitUnit <= 0 || c.OnCallWaitUnit > time.Minute {
		errs = append(errs, fmt.Errorf("NOTIFIER_ONCALL_WAIT_UNIT: must be positive and at most 1m, got %s", c.OnCallWaitUnit))
	}
	if c.AlertRetention < 0 {
		errs = append(errs, fmt.Errorf("NOTIFIER_ALERT_RETENTION: must not be negative (0 keeps alerts for ever), got %s", c.AlertRetention))
	}
	if s.engine, err = groundingclient.ParseEngine(c.EnrichEngine); err != nil {
		errs = append(errs, fmt.Errorf("NOTIFIER_ENRICH_ENGINE: %w", err))
	}
	if c.EnrichCacheTTL < 0 {
		errs = append(errs, fmt.Errorf("NOTIFIER_ENRICH_CACHE_TTL: must not be negative, got %s", c.EnrichCacheTTL))
	}
	if s.actionUsers, err = approval.ParseApprovers(c.ActionUsers); err != nil {
		errs = append(errs, fmt.Errorf("NOTIFIER_ACTION_USERS: %w", err))
	}
	if c.RatePerChat <= 0 || c.RateOverall <= 0 {
		errs = append(errs, errors.New("NOTIFIER_TELEGRAM_RATE_PER_CHAT and NOTIFIER_TELEGRAM_RATE_OVERALL: must be positive"))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	s.ok = true
	c.parsed = s
	return nil
}

// webhookSecretPattern is what Telegram accepts as a secret_token.
var webhookSecretPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)

// validateTelegram checks the bot's security settings, parsing into s.
func (c Config) validateTelegram(s *settings) []error {
	var (
		errs []error
		err  error
	)
	switch {
	case c.TelegramBotToken != "" && c.TelegramWebhookSecret == "" && !c.TelegramWebhookDisabled:
		errs = append(errs, errors.New("TELEGRAM_WEBHOOK_SECRET: required when TELEGRAM_BOT_TOKEN is set, so that only Telegram can post updates "+
			"(pass the same value as setWebhook's secret_token); a bot that does not use the webhook sets TELEGRAM_WEBHOOK_DISABLED=true instead"))
	case c.TelegramWebhookSecret != "" && c.TelegramWebhookDisabled:
		errs = append(errs, errors.New("TELEGRAM_WEBHOOK_DISABLED: set together with TELEGRAM_WEBHOOK_SECRET; use one of them"))
	case c.TelegramWebhookSecret != "" && !webhookSecretPattern.MatchString(c.TelegramWebhookSecret):
		errs = append(errs, errors.New("TELEGRAM_WEBHOOK_SECRET: Telegram accepts 1-256 characters A-Z, a-z, 0-9, _ and -"))
	}
	if s.allowedChats, err = parseChatIDs(c.TelegramAllowedChats); err != nil {
		errs = append(errs, fmt.Errorf("TELEGRAM_ALLOWED_CHATS: %w", err))
	}
	if c.ResearchChatID != "" && !telegram.ValidChatID(c.ResearchChatID) {
		errs = append(errs, fmt.Errorf("RESEARCH_CHAT_ID: %q is not a chat id such as -100123 or @channelname", c.ResearchChatID))
	}
	for _, id := range c.ResearchSummaryChats {
		if !telegram.ValidChatID(strings.TrimSpace(id)) {
			errs = append(errs, fmt.Errorf("RESEARCH_SUMMARY_CHATS: %q is not a chat id such as -100123 or @channelname", id))
		}
	}
	if s.approvers, err = approval.ParseApprovers(c.TelegramApprovers); err != nil {
		errs = append(errs, fmt.Errorf("TELEGRAM_APPROVERS: %w", err))
	}
	if s.chatRate, err = chat.ParseRate(c.ChatRate); err != nil {
		errs = append(errs, fmt.Errorf("NOTIFIER_CHAT_RATE: %w", err))
	}
	if s.stickers, err = chat.ParseStickers(c.TelegramStickers); err != nil {
		errs = append(errs, fmt.Errorf("TELEGRAM_STICKERS: %w", err))
	}
	return errs
}

// parseChatIDs reads comma-separated numeric chat ids.
func parseChatIDs(spec string) ([]int64, error) {
	var ids []int64
	for _, f := range strings.Split(spec, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil || id == 0 {
			return nil, fmt.Errorf("%q is not a numeric chat id such as -100123", f)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// configuredChats are the chats alerts go to: TELEGRAM_CHAT_ID and the
// routes' chats.
func (c Config) configuredChats() []string {
	var out []string
	if c.TelegramChatID != "" {
		out = append(out, c.TelegramChatID)
	}
	for _, r := range c.parsed.routes {
		out = append(out, r.ChatID)
	}
	return out
}

// allowedChats are where the chat agent answers and buttons are accepted:
// TELEGRAM_ALLOWED_CHATS, or else the configured chats with numeric ids
// (updates name chats by id, never by @name).
func (c Config) allowedChats() []int64 {
	if len(c.parsed.allowedChats) > 0 {
		return c.parsed.allowedChats
	}
	var ids []int64
	for _, s := range c.configuredChats() {
		if id, err := strconv.ParseInt(s, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// sendChats are the chats SendMessage may name: the configured chats, the
// allowed ones and the research chats.
func (c Config) sendChats() []string {
	out := c.configuredChats()
	for _, id := range c.allowedChats() {
		out = append(out, strconv.FormatInt(id, 10))
	}
	if c.ResearchChatID != "" {
		out = append(out, c.ResearchChatID)
	}
	for _, id := range c.ResearchSummaryChats {
		out = append(out, strings.TrimSpace(id))
	}
	return out
}

// GRPCListenAddr is where the gRPC server listens.
func (c Config) GRPCListenAddr() string {
	if c.ListenAddr != "" {
		return c.ListenAddr
	}
	return c.Addr
}

// Run serves the notifier service until ctx is done: it opens and migrates
// the store, starts the alert pipeline, dials grounding and serves gRPC;
// on shutdown it drains gRPC first, then stops the pipeline within the
// grace period (jobs cut short run again after the next start).
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	if !cfg.parsed.ok {
		// A Config not made by config.Load: parse it here, once.
		if err := cfg.Validate(); err != nil {
			return err
		}
	}
	logger.Info("starting", "config", config.LogValue(cfg))
	srv, tp, cleanup, err := entrypoint.NewServer(ctx, "notifier", cfg.Common,
		grpcserver.Config{GRPCAddr: cfg.GRPCListenAddr(), AdminAddr: cfg.AdminAddr}, logger)
	if err != nil {
		return err
	}
	defer cleanup()

	db, err := sqlstore.Open(ctx, cfg.DatabaseURL, cfg.DataDir, "notifier", logger)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	if err := store.Migrate(ctx, db); err != nil {
		return err
	}
	st := store.New(db)

	conn, err := grpcclient.Dial(cfg.GroundingAddr, tp, grpcclient.Secure(cfg.Transport)...)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	ground := groundingclient.New(groundingv1.NewGroundingServiceClient(conn), cfg.MaxSources, cfg.parsed.engine)

	providers, err := telemetry.NewProviderMetrics(srv.Registry())
	if err != nil {
		return err
	}
	deliverer, replier, responder, botUsername, err := delivery(ctx, cfg, logger, providers)
	if err != nil {
		return err
	}
	if td, ok := deliverer.(*telegram.Deliverer); ok {
		// Groups that became supergroups are followed from the store, on
		// every instance and across restarts.
		td.Migrations = st
		td.WarnMigrated(ctx)
	}

	// Approval buttons are decided, and the chat agent's research tasks
	// started, through grounding's ResearchService, on the connection
	// enrichment already uses.
	research := groundingclient.NewApprovals(groundingv1.NewResearchServiceClient(conn))
	var silencer pipeline.Silencer
	if cfg.AlertmanagerURL != "" {
		am, err := alertmanager.New(cfg.AlertmanagerURL, nil)
		if err != nil {
			return err
		}
		silencer = am
		logger.Info("alert group silences: through Alertmanager", "alertmanager_url", cfg.AlertmanagerURL)
	}
	// On call (issue 26): schedules and policies from NOTIFIER_ONCALL_FILE
	// and the API; a group's root going out starts its escalation, whose
	// steps are jobs on the pipeline's queue.
	oncallStore := oncallstore.New(db)
	if cfg.OnCallFile != "" {
		ns, np, err := oncallgrpc.LoadFile(ctx, oncallStore, cfg.OnCallFile)
		if err != nil {
			return err
		}
		logger.Info("on call: schedules and escalation policies loaded", "file", cfg.OnCallFile, "schedules", ns, "policies", np)
	}
	pager := &oncallbot.Pager{ErrNotFound: store.ErrNotFound}
	escalator := &oncall.Escalator{Store: oncallStore, Groups: pager, Pager: pager,
		Observer: oncallbot.NewMetrics(srv.Registry()), Logger: logger, Minute: cfg.OnCallWaitUnit}
	p, err := pipeline.New(ctx, pipeline.Deps{
		Store: st, Enricher: ground, Deliverer: deliverer, Silencer: silencer,
		Metrics: pipeline.NewMetrics(srv.Registry()), Logger: logger,
		// The chat agent's task blocks and escalation steps run as durable
		// jobs on the same queue.
		Register: func(w *river.Workers) {
			taskjobs.Register(w, replier, research, logger)
			oncalljobs.Register(w, escalator)
		},
		Escalation: oncallbot.Hook{Escalator: escalator, Groups: pager, Logger: logger},
	}, pipeline.Config{
		DedupWindow:     dedupWindow(cfg.DedupWindow),
		EnrichTimeout:   cfg.EnrichTimeout,
		JobTimeout:      cfg.JobTimeout,
		RescueAfter:     cfg.RescueAfter,
		MaxAttempts:     cfg.MaxAttempts,
		RetryPolicy:     pipeline.Backoff{Base: cfg.RetryBaseDelay, Max: cfg.RetryMaxDelay},
		Workers:         cfg.Workers,
		PollInterval:    cfg.PollInterval,
		Format:          format.Options{MaxSources: cfg.MaxSources},
		EnrichCacheTTL:  dedupWindow(cfg.EnrichCacheTTL),
		DigestThreshold: digestThreshold(cfg.DigestThreshold),
	})
	if err != nil {
		return err
	}
	// The pipeline works River's default queue; its depth is read from
	// the store at each scrape. Registered after the database opens and
	// unregistered before it closes (defers run last in, first out).
	depth := jobqueue.NewDepthCollector(db, river.QueueDefault, logger)
	if err := srv.Registry().Register(depth); err != nil {
		return fmt.Errorf("registering job queue metrics: %w", err)
	}
	defer srv.Registry().Unregister(depth)
	if gt, ok := deliverer.(pipeline.GroupTransport); ok {
		pager.Sender = gt
	} else {
		return fmt.Errorf("on call: the deliverer %T cannot send group messages", deliverer)
	}
	pager.Groups = p
	escalator.Timer = oncalljobs.Timer{Jobs: p}
	// The root shows the escalation's line: re-rendered when a step pages
	// or the escalation stops (a failed edit leaves an older line, never
	// a lost alert).
	escalator.Changed = func(ctx context.Context, groupID string) {
		if err := p.EditRoot(ctx, groupID); err != nil {
			logger.WarnContext(ctx, "showing the escalation on the group's root failed", "group_id", groupID, "error", err)
		}
	}
	if err := p.Start(ctx); err != nil {
		return err
	}
	defer func() {
		grace := cfg.GracePeriod
		if grace <= 0 {
			grace = grpcserver.DefaultGracePeriod
		}
		sctx, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		if err := p.Stop(sctx); err != nil {
			logger.Error("stopping the alert pipeline", "error", err)
		}
	}()

	// Alert retention stops before the database closes (defers run last
	// in, first out).
	var wg sync.WaitGroup
	defer wg.Wait()
	retentionCtx, stopRetention := context.WithCancel(ctx)
	defer stopRetention()
	wg.Go(func() { (&store.Retention{Store: st, MaxAge: cfg.AlertRetention, Logger: logger}).Run(retentionCtx) })

	refusals := chat.NewRefusalCounter(srv.Registry(), approval.ReasonNotApprover, approval.ReasonForeignMessage,
		groupaction.ReasonNotActionUser, groupaction.ReasonForeignGroupMsg)
	actionUsers, chatRate, approvers, stickers := cfg.parsed.actionUsers, cfg.parsed.chatRate, cfg.parsed.approvers, cfg.parsed.stickers
	allowed := cfg.allowedChats()
	agent := chat.New(chat.Config{
		BotID: telegram.BotID(cfg.TelegramBotToken), BotUsername: botUsername,
		Persona: cfg.Persona, HistorySize: cfg.HistorySize,
		AllowedChats: allowed, ChatRate: chatRate, Refusals: refusals,
		Stickers: stickers, Updates: chat.NewUpdateMetrics(srv.Registry()), Migrations: st,
	}, st, ground, replier, logger)
	agent.HandleCallbacks(chat.CallbackChain{
		approval.New(research, responder, st, approval.Config{Approvers: approvers, Refusals: refusals}, logger),
		groupaction.New(p, responder, actionUsers, refusals, logger),
	}, responder)
	agent.ScheduleTasks(taskjobs.NewScheduler(p))
	// /ack in an allowed chat follows the group buttons' rule (anyone
	// there when NOTIFIER_ACTION_USERS is unset); a direct page's Ack,
	// pressed outside the allowed chats, counts only for someone the
	// escalation paged or a listed action user.
	chatAcker := &oncallbot.Acker{Groups: p, Escalations: oncallStore,
		ActionUser: func(id int64, username string) bool {
			return actionUsers.Allows(&chat.User{ID: id, Username: username})
		}}
	directAcker := *chatAcker
	directAcker.ActionUser = func(id int64, username string) bool {
		return actionUsers.Restricted() && actionUsers.Allows(&chat.User{ID: id, Username: username})
	}
	agent.HandleCommands(&oncallbot.Commands{Schedules: oncallStore, Roots: oncallStore, Acker: chatAcker})
	agent.HandleDirectCallbacks(oncallbot.DirectCallbacks{Acker: &directAcker, Answerer: responder, Refusals: refusals, Logger: logger})
	notifierv1.RegisterOnCallServiceServer(srv, oncallgrpc.New(oncallStore, logger))
	switch {
	case cfg.TelegramWebhookDisabled:
		logger.Info("telegram webhook: disabled (TELEGRAM_WEBHOOK_DISABLED=true); updates posted to it are refused")
	case cfg.TelegramWebhookSecret == "":
		logger.Info("telegram webhook: no bot token; updates are answered through the delivery log")
	}
	logger.Info("telegram chat agent", "allowed_chats", allowed, "approvers_restricted", approvers.Restricted(), "chat_rate", chatRate.String(), "stickers", len(stickers))
	for _, l := range []struct {
		name  string
		users approval.Approvers
	}{{"TELEGRAM_APPROVERS", approvers}, {"NOTIFIER_ACTION_USERS", actionUsers}} {
		if names := l.users.Usernames(); len(names) > 0 {
			logger.Warn(l.name+" names users by username; a username can be given up and claimed by another account, so prefer numeric Telegram user ids",
				"usernames", names)
		}
	}
	notifierv1.RegisterNotifierServiceServer(srv, notifiergrpc.NewNotifierService(logger, notifiergrpc.Deps{
		Alerts: p, Groups: p, Updates: agent, Messages: outbound.New(st, deliverer, logger),
		WebhookSecret: cfg.TelegramWebhookSecret, WebhookDisabled: cfg.TelegramWebhookDisabled,
		SendChats: cfg.sendChats(), Refusals: refusals,
		Format: format.Options{MaxSources: cfg.MaxSources},
		// Watches end when shutdown starts, so GracefulStop does not wait.
		Watcher: alertwatch.New(st, alertwatch.Config{Stop: ctx.Done()}),
	}))
	return srv.Run(ctx)
}

// dedupWindow maps the configuration's 0 (off) to the pipeline's negative
// (the dedup window and the enrichment cache TTL).
func dedupWindow(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// digestThreshold maps the configuration's 0 (off) to the pipeline's
// negative.
func digestThreshold(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// transport delivers both alerts and SendMessage messages.
type transport interface {
	pipeline.Deliverer
	outbound.Transport
}

// delivery picks Telegram when a bot token is set, otherwise the delivery
// log, and says which in one start-up line. Telegram requests are counted
// in providers.
func delivery(ctx context.Context, cfg Config, logger *slog.Logger, providers *telemetry.ProviderMetrics) (transport, chat.Replier, approval.Responder, string, error) {
	if cfg.TelegramBotToken == "" {
		logger.Info("delivery: log (TELEGRAM_BOT_TOKEN unset; messages are stored and logged, not sent)")
		return &deliverylog.Deliverer{Logger: logger}, &deliverylog.Replier{Logger: logger}, &deliverylog.Responder{Logger: logger}, cfg.TelegramBotUsername, nil
	}
	routes := cfg.parsed.routes
	// Bot API calls are deliberately not traced with otelhttp: the bot
	// token is part of the URL path, and client spans record the full URL.
	// They are counted, which records no URL.
	client, err := telegram.New(cfg.TelegramBotToken, telegram.Options{
		APIURL:     cfg.TelegramAPIURL,
		HTTPClient: providers.UntracedClient("telegram", telegram.DefaultTimeout),
		// Start does not depend on Telegram being reachable; sends retry.
		SkipGetMe: true,
		PerChat:   rate.Limit(cfg.RatePerChat),
		Overall:   rate.Limit(cfg.RateOverall),
	})
	if err != nil {
		return nil, nil, nil, "", err
	}
	username := cfg.TelegramBotUsername
	if username == "" {
		gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		username, err = client.Username(gctx)
		cancel()
		if err != nil {
			logger.Warn("could not ask Telegram for the bot's username; group mentions by @name are not recognised until TELEGRAM_BOT_USERNAME is set", "error", err)
		}
	}
	if cfg.TelegramChatID == "" && routes == nil {
		logger.Warn("TELEGRAM_CHAT_ID and NOTIFIER_ROUTES are unset: alerts have nowhere to go and will fail")
	}
	logger.Info("delivery: telegram", "api_url", cfg.TelegramAPIURL, "default_chat", cfg.TelegramChatID, "routes", len(routes), "bot_username", username)
	return &telegram.Deliverer{Client: client, Router: telegram.Router{Routes: routes, Default: cfg.TelegramChatID}, Logger: logger},
		&telegram.Replier{Client: client}, client, username, nil
}
