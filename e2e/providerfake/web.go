// Package providerfake holds local stand-ins for the providers groundcrew
// calls (Gemini, Groq, Exa), speaking each one's wire format: request
// paths and bodies, authentication headers, answers and error bodies. They
// answer from a small "web" of documents (the example runbooks), so what
// they say is checkable, not canned: citations point at pages that exist
// and snippets are sentences from them. The Telegram stand-in is the
// notifier's telegramtest; [TelegramErrorBody] gives its error format.
//
// Put a faultinject.Injector in front of any of them (with the matching
// *ErrorBody function) to make them flaky.
package providerfake

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
)

// Doc is one page of the fake web.
type Doc struct {
	URL, Title, Text string
}

// Web is a fixed set of documents with a term-overlap search. It is
// read-only after construction and safe for concurrent use.
type Web struct {
	docs  []Doc
	terms []map[string]bool
}

// NewWeb indexes docs.
func NewWeb(docs []Doc) *Web {
	w := &Web{docs: docs}
	for _, d := range docs {
		w.terms = append(w.terms, termSet(d.Title+" "+d.Text))
	}
	return w
}

// Docs returns the web's documents.
func (w *Web) Docs() []Doc { return slices.Clone(w.docs) }

// LoadWeb reads every Markdown file in dir whose front matter names a
// title and url (the format of examples/runbooks).
func LoadWeb(dir string) (*Web, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return nil, err
	}
	var docs []Doc
	for _, p := range paths {
		d, err := readDoc(p)
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("no Markdown documents with front matter in %s", dir)
	}
	return NewWeb(docs), nil
}

func readDoc(path string) (Doc, error) {
	f, err := os.Open(path)
	if err != nil {
		return Doc{}, err
	}
	defer f.Close()
	var d Doc
	var body strings.Builder
	sc := bufio.NewScanner(f)
	inFront := false
	for line := 0; sc.Scan(); line++ {
		text := sc.Text()
		switch {
		case line == 0 && text == "---":
			inFront = true
		case inFront && text == "---":
			inFront = false
		case inFront:
			k, v, _ := strings.Cut(text, ":")
			switch strings.TrimSpace(k) {
			case "title":
				d.Title = strings.TrimSpace(v)
			case "url":
				d.URL = strings.TrimSpace(v)
			}
		default:
			body.WriteString(text)
			body.WriteString("\n")
		}
	}
	if err := sc.Err(); err != nil {
		return Doc{}, fmt.Errorf("reading %s: %w", path, err)
	}
	if d.URL == "" || d.Title == "" {
		return Doc{}, fmt.Errorf("%s: front matter needs title and url", path)
	}
	d.Text = body.String()
	return d, nil
}

// Hit is a document found for a query, with its best sentence.
type Hit struct {
	Doc
	Score    float64
	Sentence string
}

// Search returns up to n documents sharing terms with query, best first.
func (w *Web) Search(query string, n int) []Hit {
	q := termSet(query)
	var hits []Hit
	for i, d := range w.docs {
		shared := 0
		for t := range q {
			if w.terms[i][t] {
				shared++
			}
		}
		if shared == 0 {
			continue
		}
		hits = append(hits, Hit{Doc: d, Score: float64(shared) / float64(len(q)), Sentence: BestSentence(d.Text, query)})
	}
	slices.SortStableFunc(hits, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) })
	return hits[:min(n, len(hits))]
}

// BestSentence is the sentence of text sharing the most terms with query
// (the first one on ties), without Markdown heading or list markers.
func BestSentence(text, query string) string {
	q := termSet(query)
	best, bestShared := "", -1
	for _, s := range sentences(text) {
		shared := 0
		for t := range termSet(s) {
			if q[t] {
				shared++
			}
		}
		if shared > bestShared {
			best, bestShared = s, shared
		}
	}
	return best
}

// sentences splits text at line breaks and sentence ends, dropping
// headings and list markers.
func sentences(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimLeft(line, "-*0123456789. ")
		for line != "" {
			i := strings.Index(line, ". ")
			if i < 0 {
				out = append(out, line)
				break
			}
			out = append(out, line[:i+1])
			line = strings.TrimSpace(line[i+2:])
		}
	}
	return out
}

var stop = map[string]bool{"the": true, "and": true, "for": true, "with": true, "from": true, "that": true, "this": true, "are": true, "was": true, "what": true, "how": true, "when": true, "why": true, "you": true, "your": true, "not": true, "has": true}

// termSet is the lower-cased words of s of three letters or more, minus
// common words.
func termSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(f)) >= 3 && !stop[f] {
			out[f] = true
		}
	}
	return out
}
