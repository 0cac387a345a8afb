package answer

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/groundcrew/groundcrew/services/rag/internal/chunker"
	"github.com/groundcrew/groundcrew/services/rag/internal/embedder"
	"github.com/groundcrew/groundcrew/services/rag/internal/rag"
)

// The scope check declares a question out of scope when one of these
// holds, checked in this order:
//
//  1. the question has no content word at all ("what is this?");
//  2. retrieval returned nothing;
//  3. lexical guard: the question's content words are not what the
//     retrieved chunks talk about. Each distinct term of the question
//     (stop words and question filler such as "good", "best", "use" left
//     out) weighs its inverse document frequency over the collection's
//     chunks, so a word most chunks have counts little and a word the
//     collection lacks counts most. The evidence for the question is
//
//     1/4 U + 3/4 C + 1/4 H − 3/4 A
//
//     where U is the weighted share of its terms found in any retrieved
//     chunk or in the collection's description, C the best weighted share
//     found together in one chunk, H the best weighted share found in one
//     chunk's headings (each term and chunk credited by the chunk's
//     similarity relative to the threshold, at most 1), and A the weighted
//     share of terms the collection never uses. Below MinEvidence (0.14)
//     the question is out of scope. A question that shares one word with
//     the collection ("routine" in one about stretching, "interface" in
//     one about USB-C chargers) has little U, C and H and a large A: its
//     other words are foreign to the collection.
//     Without term statistics (a store that cannot count terms) every
//     term weighs the same, nothing is known to be foreign, and the bar is
//     MinCoverage (0.36) on 3/4 U + 1/4 C;
//  4. dense guard: the best retrieved chunk's similarity is below the
//     collection's threshold. The threshold is calibrated per collection
//     (see [Calibrate]) because the scale of similarities depends on the
//     embedder and on the collection: a hashing embedder scores a good
//     match at 0.2–0.5, a neural one at 0.6–0.9.
//
// The weights and bars were chosen on testdata/gospec_questions.json and
// the first held-out set, testdata/gospec_heldout.json, and measured on
// testdata/gospec_heldout2.json, written afterwards; see BENCHMARKS.md.
//
// A generating model may still declare a question out of scope after both
// guards pass ([Draft.OutOfScope]).

// Defaults of [ScopeOptions].
const (
	// DefaultMinEvidence is the lexical guard's bar with term statistics.
	DefaultMinEvidence = 0.14
	// DefaultMinCoverage is its bar without them.
	DefaultMinCoverage = 0.36
	// DefaultThreshold applies to collections never calibrated.
	DefaultThreshold = 0.1
)

// Weights of the lexical guard (rule 3 above).
const (
	unionWeight   = 0.25
	chunkWeight   = 0.75
	headingWeight = 0.25
	foreignWeight = 0.75
	// Without term statistics.
	unweightedUnion = 0.75
	unweightedChunk = 0.25
)

// fillerTerms are analysed words that questions use whatever their topic
// ("what is a good way to…", "how do I use…"): not stop words in general
// text, but incidental in a question, so they neither count for nor
// against its scope.
var fillerTerms = map[string]bool{
	"good": true, "best": true, "way": true, "get": true, "use": true, "make": true, "work": true,
	"like": true, "thing": true, "happen": true, "need": true, "want": true, "mean": true,
	"know": true, "tell": true,
}

// ScopeOptions tune the scope check; zero fields take defaults.
type ScopeOptions struct {
	// MinEvidence is the lexical evidence (rule 3 above) a question needs
	// when the store gives term statistics.
	MinEvidence float64
	// MinCoverage is the unweighted coverage a question needs when it
	// does not.
	MinCoverage float64
	// DefaultThreshold is the similarity threshold of collections that
	// have neither an explicit nor a calibrated one.
	DefaultThreshold float64
}

func (o ScopeOptions) withDefaults() ScopeOptions {
	if o.MinEvidence <= 0 {
		o.MinEvidence = DefaultMinEvidence
	}
	if o.MinCoverage <= 0 {
		o.MinCoverage = DefaultMinCoverage
	}
	if o.DefaultThreshold <= 0 {
		o.DefaultThreshold = DefaultThreshold
	}
	return o
}

// Threshold returns the similarity threshold the scope check applies to a
// collection: its explicit ScopeThreshold, else its calibrated one, else
// the default. This is the collection's effective scope_threshold.
func (o ScopeOptions) Threshold(s rag.Settings) float64 {
	o = o.withDefaults()
	switch {
	case s.ScopeThreshold > 0:
		return s.ScopeThreshold
	case s.CalibratedThreshold > 0:
		return s.CalibratedThreshold
	}
	return o.DefaultThreshold
}

// Verdict is the outcome of a scope check.
type Verdict struct {
	// InScope is set when both guards pass.
	InScope bool
	// Reason explains an out-of-scope verdict.
	Reason string
	// Coverage is the lexical evidence for the question (rule 3);
	// BestScore the highest chunk similarity.
	Coverage  float64
	BestScore float64
}

// ScopeInput is what [Scope] judges.
type ScopeInput struct {
	// Question is the question asked.
	Question string
	// Hits are the chunks retrieved for it.
	Hits []rag.Hit
	// Threshold is the collection's similarity threshold.
	Threshold float64
	// MinEvidence is the bar with term statistics, MinCoverage without.
	MinEvidence, MinCoverage float64
	// Terms are the collection's term statistics for the question's
	// terms; without them every term weighs the same.
	Terms rag.TermStats
	// Description is the collection's description: its words count as
	// covered.
	Description string
}

// CheckScope applies the scope check to a question and the chunks
// retrieved for it, every term weighing the same (see [Scope]).
func CheckScope(question string, hits []rag.Hit, threshold, minCoverage float64) Verdict {
	return Scope(ScopeInput{Question: question, Hits: hits, Threshold: threshold, MinCoverage: minCoverage})
}

// contentTerms returns the distinct terms of a question that carry its
// topic: analysed, without question filler.
func contentTerms(question string) []string {
	var out []string
	for _, t := range distinct(embedder.Analyze(question)) {
		if !fillerTerms[t] {
			out = append(out, t)
		}
	}
	return out
}

// Scope applies the scope check (see the rules above).
func Scope(in ScopeInput) Verdict {
	terms := contentTerms(in.Question)
	if len(terms) == 0 {
		return Verdict{Reason: "the question has no content words to look for"}
	}
	if len(in.Hits) == 0 {
		return Verdict{Reason: "no chunk of the collection matches the question"}
	}
	weighted := in.Terms.Chunks > 0
	weight := make(map[string]float64, len(terms))
	var total float64
	for _, t := range terms {
		w := 1.0
		if weighted {
			w = math.Log(1 + float64(in.Terms.Chunks)/float64(1+in.Terms.DF[t]))
		}
		weight[t] = w
		total += w
	}
	described := map[string]bool{}
	for _, t := range embedder.Analyze(in.Description) {
		described[t] = true
	}
	// found holds each term's credit: 1 when a chunk at least as similar
	// as the threshold contains it, less when only weaker chunks do.
	found := map[string]float64{}
	var best, together, headed float64
	for _, h := range in.Hits {
		best = max(best, h.Score)
		scale := 1.0
		if in.Threshold > 0 {
			scale = min(1, h.Score/in.Threshold)
		}
		inChunk, inHeading := map[string]bool{}, map[string]bool{}
		for _, t := range embedder.Analyze(strings.Join(h.HeadingPath, " ")) {
			inChunk[t], inHeading[t] = true, true
		}
		for _, t := range embedder.Analyze(h.Text) {
			inChunk[t] = true
		}
		var w, hw float64
		for _, t := range terms {
			if inChunk[t] {
				found[t] = max(found[t], scale)
				w += weight[t]
			}
			if inHeading[t] {
				hw += weight[t]
			}
		}
		together = max(together, scale*w/total)
		headed = max(headed, scale*hw/total)
	}
	matched := 0
	var covered, foreign float64
	var missing []string
	for _, t := range terms {
		switch {
		case described[t]:
			covered += weight[t]
			matched++
		case found[t] > 0:
			matched++
			covered += found[t] * weight[t]
		default:
			missing = append(missing, t)
			if weighted && in.Terms.DF[t] == 0 {
				foreign += weight[t]
			}
		}
	}
	v := Verdict{BestScore: best}
	bar := in.MinCoverage
	if weighted {
		bar = in.MinEvidence
		// Clamped at 0 for the reason text; the bar is positive.
		v.Coverage = max(0, unionWeight*covered/total+chunkWeight*together+headingWeight*headed-foreignWeight*foreign/total)
	} else {
		v.Coverage = unweightedUnion*covered/total + unweightedChunk*together
	}
	switch {
	case v.Coverage < bar:
		v.Reason = fmt.Sprintf("the collection does not cover the question: %d of its %d terms occur in the best matching chunks, weighted coverage %.2f is below %.2f (missing: %s)",
			matched, len(terms), v.Coverage, bar, strings.Join(missing, ", "))
	case best < in.Threshold:
		v.Reason = fmt.Sprintf("no chunk is relevant enough: best similarity %.3f is below the collection's threshold %.3f", best, in.Threshold)
	default:
		v.InScope = true
	}
	return v
}

func distinct(terms []string) []string {
	slices.Sort(terms)
	return slices.Compact(terms)
}

// Sampler lists chunks of a collection for calibration;
// both document stores (vectorindex, qdrantstore) implement it.
type Sampler interface {
	Searcher
	Sample(ctx context.Context, collection string, n int) ([]rag.Hit, error)
}

// Calibration parameters. A pseudo-question is calibrationWords content
// words drawn at random from one sentence of a sampled chunk: about what a
// user who read that passage would type, in no particular order. Real
// questions share fewer words with their passage than that (they are
// paraphrases and carry extra words), so the threshold is set well below
// the pseudo-questions' scores: calibrationFactor × their 10th percentile.
// On the Go specification with the local embedder this gives ~0.14, while
// real in-scope questions score 0.17–0.55.
const (
	calibrationSamples = 200
	calibrationWords   = 3
	calibrationPct     = 0.10
	calibrationFactor  = 0.6
	minCalibration     = 20
)

// Calibration is the outcome of [Calibrate].
type Calibration struct {
	// Threshold is the similarity below which questions are out of scope;
	// store it as the collection's CalibratedThreshold.
	Threshold float64
	// Questions is the number of pseudo-questions scored, Chunks the size
	// of the collection sampled from.
	Questions int
	Chunks    int
	// P10 and Median describe the pseudo-questions' best scores.
	P10, Median float64
}

// Calibrate learns a collection's scope threshold from its own score
// distribution: it samples chunks, asks a pseudo-question drawn from each,
// and records the best similarity retrieval returns. Call it after
// ingesting, and save the threshold in the collection's settings. It is
// deterministic for a given collection. Collections too small to calibrate
// (fewer than 20 usable chunks) get [DefaultThreshold].
func Calibrate(ctx context.Context, s Sampler, collection string) (Calibration, error) {
	sample, err := s.Sample(ctx, collection, calibrationSamples)
	if err != nil {
		return Calibration{}, fmt.Errorf("sampling %q: %w", collection, err)
	}
	rng := rand.New(rand.NewPCG(0x5eed, uint64(len(sample))))
	var scores []float64
	for _, h := range sample {
		q := pseudoQuestion(h.Text, rng)
		if q == "" {
			continue
		}
		hits, err := s.Search(ctx, collection, rag.Query{Text: q, TopK: rag.DefaultTopK})
		if err != nil {
			return Calibration{}, fmt.Errorf("calibrating %q: %w", collection, err)
		}
		best := 0.0
		for _, h := range hits {
			best = max(best, h.Score)
		}
		scores = append(scores, best)
	}
	c := Calibration{Questions: len(scores), Chunks: len(sample), Threshold: DefaultThreshold}
	if len(scores) < minCalibration {
		return c, nil
	}
	slices.Sort(scores)
	pct := func(p float64) float64 { return scores[int(p*float64(len(scores)-1))] }
	c.P10, c.Median = pct(calibrationPct), pct(0.5)
	if t := calibrationFactor * c.P10; t > 0 {
		c.Threshold = t
	}
	return c, nil
}

// sentences returns the prose sentences of a chunk's text.
func sentences(text string) []string {
	var out []string
	for _, p := range chunker.Prose(text) {
		out = append(out, chunker.Sentences(p)...)
	}
	return out
}

// pseudoQuestion draws calibrationWords content words from a random prose
// sentence of text, or returns "" when no sentence has enough.
func pseudoQuestion(text string, rng *rand.Rand) string {
	var candidates [][]string
	for _, s := range sentences(text) {
		var words []string
		for _, w := range strings.Fields(s) {
			if len(embedder.Analyze(w)) == 1 {
				words = append(words, w)
			}
		}
		if len(words) >= calibrationWords {
			candidates = append(candidates, words)
		}
	}
	if len(candidates) == 0 {
		return ""
	}
	words := slices.Clone(candidates[rng.IntN(len(candidates))])
	rng.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
	return strings.Join(words[:calibrationWords], " ")
}
