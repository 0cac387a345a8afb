package answer

import (
	"regexp"
	"strconv"
	"strings"
)

// A language model cites the chunks it was given as [n], n counting them
// from 1, and is not to be trusted with it: it invents numbers ([7] with
// three chunks, [0]), repeats them ([2][2]) and writes brackets that are
// not citations at all (x[1] in a code block). [Cite] keeps what names a
// chunk and renumbers it; [Citer] does the same to a streamed answer.

// markerRE is a group of citation markers as models write them: "[1]",
// "[1][3]", "[1, 3]", with the spaces before the group. Grounding reads
// the same forms.
var markerRE = regexp.MustCompile(`[ \t]*(?:\[\s*\d{1,4}(?:\s*,\s*\d{1,4})*\s*\])+`)

// markerNumberRE finds the numbers in a marker group.
var markerNumberRE = regexp.MustCompile(`\d+`)

// Citations is an answer's text with its citation markers checked.
type Citations struct {
	// Text is the answer with every marker outside code naming a chunk,
	// renumbered [1], [2]… in order of first use; markers that named no
	// chunk are gone.
	Text string
	// Cited lists the chunks the markers name, as 0-based indexes into
	// the chunks given, in the order of their new numbers.
	Cited []int
	// Dropped counts the numbers removed: outside 1..n, or repeated
	// within one group.
	Dropped int
}

// Cite checks the [n] markers of text written about n chunks: a number in
// 1..n is a citation of chunk n-1, renumbered in order of first use (so
// the first chunk the answer cites is [1], and the answer's sources can
// be exactly the cited chunks in that order); other numbers, and repeats
// within one group ("[2][2]"), are removed together with the spaces before
// them. Text in code (fenced with ``` or inline in `backticks`) is left
// as it is: there, brackets index arrays. The result's text is trimmed.
func Cite(text string, n int) Citations {
	var c citeState
	out := c.rewrite(text, n)
	return Citations{Text: strings.TrimSpace(out), Cited: c.cited, Dropped: c.dropped}
}

// citeState is the numbering of one rewrite, left to right.
type citeState struct {
	num     map[int]int // chunk number as written → new number
	cited   []int
	dropped int
	// openInline is the offset of an inline-code backtick whose line
	// has not ended yet (-1 if none): whether it opens code is unknown.
	openInline int
}

// rewrite returns text with the markers outside code rewritten.
func (c *citeState) rewrite(text string, n int) string {
	c.num, c.cited, c.dropped, c.openInline = map[int]int{}, nil, 0, -1
	var b strings.Builder
	prose := 0 // start of the prose not yet written
	flush := func(end int) {
		b.WriteString(c.markers(text[prose:end], n))
	}
	for i := 0; i < len(text); {
		if text[i] != '`' {
			i++
			continue
		}
		if strings.HasPrefix(text[i:], "```") {
			flush(i)
			end := strings.Index(text[i+3:], "```")
			if end < 0 {
				// An unclosed fence is code to the end.
				b.WriteString(text[i:])
				return b.String()
			}
			end += i + 6
			b.WriteString(text[i:end])
			i, prose = end, end
			continue
		}
		line := text[i+1:]
		if nl := strings.IndexByte(line, '\n'); nl >= 0 {
			line = line[:nl]
		}
		closing := strings.IndexByte(line, '`')
		if closing < 0 {
			if !strings.Contains(text[i+1:], "\n") {
				c.openInline = i
			}
			// No closing backtick on its line: a literal backtick.
			i++
			continue
		}
		flush(i)
		end := i + 1 + closing + 1
		b.WriteString(text[i:end])
		i, prose = end, end
	}
	flush(len(text))
	return b.String()
}

// markers rewrites the marker groups of a piece of prose.
func (c *citeState) markers(prose string, n int) string {
	return markerRE.ReplaceAllStringFunc(prose, func(group string) string {
		var (
			b    strings.Builder
			seen = map[int]bool{}
		)
		for _, ds := range markerNumberRE.FindAllString(group, -1) {
			k, _ := strconv.Atoi(ds)
			if k < 1 || k > n || seen[k] {
				c.dropped++
				continue
			}
			seen[k] = true
			m, ok := c.num[k]
			if !ok {
				c.cited = append(c.cited, k-1)
				m = len(c.cited)
				c.num[k] = m
			}
			b.WriteString("[" + strconv.Itoa(m) + "]")
		}
		if b.Len() == 0 {
			return ""
		}
		return " " + b.String()
	})
}

// tailRE is the end of streamed text that later text may still change: a
// marker group (complete or not) that more markers may join, white space
// a removed marker would take with it, backticks that may open a fence.
var tailRE = regexp.MustCompile("(?:[ \\t]*\\[[\\s\\d,]*\\]?)*[\\s`]*$")

// Citer applies [Cite] to an answer as it streams: Write takes the next
// piece of the model's text and returns the rewritten text that can be
// passed on now; text whose rewriting may still change (a marker being
// written, white space before one, an open inline code span) is held
// back until it cannot. The pieces returned by Write and Finish add up to
// Cite's Text for the whole answer.
type Citer struct {
	n       int
	raw     strings.Builder
	emitted int // bytes of the rewritten, left-trimmed text passed on
}

// NewCiter returns a Citer for an answer written about n chunks.
func NewCiter(n int) *Citer { return &Citer{n: n} }

// Write adds text and returns what can be passed on.
func (c *Citer) Write(text string) string {
	c.raw.WriteString(text)
	raw := c.raw.String()
	cut := len(raw)
	for {
		next := tailRE.FindStringIndex(raw[:cut])[0]
		var st citeState
		st.rewrite(raw[:next], c.n)
		if st.openInline >= 0 {
			next = st.openInline
		}
		if next == cut {
			break
		}
		cut = next
	}
	var st citeState
	out := strings.TrimLeft(st.rewrite(raw[:cut], c.n), " \t\r\n")
	return c.pass(out)
}

// Finish rewrites the whole answer and returns what was not passed on
// yet, with the result for the whole answer.
func (c *Citer) Finish() (string, Citations) {
	all := Cite(c.raw.String(), c.n)
	return c.pass(all.Text), all
}

// pass returns the part of out not passed on yet.
func (c *Citer) pass(out string) string {
	if len(out) <= c.emitted {
		return ""
	}
	piece := out[c.emitted:]
	c.emitted = len(out)
	return piece
}
