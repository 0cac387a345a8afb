package sqlstore_test

import (
	"embed"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
)

//go:embed testdata/migrations/*.sql
var migrations embed.FS

var discard = slog.New(slog.DiscardHandler)

func openSQLite(t *testing.T) (*sqlstore.DB, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	db, err := sqlstore.Open(t.Context(), "", dir, "testsvc", discard)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db, dir
}

func TestOpenSQLiteSettings(t *testing.T) {
	db, dir := openSQLite(t)
	if db.Dialect != sqlstore.SQLite {
		t.Errorf("Dialect = %q, want %q", db.Dialect, sqlstore.SQLite)
	}
	if _, err := os.Stat(filepath.Join(dir, "testsvc.db")); err != nil {
		t.Errorf("database file: %v", err)
	}
	ctx := t.Context()
	// One connection at a time, as River's SQLite driver recommends: the
	// pool queues callers in Go instead of SQLite's sleeping busy handler.
	if got := db.Stats().MaxOpenConnections; got != 1 {
		t.Errorf("MaxOpenConnections = %d, want 1", got)
	}
	// With no idle connection kept, each Conn is a new connection: the
	// pragmas are checked on more than the first one the pool opened.
	db.SetMaxIdleConns(0)
	for range 3 {
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatalf("Conn: %v", err)
		}
		var journal string
		var busy, fk int
		if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&journal); err != nil {
			t.Fatalf("journal_mode: %v", err)
		}
		if err := conn.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil {
			t.Fatalf("busy_timeout: %v", err)
		}
		if err := conn.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
			t.Fatalf("foreign_keys: %v", err)
		}
		if journal != "wal" || busy != sqlstore.SQLiteBusyTimeoutMillis || fk != 1 {
			t.Errorf("journal_mode=%s busy_timeout=%d foreign_keys=%d; want wal, %d, 1",
				journal, busy, fk, sqlstore.SQLiteBusyTimeoutMillis)
		}
		_ = conn.Close()
	}
	if got := db.Stats().MaxIdleClosed; got < 3 {
		t.Errorf("%d connections closed as idle, want 3: the checks did not each get a new connection", got)
	}
}

func TestMigrateAndQuerySQLite(t *testing.T) {
	db, _ := openSQLite(t)
	exerciseSchema(t, db)
}

// exerciseSchema migrates db and checks the things services rely on in both
// dialects: $N placeholders (also repeated), foreign keys, ON CONFLICT and
// RETURNING, and that Migrate is idempotent.
func exerciseSchema(t *testing.T, db *sqlstore.DB) {
	t.Helper()
	ctx := t.Context()
	if err := sqlstore.Migrate(ctx, db, migrations, "testdata/migrations"); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	if err := sqlstore.Migrate(ctx, db, migrations, "testdata/migrations"); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	var version int64
	if err := db.QueryRowContext(ctx, "SELECT MAX(version_id) FROM testsvc_goose_db_version").Scan(&version); err != nil {
		t.Fatalf("reading version table: %v", err)
	}
	if version != 2 {
		t.Errorf("schema version = %d, want 2", version)
	}

	const upsert = `INSERT INTO sources (id, url, domain, fetched_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE SET url = excluded.url RETURNING id`
	var id string
	if err := db.QueryRowContext(ctx, upsert, "s1", "https://a.example/x", "a.example", "2026-01-01T00:00:00Z").Scan(&id); err != nil {
		t.Fatalf("insert: %v", err)
	}
	if err := db.QueryRowContext(ctx, upsert, "s1", "https://a.example/y", "a.example", "2026-01-01T00:00:00Z").Scan(&id); err != nil {
		t.Fatalf("upsert: %v", err)
	}
	var url string
	if err := db.QueryRowContext(ctx, "SELECT url FROM sources WHERE id = $1 AND (domain = $2 OR $2 = '')", "s1", "a.example").Scan(&url); err != nil {
		t.Fatalf("select with a repeated placeholder: %v", err)
	}
	if url != "https://a.example/y" {
		t.Errorf("url = %q, want the upserted one", url)
	}

	_, err := db.ExecContext(ctx, "INSERT INTO citations (id, source_id, snippet) VALUES ($1, $2, $3)", 1, "missing", "x")
	if err == nil {
		t.Error("insert with a dangling foreign key succeeded, want an error")
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO citations (id, source_id, snippet, truncated) VALUES ($1, $2, $3, $4)", 2, "s1", "x", true); err != nil {
		t.Fatalf("insert citation: %v", err)
	}
	var truncated bool
	if err := db.QueryRowContext(ctx, "SELECT truncated FROM citations WHERE id = $1", 2).Scan(&truncated); err != nil || !truncated {
		t.Errorf("truncated = %v, %v; want true", truncated, err)
	}
}

func TestConcurrentWritersSQLite(t *testing.T) {
	db, _ := openSQLite(t)
	ctx := t.Context()
	if err := sqlstore.Migrate(ctx, db, migrations, "testdata/migrations"); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	const writers, perWriter = 4, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				// Read-then-write transactions are the case that fails with
				// SQLITE_BUSY under deferred locking.
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					errs <- err
					return
				}
				var n int
				if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM sources").Scan(&n); err != nil {
					_ = tx.Rollback()
					errs <- err
					return
				}
				if _, err := tx.ExecContext(ctx, "INSERT INTO sources (id, url, domain, fetched_at) VALUES ($1, $2, $3, $4)",
					fmt.Sprintf("w%d-%d", w, i), "https://x.example", "x.example", "t"); err != nil {
					_ = tx.Rollback()
					errs <- err
					return
				}
				if err := tx.Commit(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("writer: %v", err)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM sources").Scan(&n); err != nil || n != writers*perWriter {
		t.Errorf("rows = %d, %v; want %d", n, err, writers*perWriter)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name, url, dataDir, db, want string
	}{
		{"bad name", "", t.TempDir(), "Bad-Name", `database name "Bad-Name"`},
		{"unsupported scheme", "mysql://u:p@h/db", "", "svc", `DATABASE_URL: unsupported scheme "mysql"`},
		{"no data dir", "", "", "svc", "DATA_DIR is empty"},
		{"unreachable postgres", "postgres://u:secretpw@127.0.0.1:1/db?connect_timeout=2", "", "svc", "connecting to PostgreSQL at postgres://u:xxxxx@127.0.0.1:1/db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sqlstore.Open(ctx, tt.url, tt.dataDir, tt.db, discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open error = %v, want one containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "secretpw") {
				t.Errorf("Open error %q leaks the password", err)
			}
		})
	}
}

func TestMigrateMissingDir(t *testing.T) {
	db, _ := openSQLite(t)
	if err := sqlstore.Migrate(t.Context(), db, migrations, "testdata/nope"); err == nil {
		t.Error("Migrate with a missing directory: error = nil")
	}
}

// TestPostgres runs the shared checks against a real PostgreSQL server, in a
// schema of its own that is dropped afterwards.
func TestPostgres(t *testing.T) {
	ctx := t.Context()
	db, err := sqlstore.Open(ctx, sqlstoretest.PostgresURL(t, "sqlstore_test"), "", "testsvc", discard)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if db.Dialect != sqlstore.Postgres {
		t.Errorf("Dialect = %q, want %q", db.Dialect, sqlstore.Postgres)
	}

	// Two replicas migrating a fresh schema at once: the advisory lock
	// serialises them, so neither fails on tables the other created.
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		wg.Go(func() { errs <- sqlstore.Migrate(ctx, db, migrations, "testdata/migrations") })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent Migrate: %v", err)
		}
	}
	exerciseSchema(t, db)
}
