package research

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// stopwords are words that carry no subject: question words, articles,
// auxiliaries and prepositions. They split key phrases and are left out of
// search queries.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the and or but nor not no of in on at to for from by with without
		about into onto over under between among through during before after above below up down out off
		is are was were be been being am do does did doing done have has had having will would shall should
		can could may might must it its it's this that these those there here what which who whom whose
		when where why how whether if then than so as such very too also just only own same other some any
		each every all both few more most much many i me my we our you your he him his she her they them their
		vs versus via per etc please tell explain describe research researching find give show list
		compare comparison overview summary summarize summarise regarding concerning`) {
		m[w] = true
	}
	return m
}()

// words splits s into lower-case words: runs of letters and digits, keeping
// inner hyphens, dots, apostrophes, '+' and '#', so "gpt-4", "node.js", "c++" and "c#"
// stay whole.
func words(s string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		w := strings.TrimRight(b.String(), "-.'")
		if w != "" {
			out = append(out, w)
		}
		b.Reset()
	}
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		case (r == '-' || r == '.' || r == '\'') && b.Len() > 0:
			b.WriteRune(r)
		case (r == '+' || r == '#') && b.Len() > 0:
			b.WriteRune(r)
		default:
			flush()
		}
	}
	flush()
	return out
}

// stem folds simple English inflections so "limitations" matches
// "limitation" and "works" matches "work". It is deliberately light: the
// terms are matched, not ranked.
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 4 && strings.HasSuffix(w, "ing"):
		w = w[:len(w)-3]
		// "logging" is about a log, "running" about a run; "filling"
		// and "missing" keep their double letter.
		if n := len(w); n >= 3 && w[n-1] == w[n-2] && !strings.ContainsRune("lsz", rune(w[n-1])) {
			w = w[:n-1]
		}
		return w
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		return w[:len(w)-1]
	}
	return w
}

// contentTerms returns the stemmed words of s that are not stopwords, in
// order, without repeats.
func contentTerms(s string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range words(s) {
		if stopwords[w] {
			continue
		}
		t := stem(w)
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// termSet is the set of stemmed words of s, stopwords included (cues such
// as "how" are matched too).
func termSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range words(s) {
		m[stem(w)] = true
	}
	return m
}

// keyPhrases splits s at stopwords and punctuation into phrases of content
// words, in order, without repeats: "impact of large language models on
// software testing" gives "impact", "large language models", "software
// testing".
func keyPhrases(s string) []string {
	var (
		out  []string
		cur  []string
		seen = map[string]bool{}
	)
	flush := func() {
		if len(cur) > 0 {
			p := strings.Join(cur, " ")
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
			cur = nil
		}
	}
	for _, tok := range strings.FieldsFunc(s, unicode.IsSpace) {
		if strings.Contains(tok, "@") {
			// An e-mail address or a handle is not a key phrase.
			flush()
			continue
		}
		ws := words(tok)
		// Punctuation attached to a token (a comma, a question mark) ends
		// the phrase after it.
		ends := strings.ContainsAny(strings.TrimLeft(tok, "\"'(["), ",;:?!()[]\"")
		for _, w := range ws {
			if stopwords[w] {
				flush()
				continue
			}
			cur = append(cur, w)
		}
		if ends || len(ws) == 0 {
			flush()
		}
	}
	flush()
	return out
}

// searchQuery turns a sub-question into what a search box wants: its
// content words, at most ten. E-mail addresses and chat handles a topic
// may carry are left out: they answer nothing and would go to the search
// providers.
func searchQuery(q string) string {
	q = handleRe.ReplaceAllString(emailRe.ReplaceAllString(q, " "), "$1 ")
	var ws []string
	for _, w := range words(q) {
		if !stopwords[w] {
			ws = append(ws, w)
		}
		if len(ws) == 10 {
			break
		}
	}
	if len(ws) == 0 {
		return strings.TrimSpace(q)
	}
	return strings.Join(ws, " ")
}

// truncateRunes cuts s to at most n characters, at a word boundary in the
// last fifth when there is one, ending with "…" when cut.
func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	rs := []rune(s)[:n-1]
	cut := len(rs)
	for i := len(rs) - 1; i >= len(rs)*4/5; i-- {
		if unicode.IsSpace(rs[i]) {
			cut = i
			break
		}
	}
	return strings.TrimRightFunc(string(rs[:cut]), unicode.IsSpace) + "…"
}

// urlKey is the identity of a source URL for de-duplication: scheme and
// host lower-cased, "www." dropped, the fragment and a trailing slash
// ignored.
func urlKey(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return strings.ToLower(strings.TrimSpace(raw))
	}
	host := strings.TrimPrefix(strings.ToLower(u.Host), "www.")
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	key := strings.ToLower(u.Scheme) + "://" + host + path
	if u.RawQuery != "" {
		key += "?" + u.RawQuery
	}
	return key
}

// domainOf is a URL's host without "www.", or "" when it has none.
func domainOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
}

// digest shortens a document to at most n characters for a source's
// snippet: whole when it fits; otherwise the first sentence of every block
// (a line: a heading, a paragraph, a list item), then the blocks' further
// sentences in order while they fit, all in the document's order. A
// runbook keeps its first diagnostic steps and its mitigations, not only
// its opening.
func digest(text string, n int) string {
	text = strings.TrimSpace(text)
	if utf8.RuneCountInString(text) <= n {
		return strings.Join(strings.Fields(text), " ")
	}
	type piece struct {
		text  string
		first bool
	}
	var pieces []piece
	for line := range strings.SplitSeq(text, "\n") {
		for i, s := range sentences(strings.TrimSpace(line)) {
			pieces = append(pieces, piece{s, i == 0})
		}
	}
	keep := make([]bool, len(pieces))
	used := 0
	for pass := range 2 {
		for i, p := range pieces {
			if keep[i] || (pass == 0 && !p.first) {
				continue
			}
			if c := utf8.RuneCountInString(p.text) + 1; used+c <= n {
				keep[i] = true
				used += c
			}
		}
	}
	var out []string
	for i, p := range pieces {
		if keep[i] {
			out = append(out, p.text)
		}
	}
	if len(out) == 0 {
		return truncateRunes(strings.Join(strings.Fields(text), " "), n)
	}
	return strings.Join(out, " ")
}
