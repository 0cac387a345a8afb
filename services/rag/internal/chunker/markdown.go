package chunker

import (
	"regexp"
	"strings"
)

// Markdown chunks a CommonMark-style document: ATX (#) and setext (===,
// ---) headings start sections, fenced (``` or ~~~) and indented code
// blocks stay whole, YAML front matter is skipped, and links and images
// are reduced to their text.
func Markdown(src string, opts Options) []Chunk {
	return pack(markdownBlocks(src), opts.withDefaults())
}

var (
	atxHeading  = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	setextLine  = regexp.MustCompile(`^ {0,3}(=+|-+)[ \t]*$`)
	fenceOpen   = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")
	listItem    = regexp.MustCompile(`^\s*([-*+]|\d+[.)])\s+`)
	mdImage     = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	mdLink      = regexp.MustCompile(`\[([^\]]+)\]\([^)]*\)`)
	mdRefLink   = regexp.MustCompile(`\[([^\]]+)\]\[[^\]]*\]`)
	mdLinkDef   = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s+\S+`)
	mdEmphasis  = regexp.MustCompile(`(\*\*|__)(\S(?:.*?\S)?)(\*\*|__)`)
	mdHTMLBlock = regexp.MustCompile(`^\s*</?[a-zA-Z][^>]*>\s*$`)
)

func markdownBlocks(src string) []block {
	src = strings.ReplaceAll(src, "\r\n", "\n")
	lines := strings.Split(src, "\n")
	i := 0
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		for j := 1; j < len(lines); j++ {
			if t := strings.TrimSpace(lines[j]); t == "---" || t == "..." {
				i = j + 1
				break
			}
		}
	}

	var (
		blocks []block
		para   []string
	)
	flush := func() {
		if len(para) == 0 {
			return
		}
		var b strings.Builder
		for k, l := range para {
			if k > 0 {
				// List items keep their own line; wrapped prose is joined.
				if listItem.MatchString(l) {
					b.WriteByte('\n')
				} else {
					b.WriteByte(' ')
				}
			}
			b.WriteString(strings.TrimSpace(l))
		}
		blocks = append(blocks, block{kind: kindProse, text: inline(b.String())})
		para = para[:0]
	}
	for ; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			flush()
		case fenceOpen.MatchString(line):
			flush()
			marker := fenceOpen.FindStringSubmatch(line)[1]
			var code []string
			for i++; i < len(lines); i++ {
				if t := strings.TrimSpace(lines[i]); strings.HasPrefix(t, marker[:3]) && strings.Trim(t, marker[:1]) == "" && len(t) >= len(marker) {
					break
				}
				code = append(code, lines[i])
			}
			blocks = append(blocks, block{kind: kindCode, text: strings.Join(code, "\n")})
		case atxHeading.MatchString(line):
			flush()
			m := atxHeading.FindStringSubmatch(line)
			if t := inline(strings.TrimSpace(m[2])); t != "" {
				blocks = append(blocks, block{kind: kindHeading, level: len(m[1]), text: t})
			}
		case len(para) == 1 && setextLine.MatchString(line) && !listItem.MatchString(para[0]):
			// A line of = or - under a single paragraph line underlines
			// it as a heading.
			lvl := 1
			if strings.Contains(line, "-") {
				lvl = 2
			}
			t := inline(strings.TrimSpace(para[0]))
			para = para[:0]
			blocks = append(blocks, block{kind: kindHeading, level: lvl, text: t})
		case len(para) == 0 && (strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t")):
			var code []string
			for ; i < len(lines); i++ {
				l := lines[i]
				if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "    ") && !strings.HasPrefix(l, "\t") {
					break
				}
				code = append(code, strings.TrimPrefix(strings.TrimPrefix(l, "\t"), "    "))
			}
			i--
			blocks = append(blocks, block{kind: kindCode, text: strings.TrimRight(strings.Join(code, "\n"), "\n")})
		case mdLinkDef.MatchString(line), mdHTMLBlock.MatchString(line):
			// Link reference definitions and lone HTML tags are not text.
		default:
			para = append(para, line)
		}
	}
	flush()
	return blocks
}

// inline strips the Markdown syntax that would otherwise end up as noise
// in the index: link and image targets and strong-emphasis markers.
func inline(s string) string {
	s = mdImage.ReplaceAllString(s, "$1")
	s = mdLink.ReplaceAllString(s, "$1")
	s = mdRefLink.ReplaceAllString(s, "$1")
	s = mdEmphasis.ReplaceAllString(s, "$2")
	return s
}
