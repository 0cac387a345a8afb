package indextest

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/groundcrew/groundcrew/services/search/internal/search"
)

// Generated makes documents and queries from a Zipf-distributed
// vocabulary, so that term frequencies look like natural language: a few
// very common words and a long tail. The same seed gives the same corpus,
// so benchmarks of different engines index the same documents.
type Generated struct {
	rng   *rand.Rand
	zipf  *rand.Zipf
	vocab []string
}

// NewGenerated returns a generator seeded with seed.
func NewGenerated(seed uint64) *Generated {
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
	return &Generated{rng: rng, zipf: rand.NewZipf(rng, 1.1, 2, vocabSize-1), vocab: vocab}
}

func (g *Generated) words(n int) string {
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

// Docs returns n documents of 150–350 words with 4–8-word titles.
func (g *Generated) Docs(n int) []search.Document {
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

// Queries draws n queries of lo..hi words from the vocabulary, skipping
// the hundred most frequent words as a stop-word list would.
func (g *Generated) Queries(n, lo, hi int) []string {
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
