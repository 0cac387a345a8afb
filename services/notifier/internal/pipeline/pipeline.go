// Package pipeline is the notifier's durable alert pipeline: webhook,
// enrichment, message, delivery. Ingest stores alerts and, in the same database transaction, inserts a
// River job per alert to deliver; it answers once that transaction commits,
// so an accepted alert survives any crash. Every delivery (an alert, a
// group's root, reply or root edit, a storm digest) is one kind of job, a
// message job, whose worker loads, renders, sends and records it through
// a delivery of that kind (message.go). The job enriches the alert through
// an Enricher (bounded by a deadline; a failure or timeout delivers the
// original alert with a one-line note), formats it with internal/format,
// and delivers it through a Deliverer, storing each step's result on the
// alert: RECEIVED → ENRICHING → DELIVERING → DELIVERED or FAILED. Resolved
// alerts are delivered as resolutions, without enrichment.
//
// Delivery is at least once. River may run a job again after a crash; the
// job skips an alert already DELIVERED and reuses a message already
// rendered, so the only window for a second Telegram message is a crash
// between Telegram's answer and the status update that follows it.
//
// Repeats are recorded, not delivered: an alert whose source, fingerprint
// and status match an alert received within the dedup window (one that is
// neither a duplicate itself nor FAILED) is stored as DUPLICATE with
// duplicate_of set, and no job is inserted for it.
package pipeline

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/groundcrew/groundcrew/platform/jobqueue"
	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/format"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
)

// Enrichment is what an Enricher found for an alert (alert.Enrichment,
// the one shape the formatter renders and the store keeps).
type Enrichment = alert.Enrichment

// Enricher finds context for an alert's text.
type Enricher interface {
	Enrich(ctx context.Context, text string) (Enrichment, error)
}

// LinkedEnricher is an Enricher that also takes the alert's own links
// (alert.EvidenceURLs: its runbook first): when one is a document in the
// search index, the enrichment starts from it.
type LinkedEnricher interface {
	EnrichLinked(ctx context.Context, text string, evidenceURLs []string) (Enrichment, error)
}

// formatLinks are an alert's own links as the formatter shows them.
func formatLinks(links []alert.Link) []format.Link {
	out := make([]format.Link, len(links))
	for i, l := range links {
		out[i] = format.Link{Label: l.Label, URL: l.URL}
	}
	return out
}

// Receipt says where an alert was delivered.
type Receipt struct {
	Destination string   // a Telegram chat id, or "log"
	MessageIDs  []string // the delivered messages' ids
}

// Deliverer sends an alert's rendered message (Alert.Message) to where its
// labels route it. Errors may implement
//
//	RetryAfter() time.Duration // the receiver asked to wait (Telegram 429)
//	Permanent() bool           // retrying cannot help (chat not found, …)
//	Public() string            // a description safe to show on the alert
type Deliverer interface {
	Deliver(ctx context.Context, a *alert.Alert) (Receipt, error)
}

// Config tunes a Pipeline; zero fields take the defaults below.
type Config struct {
	// DedupWindow is how far back a repeat is looked for; negative disables
	// deduplication.
	DedupWindow time.Duration
	// EnrichTimeout bounds enrichment of one alert.
	EnrichTimeout time.Duration
	// JobTimeout bounds one run of a job (enrichment, pacing and delivery).
	JobTimeout time.Duration
	// MaxAttempts is how many times delivery is tried before the alert is
	// FAILED.
	MaxAttempts int
	// Workers is how many alerts are processed at once.
	Workers int
	// PollInterval is how often idle workers look for new jobs (SQLite has
	// no LISTEN/NOTIFY, so jobs are polled).
	PollInterval time.Duration
	// RescueAfter is when a job still running is taken for crashed and run
	// again (PostgreSQL; on SQLite, jobs left running are rescued at start);
	// jobqueue's default (JobTimeout + 1m) when not longer than JobTimeout.
	RescueAfter time.Duration
	// RetryPolicy decides when a failed delivery is retried; nil is a
	// [Backoff] with the default base and ceiling.
	RetryPolicy river.ClientRetryPolicy
	// Format tunes the message formatter.
	Format format.Options
	// DigestThreshold is the backlog of a chat beyond which its waiting
	// alerts are collapsed into one digest; negative disables digests.
	DigestThreshold int
	// EnrichCacheTTL is how long a group's enrichment is reused for a group
	// with the same alertname and common labels; negative disables the
	// cache.
	EnrichCacheTTL time.Duration
}

// Defaults for Config.
const (
	DefaultDedupWindow   = 10 * time.Minute
	DefaultEnrichTimeout = 20 * time.Second
	DefaultJobTimeout    = 2 * time.Minute
	// DefaultMaxAttempts with the default Backoff retries for about an
	// hour (1 s, 2 s, … 512 s, then every 10 minutes) before FAILED.
	DefaultMaxAttempts = 16
	// DefaultWorkers: an alert's job mostly waits (on the model, on
	// Telegram), so workers are goroutines waiting, not CPUs busy; with a
	// real model taking seconds per alert, ten workers held deliveries
	// to a few a second.
	DefaultWorkers      = 50
	DefaultPollInterval = 200 * time.Millisecond
	// DeliveryAllowance is the least time a job has beyond its
	// enrichment bound, to pace and deliver: JobTimeout is at least
	// EnrichTimeout + DeliveryAllowance.
	DeliveryAllowance = 10 * time.Second
)

func (c Config) withDefaults() Config {
	if c.DedupWindow == 0 {
		c.DedupWindow = DefaultDedupWindow
	}
	if c.EnrichTimeout <= 0 {
		c.EnrichTimeout = DefaultEnrichTimeout
	}
	if c.JobTimeout <= 0 {
		c.JobTimeout = DefaultJobTimeout
	}
	if c.JobTimeout < c.EnrichTimeout+DeliveryAllowance {
		c.JobTimeout = c.EnrichTimeout + DeliveryAllowance
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.RetryPolicy == nil {
		c.RetryPolicy = Backoff{}
	}
	if c.Workers <= 0 {
		c.Workers = DefaultWorkers
	}
	if c.PollInterval <= 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.DigestThreshold == 0 {
		c.DigestThreshold = DefaultDigestThreshold
	}
	if c.EnrichCacheTTL == 0 {
		c.EnrichCacheTTL = DefaultEnrichCacheTTL
	}
	return c
}

// Pipeline takes alerts in and runs the durable jobs that deliver them.
type Pipeline struct {
	cfg       Config
	store     *store.Store
	db        *sqlstore.DB
	river     *river.Client[*sql.Tx]
	jobs      *jobqueue.Queue
	enricher  Enricher
	deliverer Deliverer
	groups    GroupTransport // nil: no group notifications
	silencer  Silencer
	// silenceMu serialises silence actions in this process (they call
	// Alertmanager, which has no idempotency key).
	silenceMu sync.Mutex
	metrics   *Metrics
	logger    *slog.Logger
	now       func() time.Time
	// escalation hears of roots delivered and groups acknowledged (nil:
	// none).
	escalation Escalation
}

// Deps are what a Pipeline works with.
type Deps struct {
	Store     *store.Store
	Enricher  Enricher
	Deliverer Deliverer
	Metrics   *Metrics // nil: not recorded
	Logger    *slog.Logger
	// Register adds the workers of other durable jobs that share the
	// queue (the chat agent's tasks); nil adds none.
	Register func(*river.Workers)
	// Silencer creates Alertmanager silences (ALERTMANAGER_URL); nil:
	// groups cannot be silenced.
	Silencer Silencer
	// Escalation hears of group roots going out and of acknowledgements
	// (the on-call escalator); nil: groups do not escalate.
	Escalation Escalation
}

// Escalation is told when an alert group's root message went out (its
// escalation may start) and when someone acknowledged the group (it
// stops). Neither may fail a delivery or an acknowledgement: it logs.
type Escalation interface {
	RootDelivered(ctx context.Context, groupID string)
	Acknowledged(ctx context.Context, groupID, actor string, at time.Time)
	// StatusLine is the line the root shows about the group's escalation
	// ("⏳ escalating: step 2 of 3, @ben notified 21:04 UTC", "👀 acked by
	// @ben after 6 min"); "" when there is none.
	StatusLine(ctx context.Context, groupID string) string
}

// New migrates River's tables in the store's database and builds a
// Pipeline. Call Start to work jobs and Stop before closing the database.
func New(ctx context.Context, deps Deps, cfg Config) (*Pipeline, error) {
	cfg = cfg.withDefaults()
	if deps.Metrics == nil {
		deps.Metrics = NewMetrics(nil)
	}
	p := &Pipeline{
		cfg:        cfg,
		store:      deps.Store,
		db:         deps.Store.DB(),
		enricher:   deps.Enricher,
		deliverer:  deps.Deliverer,
		metrics:    deps.Metrics,
		logger:     deps.Logger,
		silencer:   deps.Silencer,
		now:        time.Now,
		escalation: deps.Escalation,
	}
	if gt, ok := deps.Deliverer.(GroupTransport); ok {
		p.groups = gt
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &messageWorker{p: p})
	// The previous release's job kinds, for jobs it left queued.
	addLegacyWorkers(workers, p)
	if deps.Register != nil {
		deps.Register(workers)
	}
	q, err := jobqueue.Open(ctx, p.db, workers, jobqueue.Config{
		Workers:      cfg.Workers,
		PollInterval: cfg.PollInterval,
		JobTimeout:   cfg.JobTimeout,
		RescueAfter:  cfg.RescueAfter,
		MaxAttempts:  cfg.MaxAttempts,
		RetryPolicy:  cfg.RetryPolicy,
	}, deps.Logger)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	p.jobs = q
	p.river = q.Client
	return p, nil
}

// Start makes jobs a crash left running available again (SQLite) and
// starts working jobs. ctx bounds start-up only; Stop ends the work.
func (p *Pipeline) Start(ctx context.Context) error {
	return p.jobs.Start(ctx)
}

// Stop lets running jobs finish until ctx is done, then cancels them (a
// cancelled job runs again after the next start).
func (p *Pipeline) Stop(ctx context.Context) error {
	return p.jobs.Stop(ctx)
}

// Ingest stores alerts (as built by package alert) and queues their
// delivery, all in one transaction, and returns them as stored: with ids,
// RECEIVED, or DUPLICATE and duplicate_of.
func (p *Pipeline) Ingest(ctx context.Context, alerts []alert.Alert) ([]*alert.Alert, error) {
	out, err := p.intake(ctx, alerts, func(tx *sql.Tx, out []*alert.Alert, chats []string, now time.Time) ([]river.InsertManyParams, error) {
		var jobs []river.InsertManyParams
		for i, a := range out {
			if chats != nil {
				// The routed chat, so that its backlog can be counted.
				a.Destination = chats[i]
			}
			if err := p.insertAlert(ctx, tx, a, now); err != nil {
				return nil, err
			}
			if a.Status == alert.StatusReceived {
				jobs = append(jobs, river.InsertManyParams{Args: messageArgs{Type: messageAlert, AlertID: a.ID}})
			}
		}
		return jobs, nil
	})
	if err != nil {
		return nil, err
	}
	for _, a := range out {
		if a.Status == alert.StatusDuplicate {
			p.logger.InfoContext(ctx, "alert is a repeat; recorded, not delivered", "alert_id", a.ID, "duplicate_of", a.DuplicateOf)
		}
	}
	return out, nil
}

// intake is the one intake transaction of Ingest and IngestGroup: it gives
// each alert an id, RECEIVED and the time it came, and routes it (chats[i]
// is the chat out[i] goes to; nil without a GroupTransport); locks their
// dedup keys; lets write store them and name the delivery jobs to queue;
// queues those in the same transaction and commits, so that an accepted
// alert survives any crash; then counts the accepted alerts and the
// repeats.
func (p *Pipeline) intake(ctx context.Context, alerts []alert.Alert, write func(tx *sql.Tx, out []*alert.Alert, chats []string, now time.Time) ([]river.InsertManyParams, error)) ([]*alert.Alert, error) {
	now := p.now().UTC().Truncate(time.Microsecond)
	out := make([]*alert.Alert, 0, len(alerts))
	for i := range alerts {
		a := alerts[i]
		id, err := uuid.NewV7()
		if err != nil {
			return nil, fmt.Errorf("making an alert id: %w", err)
		}
		a.ID = id.String()
		a.Status = alert.StatusReceived
		a.ReceivedAt, a.UpdatedAt = now, now
		out = append(out, &a)
	}
	// Routing may read the store (migrated chats): done before the
	// transaction, which holds SQLite's only connection.
	var chats []string
	if p.groups != nil {
		chats = make([]string, len(out))
		for i, a := range out {
			chats[i] = p.groups.Chat(a.Labels)
		}
	}
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("starting intake transaction: %w", err)
	}
	defer func() { _ = tx.Rollback() }()

	if p.cfg.DedupWindow > 0 {
		// Two instances taking the same alert at once must not both miss
		// each other's copy.
		keys := make([]string, len(out))
		for i, a := range out {
			keys[i] = a.DedupKey()
		}
		if err := p.store.LockForDedup(ctx, tx, keys); err != nil {
			return nil, err
		}
	}
	jobs, err := write(tx, out, chats, now)
	if err != nil {
		return nil, err
	}
	if len(jobs) > 0 {
		if _, err := p.river.InsertManyTx(ctx, tx, jobs); err != nil {
			return nil, fmt.Errorf("queueing %d delivery jobs: %w", len(jobs), err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("committing intake transaction: %w", err)
	}
	for _, a := range out {
		p.metrics.accepted.WithLabelValues(a.Source).Inc()
		if a.Status == alert.StatusDuplicate {
			p.metrics.deduplicated.WithLabelValues(a.Source).Inc()
		}
	}
	return out, nil
}

// insertAlert stores a through tx, as a DUPLICATE of the alert it repeats
// when one came within the dedup window.
func (p *Pipeline) insertAlert(ctx context.Context, tx *sql.Tx, a *alert.Alert, now time.Time) error {
	if p.cfg.DedupWindow > 0 {
		orig, err := p.store.FindOriginal(ctx, tx, a, now.Add(-p.cfg.DedupWindow))
		if err != nil {
			return err
		}
		if orig != "" {
			a.Status, a.DuplicateOf = alert.StatusDuplicate, orig
		}
	}
	return p.store.InsertAlert(ctx, tx, a)
}

// Insert queues another durable job (one registered through
// Deps.Register) on the pipeline's queue.
func (p *Pipeline) Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error {
	if _, err := p.river.Insert(ctx, args, opts); err != nil {
		return fmt.Errorf("queueing a %s job: %w", args.Kind(), err)
	}
	return nil
}

// Get returns a stored alert; a missing id gives store.ErrNotFound.
func (p *Pipeline) Get(ctx context.Context, id string) (*alert.Alert, error) {
	return p.store.GetAlert(ctx, id)
}

// List returns one page of stored alerts, newest first.
func (p *Pipeline) List(ctx context.Context, q store.ListQuery) (store.Page[*alert.Alert], error) {
	return p.store.ListAlerts(ctx, q)
}
