package search_test

import (
	"testing"

	"github.com/groundcrew/groundcrew/services/search/internal/search"
)

// BenchmarkCachedQuery measures a search answered from the result cache:
// validation, normalisation, key building, lookup and copying the response.
func BenchmarkCachedQuery(b *testing.B) {
	var results []search.Result
	for i := range 10 {
		results = append(results, result(i))
	}
	e := answering("local", results...)
	s, err := search.NewService(search.Config{Engines: []search.Engine{e}})
	if err != nil {
		b.Fatal(err)
	}
	q := search.Query{
		Text: "disk full on db-1 /var/lib/postgresql", MaxResults: 10,
		AllowedDomains: []string{"example.com", "postgresql.org"}, BlockedDomains: []string{"spam.example"},
	}
	if _, err := s.Search(b.Context(), q); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r, err := s.Search(b.Context(), q)
		if err != nil || !r.Cached {
			b.Fatalf("Search() = cached %v, %v", r.Cached, err)
		}
	}
	b.StopTimer()
	if n := e.calls.Load(); n != 1 {
		b.Fatalf("engine calls = %d, want 1", n)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/query")
}
