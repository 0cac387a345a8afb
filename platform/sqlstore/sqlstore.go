// Package sqlstore opens the SQL database a groundcrew service keeps its
// state in and applies the service's migrations.
//
// With an empty DATABASE_URL a service gets an embedded SQLite database,
// <DATA_DIR>/<name>.db, through modernc.org/sqlite (pure Go, no cgo), with
// WAL journaling, a busy timeout, foreign keys enforced and IMMEDIATE write
// transactions (so concurrent writers wait for each other instead of failing
// with SQLITE_BUSY). A postgres:// URL selects PostgreSQL through
// github.com/jackc/pgx/v5/stdlib.
//
// # Writing SQL for both
//
// Use $1, $2, … placeholders everywhere: PostgreSQL requires them and
// modernc.org/sqlite binds $N to the N-th argument (a placeholder may be
// repeated), so no rebinding is needed. Stick to the common subset: TEXT,
// INTEGER/BIGINT, BOOLEAN, REAL/DOUBLE PRECISION, timestamps stored as
// TEXT (RFC 3339, UTC) or BIGINT (Unix time), INSERT … ON CONFLICT … DO
// UPDATE, and RETURNING. Where the dialects differ (auto-increment keys,
// JSON operators), branch on [DB].Dialect or prefer application-generated
// ids.
//
// Migrations are goose SQL files ("-- +goose Up" / "-- +goose Down") that
// each service embeds and passes to [Migrate].
package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	// Registers the "pgx" database/sql driver.
	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"modernc.org/sqlite"
)

// Dialect names the SQL database behind a [DB].
type Dialect string

// The supported dialects.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// SQLiteBusyTimeoutMillis is how long a SQLite statement waits for another
// connection's write lock before failing with SQLITE_BUSY.
const SQLiteBusyTimeoutMillis = 10000

// DB is an open database: a *sql.DB plus what kind of database it is.
type DB struct {
	*sql.DB
	// Dialect is SQLite or Postgres.
	Dialect Dialect

	name   string
	logger *slog.Logger
}

var namePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)

// Open connects to databaseURL, or, when it is empty, opens (creating it and
// dataDir if needed) the SQLite database <dataDir>/<name>.db. name is the
// service's name; it also names the migration bookkeeping table (see
// [Migrate]), so services can share one PostgreSQL database. It must be
// lower-case letters, digits and underscores, starting with a letter.
// Open checks the connection before returning.
func Open(ctx context.Context, databaseURL, dataDir, name string, logger *slog.Logger) (*DB, error) {
	if !namePattern.MatchString(name) {
		return nil, fmt.Errorf("sqlstore: database name %q: want lower-case letters, digits and underscores, starting with a letter", name)
	}
	if logger == nil {
		return nil, errors.New("sqlstore: logger is nil")
	}
	if databaseURL == "" {
		return openSQLite(ctx, dataDir, name, logger)
	}
	u, err := url.Parse(databaseURL)
	if err != nil {
		// The parse error can quote the URL, password included.
		return nil, errors.New("DATABASE_URL: not a valid URL; want postgres://user:password@host:5432/dbname or empty for SQLite under DATA_DIR")
	}
	switch u.Scheme {
	case "postgres", "postgresql":
		return openPostgres(ctx, databaseURL, u, name, logger)
	default:
		return nil, fmt.Errorf("DATABASE_URL: unsupported scheme %q; want postgres://… or empty for SQLite under DATA_DIR", u.Scheme)
	}
}

func openSQLite(ctx context.Context, dataDir, name string, logger *slog.Logger) (*DB, error) {
	if dataDir == "" {
		return nil, errors.New("sqlstore: DATA_DIR is empty; it is needed for the SQLite database")
	}
	if strings.ContainsRune(dataDir, '?') {
		return nil, fmt.Errorf("DATA_DIR %q: must not contain '?'", dataDir)
	}
	// DATA_DIR holds what the service stores (messages, alerts, raw
	// provider responses): readable by the service's user only.
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("sqlstore: creating data directory: %w", err)
	}
	path := filepath.Join(dataDir, name+".db")
	// Created 0600 before SQLite opens it; SQLite gives its -wal and -shm
	// files the database file's mode.
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600); err == nil {
		_ = f.Close()
	}
	// Pragmas in the DSN apply to every connection the pool opens, not just
	// the first one.
	dsn := path + "?" + url.Values{
		"_pragma": {
			fmt.Sprintf("busy_timeout(%d)", SQLiteBusyTimeoutMillis),
			"journal_mode(WAL)",
			"foreign_keys(1)",
			"synchronous(NORMAL)",
		},
		// A deferred transaction that later writes cannot wait for the
		// write lock (SQLite fails it with SQLITE_BUSY at once); taking the
		// lock at BEGIN makes writers queue on busy_timeout instead.
		"_txlock": {"immediate"},
	}.Encode()
	base, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: opening SQLite database %s: %w", path, err)
	}
	// Statements are kept per connection: see cachingConnector.
	sqlDB := sql.OpenDB(&cachingConnector{base: base, size: DefaultStmtCacheSize})
	// One connection: SQLite runs one writer at a time anyway, and when
	// several wait, its busy handler sleeps and retries with growing
	// backoff, so a short write (an alert's intake) could wait seconds
	// behind pipeline workers. database/sql queues callers in Go instead.
	// River's SQLite driver recommends the same. Code holding a
	// transaction must do everything through it.
	sqlDB.SetMaxOpenConns(1)
	if err := sqlDB.PingContext(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("sqlstore: opening SQLite database %s: %w", path, err)
	}
	logger.InfoContext(ctx, "opened database", "dialect", SQLite, "path", path)
	return &DB{DB: sqlDB, Dialect: SQLite, name: name, logger: logger}, nil
}

func openPostgres(ctx context.Context, databaseURL string, u *url.URL, name string, logger *slog.Logger) (*DB, error) {
	redacted := u.Redacted()
	sqlDB, err := sql.Open("pgx", databaseURL)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: opening PostgreSQL database %s: %w", redacted, err)
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("sqlstore: connecting to PostgreSQL at %s: %w", redacted, err)
	}
	logger.InfoContext(ctx, "opened database", "dialect", Postgres, "url", redacted)
	return &DB{DB: sqlDB, Dialect: Postgres, name: name, logger: logger}, nil
}

// Migrate applies the goose migrations found in directory dir of fsys (for
// example an embed.FS holding "migrations/*.sql") that db has not applied
// yet, logging each one. Applied versions are recorded in the table
// <name>_goose_db_version, name being the one given to [Open]. On
// PostgreSQL a session advisory lock, distinct per name, keeps replicas that
// start together from migrating at the same time.
func Migrate(ctx context.Context, db *DB, fsys fs.FS, dir string) error {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		return fmt.Errorf("sqlstore: migrations directory %q: %w", dir, err)
	}
	opts := []goose.ProviderOption{
		goose.WithTableName(db.name + "_goose_db_version"),
		goose.WithDisableGlobalRegistry(true),
	}
	var dialect goose.Dialect
	switch db.Dialect {
	case SQLite:
		dialect = goose.DialectSQLite3
	case Postgres:
		dialect = goose.DialectPostgres
		locker, err := lock.NewPostgresSessionLocker(
			lock.WithLockID(lockID(db.name)),
			// Poll every second (not goose's default 5 s) for up to 5 minutes.
			lock.WithLockTimeout(1, 300),
		)
		if err != nil {
			return fmt.Errorf("sqlstore: creating migration lock: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	default:
		return fmt.Errorf("sqlstore: unknown dialect %q", db.Dialect)
	}
	provider, err := goose.NewProvider(dialect, db.DB, sub, opts...)
	if err != nil {
		return fmt.Errorf("sqlstore: loading migrations from %q: %w", dir, err)
	}
	results, err := provider.Up(ctx)
	for _, r := range results {
		if r.Error == nil {
			db.logger.InfoContext(ctx, "applied migration",
				"version", r.Source.Version, "file", r.Source.Path, "duration", r.Duration.String())
		}
	}
	if err != nil {
		return fmt.Errorf("sqlstore: applying migrations from %q: %w", dir, err)
	}
	version, err := provider.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("sqlstore: reading schema version: %w", err)
	}
	db.logger.InfoContext(ctx, "database schema up to date", "version", version, "applied", len(results))
	return nil
}

// lockWait bounds how long WithLock waits for another holder.
const lockWait = 5 * time.Minute

// WithLock runs fn while holding a PostgreSQL session advisory lock named
// name, so processes sharing the database (replicas of one service, or
// services sharing one database, as docker-compose.yml runs them) run fn
// one at a time: migrations of shared tables, typically. On SQLite, which
// one process owns, fn simply runs. Waiting for the lock is bounded by ctx
// and by five minutes.
func (db *DB) WithLock(ctx context.Context, name string, fn func(context.Context) error) error {
	if db.Dialect != Postgres {
		return fn(ctx)
	}
	wctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	conn, err := db.Conn(wctx)
	if err != nil {
		return fmt.Errorf("sqlstore: connecting to take lock %q: %w", name, err)
	}
	defer conn.Close()
	id := lockID("lock/" + name)
	if _, err := conn.ExecContext(wctx, "SELECT pg_advisory_lock($1)", id); err != nil {
		return fmt.Errorf("sqlstore: taking lock %q: %w", name, err)
	}
	defer func() {
		// Unlock even when ctx has ended; closing the session would
		// release it too, but the pool keeps sessions open.
		uctx, ucancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer ucancel()
		if _, err := conn.ExecContext(uctx, "SELECT pg_advisory_unlock($1)", id); err != nil {
			db.logger.WarnContext(ctx, "releasing an advisory lock failed; dropping its connection", "lock", name, "error", err)
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	return fn(ctx)
}

// lockID derives a per-service advisory lock id, so services sharing one
// PostgreSQL database do not wait for each other's migrations.
func lockID(name string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("groundcrew/sqlstore/" + name))
	return int64(h.Sum64() &^ (1 << 63))
}
