package pagefetch

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// skipped are elements whose content is not visible text.
var skipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true, atom.Svg: true,
	atom.Iframe: true, atom.Object: true, atom.Canvas: true, atom.Select: true,
}

// blocks are elements that end a line of text.
var blocks = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Br: true, atom.Li: true, atom.Tr: true, atom.H1: true, atom.H2: true,
	atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true, atom.Pre: true, atom.Blockquote: true,
	atom.Section: true, atom.Article: true, atom.Header: true, atom.Footer: true, atom.Dd: true, atom.Dt: true,
	atom.Td: true, atom.Th: true, atom.Table: true, atom.Ul: true, atom.Ol: true, atom.Main: true, atom.Nav: true,
	atom.Aside: true, atom.Figcaption: true, atom.Hr: true,
}

// parseHTML returns a page's title (its og:title when it has no <title>)
// and its visible text, one block per line, whitespace collapsed.
func parseHTML(doc string) (title, text string) {
	z := html.NewTokenizer(strings.NewReader(doc))
	var (
		out     strings.Builder
		line    strings.Builder
		skip    int
		inTitle bool
		titleB  strings.Builder
		ogTitle string
	)
	flush := func() {
		if s := strings.Join(strings.Fields(line.String()), " "); s != "" {
			out.WriteString(s)
			out.WriteByte('\n')
		}
		line.Reset()
	}
	for {
		switch z.Next() {
		case html.ErrorToken:
			flush()
			title = strings.Join(strings.Fields(titleB.String()), " ")
			if title == "" {
				title = strings.Join(strings.Fields(ogTitle), " ")
			}
			return title, strings.TrimSpace(out.String())
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			switch {
			case tok.DataAtom == atom.Title:
				inTitle = true
			case tok.DataAtom == atom.Meta:
				prop, content := "", ""
				for _, a := range tok.Attr {
					switch a.Key {
					case "property", "name":
						prop = strings.ToLower(a.Val)
					case "content":
						content = a.Val
					}
				}
				if prop == "og:title" && ogTitle == "" {
					ogTitle = content
				}
			case skipped[tok.DataAtom] && tok.Type == html.StartTagToken:
				skip++
			case blocks[tok.DataAtom]:
				flush()
			}
		case html.EndTagToken:
			tok := z.Token()
			switch {
			case tok.DataAtom == atom.Title:
				inTitle = false
			case skipped[tok.DataAtom] && skip > 0:
				skip--
			case blocks[tok.DataAtom]:
				flush()
			}
		case html.TextToken:
			switch {
			case inTitle:
				titleB.Write(z.Text())
			case skip == 0:
				line.Write(z.Text())
				line.WriteByte(' ')
			}
		}
	}
}
