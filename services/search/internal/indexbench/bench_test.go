package indexbench

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/services/search/internal/indextest"
	"github.com/groundcrew/groundcrew/services/search/internal/search"
)

// fill indexes docs in calls of the most IndexDocuments takes and returns
// documents per second.
func fill(b *testing.B, ix indextest.Index, docs []search.Document) float64 {
	start := time.Now()
	for i := 0; i < len(docs); i += search.MaxDocumentsPerCall {
		res, err := ix.Upsert(b.Context(), docs[i:min(i+search.MaxDocumentsPerCall, len(docs))])
		if err != nil || len(res.Rejected) > 0 {
			b.Fatalf("Upsert() = %+v, %v", res, err)
		}
	}
	return float64(len(docs)) / elapsed(start)
}

// BenchmarkIndexes measures, for each engine and corpus size: index
// throughput (the "index" result: the fill of a fresh index, in calls of
// 1000 documents, measured once), then query latency
// percentiles for short queries (1–3 words, as people type) and alert-like
// ones (10–14 words, as enrichment derives them), top 10 with snippets.
// With TEST_DATABASE_URL set it measures PostgreSQL too:
//
//	TEST_DATABASE_URL=… go test -run '^$' -bench Indexes -benchtime 400x ./internal/indexbench/
func BenchmarkIndexes(b *testing.B) {
	for _, e := range engines(b) {
		for _, size := range []int{10000, 100000} {
			b.Run(fmt.Sprintf("%s/%dk", e.name, size/1000), func(b *testing.B) {
				g := indextest.NewGenerated(1)
				docs := g.Docs(size)
				ix := e.open(b)
				rate := fill(b, ix, docs)
				// One fill per corpus is the measurement (a 100k fill takes
				// minutes): reported as the "index" result.
				b.Run("index", func(b *testing.B) { b.ReportMetric(rate, "docs/s") })
				if a, ok := ix.(interface{ Analyze(b *testing.B) }); ok {
					a.Analyze(b)
				}
				for _, qs := range []struct {
					name   string
					lo, hi int
				}{{"short", 1, 3}, {"alert", 10, 14}} {
					queries := g.Queries(1000, qs.lo, qs.hi)
					b.Run(qs.name, func(b *testing.B) {
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
					})
				}
			})
		}
	}
}
