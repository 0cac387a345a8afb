package jobqueue

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
)

// DepthTimeout bounds the query behind one scrape of a [DepthCollector]:
// well under Prometheus's default 10 s scrape timeout, and far more than
// counting a healthy queue takes.
const DepthTimeout = 2 * time.Second

// depthStates are the states of jobs not yet finished, in the order they
// are reported. River's other states (pending, completed, cancelled,
// discarded) are not work waiting to be done.
var depthStates = []string{"available", "scheduled", "retryable", "running"}

// depthQuery counts one queue's unfinished jobs by state. It works on
// SQLite and PostgreSQL alike (state is text on one, an enum on the
// other, and both compare it with string literals) and is served by
// River's (state, queue, …) fetch index.
var depthQuery = `SELECT state, count(*) FROM river_job
	WHERE queue = $1 AND state IN ('` + strings.Join(depthStates, "', '") + `')
	GROUP BY state`

// ageQueries give, per dialect, the seconds since the oldest job that is
// due or being worked (available, retryable, running; not scheduled, which
// waits on purpose) was created, or NULL when there is none: how long the
// oldest unfinished piece of work, such as an undelivered alert, has been
// waiting. River keeps created_at as timestamptz on PostgreSQL and as UTC
// text on SQLite.
var ageQueries = map[sqlstore.Dialect]string{
	sqlstore.Postgres: `SELECT EXTRACT(EPOCH FROM (now() - min(created_at)))::float8 FROM river_job
	WHERE queue = $1 AND state IN ('available', 'retryable', 'running')`,
	sqlstore.SQLite: `SELECT (julianday('now') - julianday(min(created_at))) * 86400.0 FROM river_job
	WHERE queue = $1 AND state IN ('available', 'retryable', 'running')`,
}

// DepthCollector is a Prometheus collector reporting how many jobs of one
// queue wait or run, read from River's river_job table on each scrape:
//
//	jobqueue_jobs{queue,state}               gauge (state: available, scheduled, retryable, running)
//	jobqueue_oldest_job_age_seconds{queue}   gauge (0 when no job is due or running)
//	jobqueue_collect_errors_total{queue}     counter
//
// When the queries fail or take longer than their timeout the scrape
// reports no jobqueue_jobs or age series (rather than stale or zero ones), counts
// the failure and still succeeds, so a slow database never costs the
// service's other metrics.
//
// Several collectors, one per queue, can be registered on one registry.
type DepthCollector struct {
	db      *sqlstore.DB
	queue   string
	timeout time.Duration
	logger  *slog.Logger
	jobs    *prometheus.Desc
	age     *prometheus.Desc
	errors  prometheus.Counter
}

var _ prometheus.Collector = (*DepthCollector)(nil)

// NewDepthCollector reports the depth of queue (empty: River's default
// queue, as in [Config]) in db, logging failed scrapes to logger.
func NewDepthCollector(db *sqlstore.DB, queue string, logger *slog.Logger) *DepthCollector {
	if queue == "" {
		queue = river.QueueDefault
	}
	// queue is a constant label so that collectors for different queues
	// have distinct descriptors and can share a registry.
	labels := prometheus.Labels{"queue": queue}
	return &DepthCollector{
		db:      db,
		queue:   queue,
		timeout: DepthTimeout,
		logger:  logger,
		jobs: prometheus.NewDesc("jobqueue_jobs",
			"Jobs in the queue that are not finished, by state (available, scheduled, retryable, running), read at scrape time.",
			[]string{"state"}, labels),
		age: prometheus.NewDesc("jobqueue_oldest_job_age_seconds",
			"Seconds since the oldest job that is due or running (available, retryable, running) was created; 0 when there is none. Read at scrape time.",
			nil, labels),
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Name:        "jobqueue_collect_errors_total",
			Help:        "Scrapes that could not read the queue's depth from the database.",
			ConstLabels: labels,
		}),
	}
}

// Describe sends the collector's descriptors.
func (c *DepthCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.jobs
	ch <- c.age
	c.errors.Describe(ch)
}

// Collect queries the queue's depth and sends one gauge per state (zero
// for states without jobs), or none when the query fails.
func (c *DepthCollector) Collect(ch chan<- prometheus.Metric) {
	if counts, age, err := c.count(); err != nil {
		c.errors.Inc()
		c.logger.Warn("reading job queue depth for metrics", "queue", c.queue, "error", err)
	} else {
		for _, state := range depthStates {
			ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(counts[state]), state)
		}
		ch <- prometheus.MustNewConstMetric(c.age, prometheus.GaugeValue, age)
	}
	c.errors.Collect(ch)
}

// count runs the depth and age queries within the collector's timeout.
// Collect has no context of its own, so the scrape is bounded here.
func (c *DepthCollector) count() (map[string]int64, float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	counts, err := c.depth(ctx)
	if err != nil {
		return nil, 0, err
	}
	var age sql.NullFloat64
	if err := c.db.QueryRowContext(ctx, ageQueries[c.db.Dialect], c.queue).Scan(&age); err != nil {
		return nil, 0, fmt.Errorf("oldest job age: %w", err)
	}
	// A clock step or SQLite's millisecond rounding can make a job just
	// created look a hair in the future.
	return counts, max(age.Float64, 0), nil
}

func (c *DepthCollector) depth(ctx context.Context) (map[string]int64, error) {
	rows, err := c.db.QueryContext(ctx, depthQuery, c.queue)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	counts := make(map[string]int64, len(depthStates))
	for rows.Next() {
		var (
			state string
			n     int64
		)
		if err := rows.Scan(&state, &n); err != nil {
			return nil, err
		}
		counts[state] = n
	}
	return counts, rows.Err()
}
