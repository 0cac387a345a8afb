package localindex

import (
	"slices"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/services/search/internal/indextest"
	"github.com/groundcrew/groundcrew/services/search/internal/search"
)

// BenchmarkIndex10k indexes 10,000 generated documents (150–350 words
// each) into a fresh on-disk index per iteration and reports documents per
// second.
func BenchmarkIndex10k(b *testing.B) {
	docs := indextest.NewGenerated(1).Docs(10000)
	b.ResetTimer()
	var total time.Duration
	for range b.N {
		b.StopTimer()
		ix, err := Open(b.TempDir(), Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		res, err := ix.Upsert(b.Context(), docs)
		total += time.Since(start)
		b.StopTimer()
		if err != nil || res.Indexed != len(docs) {
			b.Fatalf("Upsert() = %+v, %v", res, err)
		}
		_ = ix.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(len(docs)*b.N)/total.Seconds(), "docs/s")
}

// BenchmarkQuery10k runs generated queries (top 10, with snippets) against
// a 10,000-document index and reports latency percentiles.
func BenchmarkQuery10k(b *testing.B) {
	g := indextest.NewGenerated(1)
	ix, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Upsert(b.Context(), g.Docs(10000)); err != nil {
		b.Fatal(err)
	}
	queries := g.Queries(1000, 1, 3)
	lat := make([]time.Duration, 0, b.N)
	hits := 0
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		rs, err := ix.Search(b.Context(), search.Query{Text: queries[i%len(queries)], MaxResults: 10})
		lat = append(lat, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		hits += len(rs)
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(int(p*float64(len(lat))), len(lat)-1)]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(hits)/float64(b.N), "hits/query")
}
