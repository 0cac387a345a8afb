// Package chunker turns documents (HTML, Markdown or plain text) into the
// chunks the rag service indexes: pieces of readable text that stay inside
// one section, each labelled with the headings above it.
//
// Size and overlap. A chunk aims at [DefaultTargetSize] (1,000) characters
// and never exceeds [DefaultMaxSize] (1,400) unless a single word is longer.
// About 1,000 characters is 150–250 tokens: one idea of a reference text (a
// spec subsection is typically one to three such chunks), so a query's best
// match is focused and an extractive answer quotes something on topic,
// while still carrying enough words for BM25 and the embedder to judge it;
// five of them make a ~1,200-token prompt for a generating model. The gap
// between target and maximum lets a chunk end at a paragraph or code block
// instead of cutting one. Consecutive chunks of one section overlap by up
// to [DefaultOverlap] (150 characters, ~15 %), taken as whole sentences,
// so a statement that straddles a boundary is found whole in at least one
// chunk; sections never overlap or share a chunk, because a heading change
// is a topic change.
//
// Code blocks (<pre>, fenced Markdown) are kept whole and fenced with ```
// in the chunk text; one is split, at blank lines where possible, only when
// it is longer than the maximum on its own.
package chunker

import (
	"fmt"
	"strings"
)

// Defaults for [Options]; the package comment explains the choice.
const (
	DefaultTargetSize = 1000
	DefaultMaxSize    = 1400
	DefaultOverlap    = 150
)

// Chunk is one retrievable piece of a document.
type Chunk struct {
	// Text is the readable text: paragraphs separated by blank lines, code
	// blocks fenced with ```.
	Text string
	// HeadingPath lists the headings the chunk sits under, outermost first;
	// empty for text before the first heading or for plain text.
	HeadingPath []string
	// Index is the chunk's position in its document, from 0.
	Index int
}

// Options tune chunk sizes, in characters (bytes of UTF-8). Zero fields
// take the defaults.
type Options struct {
	// TargetSize is the size at which a chunk is closed.
	TargetSize int
	// MaxSize is the hard upper bound of a chunk.
	MaxSize int
	// Overlap is the most text repeated from the end of one chunk at the
	// start of the next chunk of the same section; negative disables it.
	Overlap int
}

func (o Options) withDefaults() Options {
	if o.TargetSize <= 0 {
		o.TargetSize = DefaultTargetSize
	}
	if o.MaxSize <= 0 {
		o.MaxSize = o.TargetSize * 7 / 5
	}
	if o.MaxSize < o.TargetSize {
		o.MaxSize = o.TargetSize
	}
	switch {
	case o.Overlap == 0:
		o.Overlap = min(DefaultOverlap, o.TargetSize/4)
	case o.Overlap < 0:
		o.Overlap = 0
	}
	return o
}

// Format names the markup of a document's content.
type Format int

// The formats [Split] understands.
const (
	FormatText Format = iota
	FormatHTML
	FormatMarkdown
)

// String returns the format's lowercase name.
func (f Format) String() string {
	switch f {
	case FormatText:
		return "text"
	case FormatHTML:
		return "html"
	case FormatMarkdown:
		return "markdown"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// Split chunks src according to its format.
func Split(f Format, src string, opts Options) ([]Chunk, error) {
	switch f {
	case FormatText:
		return Text(src, opts), nil
	case FormatHTML:
		return HTML(src, opts)
	case FormatMarkdown:
		return Markdown(src, opts), nil
	}
	return nil, fmt.Errorf("chunker: unknown format %v", f)
}

// Text chunks plain text: paragraphs are separated by blank lines and
// there are no headings.
func Text(src string, opts Options) []Chunk {
	var blocks []block
	for _, para := range splitParagraphs(src) {
		blocks = append(blocks, block{kind: kindProse, text: strings.Join(strings.Fields(para), " ")})
	}
	return pack(blocks, opts.withDefaults())
}

// splitParagraphs splits text at blank lines.
func splitParagraphs(src string) []string {
	src = strings.ReplaceAll(src, "\r\n", "\n")
	var paras []string
	var cur []string
	for line := range strings.Lines(src) {
		if strings.TrimSpace(line) == "" {
			if len(cur) > 0 {
				paras = append(paras, strings.Join(cur, ""))
				cur = cur[:0]
			}
			continue
		}
		cur = append(cur, line)
	}
	if len(cur) > 0 {
		paras = append(paras, strings.Join(cur, ""))
	}
	return paras
}

type blockKind int

const (
	kindHeading blockKind = iota
	kindProse
	kindCode
)

// block is the format-independent document model: a flat sequence of
// headings, prose paragraphs and code blocks.
type block struct {
	kind  blockKind
	level int // heading level, 1..6
	text  string
}

// unit is a piece of a section that is never split further when packing.
type unit struct {
	text string
	code bool
}

// pack groups blocks into chunks: a heading closes the current section,
// and within a section units are added until the target size is reached.
func pack(blocks []block, o Options) []Chunk {
	var (
		chunks  []Chunk
		path    []string
		levels  []int
		section []unit
	)
	flushSection := func() {
		for _, text := range packSection(section, o) {
			chunks = append(chunks, Chunk{Text: text, HeadingPath: path, Index: len(chunks)})
		}
		section = nil
	}
	for _, b := range blocks {
		switch b.kind {
		case kindHeading:
			flushSection()
			for len(levels) > 0 && levels[len(levels)-1] >= b.level {
				levels = levels[:len(levels)-1]
			}
			levels = append(levels, b.level)
			// A fresh slice per section: chunks keep the path they were
			// made under.
			path = append(path[:len(levels)-1:len(levels)-1], b.text)
		case kindProse:
			if t := strings.TrimSpace(b.text); t != "" {
				section = append(section, splitLong(t, o.MaxSize)...)
			}
		case kindCode:
			if strings.TrimSpace(b.text) != "" {
				section = append(section, splitCode(b.text, o.MaxSize)...)
			}
		}
	}
	flushSection()
	return chunks
}

const sep = "\n\n"

// packSection returns the chunk texts of one section.
func packSection(units []unit, o Options) []string {
	var (
		out     []string
		parts   []string
		size    int
		seeded  bool // parts holds only overlap carried from the last chunk
		lastPro string
	)
	emit := func(carry bool) {
		if len(parts) == 0 || seeded {
			return
		}
		out = append(out, strings.Join(parts, sep))
		parts, size, seeded = parts[:0], 0, false
		if carry && lastPro != "" {
			if tail := overlapTail(lastPro, o.Overlap); tail != "" {
				parts, size, seeded = append(parts, tail), len(tail), true
			}
		}
		lastPro = ""
	}
	remaining := 0
	for _, u := range units {
		remaining += len(u.text) + len(sep)
	}
	for _, u := range units {
		remaining -= len(u.text) + len(sep)
		if size > 0 && size+len(sep)+len(u.text) > o.MaxSize {
			if seeded {
				// The overlap would push the unit over the limit: drop the
				// overlap rather than emit a chunk made only of it.
				parts, size, seeded = parts[:0], 0, false
			} else {
				emit(true)
			}
			if size > 0 && size+len(sep)+len(u.text) > o.MaxSize {
				parts, size, seeded = parts[:0], 0, false
			}
		}
		if size > 0 {
			size += len(sep)
		}
		parts = append(parts, u.text)
		size += len(u.text)
		seeded = false
		if u.code {
			lastPro = ""
		} else {
			lastPro = u.text
		}
		// Close at the target, unless the rest of the section fits in
		// this chunk anyway: a tiny last chunk would be all overlap and
		// no substance.
		if size >= o.TargetSize && size+remaining > o.MaxSize {
			emit(true)
		}
	}
	emit(false)
	return out
}

// overlapTail returns the trailing whole sentences of text that fit in n
// characters, or "" when even the last sentence is longer.
func overlapTail(text string, n int) string {
	if n <= 0 {
		return ""
	}
	sents := Sentences(text)
	size := 0
	i := len(sents)
	for i > 0 {
		l := len(sents[i-1])
		if size > 0 {
			l++
		}
		if size+l > n {
			break
		}
		size += l
		i--
	}
	// Never carry the whole unit over: that is duplication, not overlap.
	if i == len(sents) || i == 0 {
		return ""
	}
	return strings.Join(sents[i:], " ")
}

// splitLong breaks a prose paragraph longer than max into units at
// sentence boundaries, and a sentence longer than max at word boundaries.
func splitLong(text string, maxSize int) []unit {
	if len(text) <= maxSize {
		return []unit{{text: text}}
	}
	var (
		out []unit
		cur strings.Builder
	)
	add := func(s string) {
		if cur.Len() > 0 && cur.Len()+1+len(s) > maxSize {
			out = append(out, unit{text: cur.String()})
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(s)
	}
	for _, s := range Sentences(text) {
		if len(s) <= maxSize {
			add(s)
			continue
		}
		for _, w := range strings.Fields(s) {
			add(w)
		}
	}
	if cur.Len() > 0 {
		out = append(out, unit{text: cur.String()})
	}
	return out
}

// splitCode fences a code block, cutting it into pieces no longer than max
// at blank lines where possible and at line ends otherwise.
func splitCode(code string, maxSize int) []unit {
	code = strings.Trim(code, "\n")
	const fence = "```\n"
	const overhead = len(fence) + len("\n```")
	if len(code)+overhead <= maxSize {
		return []unit{{text: fence + code + "\n```", code: true}}
	}
	var (
		out   []unit
		lines = strings.Split(code, "\n")
		start int
	)
	for start < len(lines) {
		size, end, lastBlank := 0, start, -1
		for end < len(lines) && (end == start || size+len(lines[end])+1+overhead <= maxSize) {
			if strings.TrimSpace(lines[end]) == "" && end > start {
				lastBlank = end
			}
			size += len(lines[end]) + 1
			end++
		}
		if end < len(lines) && lastBlank > start {
			end = lastBlank
		}
		piece := strings.Trim(strings.Join(lines[start:end], "\n"), "\n")
		if piece != "" {
			out = append(out, unit{text: fence + piece + "\n```", code: true})
		}
		start = end
	}
	return out
}

// Sentences splits prose into sentences: a sentence ends at '.', '!' or
// '?' (optionally followed by closing quotes or brackets) followed by white
// space and a character that is not a lowercase letter. The lowercase rule
// keeps "e.g. this" and "i.e. that" whole. Fenced code is returned as one
// piece.
func Sentences(text string) []string {
	var out []string
	start := 0
	n := len(text)
	for i := 0; i < n; i++ {
		c := text[i]
		if c != '.' && c != '!' && c != '?' {
			continue
		}
		j := i + 1
		for j < n && strings.IndexByte(`"')]`, text[j]) >= 0 {
			j++
		}
		if j >= n || (text[j] != ' ' && text[j] != '\n' && text[j] != '\t') {
			continue
		}
		k := j
		for k < n && (text[k] == ' ' || text[k] == '\n' || text[k] == '\t') {
			k++
		}
		if k < n && 'a' <= text[k] && text[k] <= 'z' {
			continue
		}
		if s := strings.TrimSpace(text[start:j]); s != "" {
			out = append(out, s)
		}
		start = k
		i = k - 1
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// Prose returns the prose paragraphs of a chunk's text, in order, leaving
// out fenced code blocks (which may contain blank lines of their own).
func Prose(text string) []string {
	var (
		out    []string
		cur    []string
		inCode bool
	)
	flush := func() {
		if p := strings.TrimSpace(strings.Join(cur, "\n")); p != "" {
			out = append(out, p)
		}
		cur = cur[:0]
	}
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\n")
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			flush()
			inCode = !inCode
			continue
		}
		switch {
		case inCode:
		case strings.TrimSpace(line) == "":
			flush()
		default:
			cur = append(cur, line)
		}
	}
	if !inCode {
		flush()
	}
	return out
}

// Title guesses a document's title from its content: the HTML <title> or
// first <h1>, or the first Markdown heading; "" for plain text or when
// there is none.
func Title(f Format, src string) string {
	switch f {
	case FormatHTML:
		return HTMLTitle(src)
	case FormatMarkdown:
		for _, b := range markdownBlocks(src) {
			if b.kind == kindHeading {
				return b.text
			}
		}
	}
	return ""
}
