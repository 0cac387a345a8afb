package markdownv2

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestEscape(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "empty", in: "", want: ""},
		{name: "plain", in: "disk usage high on db-1", want: `disk usage high on db\-1`},
		{name: "arithmetic", in: "1.5 + 2 = 3.5!", want: `1\.5 \+ 2 \= 3\.5\!`},
		{name: "every reserved character", in: "_*[]()~`>#+-=|{}.!", want: `\_\*\[\]\(\)\~` + "\\`" + `\>\#\+\-\=\|\{\}\.\!`},
		{name: "backslash", in: `C:\temp\new`, want: `C:\\temp\\new`},
		{name: "backslash before reserved", in: `\.`, want: `\\\.`},
		{name: "newlines kept", in: "a\n\nb\r\n", want: "a\n\nb\r\n"},
		{name: "url", in: "https://example.com/a_b?x=1#frag", want: `https://example\.com/a\_b?x\=1\#frag`},
		{name: "chinese", in: "磁盘已满。请检查", want: "磁盘已满。请检查"},
		{name: "emoji and zwj", in: "🔥 👨‍👩‍👧 (prod)", want: `🔥 👨‍👩‍👧 \(prod\)`},
		{name: "combining mark", in: "e\u0301.", want: "e\u0301\\."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Escape(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Escape(%q) = %q, want %q (-want +got):\n%s", tt.in, got, tt.want, diff)
			}
		})
	}
}

func TestEscapeCode(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{in: "", want: ""},
		{in: "rate(x[5m]) > 0.9 *_~|", want: "rate(x[5m]) > 0.9 *_~|"},
		{in: "a`b", want: "a\\`b"},
		{in: `C:\dir`, want: `C:\\dir`},
	}
	for _, tt := range tests {
		if got := EscapeCode(tt.in); got != tt.want {
			t.Errorf("EscapeCode(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEscapeLinkURL(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{in: "https://example.com/", want: "https://example.com/"},
		{in: "https://en.wikipedia.org/wiki/Go_(language)", want: `https://en.wikipedia.org/wiki/Go_(language\)`},
		{in: `https://x.test/a\b`, want: `https://x.test/a\\b`},
	}
	for _, tt := range tests {
		if got := EscapeLinkURL(tt.in); got != tt.want {
			t.Errorf("EscapeLinkURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestIsReserved(t *testing.T) {
	var got []byte
	for c := 0; c < 256; c++ {
		if IsReserved(byte(c)) {
			got = append(got, byte(c))
		}
	}
	want := []byte("!#()*+-.=>[\\]_`{|}~")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reserved set = %q, want %q (-want +got):\n%s", got, want, diff)
	}
}

// alphabet is weighted towards the characters that break MarkdownV2 and
// UTF-16 arithmetic.
var alphabet = []rune(`_*[]()~` + "`" + `>#+-=|{}.!\\\` + "\n\r\t\x00 aZ09" +
	"中文字。" + "é" + "\u0301\u200d\ufe0f" + "👍🏽👨🇺🇦" + "\U0010FFFF" + "\u2028")

// randomText returns a random valid UTF-8 string of up to n runes.
func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	for range r.IntN(n + 1) {
		if r.IntN(20) == 0 {
			// Any code point now and then, not just the alphabet.
			c := rune(r.IntN(utf8.MaxRune + 1))
			if utf8.ValidRune(c) {
				b.WriteRune(c)
				continue
			}
		}
		b.WriteRune(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

// TestEscapeRoundTripProperty checks that escaped text parses back to itself
// with no entities, for random text with a fixed seed.
func TestEscapeRoundTripProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		s := randomText(r, 40)
		checkEscapeRoundTrip(t, s)
	}
}

func checkEscapeRoundTrip(t *testing.T, s string) {
	t.Helper()
	plain, entities, err := Parse(Escape(s))
	if err != nil {
		t.Fatalf("Parse(Escape(%q)) error: %v", s, err)
	}
	if plain != s || len(entities) != 0 {
		t.Fatalf("Parse(Escape(%q)) = %q, %v; want the input and no entities", s, plain, entities)
	}
	if s == "" {
		return
	}
	// The code and link escapers must round-trip inside their entities too.
	plain, entities, err = Parse("`" + EscapeCode(s) + "`")
	if err != nil {
		t.Fatalf("Parse(code of %q) error: %v", s, err)
	}
	want := []Entity{{Type: Code, Offset: 0, Length: UTF16Len(s)}}
	if plain != s || !cmp.Equal(want, entities) {
		t.Fatalf("Parse(code of %q) = %q, %+v; want the input and %+v", s, plain, entities, want)
	}
	if !strings.HasPrefix(s, "\r") {
		plain, _, err = Parse("```\n" + EscapeCode(s) + "```")
		if err != nil || plain != s {
			t.Fatalf("Parse(pre of %q) = %q, %v; want the input", s, plain, err)
		}
	}
	plain, _, err = Parse("[link](" + EscapeLinkURL(s) + ")")
	if err != nil || plain != "link" {
		t.Fatalf("Parse(link to %q) = %q, %v; want \"link\"", s, plain, err)
	}
}

func FuzzEscapeRoundTrip(f *testing.F) {
	for _, s := range []string{"", "a.b", `\`, "_*[]()~`>#+-=|{}.!\\", "\n>quote", "中文。", "👨‍👩‍👧", "e\u0301", "\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip("Telegram accepts only UTF-8")
		}
		checkEscapeRoundTrip(t, s)
	})
}

func BenchmarkEscape(b *testing.B) {
	s := strings.Repeat("CPU usage > 90% on node-1.prod (instance=10.0.0.1:9100) ", 20)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		Escape(s)
	}
}
