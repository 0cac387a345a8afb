package markdownv2

import (
	"errors"
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		wantPlain string
		want      []Entity
	}{
		{name: "empty", in: "", wantPlain: ""},
		{name: "plain", in: "hello world", wantPlain: "hello world"},
		{name: "escapes", in: `1\.5 \+ 2 \= 3\.5\!`, wantPlain: "1.5 + 2 = 3.5!"},
		{name: "escaped backslash", in: `C:\\temp`, wantPlain: `C:\temp`},
		{name: "any ascii can be escaped", in: `\a\ \~`, wantPlain: "a ~"},
		{name: "backslash before non-ascii is literal", in: `\中`, wantPlain: `\中`},
		{name: "trailing backslash is literal", in: `a\`, wantPlain: `a\`},
		// What go-telegram's EscapeMarkdown produces for `C:\temp.`: no
		// error, but the backslash silently disappears.
		{name: "unescaped backslash vanishes", in: `C:\temp\.`, wantPlain: "C:temp."},
		{name: "bold", in: "*bold* text", wantPlain: "bold text", want: []Entity{{Type: Bold, Offset: 0, Length: 4}}},
		{name: "escaped star inside bold", in: `*bold \*text*`, wantPlain: "bold *text", want: []Entity{{Type: Bold, Offset: 0, Length: 10}}},
		{name: "italic", in: "_it_", wantPlain: "it", want: []Entity{{Type: Italic, Offset: 0, Length: 2}}},
		{name: "underline", in: "__u__", wantPlain: "u", want: []Entity{{Type: Underline, Offset: 0, Length: 1}}},
		{
			// Telegram's documented way to end italic before underline.
			name: "italic inside underline", in: "___italic underline_\r__", wantPlain: "italic underline\r",
			want: []Entity{{Type: Underline, Offset: 0, Length: 17}, {Type: Italic, Offset: 0, Length: 16}},
		},
		{name: "strikethrough", in: "~s~", wantPlain: "s", want: []Entity{{Type: Strikethrough, Offset: 0, Length: 1}}},
		{name: "spoiler", in: "||sp||", wantPlain: "sp", want: []Entity{{Type: Spoiler, Offset: 0, Length: 2}}},
		{
			name: "nested", in: "*bold _italic bold ~strike||spoiler||~ __u__ _bold*", wantPlain: "bold italic bold strikespoiler u bold",
			want: []Entity{
				{Type: Bold, Offset: 0, Length: 37},
				{Type: Italic, Offset: 5, Length: 28},
				{Type: Strikethrough, Offset: 17, Length: 13},
				{Type: Spoiler, Offset: 23, Length: 7},
				{Type: Underline, Offset: 31, Length: 1},
			},
		},
		{name: "empty entity dropped", in: "a**b", wantPlain: "ab"},
		{
			name: "link", in: `[docs](https://example.com/a_(b\))`, wantPlain: "docs",
			want: []Entity{{Type: TextLink, Offset: 0, Length: 4, URL: "https://example.com/a_(b)"}},
		},
		{name: "invalid link keeps text", in: "[docs](mailto:x)", wantPlain: "docs"},
		{
			name: "text mention", in: "[Ann](tg://user?id=123)", wantPlain: "Ann",
			want: []Entity{{Type: TextMention, Offset: 0, Length: 3, UserID: 123}},
		},
		{
			name: "custom emoji", in: "![👍](tg://emoji?id=5368324170671202286)", wantPlain: "👍",
			want: []Entity{{Type: CustomEmoji, Offset: 0, Length: 2, CustomEmojiID: 5368324170671202286}},
		},
		{
			name: "code keeps reserved characters", in: "`a.b_c *d* \\` \\\\`", wantPlain: "a.b_c *d* ` \\",
			want: []Entity{{Type: Code, Offset: 0, Length: 13}},
		},
		{
			name: "pre with language", in: "```go\nfmt.Println(\"x\")\n```", wantPlain: "fmt.Println(\"x\")\n",
			want: []Entity{{Type: Pre, Offset: 0, Length: 17, Language: "go"}},
		},
		{name: "pre without language", in: "```\npre.```", wantPlain: "pre.", want: []Entity{{Type: Pre, Offset: 0, Length: 4}}},
		{name: "pre on one line", in: "```pre```", wantPlain: "pre", want: []Entity{{Type: Pre, Offset: 0, Length: 3}}},
		{
			name: "blockquote", in: ">quote\n>line two\nafter", wantPlain: "quote\nline two\nafter",
			want: []Entity{{Type: Blockquote, Offset: 0, Length: 15}},
		},
		{
			name: "blockquote at end", in: "before\n>q", wantPlain: "before\nq",
			want: []Entity{{Type: Blockquote, Offset: 7, Length: 1}},
		},
		{
			name: "expandable blockquote", in: "**>exp\n>more||", wantPlain: "exp\nmore",
			want: []Entity{{Type: ExpandableBlockquote, Offset: 0, Length: 8}},
		},
		{
			name: "expandable blockquote then text", in: "**>exp||\nafter", wantPlain: "exp\nafter",
			want: []Entity{{Type: ExpandableBlockquote, Offset: 0, Length: 4}},
		},
		{
			name: "offsets count utf-16 units", in: "👍 *ok* 中文 _斜体_", wantPlain: "👍 ok 中文 斜体",
			want: []Entity{{Type: Bold, Offset: 3, Length: 2}, {Type: Italic, Offset: 9, Length: 2}},
		},
		{
			name: "zwj sequence", in: "👨‍👩‍👧*x*", wantPlain: "👨‍👩‍👧x",
			want: []Entity{{Type: Bold, Offset: 8, Length: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plain, got, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q) error: %v", tt.in, err)
			}
			if plain != tt.wantPlain {
				t.Errorf("Parse(%q) plain = %q, want %q", tt.in, plain, tt.wantPlain)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Parse(%q) entities (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want ParseError
	}{
		{
			name: "unescaped dot", in: "Disk 91.5% full",
			want: ParseError{Reason: `Character '.' is reserved and must be escaped with the preceding '\'`, Byte: 7, Char: 7},
		},
		{
			name: "offset counts characters too", in: "磁盘满了.",
			want: ParseError{Reason: `Character '.' is reserved and must be escaped with the preceding '\'`, Byte: 12, Char: 4},
		},
		{
			name: "single pipe", in: "a|b",
			want: ParseError{Reason: `Character '|' is reserved and must be escaped with the preceding '\'`, Byte: 1, Char: 1},
		},
		{
			name: "quote mark mid-line", in: "a>b",
			want: ParseError{Reason: `Character '>' is reserved and must be escaped with the preceding '\'`, Byte: 1, Char: 1},
		},
		{
			name: "unclosed bold", in: "x *bold",
			want: ParseError{Reason: "Can't find end of Bold entity at byte offset 2", Byte: 2, Char: 2},
		},
		{
			name: "unclosed link target", in: "[a](http://x",
			want: ParseError{Reason: "Can't find end of a URL at byte offset 4", Byte: 4, Char: 4},
		},
		{
			name: "entity crossing the end of a quote", in: ">*b\nc*",
			want: ParseError{Reason: "Can't find end of Bold entity at byte offset 1", Byte: 1, Char: 1},
		},
		{
			name: "triple underscore", in: "___a___",
			want: ParseError{Reason: "Can't find end of Italic entity at byte offset 6", Byte: 6, Char: 6},
		},
		{
			name: "invalid utf-8", in: "ok\xff",
			want: ParseError{Reason: "Strings must be encoded in UTF-8", Byte: 2, Char: 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plain, _, err := Parse(tt.in)
			var got *ParseError
			if !errors.As(err, &got) {
				t.Fatalf("Parse(%q) = %q, %v; want a *ParseError", tt.in, plain, err)
			}
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("Parse(%q) error (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseErrorMessage(t *testing.T) {
	_, _, err := Parse("v1.2")
	want := `can't parse entities: Character '.' is reserved and must be escaped with the preceding '\' (byte 2, character 2)`
	if err == nil || err.Error() != want {
		t.Errorf("Parse error = %v, want %s", err, want)
	}
}

// TestParseRandom runs random markup through Parse and checks the invariants
// of its answer, with a fixed seed; FuzzParse does the same open-ended.
func TestParseRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		checkParse(t, randomText(r, 30))
	}
}

func checkParse(t *testing.T, s string) {
	t.Helper()
	plain, entities, err := Parse(s)
	if err != nil {
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Byte < 0 || pe.Byte > len(s) {
			t.Fatalf("Parse(%q) error %v has no valid offset", s, err)
		}
		return
	}
	if !utf8.ValidString(plain) {
		t.Fatalf("Parse(%q) plain %q is not UTF-8", s, plain)
	}
	n := UTF16Len(plain)
	for _, e := range entities {
		if e.Offset < 0 || e.Length <= 0 || e.Offset+e.Length > n {
			t.Fatalf("Parse(%q) = %q with entity %+v outside the text (%d units)", s, plain, e, n)
		}
		if RuneToUTF16(plain, UTF16ToRune(plain, e.Offset)) != e.Offset {
			t.Fatalf("Parse(%q) = %q with entity %+v starting inside a character", s, plain, e)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "*a*", "___a_\r__", "[a](b)", "```go\nx```", ">q\n>r||", "**>x||\ny", "\\", "a.b", "![x](tg://emoji?id=1)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkParse(t, s)
	})
}

func BenchmarkParse(b *testing.B) {
	s := Escape("CPU usage > 90% on node-1.prod (instance=10.0.0.1:9100)\n") + "*bold* _it_ [link](https://example.com)"
	for b.Loop() {
		if _, _, err := Parse(s); err != nil {
			b.Fatal(err)
		}
	}
}
