package extractive

import (
	"strings"
	"unicode"
)

// stopWords are English function words that carry no topic. Dropping them
// keeps BM25 from rewarding sentences for matching "the" and "is", and keeps
// the redundancy measure about content.
var stopWords = map[string]bool{
	"a": true, "about": true, "above": true, "after": true, "again": true, "all": true,
	"also": true, "am": true, "an": true, "and": true, "any": true, "are": true,
	"as": true, "at": true, "be": true, "because": true, "been": true, "before": true,
	"being": true, "between": true, "both": true, "but": true, "by": true, "can": true,
	"could": true, "did": true, "do": true, "does": true, "doing": true, "done": true,
	"during": true, "each": true, "either": true, "etc": true, "for": true, "from": true,
	"further": true, "had": true, "has": true, "have": true, "having": true, "he": true,
	"her": true, "here": true, "hers": true, "him": true, "his": true, "how": true,
	"however": true, "i": true, "if": true, "in": true, "into": true, "is": true,
	"it": true, "its": true, "itself": true, "just": true, "may": true, "me": true,
	"might": true, "more": true, "most": true, "must": true, "my": true, "of": true,
	"on": true, "once": true, "one": true, "only": true, "or": true, "other": true,
	"our": true, "ours": true, "out": true, "over": true, "own": true, "same": true,
	"she": true, "should": true, "so": true, "some": true, "such": true, "than": true,
	"that": true, "the": true, "their": true, "theirs": true, "them": true, "then": true,
	"there": true, "these": true, "they": true, "this": true, "those": true, "through": true,
	"thus": true, "to": true, "too": true, "under": true, "until": true, "up": true,
	"us": true, "use": true, "used": true, "using": true, "very": true, "via": true,
	"was": true, "we": true, "were": true, "what": true, "when": true, "where": true,
	"whether": true, "which": true, "while": true, "who": true, "whom": true, "why": true,
	"will": true, "with": true, "within": true, "would": true, "yet": true, "you": true,
	"your": true, "yours": true,
}

// tokenize turns text into index terms: lower-cased, stemmed words of
// letters and digits, and overlapping character bigrams for runs of
// Chinese or Japanese script, which has no spaces to split on (bigrams are
// the usual dictionary-free choice and match most two-character words).
func tokenize(s string) []string {
	var (
		out   []string
		word  []rune
		cjk   []rune
		lower []rune // scratch buffer for lower-casing
	)
	addWord := func(rs []rune) {
		lower = lower[:0]
		for _, r := range rs {
			lower = append(lower, unicode.ToLower(r))
		}
		w := string(lower)
		if len(w) >= 2 && !stopWords[w] {
			out = append(out, stem(w))
		}
	}
	flushWord := func() {
		if len(word) == 0 {
			return
		}
		addWord(word)
		// Identifiers written in camel case (KubePodCrashLooping,
		// CrashLoopBackOff, OOMKilled) also index their parts, so the alert
		// name finds prose about "pod crash looping" and the reverse.
		if isCamelCase(word) {
			forCamelParts(word, addWord)
		}
		word = word[:0]
	}
	flushCJK := func() {
		switch len(cjk) {
		case 0:
			return
		case 1:
			out = append(out, string(cjk))
		default:
			for i := 0; i+1 < len(cjk); i++ {
				out = append(out, string(cjk[i:i+2]))
			}
		}
		cjk = cjk[:0]
	}
	for _, r := range s {
		switch {
		case isCJK(r) && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			flushWord()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r) || (unicode.IsMark(r) && len(word) > 0):
			flushCJK()
			word = append(word, r)
		default:
			flushWord()
			flushCJK()
		}
	}
	flushWord()
	flushCJK()
	return out
}

// stem strips the commonest English inflections so that "restarts",
// "restarted" and "restarting" meet. It is deliberately crude: the same
// function runs over the query and the evidence, so consistency matters more
// than linguistic accuracy, and a conservative stemmer conflates few
// unrelated words.
func stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 4 && strings.HasSuffix(w, "sses"):
		return w[:n-2]
	case n > 5 && strings.HasSuffix(w, "ing"):
		return w[:n-3]
	case n > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed"):
		return w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:n-1]
	}
	return w
}

// isCamelCase reports whether w has an upper-case letter after another
// letter, that is, whether forCamelParts would split it.
func isCamelCase(w []rune) bool {
	for i := 1; i < len(w); i++ {
		if unicode.IsUpper(w[i]) && unicode.IsLetter(w[i-1]) {
			return true
		}
	}
	return false
}

// forCamelParts calls f for each part of a camel-case word, splitting at
// each lower-to-upper change and before the last capital of an upper-case
// run followed by lower case ("OOMKilled" → "OOM", "Killed").
func forCamelParts(w []rune, f func([]rune)) {
	start := 0
	for i := 1; i < len(w); i++ {
		lowerToUpper := unicode.IsLower(w[i-1]) && unicode.IsUpper(w[i])
		acronymEnd := i+1 < len(w) && unicode.IsUpper(w[i-1]) && unicode.IsUpper(w[i]) && unicode.IsLower(w[i+1])
		if lowerToUpper || acronymEnd {
			f(w[start:i])
			start = i
		}
	}
	if start > 0 {
		f(w[start:])
	}
}
