// Package runbooktest loads the example runbooks (examples/runbooks) the
// way the search service's local engine indexes them, for tests that
// answer from them offline.
package runbooktest

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// Doc is one runbook as indexed.
type Doc struct {
	Title, URL string
	// Text is the body as plain text: the level-one heading repeating the
	// title dropped, Markdown syntax removed, every block ending a
	// sentence.
	Text string
}

var (
	mdHeading = regexp.MustCompile(`^(#+)\s+`)
	mdList    = regexp.MustCompile(`^\s*(?:[-*+]|\d+\.)\s+`)
	mdFence   = regexp.MustCompile("^\\s*(?:```|~~~)")
)

// Dir is the example runbooks' directory.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "examples", "runbooks")
}

// Load reads the example runbooks: front matter gives title and URL, the
// body is reduced as Doc.Text says.
func Load(t testing.TB) []Doc {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(Dir(), "*.md"))
	if err != nil || len(files) < 4 {
		t.Fatalf("runbooks in %s: %v (%d files)", Dir(), err, len(files))
	}
	var out []Doc
	for _, f := range files {
		d, body := readFrontMatter(t, f)
		var blocks []string
		for line := range strings.SplitSeq(body, "\n") {
			if mdHeading.FindString(line) == "# " {
				continue
			}
			line = mdHeading.ReplaceAllString(line, "")
			line = strings.TrimSpace(strings.ReplaceAll(mdList.ReplaceAllString(line, ""), "`", ""))
			if line == "" {
				continue
			}
			if !strings.ContainsAny(line[len(line)-1:], ".:!?") {
				line += "."
			}
			blocks = append(blocks, line)
		}
		d.Text = strings.Join(blocks, " ")
		out = append(out, d)
	}
	return out
}

// readFrontMatter reads the runbook at path: its title and URL from the
// front matter, and its Markdown body.
func readFrontMatter(t testing.TB, path string) (Doc, string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fm, body, ok := strings.Cut(strings.TrimPrefix(string(b), "---\n"), "\n---\n")
	if !ok {
		t.Fatalf("%s: no front matter", path)
	}
	var d Doc
	for line := range strings.SplitSeq(fm, "\n") {
		k, v, _ := strings.Cut(line, ":")
		switch k {
		case "title":
			d.Title = strings.TrimSpace(v)
		case "url":
			d.URL = strings.TrimSpace(v)
		}
	}
	return d, body
}

// ReadFile reads one Markdown runbook with front matter (title, url) as
// the search service's index stores it: one block per line (a heading, a
// paragraph, a list item, or a line of indented or fenced code), the
// level-one heading left out, Markdown syntax removed and every block but
// code ending a sentence. Its line structure is what section finders such
// as extractive.RunbookSteps read.
func ReadFile(t testing.TB, path string) Doc {
	t.Helper()
	d, body := readFrontMatter(t, path)
	var blocks, para []string
	flush := func() {
		if len(para) == 0 {
			return
		}
		s := strings.ReplaceAll(strings.Join(para, " "), "`", "")
		if !strings.ContainsAny(s[len(s)-1:], ".:!?") {
			s += "."
		}
		blocks = append(blocks, s)
		para = para[:0]
	}
	code := false
	for line := range strings.SplitSeq(body, "\n") {
		switch {
		case mdFence.MatchString(line):
			flush()
			code = !code
		case code || strings.HasPrefix(line, "    ") && len(para) == 0:
			if s := strings.TrimSpace(line); s != "" {
				blocks = append(blocks, s)
			}
		case strings.TrimSpace(line) == "":
			flush()
		case mdHeading.FindString(line) == "# ":
			flush()
		case mdHeading.MatchString(line), mdList.MatchString(line):
			flush()
			para = append(para, strings.TrimSpace(mdList.ReplaceAllString(mdHeading.ReplaceAllString(line, ""), "")))
			if mdHeading.MatchString(line) {
				flush()
			}
		default:
			para = append(para, strings.TrimSpace(line))
		}
	}
	flush()
	d.Text = strings.Join(blocks, "\n")
	return d
}
