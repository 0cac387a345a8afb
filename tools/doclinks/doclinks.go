// Package doclinks checks the repository's Markdown: every relative link
// resolves to a file or folder in the repository (and a #fragment to a
// heading of the page it names), and nothing points outside it. The check
// is its test; the package holds what it needs.
package doclinks

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Link is one link found in a Markdown file.
type Link struct {
	// File is the Markdown file, relative to the repository root.
	File string
	// Line is the 1-based line of the link.
	Line int
	// Target is the link's destination as written.
	Target string
}

// skipDirs are folders whose Markdown is not the repository's own.
var skipDirs = map[string]bool{".git": true, "node_modules": true, ".groundcrew": true, "bin": true, "third_party": true}

// copies are Markdown files that repeat another's text for a program to
// embed: their links are written for the original's folder.
var copies = map[string]bool{
	// docs/configuration.md's table, embedded by every binary for --help
	// (a platform/config test keeps the two equal).
	"platform/config/variables.md": true,
}

// MarkdownFiles lists the .md files under root, relative to it, except
// [copies].
func MarkdownFiles(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			if !copies[filepath.ToSlash(rel)] {
				out = append(out, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	return out, err
}

var (
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refDef     = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$`)
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
)

// Links returns the links of a Markdown text, leaving out fenced code
// blocks and code spans (where brackets are not links).
func Links(file, text string) []Link {
	var out []Link
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		line = codeSpan.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			out = append(out, Link{File: file, Line: i + 1, Target: m[1]})
		}
		if m := refDef.FindStringSubmatch(line); m != nil {
			out = append(out, Link{File: file, Line: i + 1, Target: m[1]})
		}
	}
	return out
}

// External reports whether target leaves the repository by design: a URL
// with a scheme (https:, mailto:) or a protocol-relative one.
func External(target string) bool {
	if strings.HasPrefix(target, "//") {
		return true
	}
	scheme, _, ok := strings.Cut(target, ":")
	return ok && schemeName.MatchString(scheme)
}

var (
	schemeName  = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*$`)
	headingLine = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	headingLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// Anchors returns the fragment ids GitHub gives the headings of a Markdown
// text: lower case, punctuation dropped, spaces as hyphens, repeats
// numbered.
func Anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fence := ""
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		m := headingLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		slug := Slug(m[1])
		if n := seen[slug]; n > 0 {
			out[slug+"-"+itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// Slug is a heading's fragment id as GitHub writes it.
func Slug(heading string) string {
	heading = headingLink.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') || r > 127 && !isPunct(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isPunct reports the non-ASCII punctuation GitHub drops from slugs.
func isPunct(r rune) bool {
	return strings.ContainsRune("—–…’‘“”·→←↳✅🔥", r)
}

func itoa(n int) string {
	const digits = "0123456789"
	if n < 10 {
		return digits[n : n+1]
	}
	return itoa(n/10) + digits[n%10:n%10+1]
}

// Resolve returns the repository-relative path a relative link of file
// points at, and its fragment.
func Resolve(file, target string) (path, fragment string) {
	target, fragment, _ = strings.Cut(target, "#")
	target, _, _ = strings.Cut(target, "?")
	if target == "" {
		return file, fragment
	}
	if strings.HasPrefix(target, "/") {
		return filepath.ToSlash(filepath.Clean(strings.TrimPrefix(target, "/"))), fragment
	}
	return filepath.ToSlash(filepath.Join(filepath.Dir(file), target)), fragment
}

// read returns a file's text.
func read(root, rel string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, rel))
	return string(b), err
}
