// Package sqlstoretest gives tests a PostgreSQL database of their own.
//
// Two switches, both pointing at a PostgreSQL server (CI starts a
// throwaway one with scripts/ci-postgres.sh):
//
//   - TEST_DATABASE_URL enables the tests that exist only for PostgreSQL
//     (PostgresURL): advisory locks, two instances sharing one database,
//     the Postgres half of the store tests.
//   - DATABASE_URL, the variable the services themselves read, moves every
//     test that opens its store through URL from SQLite onto PostgreSQL.
//     `make test` runs the database-backed modules a second time with it
//     set, so store, queue, RPC and whole-service tests pass on both.
//
// Every test gets a fresh schema in that database, dropped when the test
// ends, so tests neither see nor reset each other's rows and packages can
// run in parallel against one server.
package sqlstoretest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"regexp"
	"testing"
	"time"

	// The pgx driver, registered as "pgx".
	_ "github.com/jackc/pgx/v5/stdlib"
)

// EnvVar names the variable holding the PostgreSQL server's URL.
const EnvVar = "TEST_DATABASE_URL"

// ServiceEnvVar names the variable that moves URL's callers onto
// PostgreSQL: the services' own DATABASE_URL.
const ServiceEnvVar = "DATABASE_URL"

var prefixRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,30}$`)

// PostgresURL creates a schema named prefix_<random> in TEST_DATABASE_URL's
// database and returns a URL whose search_path is that schema. The schema
// is dropped when the test ends, after the cleanups the test registers
// later (so close connections opened on the URL in a later cleanup, or
// before the test returns). Without TEST_DATABASE_URL the test is skipped.
func PostgresURL(t testing.TB, prefix string) string {
	t.Helper()
	base := os.Getenv(EnvVar)
	if base == "" {
		t.Skip(EnvVar + " is not set; set it to a postgres:// URL to run the PostgreSQL tests")
	}
	return schemaURL(t, EnvVar, base, prefix)
}

// URL returns the DATABASE_URL a test should open its store with: "" (the
// embedded SQLite under the test's DATA_DIR) normally, or a fresh schema
// named prefix_<random> in $DATABASE_URL's database when that is set.
// Call it once per store: every call is a new, empty database.
func URL(t testing.TB, prefix string) string {
	t.Helper()
	base := os.Getenv(ServiceEnvVar)
	if base == "" {
		return ""
	}
	return schemaURL(t, ServiceEnvVar, base, prefix)
}

// OnPostgres reports whether URL hands out PostgreSQL databases, for the
// few tests whose expectations differ by engine (file layout under
// DATA_DIR, say).
func OnPostgres() bool { return os.Getenv(ServiceEnvVar) != "" }

func schemaURL(t testing.TB, envVar, base, prefix string) string {
	t.Helper()
	if !prefixRE.MatchString(prefix) {
		t.Fatalf("sqlstoretest: schema prefix %q must be a lower-case identifier", prefix)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", envVar, err)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("%s: %v", envVar, err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := prefix + "_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		_ = admin.Close()
		t.Fatalf("creating schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
