package doclinks

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// repoRoot is the repository, two levels up from this package.
const repoRoot = "../.."

// TestRepositoryLinks checks every relative link in the repository's
// Markdown files: the file or folder exists inside the repository, and a
// fragment names a heading of the Markdown page it points at.
func TestRepositoryLinks(t *testing.T) {
	files, err := MarkdownFiles(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found %d Markdown files under %s, want the repository's", len(files), repoRoot)
	}
	checked := 0
	for _, f := range files {
		text, err := read(repoRoot, f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(text, "../shared/") {
			t.Errorf("%s mentions ../shared/, which is not in the repository (the design is docs/design.md)", f)
		}
		for _, l := range Links(f, text) {
			if External(l.Target) {
				continue
			}
			checked++
			path, fragment := Resolve(l.File, l.Target)
			if path == ".." || strings.HasPrefix(path, "../") {
				t.Errorf("%s:%d: %q points outside the repository", l.File, l.Line, l.Target)
				continue
			}
			info, err := os.Stat(filepath.Join(repoRoot, path))
			if err != nil {
				t.Errorf("%s:%d: %q: %s does not exist", l.File, l.Line, l.Target, path)
				continue
			}
			if fragment == "" || info.IsDir() || !strings.HasSuffix(path, ".md") {
				continue
			}
			target, err := read(repoRoot, path)
			if err != nil {
				t.Fatal(err)
			}
			if !Anchors(target)[fragment] {
				t.Errorf("%s:%d: %q: %s has no heading #%s", l.File, l.Line, l.Target, path, fragment)
			}
		}
	}
	if checked == 0 {
		t.Error("no relative link checked")
	}
}

func TestLinks(t *testing.T) {
	text := "See [config](docs/configuration.md#keys) and ![shot](docs/console/a.png \"title\").\n" +
		"`[not](a-link.md)` in code, [web](https://example.com).\n" +
		"```sh\n[also not](x.md)\n```\n" +
		"[ref]: docs/design.md\n"
	var got []string
	for _, l := range Links("README.md", text) {
		got = append(got, l.Target)
	}
	want := []string{"docs/configuration.md#keys", "docs/console/a.png", "https://example.com", "docs/design.md"}
	if !slices.Equal(got, want) {
		t.Errorf("Links = %q, want %q", got, want)
	}
}

func TestResolve(t *testing.T) {
	tests := []struct{ file, target, path, fragment string }{
		{"README.md", "docs/api.md", "docs/api.md", ""},
		{"docs/api.md", "../BENCHMARKS.md", "BENCHMARKS.md", ""},
		{"docs/api.md", "security.md#keys-scopes", "docs/security.md", "keys-scopes"},
		{"docs/api.md", "#errors", "docs/api.md", "errors"},
		{"docs/api.md", "../../shared/DESIGN.md", "../shared/DESIGN.md", ""},
	}
	for _, tt := range tests {
		path, fragment := Resolve(tt.file, tt.target)
		if path != tt.path || fragment != tt.fragment {
			t.Errorf("Resolve(%q, %q) = %q, %q; want %q, %q", tt.file, tt.target, path, fragment, tt.path, tt.fragment)
		}
	}
	for target, want := range map[string]bool{"https://x.org": true, "mailto:a@b": true, "//cdn": true, "docs/a.md": false, "a.md#b:c": false} {
		if got := External(target); got != want {
			t.Errorf("External(%q) = %v, want %v", target, got, want)
		}
	}
}

func TestAnchors(t *testing.T) {
	text := "# Security\n## Keys, scopes and who did what\n```\n# not a heading\n```\n## Checks\n## Checks\n### `GATEWAY_API_KEYS` — keys\n"
	got := Anchors(text)
	for _, want := range []string{"security", "keys-scopes-and-who-did-what", "checks", "checks-1", "gateway_api_keys--keys"} {
		if !got[want] {
			t.Errorf("anchor %q missing from %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Error("a line in a code block counted as a heading")
	}
}

// maxReadmeLines keeps README.md the first hour (issue 25): the reference
// lives in docs/.
const maxReadmeLines = 250

// TestReadmeIsTheFirstHour holds README.md under maxReadmeLines, with the
// two commands and a tour whose blocks scripts/readme-tour.sh runs.
func TestReadmeIsTheFirstHour(t *testing.T) {
	text, err := read(repoRoot, "README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(text, "\n"); n >= maxReadmeLines {
		t.Errorf("README.md has %d lines, want fewer than %d: move reference material to a docs/ page and link it", n, maxReadmeLines)
	}
	for _, want := range []string{"make run", "make test", "```sh runnable\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
}
