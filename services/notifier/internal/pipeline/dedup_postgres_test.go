package pipeline

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
)

// TestTwoInstancesDeduplicateOnPostgres has two notifier instances (a
// pipeline and a connection pool each, one database) take the same alert
// at the same moment, again and again: each time exactly one copy must be
// RECEIVED and the other recorded as its DUPLICATE. Without a lock both
// transactions look for an original before either commits, find none,
// and both alerts are delivered.
func TestTwoInstancesDeduplicateOnPostgres(t *testing.T) {
	url := sqlstoretest.PostgresURL(t, "notifier_dedup")
	ctx := context.Background()
	instance := func() *Pipeline {
		db, err := sqlstore.Open(ctx, url, "", "notifier", discard())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		if err := store.Migrate(ctx, db); err != nil {
			t.Fatal(err)
		}
		// Not started: only intake is under test, jobs stay queued.
		p, err := New(ctx, Deps{Store: store.New(db), Enricher: &fakeEnricher{fn: okEnrichment}, Deliverer: &fakeDeliverer{}, Logger: discard()}, Config{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := instance(), instance()

	const rounds = 30
	for round := range rounds {
		text := fmt.Sprintf("disk full on db-%d", round)
		start := make(chan struct{})
		var wg sync.WaitGroup
		got := make([]*alert.Alert, 2)
		for i, p := range []*Pipeline{a, b} {
			wg.Go(func() {
				<-start
				out, err := p.Ingest(ctx, []alert.Alert{generic(t, text)})
				if err != nil {
					t.Error(err)
					return
				}
				got[i] = out[0]
			})
		}
		close(start)
		wg.Wait()
		if got[0] == nil || got[1] == nil {
			t.FailNow()
		}
		statuses := map[alert.Status]int{got[0].Status: 1}
		statuses[got[1].Status]++
		if statuses[alert.StatusReceived] != 1 || statuses[alert.StatusDuplicate] != 1 {
			t.Fatalf("round %d: the two copies were stored as %s and %s, want one RECEIVED and one DUPLICATE",
				round, got[0].Status, got[1].Status)
		}
	}
}
