package research

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// delayedBackend answers every search after searchDelay and every
// retrieval after retrieveDelay, as remote services with a fixed latency
// would.
type delayedBackend struct {
	searchDelay, retrieveDelay time.Duration
}

func (d delayedBackend) Search(ctx context.Context, query string, _ int) ([]Evidence, error) {
	if err := pause(ctx, d.searchDelay); err != nil {
		return nil, err
	}
	return []Evidence{{Title: query, URL: "https://web.example/" + strings.ReplaceAll(query, " ", "-"), Snippet: "A page on " + query + "."}}, nil
}

func (d delayedBackend) Retrieve(ctx context.Context, collection, query string, _ int) ([]Evidence, error) {
	if err := pause(ctx, d.retrieveDelay); err != nil {
		return nil, err
	}
	return []Evidence{{Title: query, URL: "https://book.example/" + collection + "/" + strings.ReplaceAll(query, " ", "-"), Snippet: "A passage on " + query + "."}}, nil
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// BenchmarkResearchStepFanOut measures one research step of five
// sub-questions with a collection: ten lookups, searches taking 20 ms and
// retrievals 30 ms. Concurrency 1 is the old sequential step (the sum,
// 250 ms); the default bound of 8 starts the last two lookups as the first
// searches return (about 50 ms); 10 has every lookup in flight at once
// and tracks the slowest call (about 30 ms). It reports ms/step.
func BenchmarkResearchStepFanOut(b *testing.B) {
	plan, err := OfflinePlanner{}.Plan(b.Context(), "Kubernetes operators")
	if err != nil {
		b.Fatal(err)
	}
	backend := delayedBackend{searchDelay: 20 * time.Millisecond, retrieveDelay: 30 * time.Millisecond}
	run := &Run{ID: "bench", Pending: plan, Collection: "ops-book"}
	for _, concurrency := range []int{1, DefaultLookupConcurrency, 2 * len(plan)} {
		b.Run(fmt.Sprintf("concurrency=%d", concurrency), func(b *testing.B) {
			svc, err := New(Deps{Store: newMemStore(), Searcher: backend, Retriever: backend}, Config{LookupConcurrency: concurrency})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				found, err := svc.research(b.Context(), run)
				if err != nil || len(found) != 2*len(plan) {
					b.Fatalf("research = %d sources, %v; want %d", len(found), err, 2*len(plan))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/step")
		})
	}
}
