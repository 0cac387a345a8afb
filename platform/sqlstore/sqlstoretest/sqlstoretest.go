// Package sqlstoretest gives tests a PostgreSQL database of their own.
//
// Tests that should also run on PostgreSQL read TEST_DATABASE_URL (CI sets
// it to a throwaway server; see scripts/ci-postgres.sh). Every test gets a
// fresh schema in that database, dropped when the test ends, so tests
// neither see nor reset each other's rows.
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
	if !prefixRE.MatchString(prefix) {
		t.Fatalf("sqlstoretest: schema prefix %q must be a lower-case identifier", prefix)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", EnvVar, err)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("%s: %v", EnvVar, err)
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
