package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
)

// openPostgres opens TEST_DATABASE_URL in a fresh schema (dropped at the
// end), or skips the test when the variable is unset.
func openPostgres(t *testing.T) *sqlstore.DB {
	t.Helper()
	raw := os.Getenv("TEST_DATABASE_URL")
	if raw == "" {
		t.Skip("TEST_DATABASE_URL is unset")
	}
	ctx := context.Background()
	admin, err := sqlstore.Open(ctx, raw, "", "notifier", discard())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close() }()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "notifier_test_" + hex.EncodeToString(b)
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin, err := sqlstore.Open(context.Background(), raw, "", "notifier", discard())
		if err == nil {
			_, _ = admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			_ = admin.Close()
		}
	})
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	db, err := sqlstore.Open(ctx, u.String(), "", "notifier", discard())
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
