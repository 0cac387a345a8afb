package extractive

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// span is a half-open range of rune offsets.
type span struct{ start, end int }

// nonTerminal lists abbreviations (lower case, without the final period)
// after which a period does not end a sentence even when a capital follows:
// "e.g. Postgres", "see Fig. 3", "Dr. Smith".
var nonTerminal = map[string]bool{
	"e.g": true, "i.e": true, "eg": true, "ie": true, "vs": true, "cf": true,
	"approx": true, "incl": true, "excl": true, "fig": true, "figs": true,
	"no": true, "nr": true, "nos": true, "dr": true, "mr": true, "mrs": true,
	"ms": true, "prof": true, "st": true, "jr": true, "sr": true, "sec": true,
	"ch": true, "vol": true, "p": true, "pp": true, "ref": true, "resp": true,
	"u.s": true, "a.k.a": true, "aka": true, "min": true, "max": true,
	"avg": true, "ver": true, "v": true, "ca": true, "esp": true, "dept": true,
	"z.b": true, "d.h": true, "bzw": true, "usw": true, "ggf": true,
}

// closers may follow a sentence terminator and still belong to the sentence.
const closers = "\"'”’)]}»」』）】"

// isCJKTerminator reports whether r ends a sentence without needing a space
// after it, as full-width punctuation does in Chinese and Japanese.
func isCJKTerminator(r rune) bool {
	switch r {
	case '。', '！', '？', '｡', '︒':
		return true
	}
	return false
}

func isTerminator(r rune) bool {
	switch r {
	case '.', '!', '?', '…', '‼', '⁇', '⁈', '⁉':
		return true
	}
	return isCJKTerminator(r)
}

// isCJK reports whether r is written without spaces between words, so that
// any boundary between two such characters is also a word boundary.
func isCJK(r rune) bool {
	if r < 0x2e80 {
		// Below the CJK blocks; the common case, answered without tables.
		return false
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || (r >= 0x3000 && r <= 0x303f) || (r >= 0xff00 && r <= 0xffef)
}

// sentenceSpans splits rs into sentences and returns their spans, trimmed of
// surrounding white space. Newlines end a sentence too: callers that want
// hard-wrapped lines joined do that first (see paragraphs).
func sentenceSpans(rs []rune) []span {
	var out []span
	start := 0
	emit := func(end int) {
		s, e := start, end
		for s < e && unicode.IsSpace(rs[s]) {
			s++
		}
		for e > s && unicode.IsSpace(rs[e-1]) {
			e--
		}
		if s < e {
			out = append(out, span{s, e})
		}
		start = end
	}
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if r == '\n' {
			emit(i)
			continue
		}
		if !isTerminator(r) {
			continue
		}
		// A run of terminators ("?!", "...") and closing quotes or brackets
		// belongs to the sentence it ends.
		j := i + 1
		for j < len(rs) && (isTerminator(rs[j]) || strings.ContainsRune(closers, rs[j])) {
			j++
		}
		if isCJKTerminator(r) {
			emit(j)
			i = j - 1
			continue
		}
		// Latin terminators end a sentence only before white space (so
		// "5.2", "example.com/a.b" and "node.js" stay whole) or at the end.
		if j < len(rs) && !unicode.IsSpace(rs[j]) {
			i = j - 1
			continue
		}
		k := j
		for k < len(rs) && unicode.IsSpace(rs[k]) && rs[k] != '\n' {
			k++
		}
		if r == '.' && j == i+1 && !endsSentenceAfterPeriod(rs, i, k) {
			continue
		}
		// "…", "?" and "!" followed by an ordinary lower-case word are
		// mid-sentence: "(10s, 20s, …) capped at five minutes".
		if r != '.' && k < len(rs) && rs[k] != '\n' && isPlainLowerWord(rs[k:]) {
			i = j - 1
			continue
		}
		emit(j)
		i = j - 1
	}
	emit(len(rs))
	return out
}

// endsSentenceAfterPeriod decides for the period at rs[i], followed by
// white space up to rs[k], whether it ends a sentence or closes an
// abbreviation ("e.g. Postgres") or an initial ("J. Smith").
func endsSentenceAfterPeriod(rs []rune, i, k int) bool {
	w := i
	for w > 0 && !unicode.IsSpace(rs[w-1]) && !strings.ContainsRune("(\"'“‘[", rs[w-1]) {
		w--
	}
	word := strings.ToLower(string(rs[w:i]))
	if nonTerminal[word] {
		return false
	}
	// A single capital letter is an initial.
	if utf8.RuneCountInString(word) == 1 && unicode.IsUpper(rs[w]) {
		return false
	}
	// An unknown short abbreviation ("a.m. today", "ca. five"): a very
	// short or dotted word followed by an ordinary lower-case word. Longer
	// words end sentences even then, because sloppy text ("disk is full.
	// please check") and identifiers ("months. max_connections") start
	// sentences in lower case.
	if k < len(rs) && rs[k] != '\n' && isPlainLowerWord(rs[k:]) &&
		(utf8.RuneCountInString(word) <= 3 || strings.Contains(word, ".")) {
		return false
	}
	return true
}

// isPlainLowerWord reports whether rs starts with a word of lower-case
// letters only (not an identifier such as max_connections or a path).
func isPlainLowerWord(rs []rune) bool {
	n := 0
	for _, r := range rs {
		if unicode.IsSpace(r) || strings.ContainsRune(",;:)", r) {
			break
		}
		if !unicode.IsLower(r) {
			return false
		}
		n++
	}
	return n > 0
}

// paragraphs splits evidence text into blocks that sentence splitting can
// treat independently: blank lines, list items and headings start a new block,
// while a hard-wrapped line is joined to the one before it. List and heading
// markers are removed because they are layout, not content.
func paragraphs(text string) []string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	var (
		out  []string
		cur  strings.Builder
		last string // the previous line of cur, trimmed
	)
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
		}
		cur.Reset()
		last = ""
	}
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			flush()
			continue
		}
		body, marked := stripMarker(line)
		if body == "" {
			continue
		}
		// Join a wrapped line only when the previous one looks like running
		// text: long enough not to be a heading and not introducing a list.
		join := !marked && cur.Len() > 0 && utf8.RuneCountInString(last) >= 40 &&
			!strings.HasSuffix(last, ":") && !strings.HasSuffix(last, "：")
		if !join {
			flush()
		} else {
			prev, _ := utf8.DecodeLastRuneInString(last)
			next, _ := utf8.DecodeRuneInString(body)
			if !(isCJK(prev) && isCJK(next)) {
				cur.WriteByte(' ')
			}
		}
		cur.WriteString(body)
		last = body
	}
	flush()
	return out
}

// stripMarker removes a leading list bullet, number or Markdown heading
// marker and reports whether there was one.
func stripMarker(line string) (string, bool) {
	for _, m := range []string{"- ", "* ", "+ ", "• ", "· ", "‣ ", "◦ ", "– ", "— ", "> "} {
		if strings.HasPrefix(line, m) {
			return strings.TrimSpace(line[len(m):]), true
		}
	}
	if strings.HasPrefix(line, "#") {
		t := strings.TrimLeft(line, "#")
		if t == "" || t[0] == ' ' {
			return strings.TrimSpace(t), true
		}
	}
	// "1. ", "2) ", "a) "
	i := 0
	for i < len(line) && i < 3 && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	if i == 0 && len(line) > 1 && line[0] >= 'a' && line[0] <= 'z' && line[1] == ')' {
		i = 1
	}
	if i > 0 && i+1 < len(line) && (line[i] == '.' || line[i] == ')') && line[i+1] == ' ' {
		return strings.TrimSpace(line[i+2:]), true
	}
	return line, false
}

// splitSentences returns the sentences of evidence text with white space
// collapsed to single spaces.
func splitSentences(text string) []string {
	var out []string
	for _, p := range paragraphs(text) {
		rs := []rune(p)
		for _, sp := range sentenceSpans(rs) {
			out = append(out, strings.Join(strings.Fields(string(rs[sp.start:sp.end])), " "))
		}
	}
	return out
}
