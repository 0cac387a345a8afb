package pgindex_test

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/search/internal/indextest"
	"github.com/groundcrew/groundcrew/services/search/internal/pgindex"
)

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// openDB opens a fresh schema of TEST_DATABASE_URL's database (the test is
// skipped without one).
func openDB(t *testing.T, url string) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.Open(t.Context(), url, "", "search", discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func open(t *testing.T, db *sqlstore.DB, now func() time.Time) *pgindex.Index {
	t.Helper()
	ix, err := pgindex.Open(t.Context(), db, pgindex.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// TestContract runs the local index contract on PostgreSQL.
func TestContract(t *testing.T) {
	indextest.Run(t, func(t *testing.T, now func() time.Time) indextest.Index {
		return open(t, openDB(t, sqlstoretest.PostgresURL(t, "search_contract")), now)
	})
}
