package chunker

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// shape is what the table tests compare: the heading path and text of
// each chunk.
type shape struct {
	Path []string
	Text string
}

func shapes(cs []Chunk) []shape {
	var out []shape
	for i, c := range cs {
		if c.Index != i {
			panic("chunk indexes must count from 0")
		}
		out = append(out, shape{Path: c.HeadingPath, Text: c.Text})
	}
	return out
}

func TestMarkdown(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []shape
	}{
		{
			name: "headings nest and pop",
			src:  "# Guide\n\nIntro text.\n\n## Install\n\nRun it.\n\n### Linux\n\nUse apt.\n\n## Use\n\nCall it.\n",
			want: []shape{
				{Path: []string{"Guide"}, Text: "Intro text."},
				{Path: []string{"Guide", "Install"}, Text: "Run it."},
				{Path: []string{"Guide", "Install", "Linux"}, Text: "Use apt."},
				{Path: []string{"Guide", "Use"}, Text: "Call it."},
			},
		},
		{
			name: "setext headings and front matter",
			src:  "---\ntitle: x\n---\nTitle\n=====\n\nBody one.\n\nPart\n----\n\nBody two.\n",
			want: []shape{
				{Path: []string{"Title"}, Text: "Body one."},
				{Path: []string{"Title", "Part"}, Text: "Body two."},
			},
		},
		{
			name: "fenced code kept whole with its blank lines",
			src:  "## Code\n\nExample:\n\n```go\nfunc f() {\n\n\treturn\n}\n```\n",
			want: []shape{
				{Path: []string{"Code"}, Text: "Example:\n\n```\nfunc f() {\n\n\treturn\n}\n```"},
			},
		},
		{
			name: "links, images and emphasis reduced to text",
			src:  "See [the docs](https://x.y) and ![a chart](c.png), **really**.\n\n[ref]: https://x.y\n",
			want: []shape{
				{Text: "See the docs and a chart, really."},
			},
		},
		{
			name: "wrapped lines joined, list items kept on lines",
			src:  "One\ntwo.\n\n- a\n- b\n",
			want: []shape{
				{Text: "One two.\n\n- a\n- b"},
			},
		},
		{
			name: "empty sections leave no chunk",
			src:  "# A\n\n## B\n\ntext\n",
			want: []shape{
				{Path: []string{"A", "B"}, Text: "text"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := shapes(Markdown(tt.src, Options{}))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Markdown() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHTML(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []shape
	}{
		{
			name: "furniture dropped, headings nest",
			src: `<html><head><title>T</title><style>p{}</style></head><body>
<nav>Home | About</nav>
<h1>Manual</h1><p>Hello <b>bold</b>
world.</p>
<h2 id="x">Send <code>statements</code></h2>
<p>A send.</p><script>alert(1)</script>
<footer>(c) me</footer></body></html>`,
			want: []shape{
				{Path: []string{"Manual"}, Text: "Hello bold world."},
				{Path: []string{"Manual", "Send statements"}, Text: "A send."},
			},
		},
		{
			name: "pre is a fenced code block",
			src:  "<h3>Go</h3><p>Example:</p><pre>\ngo f()\n\ngo g()\n</pre>",
			want: []shape{
				{Path: []string{"Go"}, Text: "Example:\n\n```\ngo f()\n\ngo g()\n```"},
			},
		},
		{
			name: "lists and tables",
			src:  "<ul><li>one</li><li>two <i>x</i></li></ul><table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>",
			want: []shape{
				{Text: "- one\n\n- two x\n\na | b\n\n1 | 2"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := HTML(tt.src, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, shapes(cs)); diff != "" {
				t.Errorf("HTML() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestText(t *testing.T) {
	got := shapes(Text("First para\nwraps here.\n\n\nSecond.\r\n", Options{}))
	want := []shape{{Text: "First para wraps here.\n\nSecond."}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Text() mismatch (-want +got):\n%s", diff)
	}
}

// sentencesOf builds a paragraph of n numbered sentences of about 60
// characters each.
func sentencesOf(prefix string, n int) string {
	var s []string
	for i := range n {
		s = append(s, prefix+" sentence number "+strings.Repeat("x", 20)+" ends here "+string(rune('A'+i%26))+".")
	}
	return strings.Join(s, " ")
}

func TestSizeAndOverlap(t *testing.T) {
	opts := Options{TargetSize: 300, MaxSize: 420, Overlap: 80}
	// Five paragraphs of ~200 characters in one section: chunks must
	// close near the target, never pass the maximum, and repeat the
	// previous chunk's last sentence.
	var paras []string
	for i := range 5 {
		paras = append(paras, sentencesOf(string(rune('A'+i)), 4))
	}
	cs := Text(strings.Join(paras, "\n\n"), opts)
	if len(cs) < 3 {
		t.Fatalf("got %d chunks, want at least 3", len(cs))
	}
	for i, c := range cs {
		if len(c.Text) > opts.MaxSize {
			t.Errorf("chunk %d has %d characters, more than MaxSize %d", i, len(c.Text), opts.MaxSize)
		}
		if i == 0 {
			continue
		}
		prev := Sentences(cs[i-1].Text)
		last := prev[len(prev)-1]
		if !strings.HasPrefix(c.Text, last) {
			t.Errorf("chunk %d does not start with the last sentence of chunk %d (%q)", i, i-1, last)
		}
	}
}

func TestNoOverlapAcrossSections(t *testing.T) {
	opts := Options{TargetSize: 100, MaxSize: 140, Overlap: 60}
	cs := Markdown("# A\n\n"+sentencesOf("A", 3)+"\n\n# B\n\nShort.", opts)
	got := shapes(cs)[len(cs)-1]
	if diff := cmp.Diff(shape{Path: []string{"B"}, Text: "Short."}, got); diff != "" {
		t.Errorf("first chunk of a new section carries overlap (-want +got):\n%s", diff)
	}
}

func TestLongCodeSplitAtBlankLines(t *testing.T) {
	block := strings.Repeat("line of code\n", 8) // 104 characters
	src := "```\n" + block + "\n" + block + "\n" + block + "```"
	cs := Markdown(src, Options{TargetSize: 150, MaxSize: 200})
	if len(cs) != 3 {
		t.Fatalf("got %d chunks, want 3 (one per blank-line block):\n%v", len(cs), cs)
	}
	want := "```\n" + strings.TrimSuffix(block, "\n") + "\n```"
	for i, c := range cs {
		if c.Text != want {
			t.Errorf("chunk %d = %q, want %q", i, c.Text, want)
		}
	}
}

func TestCodeNotSplitWhenItFits(t *testing.T) {
	code := strings.Repeat("x := 1\n", 30) // 210 characters
	src := sentencesOf("P", 3) + "\n\n```\n" + code + "```\n"
	cs := Markdown(src, Options{TargetSize: 200, MaxSize: 300})
	found := false
	for _, c := range cs {
		if strings.Contains(c.Text, strings.TrimSuffix(code, "\n")) {
			found = true
		}
	}
	if !found {
		t.Errorf("code block was split although it fits in one chunk: %+v", cs)
	}
}

func TestSentences(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"One. Two! Three?", []string{"One.", "Two!", "Three?"}},
		{"Use e.g. this one. Next.", []string{"Use e.g. this one.", "Next."}},
		{"He said \"stop.\" Then left.", []string{"He said \"stop.\"", "Then left."}},
		{"Version 1.22 changed it. Yes", []string{"Version 1.22 changed it.", "Yes"}},
		{"", nil},
	}
	for _, tt := range tests {
		got := Sentences(tt.in)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Sentences(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestProse(t *testing.T) {
	got := Prose("Intro.\n\n```\ncode\n\nmore code\n```\n\nOutro.")
	want := []string{"Intro.", "Outro."}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Prose() mismatch (-want +got):\n%s", diff)
	}
}

func TestTitle(t *testing.T) {
	tests := []struct {
		f    Format
		src  string
		want string
	}{
		{FormatHTML, "<title> A  page </title><h1>H</h1>", "A page"},
		{FormatHTML, "<h1>Only <i>h1</i></h1>", "Only h1"},
		{FormatMarkdown, "intro\n\n## Second\n", "Second"},
		{FormatText, "# not a heading", ""},
	}
	for _, tt := range tests {
		if got := Title(tt.f, tt.src); got != tt.want {
			t.Errorf("Title(%v, %q) = %q, want %q", tt.f, tt.src, got, tt.want)
		}
	}
}

// TestGoSpec checks the chunker on the real Go specification: sections
// map to heading paths and chunks stay within bounds.
func TestGoSpec(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "doc", "go_spec.html"))
	if err != nil {
		t.Skipf("Go specification not available: %v", err)
	}
	cs, err := HTML(string(b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var send *Chunk
	for i, c := range cs {
		if len(c.Text) > DefaultMaxSize {
			t.Errorf("chunk %d has %d characters", i, len(c.Text))
		}
		if strings.Join(c.HeadingPath, "/") == "Statements/Send statements" && send == nil {
			send = &cs[i]
		}
	}
	if send == nil {
		t.Fatal("no chunk under Statements/Send statements")
	}
	if !strings.Contains(send.Text, "A send on a closed channel proceeds by causing a run-time panic.") {
		t.Errorf("Send statements chunk lacks the closed-channel rule:\n%s", send.Text)
	}
	if !strings.Contains(send.Text, "```\nSendStmt = Channel \"<-\" Expression .") {
		t.Errorf("Send statements chunk lacks its grammar block:\n%s", send.Text)
	}
}
