// Package jobqueue runs durable jobs with River on a service's SQL store,
// the same way in every service: River's tables migrated into the store's
// database, one client per service queue, SQLite or PostgreSQL.
//
// On PostgreSQL it uses River's database/sql driver rather than pgx's, so
// jobs share the store's pool and a service can write its own rows and
// insert the job that continues the work in one *sql.Tx (the cost is
// polling instead of LISTEN/NOTIFY, which SQLite needs anyway).
//
// On SQLite the database file belongs to one process, so a job found
// running when the queue starts was orphaned by a crash; Start makes such
// jobs available at once instead of waiting for River's stuck-job rescuer.
package jobqueue

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
)

// Config sets up one queue.
type Config struct {
	// Queue is the River queue this client works; empty means
	// river.QueueDefault. Services sharing one PostgreSQL database use
	// distinct queues.
	Queue string
	// Workers is how many jobs run at once.
	Workers int
	// PollInterval is how often idle workers look for jobs.
	PollInterval time.Duration
	// FetchCooldown is the least time between two fetches while jobs keep
	// coming (DefaultFetchCooldown when zero). River fetches at most the
	// free workers' worth of jobs each time, so Workers / FetchCooldown is
	// the queue's ceiling in jobs per second.
	FetchCooldown time.Duration
	// JobTimeout bounds one job's run.
	JobTimeout time.Duration
	// RescueAfter is when River's rescuer treats a running job as stuck;
	// zero, or anything not longer than JobTimeout (a job still within
	// its timeout is not stuck), means JobTimeout plus a minute.
	RescueAfter time.Duration
	// MaxAttempts and RetryPolicy are River's.
	MaxAttempts int
	RetryPolicy river.ClientRetryPolicy
}

// DefaultFetchCooldown keeps a queue of short jobs flowing: with River's
// 100 ms, ten workers could never run more than 100 jobs a second however
// short the jobs (the notifier's alerts take ~20 ms each), and a 200
// alerts/s load built a backlog that took longer to drain than to send.
const DefaultFetchCooldown = 20 * time.Millisecond

// Queue is a River client bound to a store.
type Queue struct {
	// Client inserts jobs (InsertTx, InsertManyTx) and is started and
	// stopped through Start and Stop.
	Client *river.Client[*sql.Tx]
	db     *sqlstore.DB
	queue  string
	logger *slog.Logger
	// stopPromote ends the due-job promoter (PostgreSQL); promoted is
	// closed once it has.
	stopPromote context.CancelFunc
	promoted    chan struct{}
}

// Open migrates River's tables in db and builds a client that works cfg's
// queue with workers. Call Start to work jobs and Stop before closing db.
func Open(ctx context.Context, db *sqlstore.DB, workers *river.Workers, cfg Config, logger *slog.Logger) (*Queue, error) {
	var driver riverdriver.Driver[*sql.Tx]
	switch db.Dialect {
	case sqlstore.SQLite:
		driver = riversqlite.New(db.DB)
	case sqlstore.Postgres:
		driver = riverdatabasesql.New(db.DB)
	default:
		return nil, fmt.Errorf("jobqueue: unsupported database dialect %q", db.Dialect)
	}
	quiet := Quiet(logger)
	migrator, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: quiet})
	if err != nil {
		return nil, fmt.Errorf("jobqueue: preparing job queue migrations: %w", err)
	}
	// River's tables are shared by every service on the database: services
	// starting together on a fresh PostgreSQL would otherwise race to
	// create the same types ("duplicate key value violates unique
	// constraint pg_type_typname_nsp_index") and one would fail to start.
	if err := db.WithLock(ctx, "river-migrations", func(ctx context.Context) error {
		_, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
		return err
	}); err != nil {
		return nil, fmt.Errorf("jobqueue: migrating job queue tables: %w", err)
	}
	queue := cfg.Queue
	if queue == "" {
		queue = river.QueueDefault
	}
	rescue := cfg.RescueAfter
	if rescue <= cfg.JobTimeout {
		rescue = cfg.JobTimeout + time.Minute
	}
	client, err := river.NewClient(driver, &river.Config{
		Logger:               quiet,
		PollOnly:             true,
		FetchPollInterval:    cfg.PollInterval,
		FetchCooldown:        min(cmp.Or(cfg.FetchCooldown, DefaultFetchCooldown), cfg.PollInterval),
		JobTimeout:           cfg.JobTimeout,
		RescueStuckJobsAfter: rescue,
		MaxAttempts:          cfg.MaxAttempts,
		RetryPolicy:          cfg.RetryPolicy,
		Queues:               map[string]river.QueueConfig{queue: {MaxWorkers: cfg.Workers}},
		Workers:              workers,
	})
	if err != nil {
		return nil, fmt.Errorf("jobqueue: creating job client: %w", err)
	}
	return &Queue{Client: client, db: db, queue: queue, logger: logger}, nil
}

// Start makes jobs orphaned by a crash available again (SQLite) and starts
// working jobs. ctx bounds start-up only; Stop ends the work.
func (q *Queue) Start(ctx context.Context) error {
	if q.db.Dialect == sqlstore.SQLite {
		res, err := q.db.ExecContext(ctx, `UPDATE river_job SET state = 'available', scheduled_at = datetime('now', 'subsec')
			WHERE state = 'running' AND queue = $1`, q.queue)
		if err != nil {
			return fmt.Errorf("jobqueue: resuming interrupted jobs: %w", err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			q.logger.InfoContext(ctx, "resuming jobs interrupted by a stop", "queue", q.queue, "jobs", n)
		}
	}
	// River stops its work when the Start context ends; the queue runs
	// until Stop.
	if err := q.Client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("jobqueue: starting job client: %w", err)
	}
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	q.stopPromote, q.promoted = cancel, make(chan struct{})
	go q.promoteDue(pctx)
	return nil
}

// PromoteInterval is how often every instance makes its queue's due
// scheduled jobs available.
const PromoteInterval = time.Second

// promoteDue makes scheduled jobs that are due available, every
// PromoteInterval, on every instance. River's own scheduler does this only
// on the elected leader, and after a leader is killed the others wait for
// its lease to lapse (up to 15 s) before one of them leads: a durable timer
// (an escalation step, an approval's timeout) due in that gap would fire up
// to 20 s late. On SQLite the one instance restarted after a kill waits
// for its own old lease the same way. The update is the one River's
// scheduler makes, so running it on every instance is harmless.
func (q *Queue) promoteDue(ctx context.Context) {
	defer close(q.promoted)
	due := `UPDATE river_job SET state = 'available' WHERE state = 'scheduled' AND queue = $1 AND scheduled_at <= now()`
	if q.db.Dialect == sqlstore.SQLite {
		// River's SQLite driver keeps times as text in this form.
		due = `UPDATE river_job SET state = 'available' WHERE state = 'scheduled' AND queue = $1 AND scheduled_at <= datetime('now', 'subsec')`
	}
	t := time.NewTicker(PromoteInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := q.db.ExecContext(ctx, due, q.queue); err != nil && ctx.Err() == nil {
			q.logger.WarnContext(ctx, "promoting due jobs failed", "queue", q.queue, "error", err)
		}
	}
}

// Stop lets running jobs finish until ctx is done, then cancels them; a
// cancelled job runs again after the next Start.
func (q *Queue) Stop(ctx context.Context) error {
	if q.stopPromote != nil {
		q.stopPromote()
		<-q.promoted
	}
	err := q.Client.Stop(ctx)
	if err == nil {
		return nil
	}
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err2 := q.Client.StopAndCancel(cctx); err2 != nil {
		return fmt.Errorf("jobqueue: stopping job client: %w", errors.Join(err, err2))
	}
	return nil
}

// Quiet passes River's warnings and errors to logger; its info lines are
// noise in a service log.
func Quiet(logger *slog.Logger) *slog.Logger {
	return slog.New(levelFilter{logger.Handler(), slog.LevelWarn}).With("component", "river")
}

type levelFilter struct {
	slog.Handler
	min slog.Level
}

// Enabled drops records below the filter's level.
func (f levelFilter) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= f.min && f.Handler.Enabled(ctx, l)
}

// WithAttrs keeps the filter on the derived handler.
func (f levelFilter) WithAttrs(as []slog.Attr) slog.Handler {
	return levelFilter{f.Handler.WithAttrs(as), f.min}
}

// WithGroup keeps the filter on the derived handler.
func (f levelFilter) WithGroup(name string) slog.Handler {
	return levelFilter{f.Handler.WithGroup(name), f.min}
}
