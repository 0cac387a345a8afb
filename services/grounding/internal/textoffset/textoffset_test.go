package textoffset

import (
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// boundary is one character boundary of a string expressed in all three
// units; conversions between boundaries must be exact in every direction.
type boundary struct{ Byte, Rune, UTF16 int }

func TestBoundaries(t *testing.T) {
	tests := []struct {
		name string
		s    string
		want []boundary
	}{
		{"empty", "", []boundary{{0, 0, 0}}},
		{"ascii", "ok", []boundary{{0, 0, 0}, {1, 1, 1}, {2, 2, 2}}},
		{"latin precomposed", "né", []boundary{{0, 0, 0}, {1, 1, 1}, {3, 2, 2}}},
		{"chinese", "数据库ok", []boundary{{0, 0, 0}, {3, 1, 1}, {6, 2, 2}, {9, 3, 3}, {10, 4, 4}, {11, 5, 5}}},
		{"emoji surrogate pair", "a😀b", []boundary{{0, 0, 0}, {1, 1, 1}, {5, 2, 3}, {6, 3, 4}}},
		// 👩‍💻 is woman + ZWJ + laptop: one grapheme, three runes, five UTF-16 units.
		{"zwj sequence", "👩\u200d💻x", []boundary{{0, 0, 0}, {4, 1, 2}, {7, 2, 3}, {11, 3, 5}, {12, 4, 6}}},
		{"combining mark", "e\u0301x", []boundary{{0, 0, 0}, {1, 1, 1}, {3, 2, 2}, {4, 3, 3}}},
		{"flag regional indicators", "🇩🇪", []boundary{{0, 0, 0}, {4, 1, 2}, {8, 2, 4}}},
		// Each invalid byte is one rune (U+FFFD) and one UTF-16 unit.
		{"invalid utf8", "a\xffb", []boundary{{0, 0, 0}, {1, 1, 1}, {2, 2, 2}, {3, 3, 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []boundary
			for _, w := range tt.want {
				got = append(got, boundary{
					Byte:  RuneToByte(tt.s, ByteToRune(tt.s, w.Byte)),
					Rune:  ByteToRune(tt.s, w.Byte),
					UTF16: RuneToUTF16(tt.s, w.Rune),
				})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("byte→rune→byte / rune→utf16 mismatch (-want +got):\n%s", diff)
			}
			got = got[:0]
			for _, w := range tt.want {
				got = append(got, boundary{
					Byte:  UTF16ToByte(tt.s, w.UTF16),
					Rune:  UTF16ToRune(tt.s, w.UTF16),
					UTF16: ByteToUTF16(tt.s, w.Byte),
				})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("utf16→byte / utf16→rune / byte→utf16 mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClamping(t *testing.T) {
	const s = "a数😀" // bytes: a=0, 数=1..3, 😀=4..7; runes 0,1,2; UTF-16 0,1,2..3
	tests := []struct {
		name string
		f    func(string, int) int
		in   int
		want int
	}{
		{"ByteToRune negative", ByteToRune, -5, 0},
		{"ByteToRune past end", ByteToRune, 99, 3},
		{"ByteToRune at end", ByteToRune, 8, 3},
		{"ByteToRune inside 数 rounds down", ByteToRune, 2, 1},
		{"ByteToRune last byte of 数 rounds down", ByteToRune, 3, 1},
		{"ByteToRune inside emoji rounds down", ByteToRune, 6, 2},
		{"RuneToByte negative", RuneToByte, -1, 0},
		{"RuneToByte past end", RuneToByte, 10, 8},
		{"RuneToUTF16 negative", RuneToUTF16, -1, 0},
		{"RuneToUTF16 past end", RuneToUTF16, 10, 4},
		{"UTF16ToRune negative", UTF16ToRune, -1, 0},
		{"UTF16ToRune between surrogates rounds down", UTF16ToRune, 3, 2},
		{"UTF16ToRune past end", UTF16ToRune, 99, 3},
		{"UTF16ToByte between surrogates rounds down", UTF16ToByte, 3, 4},
		{"UTF16ToByte past end", UTF16ToByte, 99, 8},
		{"ByteToUTF16 inside emoji rounds down", ByteToUTF16, 5, 2},
		{"ByteToUTF16 past end", ByteToUTF16, 99, 4},
		{"ByteToUTF16 negative", ByteToUTF16, -3, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f(s, tt.in); got != tt.want {
				t.Errorf("f(%q, %d) = %d, want %d", s, tt.in, got, tt.want)
			}
		})
	}
}

func TestSpans(t *testing.T) {
	// "错误😀 ok": 错=0..2, 误=3..5, 😀=6..9, space=10, o=11, k=12.
	const s = "错误😀 ok"
	type span struct{ Start, End int }
	tests := []struct {
		name       string
		byteStart  int
		byteEnd    int
		utf16Start int
		utf16End   int
		want       span
	}{
		{"exact", 3, 10, 1, 4, span{1, 3}},
		{"end inside a character rounds up", 3, 7, 1, 3, span{1, 3}},
		{"start inside a character rounds down", 4, 6, 1, 2, span{1, 2}},
		{"both out of range", -4, 99, -1, 99, span{0, 6}},
		{"reversed collapses to start", 10, 3, 4, 1, span{3, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bs, be := ByteSpanToRune(s, tt.byteStart, tt.byteEnd)
			if diff := cmp.Diff(tt.want, span{bs, be}); diff != "" {
				t.Errorf("ByteSpanToRune(%d, %d) mismatch (-want +got):\n%s", tt.byteStart, tt.byteEnd, diff)
			}
			us, ue := UTF16SpanToRune(s, tt.utf16Start, tt.utf16End)
			if diff := cmp.Diff(tt.want, span{us, ue}); diff != "" {
				t.Errorf("UTF16SpanToRune(%d, %d) mismatch (-want +got):\n%s", tt.utf16Start, tt.utf16End, diff)
			}
		})
	}
}

// TestGeminiSegment mirrors the production use: Gemini reports a grounding
// segment as UTF-8 byte offsets into its answer, we store rune offsets and
// Telegram needs UTF-16 offsets for the same text.
func TestGeminiSegment(t *testing.T) {
	answer := "重启 Pod 🚀 后, the payments-api recovered."
	segment := "the payments-api recovered."
	byteStart := len("重启 Pod 🚀 后, ")
	byteEnd := byteStart + len(segment)

	rs, re := ByteSpanToRune(answer, byteStart, byteEnd)
	if got := string([]rune(answer)[rs:re]); got != segment {
		t.Errorf("rune span [%d,%d) = %q, want %q", rs, re, got, segment)
	}
	us, ue := RuneToUTF16(answer, rs), RuneToUTF16(answer, re)
	u := utf16.Encode([]rune(answer))
	if got := string(utf16.Decode(u[us:ue])); got != segment {
		t.Errorf("utf16 span [%d,%d) = %q, want %q", us, ue, got, segment)
	}
}

// reference offsets computed the slow, obviously correct way.
func reference(s string) (bytes, units []int) {
	// range over a string yields the byte index of each rune and decodes an
	// invalid byte as U+FFFD of width one, independently of this package.
	u := 0
	for i, r := range s {
		bytes = append(bytes, i)
		units = append(units, u)
		u += len(utf16.Encode([]rune{r}))
	}
	return append(bytes, len(s)), append(units, u)
}

func FuzzOffsets(f *testing.F) {
	for _, seed := range []string{"", "ascii", "数据库连接失败", "a😀b", "👩\u200d💻", "e\u0301", "\xff\xfe", "🇩🇪ok"} {
		f.Add(seed, 3)
	}
	f.Fuzz(func(t *testing.T, s string, off int) {
		bytes, units := reference(s)
		n := len(bytes) - 1
		if got := utf8.RuneCountInString(s); got != n {
			t.Fatalf("reference rune count %d, utf8 says %d", n, got)
		}
		for r := 0; r <= n; r++ {
			if got := RuneToByte(s, r); got != bytes[r] {
				t.Fatalf("RuneToByte(%q, %d) = %d, want %d", s, r, got, bytes[r])
			}
			if got := ByteToRune(s, bytes[r]); got != r {
				t.Fatalf("ByteToRune(%q, %d) = %d, want %d", s, bytes[r], got, r)
			}
			if got := RuneToUTF16(s, r); got != units[r] {
				t.Fatalf("RuneToUTF16(%q, %d) = %d, want %d", s, r, got, units[r])
			}
			if got := UTF16ToRune(s, units[r]); got != r {
				t.Fatalf("UTF16ToRune(%q, %d) = %d, want %d", s, units[r], got, r)
			}
		}
		// Arbitrary offsets: results stay in range, round down to a boundary
		// and agree across the direct and two-step conversions.
		if r := ByteToRune(s, off); r < 0 || r > n || (off >= 0 && off <= len(s) && bytes[r] > off) {
			t.Fatalf("ByteToRune(%q, %d) = %d out of range or rounded up", s, off, r)
		}
		if got, want := ByteToUTF16(s, off), RuneToUTF16(s, ByteToRune(s, off)); got != want {
			t.Fatalf("ByteToUTF16(%q, %d) = %d, want %d", s, off, got, want)
		}
		if got, want := UTF16ToByte(s, off), RuneToByte(s, UTF16ToRune(s, off)); got != want {
			t.Fatalf("UTF16ToByte(%q, %d) = %d, want %d", s, off, got, want)
		}
		if r := UTF16ToRune(s, off); r < 0 || r > n {
			t.Fatalf("UTF16ToRune(%q, %d) = %d out of range", s, off, r)
		}
		if a, b := ByteSpanToRune(s, off, off+5); a > b || b > n {
			t.Fatalf("ByteSpanToRune(%q, %d, %d) = %d, %d", s, off, off+5, a, b)
		}
	})
}
