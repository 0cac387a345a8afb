package answer

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/groundcrew/groundcrew/services/rag/internal/embedder"
	"github.com/groundcrew/groundcrew/services/rag/internal/rag"
)

// rankPrior is the score bonus of sentences from the best-ranked chunk;
// the chunk at rank r gets rankPrior/r.
const rankPrior = 0.5

// ExtractiveModel is the [Draft.Model] of [Extractive] answers.
const ExtractiveModel = "extractive"

// Defaults of [Extractive].
const (
	DefaultMaxSentences = 3
	DefaultMaxChars     = 700
	DefaultFromChunks   = 3
)

// Extractive is the offline answer writer: it quotes the sentences of the
// top chunks that best match the question, the primary chunk first and
// sentences in their original order, each chunk's sentences followed by
// its citation [n]. It never adds a word of its
// own, so the answer is grounded by construction.
//
// A sentence scores the IDF-weighted share of the question's terms it
// contains (IDF over the candidate sentences, so words every sentence has
// count little), plus rankPrior/rank of its chunk. The prior is large
// because retrieval, which sees whole chunks and their headings, judges
// which chunk answers better than word overlap of single sentences does:
// on the Go specification questions the primary chunk lands in an
// expected section 45 times in 67 with it, 36 with a token prior.
type Extractive struct {
	// MaxSentences bounds the sentences quoted; default 3.
	MaxSentences int
	// MaxChars bounds the answer's length before citations; default 700.
	MaxChars int
	// FromChunks is how many of the top chunks sentences are taken from;
	// default 3.
	FromChunks int
}

var _ Generator = (*Extractive)(nil)

type candidate struct {
	chunk, pos int // chunk rank and sentence position in it
	text       string
	terms      map[string]bool
	score      float64
}

// Generate implements [Generator].
func (e *Extractive) Generate(ctx context.Context, question string, chunks []rag.Hit) (Draft, error) {
	maxSent := cmp.Or(e.MaxSentences, DefaultMaxSentences)
	maxChars := cmp.Or(e.MaxChars, DefaultMaxChars)
	from := min(cmp.Or(e.FromChunks, DefaultFromChunks), len(chunks))
	if from == 0 {
		return Draft{OutOfScope: true, Reason: "no chunks to answer from"}, nil
	}
	qterms := distinct(embedder.Analyze(question))

	var cands []candidate
	df := map[string]int{}
	for ci := range from {
		for si, s := range sentences(chunks[ci].Text) {
			// Fragments and walls of text make poor answers.
			if len(s) < 20 || len(s) > 600 {
				continue
			}
			c := candidate{chunk: ci, pos: si, text: s, terms: map[string]bool{}}
			for _, t := range embedder.Analyze(s) {
				c.terms[t] = true
			}
			for t := range c.terms {
				df[t]++
			}
			cands = append(cands, c)
		}
	}
	if len(cands) == 0 {
		// A chunk of only code or short lines: quote its start.
		text := strings.TrimSpace(chunks[0].Text)
		if len(text) > maxChars {
			text = strings.TrimSpace(text[:maxChars]) + "…"
		}
		return Draft{Text: text + " [1]", Cited: []int{0}, Primary: 0, Model: ExtractiveModel}, nil
	}

	var total float64
	idf := map[string]float64{}
	for _, t := range qterms {
		idf[t] = math.Log(1 + float64(len(cands))/float64(1+df[t]))
		total += idf[t]
	}
	for i := range cands {
		c := &cands[i]
		var s float64
		for _, t := range qterms {
			if c.terms[t] {
				s += idf[t]
			}
		}
		if total > 0 {
			s /= total
		}
		c.score = s + rankPrior/float64(c.chunk+1)
	}
	ranked := slices.Clone(cands)
	slices.SortStableFunc(ranked, func(a, b candidate) int { return cmp.Compare(b.score, a.score) })

	var picked []candidate
	size := 0
	for _, c := range ranked {
		if len(picked) == maxSent {
			break
		}
		// Below half the best score a sentence is filler, not support.
		if len(picked) > 0 && c.score < ranked[0].score/2 {
			break
		}
		if len(picked) > 0 && size+len(c.text) > maxChars {
			continue
		}
		picked = append(picked, c)
		size += len(c.text) + 1
	}

	// The primary chunk is the one whose quoted sentences weigh most.
	weight := map[int]float64{}
	for _, c := range picked {
		weight[c.chunk] += c.score
	}
	primary := picked[0].chunk
	for ci, w := range weight {
		if w > weight[primary] || w == weight[primary] && ci < primary {
			primary = ci
		}
	}

	// Quote in reading order: the primary chunk first, then the others by
	// rank, sentences in their original order within a chunk.
	slices.SortFunc(picked, func(a, b candidate) int {
		ka, kb := a.chunk, b.chunk
		if ka == primary {
			ka = -1
		}
		if kb == primary {
			kb = -1
		}
		return cmp.Or(cmp.Compare(ka, kb), cmp.Compare(a.pos, b.pos))
	})
	var (
		b     strings.Builder
		cited []int
	)
	for i, c := range picked {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.text)
		if i == len(picked)-1 || picked[i+1].chunk != c.chunk {
			cited = append(cited, c.chunk)
			fmt.Fprintf(&b, " [%d]", len(cited))
		}
	}
	return Draft{Text: b.String(), Cited: cited, Primary: primary, Model: ExtractiveModel}, nil
}
