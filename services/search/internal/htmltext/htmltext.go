// Package htmltext extracts the readable text and the title of an HTML
// page: scripts, styles, navigation, footers, forms and hidden elements are
// dropped, headings, paragraphs and other blocks become separate lines,
// entities are decoded and whitespace is collapsed.
package htmltext

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Page is the readable content of an HTML document.
type Page struct {
	// Title is the <title>, else the og:title meta property, else the
	// first <h1>; empty when there is none.
	Title string
	// Text is one line per block (heading, paragraph, list item, …),
	// lines separated by "\n", no empty lines, whitespace collapsed.
	Text string
	// Icon is the href of the page's icon link (rel "icon", else
	// "shortcut icon" or "apple-touch-icon") as written, possibly relative;
	// empty when there is none.
	Icon string
}

// skipped are elements whose content is not readable page text.
var skipped = map[atom.Atom]bool{
	atom.Head: true, atom.Script: true, atom.Style: true, atom.Noscript: true,
	atom.Template: true, atom.Nav: true, atom.Footer: true, atom.Aside: true,
	atom.Svg: true, atom.Math: true, atom.Iframe: true, atom.Object: true,
	atom.Embed: true, atom.Canvas: true, atom.Form: true, atom.Button: true,
	atom.Select: true, atom.Textarea: true, atom.Input: true, atom.Dialog: true,
	atom.Audio: true, atom.Video: true, atom.Map: true,
}

// blocks are elements that start and end a line.
var blocks = map[atom.Atom]bool{
	atom.Address: true, atom.Article: true, atom.Blockquote: true, atom.Body: true,
	atom.Caption: true, atom.Dd: true, atom.Details: true, atom.Div: true,
	atom.Dl: true, atom.Dt: true, atom.Fieldset: true, atom.Figcaption: true,
	atom.Figure: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true,
	atom.H5: true, atom.H6: true, atom.Header: true, atom.Hgroup: true, atom.Hr: true,
	atom.Li: true, atom.Main: true, atom.Ol: true, atom.P: true, atom.Pre: true,
	atom.Section: true, atom.Summary: true, atom.Table: true, atom.Tbody: true,
	atom.Thead: true, atom.Tfoot: true, atom.Tr: true, atom.Ul: true, atom.Br: true,
	atom.Legend: true, atom.Center: true,
}

var lineBreaks = strings.NewReplacer("\n", " ", "\r", " ", "\f", " ")

// Extract returns the readable text and title of an HTML document. It never
// fails: the HTML5 parsing algorithm makes sense of any input, and invalid
// UTF-8 is dropped from the output.
func Extract(src string) Page {
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		// Only a failing reader makes Parse fail; a string reader does not.
		return Page{}
	}
	w := &walker{}
	w.walk(doc)
	title := w.title
	if title == "" {
		title = w.ogTitle
	}
	if title == "" {
		title = w.h1
	}
	return Page{Title: collapse(title), Text: lines(w.text.String()), Icon: strings.TrimSpace(w.icon)}
}

// Inline returns the text of an HTML fragment on one line, for snippets
// that APIs return with markup such as <strong> around matched terms.
// Plain text without markup comes back whitespace-collapsed.
func Inline(fragment string) string {
	if !strings.ContainsAny(fragment, "<&") {
		return collapse(fragment)
	}
	body := &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body}
	nodes, err := html.ParseFragment(strings.NewReader(fragment), body)
	if err != nil {
		return collapse(fragment)
	}
	w := &walker{}
	for _, n := range nodes {
		w.walk(n)
	}
	return collapse(w.text.String())
}

type walker struct {
	text    strings.Builder
	pre     int // depth of <pre> elements, whose line breaks are kept
	title   string
	ogTitle string
	h1      string
	icon    string
	// iconRank orders icon links: 1 for rel="icon", 2 for the others.
	iconRank int
}

func (w *walker) walk(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		if w.pre > 0 {
			w.text.WriteString(n.Data)
		} else {
			// Line breaks in source text are layout, not content: only
			// block boundaries (and <pre>) start a new line.
			w.text.WriteString(lineBreaks.Replace(n.Data))
		}
		return
	case html.ElementNode:
		if n.DataAtom == atom.Head || n.DataAtom == atom.Title {
			w.head(n)
		}
		if skipped[n.DataAtom] || hidden(n) {
			return
		}
		if n.DataAtom == atom.H1 && w.h1 == "" {
			w.h1 = textOf(n)
		}
	case html.CommentNode, html.DoctypeNode:
		return
	}
	block := n.Type == html.ElementNode && blocks[n.DataAtom]
	if block {
		w.text.WriteByte('\n')
	}
	pre := n.Type == html.ElementNode && (n.DataAtom == atom.Pre || n.DataAtom == atom.Listing)
	if pre {
		w.pre++
		defer func() { w.pre-- }()
	}
	if n.Type == html.ElementNode && (n.DataAtom == atom.Td || n.DataAtom == atom.Th) {
		w.text.WriteByte(' ')
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.walk(c)
	}
	if block {
		w.text.WriteByte('\n')
	}
}

// head records the page title and og:title from the document head (or a
// stray <title> in the body, which parsers move there for broken pages).
func (w *walker) head(n *html.Node) {
	if n.DataAtom == atom.Title {
		if w.title == "" {
			w.title = textOf(n)
		}
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		switch c.DataAtom {
		case atom.Title:
			if w.title == "" {
				w.title = textOf(c)
			}
		case atom.Meta:
			if w.ogTitle == "" && strings.EqualFold(attr(c, "property"), "og:title") {
				w.ogTitle = attr(c, "content")
			}
		case atom.Link:
			w.link(c)
		}
	}
}

// link records the first icon link, preferring rel="icon".
func (w *walker) link(n *html.Node) {
	href := strings.TrimSpace(attr(n, "href"))
	if href == "" || w.iconRank == 1 {
		return
	}
	rank := 0
	for _, rel := range strings.Fields(strings.ToLower(attr(n, "rel"))) {
		switch rel {
		case "icon":
			rank = 1
		case "apple-touch-icon", "apple-touch-icon-precomposed":
			if rank == 0 {
				rank = 2
			}
		}
	}
	if rank != 0 && (w.iconRank == 0 || rank < w.iconRank) {
		w.icon, w.iconRank = href, rank
	}
}

// hidden reports elements that browsers do not show or that mark
// themselves as navigation.
func hidden(n *html.Node) bool {
	for _, a := range n.Attr {
		switch strings.ToLower(a.Key) {
		case "hidden":
			return true
		case "aria-hidden":
			if strings.EqualFold(strings.TrimSpace(a.Val), "true") {
				return true
			}
		case "role":
			switch strings.ToLower(strings.TrimSpace(a.Val)) {
			case "navigation", "banner", "contentinfo", "search", "dialog":
				return true
			}
		case "style":
			v := strings.ToLower(strings.ReplaceAll(a.Val, " ", ""))
			if strings.Contains(v, "display:none") || strings.Contains(v, "visibility:hidden") {
				return true
			}
		}
	}
	return false
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			b.WriteByte(' ')
		}
		if n.Type == html.ElementNode && (n.DataAtom == atom.Script || n.DataAtom == atom.Style) {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(n)
	return collapse(b.String())
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if strings.EqualFold(a.Key, key) {
			return a.Val
		}
	}
	return ""
}

// collapse makes s valid UTF-8 with every run of whitespace (including
// NBSP and line breaks) turned into one space, trimmed.
func collapse(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "")
	}
	s = strings.ReplaceAll(s, "\x00", "")
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\u00a0", " ")), " ")
}

// lines collapses whitespace within each line and drops empty lines.
func lines(s string) string {
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		if l := collapse(line); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
