package chunker

import (
	"fmt"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// HTML chunks an HTML document or fragment. Only readable content is kept:
// scripts, styles, navigation, forms and similar page furniture are
// dropped; <h1>–<h6> start sections, <pre> becomes a fenced code block,
// and other block elements (paragraphs, list items, table rows…) become
// paragraphs.
func HTML(src string, opts Options) ([]Chunk, error) {
	blocks, err := htmlBlocks(src)
	if err != nil {
		return nil, err
	}
	return pack(blocks, opts.withDefaults()), nil
}

// ReadableText returns the readable text of an HTML document, paragraphs
// separated by blank lines, headings on lines of their own.
func ReadableText(src string) (string, error) {
	blocks, err := htmlBlocks(src)
	if err != nil {
		return "", err
	}
	parts := make([]string, 0, len(blocks))
	for _, b := range blocks {
		if b.kind == kindCode {
			parts = append(parts, "```\n"+strings.Trim(b.text, "\n")+"\n```")
			continue
		}
		parts = append(parts, b.text)
	}
	return strings.Join(parts, sep), nil
}

// HTMLTitle returns the document's <title>, or its first <h1> when it has
// none, or "". Callers use it when a document arrives without a title.
func HTMLTitle(src string) string {
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		return ""
	}
	var title, h1 string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Title:
				if title == "" {
					title = collapse(textOf(n))
				}
			case atom.H1:
				if h1 == "" {
					h1 = collapse(textOf(n))
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if title != "" {
		return title
	}
	return h1
}

// skipped elements hold no readable content of the document itself.
var skipped = map[atom.Atom]bool{
	atom.Head: true, atom.Script: true, atom.Style: true, atom.Noscript: true,
	atom.Template: true, atom.Svg: true, atom.Nav: true,
	atom.Footer: true, atom.Aside: true, atom.Form: true, atom.Button: true,
	atom.Iframe: true, atom.Object: true, atom.Canvas: true, atom.Select: true,
	atom.Textarea: true, atom.Input: true,
}

// breaking elements end the paragraph before them and start a new one.
var breaking = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true,
	atom.Main: true, atom.Header: true, atom.Ul: true, atom.Ol: true,
	atom.Li: true, atom.Dl: true, atom.Dt: true, atom.Dd: true,
	atom.Table: true, atom.Tr: true, atom.Thead: true, atom.Tbody: true,
	atom.Tfoot: true, atom.Caption: true, atom.Blockquote: true,
	atom.Figure: true, atom.Figcaption: true, atom.Hr: true, atom.Body: true,
	atom.Details: true, atom.Summary: true, atom.Address: true,
	atom.Fieldset: true,
}

var headingLevel = map[atom.Atom]int{
	atom.H1: 1, atom.H2: 2, atom.H3: 3, atom.H4: 4, atom.H5: 5, atom.H6: 6,
}

func htmlBlocks(src string) ([]block, error) {
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		return nil, fmt.Errorf("parsing HTML: %w", err)
	}
	var (
		blocks []block
		para   strings.Builder
		prefix string // list marker for the paragraph being built
	)
	flush := func() {
		if t := collapse(para.String()); t != "" {
			blocks = append(blocks, block{kind: kindProse, text: prefix + t})
		}
		para.Reset()
		prefix = ""
	}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			para.WriteString(n.Data)
			return
		case html.ElementNode:
			if skipped[n.DataAtom] {
				return
			}
			if lvl, ok := headingLevel[n.DataAtom]; ok {
				flush()
				if t := collapse(textOf(n)); t != "" {
					blocks = append(blocks, block{kind: kindHeading, level: lvl, text: t})
				}
				return
			}
			switch n.DataAtom {
			case atom.Pre:
				flush()
				blocks = append(blocks, block{kind: kindCode, text: textOf(n)})
				return
			case atom.Br:
				para.WriteByte('\n')
				return
			case atom.Td, atom.Th:
				// Cells of a row stay on one line, separated like a
				// Markdown table, which both people and models read.
				if strings.TrimSpace(para.String()) != "" {
					para.WriteString(" | ")
				}
			case atom.Img:
				for _, a := range n.Attr {
					if a.Key == "alt" && strings.TrimSpace(a.Val) != "" {
						para.WriteString(" " + a.Val + " ")
					}
				}
				return
			}
			if breaking[n.DataAtom] {
				flush()
				if n.DataAtom == atom.Li {
					prefix = "- "
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if n.Type == html.ElementNode && breaking[n.DataAtom] {
			flush()
		}
	}
	walk(doc)
	flush()
	return blocks, nil
}

// textOf returns all text below n as it is, without skipped elements.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			return
		}
		if n.Type == html.ElementNode && skipped[n.DataAtom] {
			return
		}
		if n.Type == html.ElementNode && n.DataAtom == atom.Br {
			b.WriteByte('\n')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// collapse trims s and folds every run of white space into one space.
func collapse(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
