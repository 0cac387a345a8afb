package indexbench

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/services/search/internal/indextest"
	"github.com/groundcrew/groundcrew/services/search/internal/search"
)

// corpusGen generates documents from a Zipf-distributed vocabulary, so that
// term frequencies look like natural language: a few very common words and
// a long tail.
type corpusGen struct {
	rng   *rand.Rand
	zipf  *rand.Zipf
	vocab []string
}

func newCorpusGen(seed uint64) *corpusGen {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	const vocabSize = 20000
	syll := []string{"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "zen", "dra", "pli", "qua", "bor", "fen", "gul", "hex"}
	vocab := make([]string, 0, vocabSize)
	seen := map[string]bool{}
	for len(vocab) < vocabSize {
		var b strings.Builder
		for range 2 + rng.IntN(3) {
			b.WriteString(syll[rng.IntN(len(syll))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			vocab = append(vocab, w)
		}
	}
	return &corpusGen{rng: rng, zipf: rand.NewZipf(rng, 1.1, 2, vocabSize-1), vocab: vocab}
}

func (g *corpusGen) words(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			if i%12 == 0 {
				b.WriteString(". ")
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(g.vocab[g.zipf.Uint64()])
	}
	return b.String()
}

// docs returns n documents of 150–350 words with 4–8-word titles.
func (g *corpusGen) docs(n int) []search.Document {
	docs := make([]search.Document, n)
	for i := range docs {
		docs[i] = search.Document{
			URL:   fmt.Sprintf("https://site%d.example.com/page/%d", i%50, i),
			Title: g.words(4 + g.rng.IntN(5)),
			Text:  g.words(150 + g.rng.IntN(200)),
		}
	}
	return docs
}

// queries draws queries of lo..hi words from the vocabulary, skipping the
// hundred most frequent words as a stop-word list would.
func (g *corpusGen) queries(n, lo, hi int) []string {
	out := make([]string, n)
	for i := range out {
		words := make([]string, lo+g.rng.IntN(hi-lo+1))
		for j := range words {
			k := g.zipf.Uint64()
			for k < 100 {
				k = g.zipf.Uint64()
			}
			words[j] = g.vocab[k]
		}
		out[i] = strings.Join(words, " ")
	}
	return out
}

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
				g := newCorpusGen(1)
				docs := g.docs(size)
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
					queries := g.queries(1000, qs.lo, qs.hi)
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
