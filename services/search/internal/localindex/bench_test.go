package localindex

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

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

// queries draws 1–3 word queries from the same vocabulary, skipping the
// hundred most frequent words as a stop-word list would.
func (g *corpusGen) queries(n int) []string {
	out := make([]string, n)
	for i := range out {
		words := make([]string, 1+g.rng.IntN(3))
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

// BenchmarkIndex10k indexes 10,000 generated documents (150–350 words
// each) into a fresh on-disk index per iteration and reports documents per
// second.
func BenchmarkIndex10k(b *testing.B) {
	docs := newCorpusGen(1).docs(10000)
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
	g := newCorpusGen(1)
	ix, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Upsert(b.Context(), g.docs(10000)); err != nil {
		b.Fatal(err)
	}
	queries := g.queries(1000)
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
