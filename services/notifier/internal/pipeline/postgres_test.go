package pipeline

import (
	"context"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
)

// openPostgres opens a fresh schema in TEST_DATABASE_URL (dropped at the
// end), or skips the test when the variable is unset.
func openPostgres(t *testing.T) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.Open(context.Background(), sqlstoretest.PostgresURL(t, "notifier_pipeline"), "", "notifier", discard())
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// TestPostgresPipeline runs intake, dedup and delivery on PostgreSQL, with
// River's database/sql driver sharing the store's pool and transaction.
func TestPostgresPipeline(t *testing.T) {
	db := openPostgres(t)
	ctx := context.Background()
	if err := store.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	d := &fakeDeliverer{errs: []error{&deliveryError{msg: "telegram: 502 Bad Gateway"}}}
	p, err := New(ctx, Deps{Store: store.New(db), Enricher: &fakeEnricher{fn: okEnrichment}, Deliverer: d, Logger: discard()},
		Config{RetryPolicy: fastRetry{}, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = p.Stop(sctx)
		_ = db.Close()
	})
	in := ingest(t, p, generic(t, "disk full on db-1"), generic(t, "disk full on db-1"))
	if in[1].Status != alert.StatusDuplicate || in[1].DuplicateOf != in[0].ID {
		t.Errorf("repeat in the same batch stored as %s of %q", in[1].Status, in[1].DuplicateOf)
	}
	a := waitStatus(t, p, in[0].ID, alert.StatusDelivered)
	if a.Attempts != 2 || a.GroundingMessageID != "g-1" {
		t.Errorf("delivered after %d attempts, grounding %q", a.Attempts, a.GroundingMessageID)
	}
}
