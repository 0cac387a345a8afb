package jobqueue

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
)

// TestServicesOpenTogetherOnAFreshPostgres starts the queues of several
// services at once on one new database, as docker-compose.yml does with
// grounding and notifier: River's shared tables must be created once, not
// raced for (which fails with a duplicate pg_type key).
func TestServicesOpenTogetherOnAFreshPostgres(t *testing.T) {
	url := sqlstoretest.PostgresURL(t, "jobqueue_migrate")
	const services = 4
	var wg sync.WaitGroup
	errs := make(chan error, services)
	for i := range services {
		// A pool each, as separate processes have.
		db, err := sqlstore.Open(t.Context(), url, "", fmt.Sprintf("svc%d", i), discard)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		workers := river.NewWorkers()
		river.AddWorker(workers, &pingWorker{done: make(chan int, 1)})
		wg.Go(func() {
			_, err := Open(t.Context(), db, workers, Config{
				Queue: fmt.Sprintf("q%d", i), Workers: 1, PollInterval: time.Second, JobTimeout: time.Minute, MaxAttempts: 1,
			}, discard)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Open: %v", err)
		}
	}
}
