package htmltext

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestExtract(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Page
	}{
		{
			name: "headings and paragraphs become lines",
			in: `<!doctype html><html><head><title> Disk  full on
				 db-1 </title><style>p{color:red}</style><script>var x = "<p>no</p>";</script></head>
				<body><h1>Runbook</h1><p>Check   <b>free</b> space.</p><p>Then&nbsp;rotate&amp;compress logs.</p></body></html>`,
			want: Page{Title: "Disk full on db-1", Text: "Runbook\nCheck free space.\nThen rotate&compress logs."},
		},
		{
			name: "navigation, footer, forms and hidden parts dropped",
			in: `<body><nav><a href="/">Home</a></nav><div role="navigation">Menu</div>
				<main><article><h2>Body</h2><p>Kept text.</p><aside>Related</aside>
				<p hidden>Hidden</p><p aria-hidden="true">Aria hidden</p><p style="display: none">CSS hidden</p>
				<form><label>Email</label><input value="x"><button>Go</button></form></article></main>
				<noscript>Enable JS</noscript><footer>© 2025</footer></body>`,
			want: Page{Text: "Body\nKept text."},
		},
		{
			name: "title falls back to og:title then h1",
			in:   `<head><meta property="og:title" content="OG Title"></head><body><h1>H1</h1></body>`,
			want: Page{Title: "OG Title", Text: "H1"},
		},
		{
			name: "icon link preferred over apple-touch-icon",
			in:   `<head><link rel="apple-touch-icon" href="/apple.png"><link rel="stylesheet" href="/s.css"><link rel="Shortcut Icon" href=" /favicon.ico "><link rel="icon" href="/second.png"></head><body><p>x</p></body>`,
			want: Page{Text: "x", Icon: "/favicon.ico"},
		},
		{
			name: "apple-touch-icon when there is no icon",
			in:   `<head><link rel="apple-touch-icon" href="https://cdn.example/a.png"></head><body><p>x</p></body>`,
			want: Page{Text: "x", Icon: "https://cdn.example/a.png"},
		},
		{
			name: "entities decoded",
			in:   `<p>caf&eacute; &lt;tag&gt; &quot;q&quot; &#x1F600; &#8212;</p>`,
			want: Page{Text: "café <tag> \"q\" 😀 —"},
		},
		{
			name: "preformatted text keeps its lines",
			in:   "<p>run\n this</p><pre>line 1\n  line 2</pre>",
			want: Page{Text: "run this\nline 1\nline 2"},
		},
		{
			name: "lists, tables and line breaks",
			in:   `<ul><li>one</li><li>two</li></ul><table><tr><td>a</td><td>b</td></tr><tr><th>c</th><td>d</td></tr></table>line<br>break`,
			want: Page{Text: "one\ntwo\na b\nc d\nline\nbreak"},
		},
		{
			name: "inline elements do not split words",
			in:   `<p>un<em>break</em>able <span>and</span><a href="#">linked</a></p>`,
			want: Page{Text: "unbreakable andlinked"},
		},
		{
			name: "plain text passes through",
			in:   "just   text\n\n\nmore",
			want: Page{Text: "just text more"},
		},
		{
			name: "broken markup",
			in:   `<p>unclosed <div>nested <p>para</b></i> end`,
			want: Page{Text: "unclosed\nnested\npara end"},
		},
		{
			name: "invalid utf-8 dropped",
			in:   "<title>bad\xff title</title><p>ok\xfe text</p>",
			want: Page{Title: "bad title", Text: "ok text"},
		},
		{
			name: "empty",
			in:   "",
			want: Page{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Extract(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Extract() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExtractFixture(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "article.html"))
	if err != nil {
		t.Fatal(err)
	}
	got := Extract(string(src))
	want, err := os.ReadFile(filepath.Join("testdata", "article.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(strings.TrimSpace(string(want)), got.Title+"\n---\n"+got.Text); diff != "" {
		t.Errorf("Extract(article.html) mismatch (-want +got):\n%s", diff)
	}
}

func TestInline(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"plain   text", "plain text"},
		{"The <strong>Go</strong> programming\n language", "The Go programming language"},
		{"AT&amp;T &#x27;quoted&#x27;", "AT&T 'quoted'"},
		{"a < b and c > d", "a < b and c > d"},
		{"x<script>alert(1)</script>y", "xy"},
		{"<p>two</p><p>paras</p>", "two paras"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Inline(tt.in); got != tt.want {
			t.Errorf("Inline(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzExtract(f *testing.F) {
	for _, seed := range []string{
		"", "<p>x</p>", "<title>t</title><h1>h</h1>", "<script>", "<!--", "&#0;&#xD800;",
		"<table><td><svg><foreignObject><p>x", "<p hidden=>", "\xff\xfe<b>",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		p := Extract(in)
		for _, s := range []string{p.Title, p.Text, Inline(in)} {
			if !utf8.ValidString(s) {
				t.Errorf("output %q is not valid UTF-8", s)
			}
			if s != strings.TrimSpace(s) {
				t.Errorf("output %q has surrounding whitespace", s)
			}
		}
		if strings.Contains(p.Title, "\n") {
			t.Errorf("title %q has a line break", p.Title)
		}
		if strings.Contains(p.Text, "\n\n") {
			t.Errorf("text %q has an empty line", p.Text)
		}
	})
}
