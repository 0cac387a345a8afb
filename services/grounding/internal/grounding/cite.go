package grounding

import (
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// answer is a generated text with its checked citations.
type answer struct {
	text       string
	citations  []Citation
	results    []SearchResult // the kept sources (native grounding only)
	confidence *float64
	dropped    int // citations to sources not in the evidence
	// found and lost record, for the message's parsed metadata, the
	// markers (or native supports) read and those dropped as
	// unresolvable.
	found, lost []any
}

// markerRE matches a group of citation markers such as " [1]", "[1][3]" or
// "[1, 2]", with the blanks before it.
var (
	markerRE = regexp.MustCompile(`[ \t]*(?:\[\s*\d{1,4}(?:\s*,\s*\d{1,4})*\s*\])+`)
	numberRE = regexp.MustCompile(`\d+`)
)

// citeMarkers turns the model's source-number markers into citations of
// evidence. Each marker group cites the text between the previous group (or
// the start) and itself. Numbers outside 1..len(evidence) are invented:
// they are removed from the text and counted as dropped. Markers are
// rewritten in one form, " [1][3]", and offsets are counted in the
// rewritten text.
func citeMarkers(text string, evidence []SearchResult, fetched time.Time) answer {
	text = strings.TrimSpace(text)
	var (
		a       answer
		out     strings.Builder
		pos     int // runes written
		prev    int // bytes of text consumed
		markers []span
	)
	for _, loc := range markerRE.FindAllStringIndex(text, -1) {
		seg := text[prev:loc[0]]
		segStart := pos
		out.WriteString(seg)
		pos += utf8.RuneCountInString(seg)
		// A segment after a marker may begin with the punctuation that ends
		// the previous sentence ("… [1]. Next"); the claim starts after it.
		start := segStart + utf8.RuneCountInString(seg) - utf8.RuneCountInString(strings.TrimLeftFunc(seg, leadingJunk))
		end := pos - (utf8.RuneCountInString(seg) - utf8.RuneCountInString(strings.TrimRightFunc(seg, unicode.IsSpace)))
		prev = loc[1]

		var valid []int
		for _, ds := range numberRE.FindAllString(text[loc[0]:loc[1]], -1) {
			n, _ := strconv.Atoi(ds)
			switch {
			case n < 1 || n > len(evidence):
				a.dropped++
				a.lost = append(a.lost, map[string]any{
					"marker": "[" + strconv.Itoa(n) + "]", "source": n, "offset": pos, "reason": "source not in the evidence",
				})
			case !containsInt(valid, n):
				valid = append(valid, n)
			}
		}
		if len(valid) == 0 {
			continue
		}
		sources := make([]any, len(valid))
		for i, n := range valid {
			sources[i] = n
		}
		a.found = append(a.found, map[string]any{
			"marker": strings.TrimSpace(text[loc[0]:loc[1]]), "sources": sources, "offset": pos + 1,
			"start": start, "end": max(end, start),
		})
		var mk strings.Builder
		mk.WriteByte(' ')
		for _, n := range valid {
			mk.WriteString("[" + strconv.Itoa(n) + "]")
		}
		out.WriteString(mk.String())
		markers = append(markers, span{pos, pos + utf8.RuneCountInString(mk.String())})
		pos += utf8.RuneCountInString(mk.String())
		if end <= start {
			continue // a marker with nothing before it supports nothing
		}
		for _, n := range valid {
			r := evidence[n-1]
			snip, trunc := capSnippet(r.Snippet)
			a.citations = append(a.citations, Citation{
				URL: r.URL, Domain: domainOf(r), Title: r.Title, Snippet: snip, SnippetTruncated: trunc,
				StartIndex: start, EndIndex: end, FetchTime: fetched, SourceIndex: n,
			})
		}
	}
	out.WriteString(text[prev:])
	a.text = out.String()

	runes := []rune(a.text)
	for i := range a.citations {
		c := &a.citations[i]
		r := evidence[c.SourceIndex-1]
		c.ConfidenceScore = round3(lexicalSupport(string(runes[c.StartIndex:c.EndIndex]), r.Title+" "+r.Snippet))
	}
	a.confidence = combinedConfidence(runes, markers, a.citations, nil)
	return a
}

func leadingJunk(r rune) bool {
	return unicode.IsSpace(r) || strings.ContainsRune(".,;:!?。，、；：！？", r)
}

// citeNative maps native grounding metadata to citations: chunks become
// sources (the first maxSources that supports cite, in order of first
// citation) and supports become citation spans. A support naming a chunk
// that does not exist, or with a span outside the text, is dropped.
func citeNative(gen *Generation, maxSources int, fetched time.Time) answer {
	a := answer{text: gen.Text}
	runes := []rune(gen.Text)
	kept := map[int]int{} // chunk index → 1-based source index
	var order []int
	valid := func(s Support) bool { return s.Start >= 0 && s.End <= len(runes) && s.Start < s.End }
	for _, s := range gen.Supports {
		if !valid(s) {
			a.dropped += max(len(s.Chunks), 1)
			a.lost = append(a.lost, map[string]any{"start": s.Start, "end": s.End, "reason": "span outside the text"})
			continue
		}
		chunks := []any{}
		for _, ci := range s.Chunks {
			if ci < 0 || ci >= len(gen.Chunks) {
				a.dropped++
				a.lost = append(a.lost, map[string]any{"chunk": ci, "start": s.Start, "end": s.End, "reason": "grounding chunk not in the response"})
				continue
			}
			chunks = append(chunks, ci)
			if gen.Chunks[ci].URI == "" {
				continue // not a web source (a retrieval chunk): nothing to link
			}
			if _, ok := kept[ci]; !ok && len(order) < maxSources {
				kept[ci] = len(order) + 1
				order = append(order, ci)
			}
		}
		a.found = append(a.found, map[string]any{"start": s.Start, "end": s.End, "chunks": chunks})
	}
	snippets := make([]string, len(order))
	var unscored []int
	for _, s := range gen.Supports {
		if !valid(s) {
			continue
		}
		spanText := s.Text
		if spanText == "" {
			spanText = string(runes[s.Start:s.End])
		}
		for j, ci := range s.Chunks {
			idx, ok := kept[ci]
			if !ok {
				continue
			}
			if snippets[idx-1] == "" {
				snippets[idx-1] = spanText
			}
			ch := gen.Chunks[ci]
			snip, trunc := capSnippet(spanText)
			c := Citation{
				URL: ch.URI, Domain: chunkDomain(ch), Title: ch.Title, Snippet: snip, SnippetTruncated: trunc,
				StartIndex: s.Start, EndIndex: s.End, FetchTime: fetched, SourceIndex: idx,
			}
			if len(s.Scores) == len(s.Chunks) {
				c.ConfidenceScore = round3(math.Max(0, math.Min(1, s.Scores[j])))
			} else {
				unscored = append(unscored, len(a.citations))
			}
			a.citations = append(a.citations, c)
		}
	}
	for i, ci := range order {
		ch := gen.Chunks[ci]
		a.results = append(a.results, SearchResult{Title: ch.Title, URL: ch.URI, SourceDomain: chunkDomain(ch), Snippet: snippets[i]})
	}
	a.confidence = combinedConfidence(runes, nil, a.citations, unscored)
	return a
}

// span is a half-open rune range.
type span struct{ start, end int }

// combinedConfidence is 0.5 × coverage + 0.5 × mean citation score (see the
// package documentation). Citations listed in unscored have no score of
// their own and take the coverage. It is nil for an empty text.
func combinedConfidence(runes []rune, markers []span, cites []Citation, unscored []int) *float64 {
	inMarker := make([]bool, len(runes))
	for _, m := range markers {
		for i := m.start; i < m.end && i < len(runes); i++ {
			inMarker[i] = true
		}
	}
	covered := make([]bool, len(runes))
	for _, c := range cites {
		for i := c.StartIndex; i < c.EndIndex && i < len(runes); i++ {
			covered[i] = true
		}
	}
	total, hit := 0, 0
	for i, r := range runes {
		if inMarker[i] || unicode.IsSpace(r) {
			continue
		}
		total++
		if covered[i] {
			hit++
		}
	}
	if total == 0 {
		return nil
	}
	coverage := float64(hit) / float64(total)
	if len(cites) == 0 {
		zero := 0.0
		return &zero
	}
	for _, i := range unscored {
		cites[i].ConfidenceScore = round3(coverage)
	}
	sum := 0.0
	for _, c := range cites {
		sum += c.ConfidenceScore
	}
	v := round3(math.Max(0, math.Min(1, 0.5*coverage+0.5*sum/float64(len(cites)))))
	return &v
}

// lexicalSupport is the share of claim's distinct words found in source.
func lexicalSupport(claim, source string) float64 {
	ct := words(claim)
	if len(ct) == 0 {
		return 0
	}
	st := words(source)
	n := 0
	for w := range ct {
		if st[w] {
			n++
		}
	}
	return float64(n) / float64(len(ct))
}

var stopWords = map[string]bool{
	"the": true, "and": true, "for": true, "with": true, "that": true, "this": true, "are": true, "was": true,
	"from": true, "have": true, "has": true, "not": true, "but": true, "you": true, "your": true, "its": true,
	"can": true, "will": true, "when": true, "which": true, "into": true, "than": true, "then": true, "also": true,
	"more": true, "such": true, "may": true, "been": true, "were": true, "their": true, "there": true, "these": true,
}

// words are the lower-case words of s of three or more letters or digits,
// stop words left out; each Chinese, Japanese or Korean character is a word
// of its own, those scripts being written without spaces.
func words(s string) map[string]bool {
	out := map[string]bool{}
	var w []rune
	flush := func() {
		if len(w) >= 3 {
			if t := string(w); !stopWords[t] {
				out[t] = true
			}
		}
		w = w[:0]
	}
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			flush()
			out[string(r)] = true
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			w = append(w, r)
		default:
			flush()
		}
	}
	flush()
	return out
}

// stripMarkers removes citation markers, for the summary.
func stripMarkers(s string) string {
	return strings.TrimSpace(markerRE.ReplaceAllString(s, ""))
}

// chunkDomain is a grounding chunk's real domain. Grounding URIs are
// redirect links through Google; their titles are usually the source's
// domain, so for a redirect the title is used when it looks like one.
func chunkDomain(c WebChunk) string {
	host := hostDomain(c.URI)
	if !isRedirect(c.URI) {
		return host
	}
	t := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(c.Title)), "www.")
	if looksLikeDomain(t) {
		return t
	}
	return ""
}

func isRedirect(u string) bool {
	pu, err := url.Parse(u)
	if err != nil {
		return false
	}
	return pu.Hostname() == "vertexaisearch.cloud.google.com" || strings.Contains(pu.Path, "grounding-api-redirect")
}

var domainRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$`)

func looksLikeDomain(s string) bool {
	return len(s) <= 253 && domainRE.MatchString(s) && !strings.ContainsAny(s[strings.LastIndexByte(s, '.')+1:], "0123456789")
}

func containsInt(xs []int, x int) bool { return slices.Contains(xs, x) }

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
