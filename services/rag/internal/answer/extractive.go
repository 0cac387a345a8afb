package answer

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/groundcrew/groundcrew/services/rag/internal/chunker"
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
// already says (most of its terms in common, negated or restricted alike,
// see [HasRepeats]) is skipped: the Go specification says several things
// twice.
//
// A sentence scores the IDF-weighted share of the question's terms it
// contains (IDF over the candidate sentences, so words every sentence has
// count little; a word sharing its first six letters with a term earns
// half; the collection's words for the question's phrases, see [Expand],
// earn expansionWeight; a list item earns introCredit for the terms of
// the sentence introducing its list), plus RankPrior/rank of its chunk
// (retrieval, which sees whole chunks and their headings, judges chunks
// better than word overlap of single sentences; a chunk whose section
// heading the question names counts as ranked first, one whose heading
// it names in part as ranked 1/share), plus bonuses for the
// question's phrases in the sentence, the question's terms in the
// sentence in the question's order ("string to slice", not "slice to
// string"), the question's terms in the chunk's section heading, the
// question's operators (":=", "==") and words that answer the question's
// kind ("what happens" → panic, error; "is it legal" → must, not). A
// sentence introducing a short piece of code ("is defined as") quotes the
// code with it. The weights were chosen on the answer facts of
// testdata/gospec_questions.json and gospec_heldout3.json to
// gospec_heldout5.json; gospec_heldout6.json to gospec_heldout8.json,
// each written by another engineer during a tuning and run once after
// it, measure them (BENCHMARKS.md). Refitting them, a wider pool of
// chunks and further sentence features lost on the sets left out of the
// fit (BENCHMARKS.md, the fifth and sixth tunings).
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
	// IntroCredit is the share of a question term's weight that a list
	// item earns when the sentence introducing its list has the term;
	// zero means introCredit, negative none.
	IntroCredit float64
	// OrderWeight weighs the share of the question's terms a sentence
	// has in the question's order; zero means orderWeight, negative none.
	OrderWeight float64
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
	// form is whether the sentence negates or restricts (see [formOf]).
	form  string
	score float64
	// context holds the terms of the sentence introducing a list item
	// that the item itself lacks.
	context map[string]bool
}

// unit is a sentence of a chunk as the extractive writer quotes it.
type unit struct {
	// text is the sentence; one introducing a short piece of code ("The
	// predeclared type error is defined as") carries the code too.
	text string
	// intro is, for a list item, the sentence introducing the list
	// ("For struct literals with keys the following rules apply:").
	intro string
	// code is set when text ends with the code it introduces.
	code bool
}

// maxQuotedCode is the longest piece of code quoted with the sentence
// introducing it, in bytes.
const maxQuotedCode = 160

// units splits a chunk's text into the sentences the extractive writer
// may quote. A paragraph ending in "as" or a colon ("is defined as",
// "has the form:") followed by a short code block carries the code, its
// white space collapsed: the code is what it says. A list item ("- …")
// knows the sentence ending in a colon that introduces its list.
func units(text string) []unit {
	var (
		out               []unit
		para              []string
		code              []string
		intro             string
		inCode, afterPara bool
	)
	flushPara := func() {
		if len(para) == 0 {
			return
		}
		item := strings.HasPrefix(para[0], "- ")
		for _, s := range chunker.Sentences(strings.Join(para, "\n")) {
			u := unit{text: s}
			if item {
				u.intro = intro
			}
			out = append(out, u)
		}
		if !item {
			intro = ""
			if last := out[len(out)-1].text; strings.HasSuffix(last, ":") {
				intro = last
			}
		}
		para = para[:0]
		afterPara = true
	}
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\n")
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			if inCode {
				// The code completes the sentence before it: quote it
				// with that sentence.
				if c := strings.Join(strings.Fields(strings.Join(code, " ")), " "); afterPara && len(out) > 0 && c != "" && len(c) <= maxQuotedCode {
					last := &out[len(out)-1]
					if strings.HasSuffix(last.text, ":") || strings.HasSuffix(last.text, " as") {
						last.text += " " + c
						last.code = true
					}
				}
				code = code[:0]
				afterPara = false
			} else {
				flushPara()
			}
			inCode = !inCode
			continue
		}
		switch {
		case inCode:
			code = append(code, line)
		case trimmed == "":
			flushPara()
		default:
			if afterPara && len(para) == 0 {
				afterPara = false
			}
			para = append(para, line)
		}
	}
	if !inCode {
		flushPara()
	}
	return out
}

// Generate implements [Generator].
func (e *Extractive) Generate(ctx context.Context, question string, chunks []rag.Hit) (Draft, error) {
	maxSent := cmp.Or(e.MaxSentences, DefaultMaxSentences)
	maxChars := cmp.Or(e.MaxChars, DefaultMaxChars)
	from := min(cmp.Or(e.FromChunks, DefaultFromChunks), len(chunks))
	if from == 0 {
		return Draft{OutOfScope: true, Reason: "no chunks to answer from"}, nil
	}
	cands := e.rank(question, chunks[:from], vocabularyOn(ctx))
	if len(cands) == 0 {
		// A chunk of only code or short lines: quote its start.
		text := strings.TrimSpace(chunks[0].Text)
		if len(text) > maxChars {
			text = strings.TrimSpace(text[:maxChars]) + "…"
		}
		return Draft{Text: text + " [1]", Cited: []int{0}, Primary: 0, Model: ExtractiveModel}, nil
	}
	ranked := cands

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
		// A sentence saying what a quoted one already says (the spec
		// repeats itself across sections) adds nothing. The answer
		// is checked as a reader splits it too: a sentence ending in
		// code or a colon runs into the next one.
		if slices.ContainsFunc(picked, func(p candidate) bool { return sameFact(p.terms, c.terms, p.form, c.form) }) {
			continue
		}
		if text, _, _ := compose(append(slices.Clone(picked), c)); HasRepeats(text) {
			continue
		}
		picked = append(picked, c)
		size += len(c.text) + 1
	}
	text, cited, primary := compose(picked)
	return Draft{Text: text, Cited: cited, Primary: primary, Model: ExtractiveModel}, nil
}

// compose writes the answer from the sentences picked, best first: it
// leads with the sentence that answers best; the others follow in
// reading order (by chunk rank, then position), so that sentences of one
// passage stay together; each group of sentences from one chunk is
// followed by its citation. The lead's chunk is the primary one.
func compose(picked []candidate) (text string, cited []int, primary int) {
	primary = picked[0].chunk
	picked = slices.Clone(picked)
	rest := picked[1:]
	slices.SortFunc(rest, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.chunk, b.chunk), cmp.Compare(a.pos, b.pos))
	})
	var b strings.Builder
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
	return b.String(), cited, primary
}

// rank scores the sentences of chunks for the question, best first.
func (e *Extractive) rank(question string, chunks []rag.Hit, vocabulary bool) []candidate {
	qterms := distinct(embedder.Analyze(question))
	// The specification's words for the question's phrases (see
	// [Expand]) count too, at expansionWeight of a question word, in a
	// collection the vocabulary is for.
	own := len(qterms)
	more := ""
	if vocabulary {
		more = Expand(question)
	}
	for _, t := range distinct(embedder.Analyze(more)) {
		if !slices.Contains(qterms[:own], t) {
			qterms = append(qterms, t)
		}
	}

	var cands []candidate
	df := map[string]int{}
	for ci := range chunks {
		for si, u := range units(chunks[ci].Text) {
			s := u.text
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
			c := candidate{chunk: ci, pos: si, text: s, terms: map[string]bool{}, context: map[string]bool{}, form: formOf(s)}
			for _, t := range embedder.Analyze(s) {
				c.terms[t] = true
			}
			for _, t := range embedder.Analyze(u.intro) {
				if !c.terms[t] {
					c.context[t] = true
				}
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
	qseq := embedder.Analyze(question)
	pairs := phrases(question)
	cues := answerCues(question)
	symbols := symbolsOf(question)
	headingShare := make([]float64, len(chunks))
	// A chunk whose section the question names ("a method
	// expression", "go statements": every word of its deepest heading
	// is the question's or the collection's word for one of its
	// phrases) ranks with retrieval's best: the question says where its
	// answer is; one whose heading it names in part, by that part.
	named := make([]float64, len(chunks))
	for ci := range chunks {
		headingShare[ci] = termShare(qterms, idf, total, chunks[ci].HeadingPath)
		named[ci] = namedShare(qterms, chunks[ci].HeadingPath)
	}
	for i := range cands {
		c := &cands[i]
		var s float64
		for _, t := range qterms {
			var w float64
			switch {
			case c.terms[t]:
				w = idf[t]
			case c.context[t]:
				// A list item is about what the sentence
				// introducing it names.
				w = weight(e.IntroCredit, introCredit) * idf[t]
			case prefixMatch(t, c.terms):
				// "smaller" and "smallest", "concatenate" and
				// "concatenation": the stemmer keeps them apart.
				w = prefixCredit * idf[t]
			}
			if total > 0 {
				s += w / total
			}
		}
		c.score = s + weight(e.RankPrior, rankPrior)*max(1/float64(c.chunk+1), named[c.chunk]) +
			weight(e.PhraseWeight, sentencePhraseWeight)*phraseShare(pairs, c.text) +
			weight(e.OrderWeight, sentenceOrderWeight)*orderShare(qseq, embedder.Analyze(c.text)) +
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
// first, as [Extractive.Generate] chooses among them (for evaluation, on
// the Go specification: the vocabulary counts).
func (e *Extractive) Rank(question string, chunks []rag.Hit) []Scored {
	var out []Scored
	for _, c := range e.rank(question, chunks[:min(cmp.Or(e.FromChunks, DefaultFromChunks), len(chunks))], true) {
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
// sentences (citation markers aside) are near-duplicates in the same form
// (see [sameFact]), as [Extractive] never writes them.
func HasRepeats(answer string) bool {
	type said struct {
		terms map[string]bool
		form  string
	}
	var prev []said
	for _, s := range sentences(markerRE.ReplaceAllString(answer, "")) {
		cur := said{termSet(s), formOf(s)}
		for _, p := range prev {
			if sameFact(p.terms, cur.terms, p.form, cur.form) {
				return true
			}
		}
		prev = append(prev, cur)
	}
	return false
}

// sameFact says whether two sentences state the same fact: most of the
// smaller one's terms are the larger one's, and they say it in the same
// form (see [formOf]): "An alias declaration may declare type
// parameters" and "In an alias declaration the given type cannot be a
// type parameter" share their terms but not their facts.
func sameFact(a, b map[string]bool, formA, formB string) bool {
	return formA == formB && nearDuplicate(a, b)
}

// formWords are the words, stop words to the analyser, that turn a rule
// into another: one that forbids ("cannot") or restricts ("only once")
// what a sentence with the same terms allows. Modal words ("may",
// "must") are left out: "A labeled statement may be the target of a goto,
// break or continue statement" and "Labels are … used in the break,
// continue, and goto statements" say one thing.
var formWords = map[string]string{
	"not": "not", "no": "not", "never": "not", "cannot": "not", "neither": "not", "nor": "not",
	"only": "only", "once": "only",
}

// formOf is the set of forms (see formWords) a sentence's words take,
// as a sorted string.
func formOf(s string) string {
	var forms []string
	for _, w := range strings.Fields(strings.ToLower(s)) {
		w = strings.Trim(w, "?,.!;:'\"()")
		if f, ok := formWords[w]; ok && !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	slices.Sort(forms)
	return strings.Join(forms, " ")
}

// Weights of the phrase and cue bonuses of a sentence's score.
const (
	sentencePhraseWeight  = 0.2
	sentenceOrderWeight   = 0.2
	sentenceCueWeight     = 0.45
	sentenceHeadingWeight = 0.6
	sentenceSymbolWeight  = 0.1
)

// introCredit is the share of a question term's weight a list item earns
// for the term in the sentence introducing its list.
const introCredit = 1.0

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

// namedShare is the share of the deepest heading's terms the question's
// terms include: 1 when the question names the section.
func namedShare(qterms []string, headings []string) float64 {
	if len(headings) == 0 {
		return 0
	}
	ht := distinct(embedder.Analyze(headings[len(headings)-1]))
	if len(ht) == 0 {
		return 0
	}
	n := 0
	for _, t := range ht {
		if slices.Contains(qterms, t) {
			n++
		}
	}
	return float64(n) / float64(len(ht))
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
	{[]string{"times", "often"}, []string{"once", "twice", "exactly", "each", "every"}},
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

// orderShare is the share of the question's terms a sentence has in the
// question's order: the length of their longest common subsequence over
// the number of question terms.
func orderShare(question, sentence []string) float64 {
	if len(question) == 0 {
		return 0
	}
	prev := make([]int, len(sentence)+1)
	cur := make([]int, len(sentence)+1)
	for i := range question {
		for j := range sentence {
			switch {
			case question[i] == sentence[j]:
				cur[j+1] = prev[j] + 1
			default:
				cur[j+1] = max(cur[j], prev[j+1])
			}
		}
		prev, cur = cur, prev
	}
	return float64(prev[len(sentence)]) / float64(len(question))
}
