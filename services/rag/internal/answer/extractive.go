package answer

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/groundcrew/groundcrew/services/rag/internal/embedder"
	"github.com/groundcrew/groundcrew/services/rag/internal/rag"
)

// rankPrior is the score bonus of sentences from the best-ranked chunk;
// the chunk at rank r gets rankPrior/r.
const rankPrior = 0.35

// ExtractiveModel is the [Draft.Model] of [Extractive] answers.
const ExtractiveModel = "extractive"

// Defaults of [Extractive].
const (
	DefaultMaxSentences = 4
	DefaultMaxChars     = 700
	DefaultFromChunks   = 5
)

// Extractive is the offline answer writer: it quotes the sentences of the
// top chunks that best answer the question, each group of sentences
// followed by its chunk's citation [n]. It never adds a word of its own,
// so the answer is grounded by construction.
//
// The answer leads with the best-scoring sentence (its chunk is the
// primary source); the other quoted sentences follow in reading order
// (chunk rank, then position). A sentence that states what a quoted one
// already says (most of its terms in common, see [HasRepeats]) is
// skipped: the Go specification says several things twice.
//
// A sentence scores the IDF-weighted share of the question's terms it
// contains (IDF over the candidate sentences, so words every sentence has
// count little; a word sharing its first six letters with a term earns
// half), plus RankPrior/rank of its chunk (retrieval, which sees whole
// chunks and their headings, judges chunks better than word overlap of
// single sentences), plus bonuses for the question's phrases in the
// sentence, the question's terms in the chunk's section heading, the
// question's operators (":=", "==") and words that answer the question's
// kind ("what happens" → panic, error; "is it legal" → must, not). The
// weights were chosen on the answer facts of
// testdata/gospec_questions.json and gospec_heldout3.json;
// gospec_heldout4.json and gospec_heldout5.json, each written before
// a tuning and run once, measure them (BENCHMARKS.md).
type Extractive struct {
	// MaxSentences bounds the sentences quoted; default 4.
	MaxSentences int
	// MaxChars bounds the answer's length before citations; default 700.
	MaxChars int
	// FromChunks is how many of the top chunks sentences are taken from;
	// default 5.
	FromChunks int
	// RankPrior, PhraseWeight and CueWeight weigh a sentence's chunk
	// rank, the question's phrases in it and words answering the
	// question's kind; zero means the defaults (rankPrior,
	// sentencePhraseWeight, sentenceCueWeight), negative means none.
	RankPrior, PhraseWeight, CueWeight float64
	// HeadingWeight weighs the question's terms in the section heading
	// of a sentence's chunk, SymbolWeight the question's operators
	// (":=", "==", "~") in the sentence; zero means the defaults.
	HeadingWeight, SymbolWeight float64
	// ExpansionWeight is the share of a question word's weight earned by
	// a word [Expand] adds; zero means expansionWeight.
	ExpansionWeight float64
	// CoveredCredit is the share of its weight a question term earns in
	// a sentence after the lead when an earlier pick has it; zero means
	// coveredCredit, negative none.
	CoveredCredit float64
}

// weight returns w, def when w is zero, 0 when w is negative.
func weight(w, def float64) float64 {
	switch {
	case w < 0:
		return 0
	case w == 0:
		return def
	}
	return w
}

var _ Generator = (*Extractive)(nil)

type candidate struct {
	chunk, pos int // chunk rank and sentence position in it
	text       string
	terms      map[string]bool
	score      float64
	// credit is what each question term found in the sentence adds to
	// its score.
	credit map[string]float64
}

// Generate implements [Generator].
func (e *Extractive) Generate(ctx context.Context, question string, chunks []rag.Hit) (Draft, error) {
	maxSent := cmp.Or(e.MaxSentences, DefaultMaxSentences)
	maxChars := cmp.Or(e.MaxChars, DefaultMaxChars)
	from := min(cmp.Or(e.FromChunks, DefaultFromChunks), len(chunks))
	if from == 0 {
		return Draft{OutOfScope: true, Reason: "no chunks to answer from"}, nil
	}
	cands := e.rank(question, chunks[:from])
	if len(cands) == 0 {
		// A chunk of only code or short lines: quote its start.
		text := strings.TrimSpace(chunks[0].Text)
		if len(text) > maxChars {
			text = strings.TrimSpace(text[:maxChars]) + "…"
		}
		return Draft{Text: text + " [1]", Cited: []int{0}, Primary: 0, Model: ExtractiveModel}, nil
	}
	ranked := cands

	// After the lead, each next sentence is the one adding most: a
	// question term an earlier pick already has earns only
	// coveredCredit of its weight, so the answer covers the question's
	// other words ("missing" in "can a switch have no expression")
	// instead of saying the lead's again.
	var picked []candidate
	size := 0
	covered := map[string]bool{}
	gain := func(c candidate) float64 {
		g := c.score
		for t, w := range c.credit {
			if covered[t] {
				g -= (1 - weight(e.CoveredCredit, coveredCredit)) * w
			}
		}
		return g
	}
	left := slices.Clone(ranked)
	for len(picked) < maxSent && len(left) > 0 {
		best := -1
		for i, c := range left {
			// Below half the best score a sentence is filler, not support.
			if len(picked) > 0 && c.score < ranked[0].score/2 {
				continue
			}
			if len(picked) > 0 && size+len(c.text) > maxChars {
				continue
			}
			// A sentence saying what a quoted one already says (the spec
			// repeats itself across sections) adds nothing.
			if slices.ContainsFunc(picked, func(p candidate) bool { return nearDuplicate(p.terms, c.terms) }) {
				continue
			}
			if best < 0 || gain(c) > gain(left[best]) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		c := left[best]
		left = slices.Delete(left, best, best+1)
		picked = append(picked, c)
		size += len(c.text) + 1
		for t := range c.credit {
			covered[t] = true
		}
	}

	// The answer leads with the sentence that answers best; the others
	// follow in reading order (by chunk rank, then position), so that
	// sentences of one passage stay together. The lead's chunk is the
	// primary one.
	primary := picked[0].chunk
	rest := picked[1:]
	slices.SortFunc(rest, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.chunk, b.chunk), cmp.Compare(a.pos, b.pos))
	})
	var (
		b     strings.Builder
		cited []int
	)
	number := map[int]int{}
	for i, c := range picked {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.text)
		if i == len(picked)-1 || picked[i+1].chunk != c.chunk {
			n, ok := number[c.chunk]
			if !ok {
				cited = append(cited, c.chunk)
				n = len(cited)
				number[c.chunk] = n
			}
			fmt.Fprintf(&b, " [%d]", n)
		}
	}
	return Draft{Text: b.String(), Cited: cited, Primary: primary, Model: ExtractiveModel}, nil
}

// rank scores the sentences of chunks for the question, best first.
func (e *Extractive) rank(question string, chunks []rag.Hit) []candidate {
	qterms := distinct(embedder.Analyze(question))
	// The specification's words for the question's phrases (see
	// [Expand]) count too, at expansionWeight of a question word.
	own := len(qterms)
	for _, t := range distinct(embedder.Analyze(Expand(question))) {
		if !slices.Contains(qterms[:own], t) {
			qterms = append(qterms, t)
		}
	}

	var cands []candidate
	df := map[string]int{}
	for ci := range chunks {
		for si, s := range sentences(chunks[ci].Text) {
			// Fragments and walls of text make poor answers.
			if len(s) < 20 || len(s) > 600 {
				continue
			}
			// A sentence opening in lower case continues a list or a
			// piece of code ("with x / y truncated towards zero");
			// quoted as it is, it would join the sentence before it in
			// the answer. Its first letter is capitalised.
			if r := s[0]; 'a' <= r && r <= 'z' {
				s = string(r-'a'+'A') + s[1:]
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
		return nil
	}

	var total float64
	idf := map[string]float64{}
	for i, t := range qterms {
		idf[t] = math.Log(1 + float64(len(cands))/float64(1+df[t]))
		if i >= own {
			idf[t] *= weight(e.ExpansionWeight, expansionWeight)
		}
		total += idf[t]
	}
	pairs := phrases(question)
	cues := answerCues(question)
	symbols := symbolsOf(question)
	headingShare := make([]float64, len(chunks))
	for ci := range chunks {
		headingShare[ci] = termShare(qterms, idf, total, chunks[ci].HeadingPath)
	}
	for i := range cands {
		c := &cands[i]
		var s float64
		c.credit = map[string]float64{}
		for _, t := range qterms {
			var w float64
			switch {
			case c.terms[t]:
				w = idf[t]
			case prefixMatch(t, c.terms):
				// "smaller" and "smallest", "concatenate" and
				// "concatenation": the stemmer keeps them apart.
				w = prefixCredit * idf[t]
			}
			if w > 0 && total > 0 {
				c.credit[t] = w / total
				s += w / total
			}
		}
		c.score = s + weight(e.RankPrior, rankPrior)/float64(c.chunk+1) +
			weight(e.PhraseWeight, sentencePhraseWeight)*phraseShare(pairs, c.text) +
			weight(e.CueWeight, sentenceCueWeight)*cueShare(cues, c.text) +
			weight(e.HeadingWeight, sentenceHeadingWeight)*headingShare[c.chunk] +
			weight(e.SymbolWeight, sentenceSymbolWeight)*symbolShare(symbols, c.text)
	}
	slices.SortStableFunc(cands, func(a, b candidate) int { return cmp.Compare(b.score, a.score) })
	return cands

}

// Scored is a sentence of a retrieved chunk with its score, as the
// extractive writer ranks them.
type Scored struct {
	// Chunk is the rank of the sentence's chunk (from 0), Pos its
	// position in the chunk.
	Chunk, Pos int
	// Text is the sentence.
	Text string
	// Score is its score.
	Score float64
}

// Rank returns the sentences of the chunks scored for the question, best
// first, as [Extractive.Generate] chooses among them (for evaluation).
func (e *Extractive) Rank(question string, chunks []rag.Hit) []Scored {
	var out []Scored
	for _, c := range e.rank(question, chunks[:min(cmp.Or(e.FromChunks, DefaultFromChunks), len(chunks))]) {
		out = append(out, Scored{Chunk: c.chunk, Pos: c.pos, Text: c.text, Score: c.score})
	}
	return out
}

// duplicateOverlap is the share of the smaller sentence's terms that a
// second sentence must also have to state the same fact: the Go
// specification says several things twice in nearly the same words (in
// a section and again in its summary), and quoting both says nothing new.
const duplicateOverlap = 0.8

// nearDuplicate says whether two term sets state the same fact: most of
// the smaller one's terms are in the larger one.
func nearDuplicate(a, b map[string]bool) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(a) == 0 {
		return false
	}
	shared := 0
	for t := range a {
		if b[t] {
			shared++
		}
	}
	return float64(shared) >= duplicateOverlap*float64(len(a))
}

// termSet is the set of analysed terms of a sentence.
func termSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, t := range embedder.Analyze(s) {
		out[t] = true
	}
	return out
}

// HasRepeats says whether an answer states a fact twice: two of its
// sentences (citation markers aside) are near-duplicates, as
// [Extractive] never writes them.
func HasRepeats(answer string) bool {
	var sets []map[string]bool
	for _, s := range sentences(markerRE.ReplaceAllString(answer, "")) {
		ts := termSet(s)
		for _, prev := range sets {
			if nearDuplicate(prev, ts) {
				return true
			}
		}
		sets = append(sets, ts)
	}
	return false
}

// Weights of the phrase and cue bonuses of a sentence's score.
const (
	sentencePhraseWeight  = 0.2
	sentenceCueWeight     = 0.45
	sentenceHeadingWeight = 0.6
	sentenceSymbolWeight  = 0.1
)

// coveredCredit is the share of a question term's weight that a sentence
// after the lead earns for it when a quoted sentence already has it.
const coveredCredit = 1.0

// prefixCredit is the share of a term's weight earned by a word sharing
// its first minPrefix letters (or more) instead of the term itself.
const (
	prefixCredit = 0.5
	minPrefix    = 6
)

// prefixMatch says whether a sentence term shares t's first minPrefix
// letters.
func prefixMatch(t string, terms map[string]bool) bool {
	if len(t) < minPrefix {
		return false
	}
	for u := range terms {
		if commonPrefix(t, u) >= minPrefix {
			return true
		}
	}
	return false
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// termShare is the IDF-weighted share of the question's terms found in
// the deepest of the headings.
func termShare(qterms []string, idf map[string]float64, total float64, headings []string) float64 {
	if len(headings) == 0 || total == 0 {
		return 0
	}
	have := termSet(headings[len(headings)-1])
	var s float64
	for _, t := range qterms {
		if have[t] {
			s += idf[t]
		}
	}
	return s / total
}

// symbolRE finds operators in a question: the analyser keeps only words,
// so ":=" or "==" would otherwise count for nothing.
var symbolRE = regexp.MustCompile(`:=|==|!=|<-|&&|\|\||\.\.\.|~|<<|>>|&\^`)

// symbolsOf lists the distinct operators of a question.
func symbolsOf(question string) []string {
	return distinct(symbolRE.FindAllString(question, -1))
}

// symbolShare is the share of the operators found in a sentence.
func symbolShare(symbols []string, sentence string) float64 {
	if len(symbols) == 0 {
		return 0
	}
	n := 0
	for _, s := range symbols {
		if strings.Contains(sentence, s) {
			n++
		}
	}
	return float64(n) / float64(len(symbols))
}

// phrases returns the pairs of content terms next to each other in the
// question (stop words dropped): "closed channel", "nil map".
func phrases(question string) [][2]string {
	terms := embedder.Analyze(question)
	var out [][2]string
	for i := 1; i < len(terms); i++ {
		out = append(out, [2]string{terms[i-1], terms[i]})
	}
	return out
}

// phraseShare is the share of the question's phrases found in a
// sentence, each as its two terms next to each other in either order.
func phraseShare(pairs [][2]string, sentence string) float64 {
	if len(pairs) == 0 {
		return 0
	}
	terms := embedder.Analyze(sentence)
	adjacent := map[[2]string]bool{}
	for i := 1; i < len(terms); i++ {
		adjacent[[2]string{terms[i-1], terms[i]}] = true
		adjacent[[2]string{terms[i], terms[i-1]}] = true
	}
	n := 0
	for _, p := range pairs {
		if adjacent[p] {
			n++
		}
	}
	return float64(n) / float64(len(pairs))
}

// cue is a kind of question and the words of a sentence that answers it.
type cue struct {
	question []string // any of these words in the question
	answer   []string // any of these in a sentence answers that kind
}

// cues: a question asking what happens is answered by what results (a
// panic, an error); one asking whether something is allowed by a rule
// (must, may, not, illegal); one asking how many by a number.
var cues = []cue{
	{[]string{"happens", "happen", "wrong", "fails", "fail", "overflows", "overflow"}, []string{"panic", "error", "causes", "results", "yields", "occurs", "discard"}},
	{[]string{"legal", "allowed", "can", "may", "possible", "ok", "okay"}, []string{"must", "may", "not", "cannot", "illegal", "only", "permitted", "valid", "invalid"}},
	{[]string{"many", "much", "size", "bits", "bytes", "long"}, []string{"bits", "bytes", "size", "either", "0", "1", "2", "4", "8", "16", "32", "64"}},
	{[]string{"order"}, []string{"order", "first", "before", "after", "reverse"}},
}

// answerCues returns the answer words of the cues the question matches.
func answerCues(question string) map[string]bool {
	words := map[string]bool{}
	for _, w := range strings.Fields(strings.ToLower(question)) {
		words[strings.Trim(w, "?,.!;:'\"")] = true
	}
	out := map[string]bool{}
	for _, c := range cues {
		if slices.ContainsFunc(c.question, func(w string) bool { return words[w] }) {
			for _, a := range c.answer {
				out[a] = true
			}
		}
	}
	return out
}

// cueShare is 1 when a sentence has a word answering the question's kind.
func cueShare(answers map[string]bool, sentence string) float64 {
	if len(answers) == 0 {
		return 0
	}
	for _, w := range strings.Fields(strings.ToLower(sentence)) {
		if answers[strings.Trim(w, "?,.!;:'\"()")] {
			return 1
		}
	}
	return 0
}
