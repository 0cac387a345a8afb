package jobqueue

import (
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/riverqueue/river"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
)

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// openQueue migrates River's tables into db and returns a queue that is
// not started, so inserted jobs stay where the test puts them.
func openQueue(t *testing.T, db *sqlstore.DB) *Queue {
	t.Helper()
	workers := river.NewWorkers()
	river.AddWorker(workers, &pingWorker{done: make(chan int, 10)})
	q, err := Open(t.Context(), db, workers, Config{
		Queue: "test", Workers: 1, PollInterval: time.Second, JobTimeout: time.Minute, MaxAttempts: 3,
	}, discard)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// openPostgres opens a schema of its own in TEST_DATABASE_URL, or skips
// the test when the variable is unset.
func openPostgres(t *testing.T) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.Open(t.Context(), sqlstoretest.PostgresURL(t, "jobqueue_test"), "", "jobqueue", discard)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	// Closed before the schema is dropped (cleanups run last in, first out).
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func openSQLite(t *testing.T) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.Open(t.Context(), "", t.TempDir(), "jobs", discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// depth is the exposition text a DepthCollector for queue "test" should
// produce; jobs nil means no jobqueue_jobs series at all.
func depth(jobs map[string]int, errors int) string {
	var b strings.Builder
	if jobs != nil {
		b.WriteString("# HELP jobqueue_jobs Jobs in the queue that are not finished, by state (available, scheduled, retryable, running), read at scrape time.\n")
		b.WriteString("# TYPE jobqueue_jobs gauge\n")
		for _, state := range depthStates {
			b.WriteString(`jobqueue_jobs{queue="test",state="` + state + `"} ` + strconv.Itoa(jobs[state]) + "\n")
		}
	}
	b.WriteString("# HELP jobqueue_collect_errors_total Scrapes that could not read the queue's depth from the database.\n")
	b.WriteString("# TYPE jobqueue_collect_errors_total counter\n")
	b.WriteString(`jobqueue_collect_errors_total{queue="test"} ` + strconv.Itoa(errors) + "\n")
	return b.String()
}

// checkDepth inserts jobs in every state of interest (and some that must
// not count) and compares what the collector reports.
func checkDepth(t *testing.T, db *sqlstore.DB) {
	t.Helper()
	ctx := t.Context()
	q := openQueue(t, db)
	c := NewDepthCollector(db, "test", discard)

	if err := testutil.CollectAndCompare(c, strings.NewReader(depth(map[string]int{}, 0)), "jobqueue_jobs", "jobqueue_collect_errors_total"); err != nil {
		t.Errorf("empty queue: %v", err)
	}
	if age := oldestAge(t, c); age != 0 {
		t.Errorf("empty queue: oldest job age %v, want 0", age)
	}

	insert := func(opts *river.InsertOpts) int64 {
		t.Helper()
		res, err := q.Client.Insert(ctx, pingArgs{}, opts)
		if err != nil {
			t.Fatal(err)
		}
		return res.Job.ID
	}
	setState := func(id int64, state string) {
		t.Helper()
		// The literal compares with Postgres's enum and SQLite's text alike.
		if _, err := db.ExecContext(ctx, `UPDATE river_job SET state = '`+state+`', attempt = 1 WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		insert(&river.InsertOpts{Queue: "test"})
	}
	insert(&river.InsertOpts{Queue: "test", ScheduledAt: time.Now().Add(time.Hour)})
	setState(insert(&river.InsertOpts{Queue: "test"}), "retryable")
	setState(insert(&river.InsertOpts{Queue: "test"}), "running")
	setState(insert(&river.InsertOpts{Queue: "test"}), "running")
	// Another service's queue in the same database does not count.
	insert(&river.InsertOpts{Queue: "other"})

	want := map[string]int{"available": 3, "scheduled": 1, "retryable": 1, "running": 2}
	if err := testutil.CollectAndCompare(c, strings.NewReader(depth(want, 0)), "jobqueue_jobs", "jobqueue_collect_errors_total"); err != nil {
		t.Error(err)
	}
	if age := oldestAge(t, c); age < 0 || age > 60 {
		t.Errorf("jobs created just now: oldest job age %vs", age)
	}

	// One due job created ten minutes ago sets the age (SQLite's julianday
	// arithmetic is off by microseconds); a scheduled job
	// (waiting on purpose) and another queue's job, older still, do not.
	ago := func(d string) string {
		if db.Dialect == sqlstore.Postgres {
			return "now() - interval '" + d + "'"
		}
		return "datetime('now', '-" + d + "', 'subsec')"
	}
	for _, u := range []struct{ where, ago string }{
		{"id = (SELECT min(id) FROM river_job WHERE queue = 'test' AND state = 'available')", "10 minutes"},
		{"queue = 'test' AND state = 'scheduled'", "120 minutes"},
		{"queue = 'other'", "120 minutes"},
	} {
		if _, err := db.ExecContext(ctx, `UPDATE river_job SET created_at = `+ago(u.ago)+` WHERE `+u.where); err != nil {
			t.Fatal(err)
		}
	}
	if age := oldestAge(t, c); age < 595 || age > 660 {
		t.Errorf("oldest due job created 10 minutes ago: age %vs, want about 600", age)
	}
}

// oldestAge collects c and returns its jobqueue_oldest_job_age_seconds.
func oldestAge(t *testing.T, c prometheus.Collector) float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "jobqueue_oldest_job_age_seconds" {
			if len(f.GetMetric()) != 1 {
				t.Fatalf("%d age series, want 1", len(f.GetMetric()))
			}
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatal("no jobqueue_oldest_job_age_seconds series")
	return 0
}

func TestDepthCollectorSQLite(t *testing.T) {
	checkDepth(t, openSQLite(t))
}

func TestDepthCollectorPostgres(t *testing.T) {
	checkDepth(t, openPostgres(t))
}

// TestDepthCollectorErrorKeepsTheScrape: a database that cannot answer
// costs the depth series, not the scrape.
func TestDepthCollectorErrorKeepsTheScrape(t *testing.T) {
	db := openSQLite(t)
	openQueue(t, db)
	reg := prometheus.NewPedanticRegistry()
	up := prometheus.NewGauge(prometheus.GaugeOpts{Name: "other_metric", Help: "A metric of the same server."})
	reg.MustRegister(NewDepthCollector(db, "test", discard), up)
	_ = db.Close()

	for i := 1; i <= 2; i++ {
		if err := testutil.GatherAndCompare(reg, strings.NewReader(depth(nil, i)), "jobqueue_jobs", "jobqueue_collect_errors_total"); err != nil {
			t.Errorf("scrape %d: %v", i, err)
		}
	}
	if n, err := testutil.GatherAndCount(reg, "other_metric"); err != nil || n != 1 {
		t.Errorf("other_metric: %d series, %v; want the rest of the scrape intact", n, err)
	}
}

// TestDepthCollectorTimeoutPostgres holds a lock the depth query must
// wait for: the scrape gives up after the collector's timeout.
func TestDepthCollectorTimeoutPostgres(t *testing.T) {
	db := openPostgres(t)
	openQueue(t, db)
	tx, err := db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	if _, err := tx.ExecContext(t.Context(), "LOCK TABLE river_job IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	c := NewDepthCollector(db, "test", discard)
	c.timeout = 100 * time.Millisecond
	start := time.Now()
	if err := testutil.CollectAndCompare(c, strings.NewReader(depth(nil, 1))); err != nil {
		t.Error(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("scrape took %s with a 100ms timeout", d)
	}
}

func TestDepthCollectorsForTwoQueuesShareARegistry(t *testing.T) {
	db := openSQLite(t)
	openQueue(t, db)
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(NewDepthCollector(db, "test", discard)); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(NewDepthCollector(db, "", discard)); err != nil {
		t.Fatalf("registering a second queue's collector: %v", err)
	}
	if n, err := testutil.GatherAndCount(reg, "jobqueue_jobs"); err != nil || n != 2*len(depthStates) {
		t.Errorf("jobqueue_jobs: %d series, %v; want %d", n, err, 2*len(depthStates))
	}
}
