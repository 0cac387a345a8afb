// Package researchstore persists research runs, approvals and reports in
// SQL (SQLite or PostgreSQL, through platform/sqlstore) and runs their jobs
// with River on the same database.
//
// Every state change of a run is one transaction that writes the run, its
// approvals, its report and inserts the jobs that follow, so a job is queued
// if and only if the state it continues from is committed. River's tables
// share the database; the jobs go to their own queue (Queue), so that on a
// PostgreSQL database shared with other services' River clients neither
// takes the other's jobs.
package researchstore

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"

	"github.com/groundcrew/groundcrew/platform/jobqueue"
	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/services/grounding/internal/research"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Queue is the River queue research jobs run on.
const Queue = "grounding_research"

// Options tune the job queue; zero fields take the defaults.
type Options struct {
	// Workers is how many jobs run at once (default 4).
	Workers int
	// PollInterval is how often idle workers look for jobs (default
	// 200ms; SQLite has no LISTEN/NOTIFY, and the database/sql driver
	// used on PostgreSQL neither).
	PollInterval time.Duration
	// JobTimeout bounds one job (default 2m): a step's searches, a send.
	JobTimeout time.Duration
	// MaxAttempts is how often a failing job is tried (default 5); the
	// last attempt marks the run or action failed.
	MaxAttempts int
	// RetryPolicy decides when a failed job is retried; nil is River's
	// exponential backoff.
	RetryPolicy river.ClientRetryPolicy
}

func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 200 * time.Millisecond
	}
	if o.JobTimeout <= 0 {
		o.JobTimeout = 2 * time.Minute
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 5
	}
	return o
}

// Handler executes jobs; research.Service is one.
type Handler interface {
	HandleJob(ctx context.Context, job research.Job) error
}

// Store implements research.Store.
type Store struct {
	db      *sqlstore.DB
	river   *river.Client[*sql.Tx]
	jobs    *jobqueue.Queue
	logger  *slog.Logger
	handler atomic.Pointer[Handler]
}

var _ research.Store = (*Store)(nil)

// Open applies the research migrations and River's to db and returns a
// Store that can queue jobs; call Start to work them and Stop before
// closing db.
func Open(ctx context.Context, db *sqlstore.DB, logger *slog.Logger, opt Options) (*Store, error) {
	opt = opt.withDefaults()
	if err := sqlstore.Migrate(ctx, db, migrations, "migrations"); err != nil {
		return nil, fmt.Errorf("researchstore: %w", err)
	}
	s := &Store{db: db, logger: logger}
	workers := river.NewWorkers()
	river.AddWorker(workers, &worker{s: s})
	q, err := jobqueue.Open(ctx, db, workers, jobqueue.Config{
		Queue:        Queue,
		Workers:      opt.Workers,
		PollInterval: opt.PollInterval,
		JobTimeout:   opt.JobTimeout,
		MaxAttempts:  opt.MaxAttempts,
		RetryPolicy:  opt.RetryPolicy,
	}, logger)
	if err != nil {
		return nil, fmt.Errorf("researchstore: %w", err)
	}
	s.jobs = q
	s.river = q.Client
	return s, nil
}

// Start works jobs with h until Stop. On SQLite, jobs a stopped process
// left running are made available first (the file belongs to this one
// process, so they cannot be running elsewhere).
func (s *Store) Start(ctx context.Context, h Handler) error {
	s.handler.Store(&h)
	if err := s.jobs.Start(ctx); err != nil {
		return fmt.Errorf("researchstore: %w", err)
	}
	return nil
}

// Stop lets running jobs finish until ctx is done, then cancels them; a
// cancelled job runs again after the next Start.
func (s *Store) Stop(ctx context.Context) error {
	if err := s.jobs.Stop(ctx); err != nil {
		return fmt.Errorf("researchstore: %w", err)
	}
	return nil
}

// jobArgs is a research.Job as River stores it.
type jobArgs struct {
	What       research.JobKind `json:"what"`
	RunID      string           `json:"run_id"`
	Seq        int              `json:"seq"`
	ActionID   string           `json:"action_id,omitempty"`
	ApprovalID string           `json:"approval_id,omitempty"`
}

// Kind names the job in River's tables.
func (jobArgs) Kind() string { return "grounding_research" }

// InsertOpts puts research jobs on their own queue.
func (jobArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: Queue} }

type worker struct {
	river.WorkerDefaults[jobArgs]
	s *Store
}

// Work hands the job to the handler; a job that came early is snoozed.
func (w *worker) Work(ctx context.Context, job *river.Job[jobArgs]) error {
	h := w.s.handler.Load()
	if h == nil {
		return errors.New("researchstore: no job handler")
	}
	err := (*h).HandleJob(ctx, research.Job{
		Kind: job.Args.What, RunID: job.Args.RunID, Seq: job.Args.Seq,
		ActionID: job.Args.ActionID, ApprovalID: job.Args.ApprovalID,
		Attempt: job.Attempt, MaxAttempts: job.MaxAttempts,
	})
	var nd *research.NotDueError
	if errors.As(err, &nd) {
		return river.JobSnooze(max(nd.Wait, time.Second))
	}
	return err
}

func micros(t time.Time) int64 { return t.UTC().UnixMicro() }

// CreateRun stores a new run and queues jobs in one transaction.
func (s *Store) CreateRun(ctx context.Context, run *research.Run, jobs []research.Job) error {
	data, err := json.Marshal(run)
	if err != nil {
		return fmt.Errorf("encoding run: %w", err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("starting transaction: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `INSERT INTO research_runs (id, user_id, status, created_at, updated_at, data)
		VALUES ($1, $2, $3, $4, $5, $6)`,
		run.ID, run.UserID, string(run.Status), micros(run.CreatedAt), micros(run.UpdatedAt), string(data)); err != nil {
		return fmt.Errorf("inserting run: %w", err)
	}
	if err := s.insertJobs(ctx, tx, jobs); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("committing new run: %w", err)
	}
	return nil
}

func (s *Store) insertJobs(ctx context.Context, tx *sql.Tx, jobs []research.Job) error {
	if len(jobs) == 0 {
		return nil
	}
	params := make([]river.InsertManyParams, len(jobs))
	for i, j := range jobs {
		params[i] = river.InsertManyParams{
			Args: jobArgs{What: j.Kind, RunID: j.RunID, Seq: j.Seq, ActionID: j.ActionID, ApprovalID: j.ApprovalID},
			InsertOpts: &river.InsertOpts{
				Queue:       Queue,
				ScheduledAt: j.NotBefore,
			},
		}
	}
	if _, err := s.river.InsertManyTx(ctx, tx, params); err != nil {
		return fmt.Errorf("queueing %d research jobs: %w", len(jobs), err)
	}
	return nil
}

// GetRun returns a run.
func (s *Store) GetRun(ctx context.Context, id string) (*research.Run, error) {
	return getJSON[research.Run](ctx, s.db, `SELECT data FROM research_runs WHERE id = $1`, id)
}

// GetApproval returns an approval.
func (s *Store) GetApproval(ctx context.Context, id string) (*research.Approval, error) {
	return getJSON[research.Approval](ctx, s.db, `SELECT data FROM research_approvals WHERE id = $1`, id)
}

type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func getJSON[T any](ctx context.Context, q queryRower, query string, args ...any) (*T, error) {
	var data string
	if err := q.QueryRowContext(ctx, query, args...).Scan(&data); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, research.ErrNotFound
		}
		return nil, fmt.Errorf("reading %T: %w", *new(T), err)
	}
	v := new(T)
	if err := json.Unmarshal([]byte(data), v); err != nil {
		return nil, fmt.Errorf("decoding %T: %w", *v, err)
	}
	return v, nil
}

// GetReport returns a finished run's report and its metadata.
func (s *Store) GetReport(ctx context.Context, runID string) (*research.ReportRecord, error) {
	var meta, report, content string
	err := s.db.QueryRowContext(ctx, `SELECT metadata, report, content FROM research_reports WHERE run_id = $1`, runID).Scan(&meta, &report, &content)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, research.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading report of run %s: %w", runID, err)
	}
	rec := &research.ReportRecord{RunID: runID, Content: content}
	if err := json.Unmarshal([]byte(meta), &rec.Metadata); err != nil {
		return nil, fmt.Errorf("decoding report metadata of run %s: %w", runID, err)
	}
	if err := json.Unmarshal([]byte(report), &rec.Report); err != nil {
		return nil, fmt.Errorf("decoding report of run %s: %w", runID, err)
	}
	return rec, nil
}

// Update locks the run (SELECT … FOR UPDATE on PostgreSQL; SQLite write
// transactions take the database lock at BEGIN), calls fn, and commits the
// run, its approvals, its report and its jobs together.
func (s *Store) Update(ctx context.Context, runID string, fn func(*research.Change) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("starting transaction: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	lock := ""
	if s.db.Dialect == sqlstore.Postgres {
		lock = " FOR UPDATE"
	}
	run, err := getJSON[research.Run](ctx, tx, `SELECT data FROM research_runs WHERE id = $1`+lock, runID)
	if err != nil {
		return fmt.Errorf("loading run %s: %w", runID, err)
	}
	approvals, err := s.runApprovals(ctx, tx, runID)
	if err != nil {
		return err
	}
	c := &research.Change{Run: run, Approvals: approvals}
	if err := fn(c); err != nil {
		if errors.Is(err, research.ErrNoChange) {
			return nil
		}
		return err
	}
	if c.Run.ID != runID {
		return fmt.Errorf("researchstore: update of run %s changed its id", runID)
	}
	data, err := json.Marshal(c.Run)
	if err != nil {
		return fmt.Errorf("encoding run: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE research_runs SET status = $2, updated_at = $3, data = $4 WHERE id = $1`,
		runID, string(c.Run.Status), micros(c.Run.UpdatedAt), string(data)); err != nil {
		return fmt.Errorf("saving run %s: %w", runID, err)
	}
	for _, a := range c.Approvals {
		if a.RunID != runID {
			return fmt.Errorf("researchstore: approval %s belongs to run %s, not %s", a.ID, a.RunID, runID)
		}
		data, err := json.Marshal(a)
		if err != nil {
			return fmt.Errorf("encoding approval: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO research_approvals (id, run_id, status, requested_at, timeout_at, data)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (id) DO UPDATE SET status = excluded.status, data = excluded.data`,
			a.ID, a.RunID, string(a.Status), micros(a.RequestedAt), micros(a.TimeoutAt), string(data)); err != nil {
			return fmt.Errorf("saving approval %s: %w", a.ID, err)
		}
	}
	if r := c.Report; r != nil {
		meta, err := json.Marshal(r.Metadata)
		if err != nil {
			return fmt.Errorf("encoding report metadata: %w", err)
		}
		report, err := json.Marshal(r.Report)
		if err != nil {
			return fmt.Errorf("encoding report: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO research_reports (run_id, metadata, report, content, created_at)
			VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (run_id) DO UPDATE SET metadata = excluded.metadata, report = excluded.report,
				content = excluded.content, created_at = excluded.created_at`,
			runID, string(meta), string(report), r.Content, micros(r.Report.GeneratedAt)); err != nil {
			return fmt.Errorf("saving report of run %s: %w", runID, err)
		}
	}
	if err := s.insertJobs(ctx, tx, c.Jobs); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("committing run %s: %w", runID, err)
	}
	return nil
}

func (s *Store) runApprovals(ctx context.Context, tx *sql.Tx, runID string) ([]*research.Approval, error) {
	rows, err := tx.QueryContext(ctx, `SELECT data FROM research_approvals WHERE run_id = $1 ORDER BY requested_at, id`, runID)
	if err != nil {
		return nil, fmt.Errorf("loading approvals of run %s: %w", runID, err)
	}
	return scanAll[research.Approval](rows)
}

func scanAll[T any](rows *sql.Rows) ([]*T, error) {
	defer rows.Close()
	var out []*T
	for rows.Next() {
		var data string
		if err := rows.Scan(&data); err != nil {
			return nil, fmt.Errorf("reading %T: %w", *new(T), err)
		}
		v := new(T)
		if err := json.Unmarshal([]byte(data), v); err != nil {
			return nil, fmt.Errorf("decoding %T: %w", *v, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading %T rows: %w", *new(T), err)
	}
	return out, nil
}

// Page sizes.
const (
	defaultPageSize = 20
	maxPageSize     = 100
)

// parseToken reads a page token; an empty one starts at the top (newest).
func parseToken(tok string) (sqlstore.Cursor, error) {
	if tok == "" {
		return sqlstore.Cursor{At: math.MaxInt64}, nil
	}
	c, err := sqlstore.ParseCursor(tok)
	if err != nil {
		return sqlstore.Cursor{}, research.ErrInvalidPageToken
	}
	return c, nil
}

func pageSize(p research.Page) int {
	switch {
	case p.Size <= 0:
		return defaultPageSize
	case p.Size > maxPageSize:
		return maxPageSize
	}
	return p.Size
}

// ListRuns returns a user's runs, or every user's when userID is empty,
// newest first.
func (s *Store) ListRuns(ctx context.Context, userID string, p research.Page) ([]*research.Run, string, error) {
	cur, err := parseToken(p.Token)
	if err != nil {
		return nil, "", err
	}
	n := pageSize(p)
	where := "(created_at < $1 OR (created_at = $1 AND id < $2))"
	args := []any{cur.At, cur.ID}
	if userID != "" {
		args = append(args, userID)
		where += " AND user_id = $3"
	}
	args = append(args, n+1)
	rows, err := s.db.QueryContext(ctx, `SELECT data FROM research_runs WHERE `+where+
		` ORDER BY created_at DESC, id DESC LIMIT $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, "", fmt.Errorf("listing runs: %w", err)
	}
	runs, err := scanAll[research.Run](rows)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(runs) > n {
		runs = runs[:n]
		last := runs[n-1]
		next = sqlstore.CursorAfter(last.CreatedAt, last.ID).Token()
	}
	return runs, next, nil
}

// ListApprovals returns approvals, newest first.
func (s *Store) ListApprovals(ctx context.Context, f research.ApprovalFilter, p research.Page) ([]*research.Approval, string, error) {
	cur, err := parseToken(p.Token)
	if err != nil {
		return nil, "", err
	}
	n := pageSize(p)
	where := []string{"(requested_at < $1 OR (requested_at = $1 AND id < $2))"}
	args := []any{cur.At, cur.ID}
	if f.Status != "" {
		args = append(args, string(f.Status))
		where = append(where, "status = $"+strconv.Itoa(len(args)))
	}
	if f.RunID != "" {
		args = append(args, f.RunID)
		where = append(where, "run_id = $"+strconv.Itoa(len(args)))
	}
	args = append(args, n+1)
	rows, err := s.db.QueryContext(ctx, `SELECT data FROM research_approvals WHERE `+strings.Join(where, " AND ")+
		` ORDER BY requested_at DESC, id DESC LIMIT $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, "", fmt.Errorf("listing approvals: %w", err)
	}
	out, err := scanAll[research.Approval](rows)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(out) > n {
		out = out[:n]
		last := out[n-1]
		next = sqlstore.CursorAfter(last.RequestedAt, last.ID).Token()
	}
	return out, next, nil
}
