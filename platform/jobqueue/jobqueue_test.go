package jobqueue

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
)

type pingArgs struct{ N int }

func (pingArgs) Kind() string { return "ping" }

type pingWorker struct {
	river.WorkerDefaults[pingArgs]
	done chan int
}

func (w *pingWorker) Work(_ context.Context, j *river.Job[pingArgs]) error {
	w.done <- j.Args.N
	return nil
}

// where is a database: a DATABASE_URL (empty for SQLite) and a DATA_DIR.
type where struct{ url, dir string }

// newWhere is a fresh database: SQLite in a temporary directory, or a
// schema of its own on PostgreSQL when the suite runs with DATABASE_URL.
func newWhere(t *testing.T) where {
	return where{url: sqlstoretest.URL(t, "jobqueue"), dir: t.TempDir()}
}

func open(t *testing.T, at where, w *pingWorker) (*sqlstore.DB, *Queue) {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := sqlstore.Open(context.Background(), at.url, at.dir, "jobs", logger)
	if err != nil {
		t.Fatal(err)
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	q, err := Open(context.Background(), db, workers, Config{
		Queue: "test", Workers: 2, PollInterval: 20 * time.Millisecond, JobTimeout: 10 * time.Second, MaxAttempts: 3,
	}, logger)
	if err != nil {
		t.Fatal(err)
	}
	return db, q
}

func TestJobInsertedInATransactionRuns(t *testing.T) {
	w := &pingWorker{done: make(chan int, 1)}
	db, q := open(t, newWhere(t), w)
	defer db.Close()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Client.InsertTx(ctx, tx, pingArgs{N: 7}, &river.InsertOpts{Queue: "test"}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = q.Stop(ctx) }()
	select {
	case n := <-w.done:
		if n != 7 {
			t.Errorf("worked job %d, want 7", n)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("job not worked")
	}
}

func TestStartResumesJobsOrphanedByACrash(t *testing.T) {
	at := newWhere(t)
	ctx := context.Background()
	// A process inserted a job and died while running it: the row says
	// running. On SQLite (one process per file) Start resumes it at once,
	// where River's rescuer would wait JobTimeout+1m to notice. On
	// PostgreSQL other instances may be running it, so only the rescuer
	// takes it back, once it has run longer than that.
	w := &pingWorker{done: make(chan int, 1)}
	db, q := open(t, at, w)
	if _, err := q.Client.Insert(ctx, pingArgs{N: 42}, &river.InsertOpts{Queue: "test"}); err != nil {
		t.Fatal(err)
	}
	attemptedAt := "CURRENT_TIMESTAMP"
	if db.Dialect == sqlstore.Postgres {
		attemptedAt = "now() - interval '1 hour'"
	}
	if _, err := db.ExecContext(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = `+attemptedAt); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, q = open(t, at, w)
	defer db.Close()
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = q.Stop(ctx) }()
	select {
	case n := <-w.done:
		if n != 42 {
			t.Errorf("worked job %d, want 42", n)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the orphaned job was not resumed")
	}
}
