// Package extractive writes a short cited answer from search evidence without
// a language model: it is what Ground uses when no model key is configured.
//
// Summarize splits the evidence into sentences, scores each one against the
// query with BM25 (the sentences are the document collection), picks the best
// non-redundant sentences with maximal marginal relevance (MMR) up to a
// character budget and writes them out, each followed by a citation marker
// such as " [1]". Every citation records the rune offsets of the sentence it
// supports, so it can be stored and highlighted like a model's grounding
// segment. The output depends only on the input: ties are broken by source
// rank and then by position in the source.
package extractive

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Source is one piece of evidence from search, in rank order.
type Source struct {
	// ID numbers the source for citation markers: a sentence from this
	// source is followed by " [ID]". Callers number sources from 1 in the
	// order they list them to the reader.
	ID int
	// URL and Title are copied into citations.
	URL, Title string
	// Text is the evidence: a search snippet or the extracted page text.
	Text string
}

// Citation ties one sentence of the answer to the source it came from.
type Citation struct {
	// SourceID, URL and Title identify the source; SourceID is its Source.ID.
	SourceID   int
	URL, Title string
	// Snippet is the cited sentence, exactly as it appears in the answer.
	Snippet string
	// StartIndex and EndIndex are the half-open rune (character) offsets of
	// the sentence in Result.Text; the marker that follows is not included.
	StartIndex, EndIndex int
	// Confidence is the sentence's normalised relevance in [0, 1] (see
	// Result.Confidence).
	Confidence float64
}

// Result is an extractive answer.
type Result struct {
	// Text is the answer: the chosen sentences separated by spaces, each
	// followed by its citation marker.
	Text string
	// Summary is the same sentences without markers, most relevant first,
	// trimmed to at most SummaryMaxChars characters and
	// SummaryMaxSentences sentences.
	Summary string
	// Citations has one entry per sentence of Text, in text order.
	Citations []Citation
	// Confidence is in [0, 1] and always set by Summarize (it is a pointer to
	// mirror the optional field of the stored message). It is
	//
	//	0.5 × coverage + 0.5 × mean(relevance of the chosen sentences)
	//
	// where a sentence's relevance is its BM25 score divided by the score of
	// an ideal sentence (one of average length containing every query term
	// once, which scores Σ idf(term)), capped at 1, and coverage is the
	// idf-weighted share of query terms that appear in at least one chosen
	// sentence. A query term found in no evidence at all has no meaningful
	// idf, so it weighs as much as the average matched term. The value is
	// rounded to three decimals. It is 0 when nothing matched.
	Confidence *float64
}

// Options tunes Summarize; the zero value selects the defaults.
type Options struct {
	// MaxChars is the budget for Result.Text in characters, markers
	// included (default DefaultMaxChars). A first sentence longer than the
	// budget is trimmed to fit rather than dropped.
	MaxChars int
	// MaxSentences caps the sentences in Result.Text (default
	// DefaultMaxSentences).
	MaxSentences int
	// Input is the text the reader already has, such as the alert the
	// query was derived from. Sentences that mostly repeat it, the query or
	// their source's title are worth less: they match best and say nothing
	// new.
	Input string
}

// Defaults and fixed limits.
const (
	// DefaultMaxChars is the default answer budget: a few sentences, enough
	// for a chat message with room for the alert itself.
	DefaultMaxChars = 700
	// DefaultMaxSentences is the default sentence cap of the answer.
	DefaultMaxSentences = 5
	// SummaryMaxChars and SummaryMaxSentences bound Result.Summary, as the
	// AnnotatedMessage contract requires.
	SummaryMaxChars     = 250
	SummaryMaxSentences = 3
)

// Scoring constants. k1 and b are the usual BM25 values. The rank bonus lifts
// a sentence from the first source by 10% over an equal one from far down the
// list: search ranking is a weak but real signal. Sentences scoring below
// minRelative of the best are not worth citing; mmrLambda weighs relevance
// against novelty, and a sentence sharing more than maxOverlap of its terms
// with a chosen one is a near-duplicate and never chosen.
const (
	bm25K1      = 1.2
	bm25B       = 0.75
	rankBonus   = 0.1
	minRelative = 0.2
	mmrLambda   = 0.7
	maxOverlap  = 0.6

	// A sentence's usefulness blends its own match with the query
	// (queryWeight) and its source's (the rest): in a source that is about
	// the query, the sentence saying what to do often repeats none of the
	// query's words. Sources whose match is below weakSource of the best
	// one's are off topic and contribute nothing. Sentences that tell the
	// reader to do something weigh actionBonus more (diagnostic steps
	// checkBonus); sentences whose terms are mostly the query's, the
	// input's or the title's weigh down to restateFloor.
	queryWeight  = 0.4
	weakSource   = 0.5
	actionBonus  = 0.8
	checkBonus   = 0.3
	restateFloor = 0.25
	restateShare = 0.5 // novelty at or above which there is no penalty

	// maxSentenceChars keeps one run-on "sentence" (a navigation bar, a
	// table flattened to text) from eating the whole budget.
	maxSentenceChars = 400
	minSentenceChars = 12
	minSentenceTerms = 2
	minSentenceWords = 3
	minSentenceCJK   = 6
)

// candidate is one evidence sentence.
type candidate struct {
	src    int // index into sources
	pos    int // sentence index within the source
	text   string
	marker string         // " [ID]"
	terms  map[string]int // term frequencies
	nterms int            // number of terms, the BM25 document length
	bm25   float64
	score  float64 // usefulness: bm25, source match, action and novelty
}

// Summarize answers query from sources. It cites only the given sources and
// returns an empty Result with confidence 0 when no sentence shares a term
// with the query; the caller should then mark the answer for review.
func Summarize(query string, sources []Source, opt Options) Result {
	if opt.MaxChars <= 0 {
		opt.MaxChars = DefaultMaxChars
	}
	if opt.MaxSentences <= 0 {
		opt.MaxSentences = DefaultMaxSentences
	}
	zero := 0.0
	empty := Result{Confidence: &zero}

	qterms := uniqueTerms(tokenize(query))
	if len(qterms) == 0 {
		return empty
	}
	cands := collect(sources)
	if len(cands) == 0 {
		return empty
	}
	idf, df := scoreBM25(cands, qterms)
	if !rescore(cands, sources, qterms, idf, opt.Input) {
		return empty
	}

	best := 0.0
	for _, c := range cands {
		best = max(best, c.score)
	}
	if best <= 0 {
		return empty
	}
	var pool []*candidate
	for i := range cands {
		if c := &cands[i]; c.score > 0 && c.score >= minRelative*best {
			pool = append(pool, c)
		}
	}
	chosen := selectMMR(pool, best, opt)
	if len(chosen) == 0 {
		return empty
	}

	// The summary takes the sentences in the order they were chosen, most
	// relevant first, so that trimming it keeps the best.
	ranked := make([]string, len(chosen))
	for i, c := range chosen {
		ranked[i] = c.text
	}
	summary := TrimSummary(strings.Join(ranked, " "), SummaryMaxChars, SummaryMaxSentences)

	// Keep each source's sentences together and in their original order, so
	// neighbouring sentences read as they were written; sources appear in
	// the order their best sentence was chosen, so the strongest comes first.
	first := map[int]int{}
	for i, c := range chosen {
		if _, ok := first[c.src]; !ok {
			first[c.src] = i
		}
	}
	slices.SortStableFunc(chosen, func(a, b *candidate) int {
		return cmp.Or(cmp.Compare(first[a.src], first[b.src]), cmp.Compare(a.pos, b.pos))
	})

	ideal := idealScore(qterms, idf, df)
	var (
		text    strings.Builder
		cites   []Citation
		at      int
		sumRel  float64
		covered = map[string]bool{}
	)
	for i, c := range chosen {
		s, marker := c.text, c.marker
		if i == 0 {
			// Only a first pick may exceed the budget (selectMMR admits it
			// unconditionally, and then nothing else fits, so it is alone
			// and first here too); trim it to fit.
			if room := opt.MaxChars - utf8.RuneCountInString(marker); utf8.RuneCountInString(s) > room {
				s = TrimSummary(s, room, 1)
			}
		} else {
			text.WriteByte(' ')
			at++
		}
		n := utf8.RuneCountInString(s)
		rel := min(1, c.bm25/ideal)
		sumRel += rel
		for _, q := range qterms {
			if c.terms[q] > 0 {
				covered[q] = true
			}
		}
		cites = append(cites, Citation{
			SourceID:   sources[c.src].ID,
			URL:        sources[c.src].URL,
			Title:      sources[c.src].Title,
			Snippet:    s,
			StartIndex: at,
			EndIndex:   at + n,
			Confidence: round3(rel),
		})
		text.WriteString(s)
		text.WriteString(marker)
		at += n + utf8.RuneCountInString(marker)
	}
	// Sum in query order: float addition order must not depend on map
	// iteration, or the rounded confidence could differ between runs.
	coveredIDF := 0.0
	for _, q := range qterms {
		if covered[q] {
			coveredIDF += idf[q]
		}
	}
	conf := round3(0.5*(coveredIDF/ideal) + 0.5*(sumRel/float64(len(chosen))))
	conf = math.Max(0, math.Min(1, conf))
	return Result{
		Text:       text.String(),
		Summary:    summary,
		Citations:  cites,
		Confidence: &conf,
	}
}

// collect splits every source into candidate sentences, dropping fragments
// too short to say anything and exact repeats (mirrors and syndicated copies
// would otherwise skew document frequencies and crowd the answer).
func collect(sources []Source) []candidate {
	var out []candidate
	seen := map[string]bool{}
	for si, src := range sources {
		for pos, s := range splitSentences(src.Text) {
			if utf8.RuneCountInString(s) < minSentenceChars || !proseLike(s) {
				continue
			}
			if utf8.RuneCountInString(s) > maxSentenceChars {
				s = TrimSummary(s, maxSentenceChars, 1)
			}
			key := strings.ToLower(s)
			if seen[key] {
				continue
			}
			toks := tokenize(s)
			if len(toks) < minSentenceTerms {
				continue
			}
			seen[key] = true
			tf := make(map[string]int, len(toks))
			for _, t := range toks {
				tf[t]++
			}
			out = append(out, candidate{
				src: si, pos: pos, text: ensureTerminal(s), terms: tf, nterms: len(toks),
				marker: " [" + strconv.Itoa(src.ID) + "]",
			})
		}
	}
	return out
}

// scoreBM25 sets bm25 on every candidate and returns the idf and document
// frequency of each query term, with the sentences as the collection.
func scoreBM25(cands []candidate, qterms []string) (map[string]float64, map[string]int) {
	n := float64(len(cands))
	total := 0
	df := make(map[string]int, len(qterms))
	for _, c := range cands {
		total += c.nterms
		for _, q := range qterms {
			if c.terms[q] > 0 {
				df[q]++
			}
		}
	}
	avgdl := float64(total) / n
	idf := make(map[string]float64, len(qterms))
	for _, q := range qterms {
		// The "+1" form of BM25 idf stays positive even for a term in
		// every sentence.
		idf[q] = math.Log(1 + (n-float64(df[q])+0.5)/(float64(df[q])+0.5))
	}
	for i := range cands {
		c := &cands[i]
		s := 0.0
		for _, q := range qterms {
			tf := float64(c.terms[q])
			if tf == 0 {
				continue
			}
			s += idf[q] * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(c.nterms)/avgdl))
		}
		c.bm25 = s
	}
	return idf, df
}

// rescore sets every candidate's score from its BM25, its source's match,
// its wording and its source's rank, and reports whether any sentence
// matched the query at all. A source matches by the idf-weighted query
// terms found anywhere in its sentences.
func rescore(cands []candidate, sources []Source, qterms []string, idf map[string]float64, input string) bool {
	nsources := len(sources)
	srcMatch := make([]float64, nsources)
	found := make([]map[string]bool, nsources)
	bestBM25 := 0.0
	for _, c := range cands {
		bestBM25 = max(bestBM25, c.bm25)
		if found[c.src] == nil {
			found[c.src] = map[string]bool{}
		}
		for _, q := range qterms {
			if c.terms[q] > 0 && !found[c.src][q] {
				found[c.src][q] = true
				srcMatch[c.src] += idf[q]
			}
		}
	}
	if bestBM25 <= 0 {
		return false
	}
	bestSrc := slices.Max(srcMatch)

	known := map[string]bool{}
	for _, t := range qterms {
		known[t] = true
	}
	for _, t := range tokenize(input) {
		known[t] = true
	}
	titles := make([]map[string]bool, nsources)
	for i, src := range sources {
		titles[i] = map[string]bool{}
		for _, t := range tokenize(src.Title) {
			titles[i][t] = true
		}
	}

	for i := range cands {
		c := &cands[i]
		rel := srcMatch[c.src] / bestSrc
		if rel < weakSource {
			c.score = 0
			continue
		}
		s := queryWeight*c.bm25/bestBM25 + (1-queryWeight)*rel
		s *= 1 + wordingBonus(c.terms, known)
		// Novelty: the share of the sentence's distinct terms that neither
		// the query, the input nor the title already says.
		fresh := 0
		for t := range c.terms {
			if !known[t] && !titles[c.src][t] {
				fresh++
			}
		}
		novelty := float64(fresh) / float64(len(c.terms))
		s *= restateFloor + (1-restateFloor)*min(1, novelty/restateShare)
		if nsources > 1 {
			s *= 1 + rankBonus*float64(nsources-1-c.src)/float64(nsources-1)
		}
		c.score = s
	}
	return true
}

// actionVerbs are stems of verbs that tell an operator what to do about a
// problem; checkVerbs those of diagnostic steps.
var actionVerbs, checkVerbs = stems(
	"roll", "rollback", "revert", "undo", "restart", "scale", "raise", "increase",
	"lower", "reduce", "enable", "disable", "drain", "cordon", "evict", "delete",
	"remove", "prune", "rotate", "compress", "clean", "free", "expand", "resize",
	"grow", "add", "fix", "terminate", "kill", "put", "move", "upgrade", "downgrade",
	"page", "escalate", "failover", "promote", "pause", "throttle", "configure",
	"renew", "reload", "replace", "rebuild", "flush", "purge", "truncate", "vacuum",
	"drop", "trigger", "request", "update", "mitigate", "bump", "shed", "retry",
), stems(
	"check", "look", "open", "find", "inspect", "compare", "trace", "split",
	"describe", "verify", "confirm", "search", "watch", "review",
)

func stems(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[stem(w)] = true
	}
	return m
}

// wordingBonus rewards sentences that tell the reader what to do. Verbs
// the query or input use themselves ("restarted 12 times") describe the
// problem, not a remedy, and do not count.
func wordingBonus(terms map[string]int, known map[string]bool) float64 {
	b := 0.0
	for t := range terms {
		switch {
		case known[t]:
		case actionVerbs[t]:
			return actionBonus
		case checkVerbs[t]:
			b = checkBonus
		}
	}
	return b
}

// idealScore is the BM25 score of a sentence of average length containing
// each query term once: Σ idf. A term absent from all evidence (df 0) counts
// with the mean idf of the present ones: its own idf, the maximum possible,
// says only that it is absent and would swamp the rest.
func idealScore(qterms []string, idf map[string]float64, df map[string]int) float64 {
	sum, seen := 0.0, 0
	for _, q := range qterms {
		if df[q] > 0 {
			sum += idf[q]
			seen++
		}
	}
	if seen == 0 {
		return 1
	}
	return sum * float64(len(qterms)) / float64(seen)
}

// selectMMR picks sentences by maximal marginal relevance until the sentence
// cap or the character budget is reached. The first pick always fits (it is
// trimmed later if needed) so a long but relevant sentence still yields an
// answer.
func selectMMR(pool []*candidate, best float64, opt Options) []*candidate {
	var chosen []*candidate
	used := 0
	left := slices.Clone(pool)
	for len(left) > 0 && len(chosen) < opt.MaxSentences {
		bi, bv := -1, math.Inf(-1)
		for i, c := range left {
			sim := 0.0
			for _, s := range chosen {
				sim = max(sim, overlap(c, s))
			}
			v := mmrLambda*c.score/best - (1-mmrLambda)*sim
			if sim > maxOverlap {
				continue
			}
			// Strictly greater: on a tie the earlier candidate (higher
			// ranked source, then earlier sentence) wins.
			if v > bv {
				bi, bv = i, v
			}
		}
		if bi < 0 {
			break
		}
		c := left[bi]
		left = slices.Delete(left, bi, bi+1)
		cost := utf8.RuneCountInString(c.text) + utf8.RuneCountInString(c.marker)
		if len(chosen) > 0 {
			cost++ // the separating space
		}
		if len(chosen) > 0 && used+cost > opt.MaxChars {
			// Too long for what is left; a shorter one may still fit.
			continue
		}
		chosen = append(chosen, c)
		used += cost
	}
	return chosen
}

// overlap is the share of the smaller sentence's distinct terms that the
// other one also has: near 1 for a sentence restated or contained in another.
func overlap(a, b *candidate) float64 {
	if len(a.terms) == 0 || len(b.terms) == 0 {
		return 0
	}
	small, big := a.terms, b.terms
	if len(big) < len(small) {
		small, big = big, small
	}
	n := 0
	for t := range small {
		if big[t] > 0 {
			n++
		}
	}
	return float64(n) / float64(len(small))
}

// ensureTerminal ends a sentence that lacks final punctuation (a list item or
// heading-like line) with a full stop, so that the answer and its summary
// still split into the same sentences.
func ensureTerminal(s string) string {
	// Look through closing quotes and brackets: `(see the runbook)` still
	// needs a full stop, `"Done."` does not.
	r, _ := utf8.DecodeLastRuneInString(strings.TrimRight(s, closers))
	switch {
	case isTerminator(r):
		return s
	case isCJK(r):
		return s + "。"
	case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
		return s + "."
	}
	return s
}

// proseLike rejects headings and labels ("KubePodCrashLooping", "Root
// cause"), which match queries well but say nothing: a sentence needs a few
// words, or a few characters of Chinese or Japanese.
func proseLike(s string) bool {
	if len(strings.Fields(s)) >= minSentenceWords {
		return true
	}
	n := 0
	for _, r := range s {
		if isCJK(r) && unicode.IsLetter(r) {
			n++
		}
	}
	return n >= minSentenceCJK
}

func uniqueTerms(ts []string) []string {
	seen := make(map[string]bool, len(ts))
	out := ts[:0:0]
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
