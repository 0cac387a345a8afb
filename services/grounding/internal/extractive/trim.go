package extractive

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// Ellipsis marks a summary cut inside a sentence.
const Ellipsis = "…"

// TrimSummary shortens s to at most maxChars characters (runes, the ellipsis
// included) and at most maxSentences sentences; a limit <= 0 means no limit.
// Surrounding white space is removed.
//
// It keeps as many whole leading sentences as fit both limits and adds no
// ellipsis then, because the text ends where a sentence ends. Only when not
// even the first sentence fits is that sentence cut, at the last word
// boundary that leaves room for "…": a space or Chinese punctuation in the
// second half of the room if there is one, otherwise any break between two
// Chinese or Japanese characters (written without spaces, so a
// character boundary is the best word boundary known without a dictionary);
// never inside a grapheme cluster such as an emoji ZWJ sequence or a letter
// with a combining mark. Dangling punctuation before the cut is dropped. Should the
// first word alone be longer than the limit (a long URL, say) it is cut at
// the last grapheme boundary instead, the one case where a word is split. If
// maxChars leaves no room for a single grapheme and the ellipsis, the result
// is empty.
func TrimSummary(s string, maxChars, maxSentences int) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	rs := []rune(s)
	spans := sentenceSpans(rs)
	fitsChars := maxChars <= 0 || len(rs) <= maxChars
	fitsSentences := maxSentences <= 0 || len(spans) <= maxSentences
	if fitsChars && fitsSentences {
		return s
	}
	k := 0
	for k < len(spans) && (maxSentences <= 0 || k < maxSentences) && (maxChars <= 0 || spans[k].end <= maxChars) {
		k++
	}
	if k > 0 {
		return strings.TrimSpace(string(rs[:spans[k-1].end]))
	}
	// The first sentence is longer than maxChars (the sentence limit cannot
	// bite before one sentence): cut inside it.
	limit := maxChars - utf8.RuneCountInString(Ellipsis)
	if limit <= 0 {
		return ""
	}
	graphemes := graphemeBoundaries(s, len(rs))
	// Prefer a strong boundary (a space, or after Chinese punctuation) in the
	// second half of the room; failing that, a break between two Chinese
	// characters, which may split a two-character word but never a letter.
	cut := 0
	for p := limit; p > 0 && 2*p >= limit; p-- {
		if graphemes[p] && isWordBoundary(rs, p, true) {
			cut = p
			break
		}
	}
	for p := limit; cut == 0 && p > 0; p-- {
		if graphemes[p] && isWordBoundary(rs, p, false) {
			cut = p
		}
	}
	head := ""
	if cut > 0 {
		head = strings.TrimRightFunc(string(rs[:cut]), func(r rune) bool {
			return unicode.IsSpace(r) || strings.ContainsRune(",;:-–—(/、，；：（", r)
		})
	}
	if head == "" {
		// No usable word boundary: cut at the last whole grapheme.
		for p := limit; p > 0; p-- {
			if graphemes[p] {
				head = string(rs[:p])
				break
			}
		}
	}
	if head == "" {
		return ""
	}
	return head + Ellipsis
}

// isWordBoundary reports whether cutting rs before index p splits no word:
// p sits at white space, after white space or after Chinese or Japanese
// punctuation, or — unless strong is set — between two characters of a
// script written without spaces.
func isWordBoundary(rs []rune, p int, strong bool) bool {
	if p <= 0 || p >= len(rs) {
		return true
	}
	prev, next := rs[p-1], rs[p]
	switch {
	case unicode.IsSpace(prev), unicode.IsSpace(next):
		return true
	case isCJK(prev) && unicode.IsPunct(prev):
		return true
	case !strong && isCJK(prev) && isCJK(next):
		return true
	}
	return false
}

// graphemeBoundaries returns, for every rune offset 0..n of s, whether a
// grapheme cluster starts (or the text ends) there.
func graphemeBoundaries(s string, n int) []bool {
	b := make([]bool, n+1)
	b[0], b[n] = true, true
	at := 0
	state := -1
	for len(s) > 0 {
		var cluster string
		cluster, s, _, state = uniseg.FirstGraphemeClusterInString(s, state)
		at += utf8.RuneCountInString(cluster)
		b[at] = true
	}
	return b
}
