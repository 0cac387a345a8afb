package indexbench

import (
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/search/internal/indextest"
	"github.com/groundcrew/groundcrew/services/search/internal/localindex"
	"github.com/groundcrew/groundcrew/services/search/internal/pgindex"
)

// engine opens one kind of local index.
type engine struct {
	name string
	open func(tb testing.TB) indextest.Index
}

// engines returns bleve always and PostgreSQL when TEST_DATABASE_URL is
// set.
func engines(tb testing.TB) []engine {
	out := []engine{{"bleve", func(tb testing.TB) indextest.Index {
		ix, err := localindex.Open(tb.TempDir(), localindex.Options{})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = ix.Close() })
		return ix
	}}}
	if os.Getenv(sqlstoretest.EnvVar) == "" {
		tb.Logf("%s is not set: PostgreSQL not measured", sqlstoretest.EnvVar)
		return out
	}
	return append(out, engine{"postgres", func(tb testing.TB) indextest.Index {
		db, err := sqlstore.Open(tb.Context(), sqlstoretest.PostgresURL(tb, "search_bench"), "", "search", slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = db.Close() })
		ix, err := pgindex.Open(tb.Context(), db, pgindex.Options{})
		if err != nil {
			tb.Fatal(err)
		}
		return analyzed{ix, db}
	}})
}

// analyzed is the PostgreSQL index with a way to refresh the planner's
// statistics after a bulk load, as autovacuum does on a live database.
type analyzed struct {
	*pgindex.Index
	db *sqlstore.DB
}

// Analyze runs ANALYZE on the documents.
func (a analyzed) Analyze(b *testing.B) {
	if _, err := a.db.ExecContext(b.Context(), "ANALYZE search_documents"); err != nil {
		b.Fatal(err)
	}
}

// elapsed is a small helper for throughput.
func elapsed(start time.Time) float64 { return time.Since(start).Seconds() }
