package indexdoc

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Markdown handling. Runbooks and notes are usually Markdown sent as plain
// text. Indexed as they are, their syntax ("##", backticks, list markers)
// ends up in snippets, and once a snippet's white space is collapsed a
// heading or list item runs into the next line as one long "sentence". So
// Markdown text is reduced to plain text first: one block (heading,
// paragraph, list item, quote) per line, each ending in punctuation so the
// block boundary survives as a sentence boundary, with the syntax removed.

var (
	atxHeading = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	fence      = regexp.MustCompile("^ {0,3}(```|~~~)")
	listMarker = regexp.MustCompile(`^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?`)
	thematic   = regexp.MustCompile(`^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$`)
	tableRule  = regexp.MustCompile(`^[ \t]*\|?[ \t]*:?-{2,}:?[ \t]*(?:\|[ \t]*:?-{2,}:?[ \t]*)*\|?[ \t]*$`)
	image      = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	link       = regexp.MustCompile(`\[([^\]]+)\]\([^)]*\)`)
	htmlTag    = regexp.MustCompile(`</?[a-zA-Z][^<>]*>|<!--.*?-->`)
)

// looksLikeMarkdown reports whether text has a Markdown heading or code
// fence, the marks that plain text practically never has at a line start.
func looksLikeMarkdown(text string) bool {
	for line := range strings.SplitSeq(text, "\n") {
		if m := atxHeading.FindStringSubmatch(line); m != nil && m[2] != "" {
			return true
		}
		if fence.MatchString(line) {
			return true
		}
	}
	return false
}

// markdownText reduces Markdown to plain text with one block per line, and
// returns the text of the first level-one heading and of every heading
// below it (which stay in the text too). That heading is left out
// of the text when it repeats title (or title is empty, as the caller then
// uses the heading as the title): a title repeated in the text matches
// every query about the page and crowds the passage that answers it out of
// the snippet.
func markdownText(md, title string) (text, h1 string, headings []string) {
	var (
		out   []string
		block []string // lines of the current paragraph or list item
		code  bool
	)
	flush := func() {
		if len(block) > 0 {
			if s := inlineText(strings.Join(block, " ")); s != "" {
				out = append(out, terminate(s))
			}
			block = block[:0]
		}
	}
	normTitle := strings.ToLower(strings.Join(strings.Fields(title), " "))
	for line := range strings.SplitSeq(md, "\n") {
		line = strings.TrimRight(line, " \t\r")
		if fence.MatchString(line) {
			flush()
			code = !code
			continue
		}
		if code {
			// Code keeps its lines; each is its own block.
			if s := strings.TrimSpace(line); s != "" {
				out = append(out, s)
			}
			continue
		}
		switch {
		case strings.TrimSpace(line) == "":
			flush()
		case thematic.MatchString(line), tableRule.MatchString(line):
			flush()
		case atxHeading.MatchString(line):
			flush()
			m := atxHeading.FindStringSubmatch(line)
			s := inlineText(m[2])
			if s == "" {
				continue
			}
			if len(m[1]) == 1 && h1 == "" {
				h1 = s
				if normTitle == "" || strings.ToLower(strings.Join(strings.Fields(s), " ")) == normTitle {
					continue
				}
			}
			headings = append(headings, s)
			out = append(out, terminate(s))
		case listMarker.MatchString(line):
			flush()
			block = append(block, listMarker.ReplaceAllString(line, ""))
		default:
			s := strings.TrimSpace(line)
			for strings.HasPrefix(s, ">") { // block quotes
				s = strings.TrimSpace(s[1:])
			}
			if strings.HasPrefix(s, "|") || strings.HasSuffix(s, "|") {
				// A table row is a block of its own, cells separated.
				flush()
				cells := strings.FieldsFunc(s, func(r rune) bool { return r == '|' })
				for i := range cells {
					cells[i] = strings.TrimSpace(cells[i])
				}
				block = append(block, strings.Join(slicesNonEmpty(cells), "; "))
				flush()
				continue
			}
			block = append(block, s)
		}
	}
	flush()
	return strings.Join(out, "\n"), h1, headings
}

// inlineText removes inline Markdown: code spans keep their text verbatim
// (placeholders such as <pod> included), links and images keep their label,
// emphasis markers and HTML tags go. Single "_" and "*" stay, since
// identifiers such as POOL_SIZE use them.
func inlineText(s string) string {
	parts := strings.Split(s, "`")
	for i := range parts {
		if i%2 == 1 && i < len(parts)-1 {
			continue // inside a code span
		}
		p := image.ReplaceAllString(parts[i], "$1")
		p = link.ReplaceAllString(p, "$1")
		p = htmlTag.ReplaceAllString(p, "")
		parts[i] = strings.NewReplacer("**", "", "__", "").Replace(p)
	}
	return strings.Join(strings.Fields(strings.Join(parts, "")), " ")
}

// terminate ends a block with a full stop unless it already ends a
// sentence or introduces what follows (":"); a trailing ";" (often the end
// of a code span) does not end a sentence.
func terminate(s string) string {
	r, _ := utf8.DecodeLastRuneInString(strings.TrimRight(s, `"')]}»”’`))
	if strings.ContainsRune(".!?…:。！？", r) {
		return s
	}
	if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsPunct(r) || unicode.IsSymbol(r) {
		return s + "."
	}
	return s
}

func slicesNonEmpty(ss []string) []string {
	out := ss[:0]
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
