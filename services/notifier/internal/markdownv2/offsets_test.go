package markdownv2

import (
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestUTF16Len(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  int
		runes int
	}{
		{name: "empty", in: "", want: 0, runes: 0},
		{name: "ascii", in: "disk full", want: 9, runes: 9},
		{name: "precomposed accent", in: "café", want: 4, runes: 4},
		{name: "combining mark", in: "cafe\u0301", want: 5, runes: 5},
		{name: "chinese", in: "磁盘已满", want: 4, runes: 4},
		{name: "emoji is a surrogate pair", in: "🔥", want: 2, runes: 1},
		{name: "skin tone modifier", in: "👍🏽", want: 4, runes: 2},
		{name: "zwj family", in: "👨‍👩‍👧", want: 8, runes: 5},
		{name: "flag", in: "🇺🇦", want: 4, runes: 2},
		{name: "keycap", in: "1️⃣", want: 3, runes: 3},
		{name: "mixed", in: "CPU 🔥 中文 e\u0301", want: 12, runes: 11},
		{name: "invalid utf-8 byte counts as one", in: "a\xffb", want: 3, runes: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := UTF16Len(tt.in); got != tt.want {
				t.Errorf("UTF16Len(%q) = %d, want %d", tt.in, got, tt.want)
			}
			if got := utf8.RuneCountInString(tt.in); got != tt.runes {
				t.Errorf("RuneCountInString(%q) = %d, want %d", tt.in, got, tt.runes)
			}
		})
	}
}

func TestOffsetConversions(t *testing.T) {
	// "a🔥中e\u0301b": bytes a=0 🔥=1..4 中=5..7 e=8 U+0301=9..10 b=11.
	const s = "a🔥中e\u0301b"
	tests := []struct {
		name                 string
		byteOff              int
		wantU16, wantRune    int
		wantBackByte         int // UTF16ToByte(ByteToUTF16(off)): the boundary at or before off
		wantRuneToByteOfRune int
	}{
		{name: "start", byteOff: 0, wantU16: 0, wantRune: 0, wantBackByte: 0},
		{name: "after ascii", byteOff: 1, wantU16: 1, wantRune: 1, wantBackByte: 1},
		{name: "inside emoji rounds down", byteOff: 3, wantU16: 1, wantRune: 1, wantBackByte: 1},
		{name: "after emoji", byteOff: 5, wantU16: 3, wantRune: 2, wantBackByte: 5},
		{name: "after chinese", byteOff: 8, wantU16: 4, wantRune: 3, wantBackByte: 8},
		{name: "before combining mark", byteOff: 9, wantU16: 5, wantRune: 4, wantBackByte: 9},
		{name: "after combining mark", byteOff: 11, wantU16: 6, wantRune: 5, wantBackByte: 11},
		{name: "end", byteOff: 12, wantU16: 7, wantRune: 6, wantBackByte: 12},
		{name: "past the end clamps", byteOff: 99, wantU16: 7, wantRune: 6, wantBackByte: 12},
		{name: "negative clamps", byteOff: -5, wantU16: 0, wantRune: 0, wantBackByte: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := []int{
				ByteToUTF16(s, tt.byteOff),
				ByteToRune(s, tt.byteOff),
				UTF16ToByte(s, ByteToUTF16(s, tt.byteOff)),
				RuneToByte(s, ByteToRune(s, tt.byteOff)),
				UTF16ToRune(s, ByteToUTF16(s, tt.byteOff)),
				RuneToUTF16(s, ByteToRune(s, tt.byteOff)),
			}
			want := []int{tt.wantU16, tt.wantRune, tt.wantBackByte, tt.wantBackByte, tt.wantRune, tt.wantU16}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("conversions of byte %d in %q (-want +got):\n%s", tt.byteOff, s, diff)
			}
		})
	}
}

func TestUTF16ToByteInsideSurrogatePair(t *testing.T) {
	// UTF-16 offset 2 falls between the halves of 🔥 (units 1 and 2).
	if got, want := UTF16ToByte("a🔥b", 2), 1; got != want {
		t.Errorf("UTF16ToByte(\"a🔥b\", 2) = %d, want %d", got, want)
	}
	if got, want := SliceUTF16("a👨‍👩‍👧b", 1, 8), "👨‍👩‍👧"; got != want {
		t.Errorf("SliceUTF16 = %q, want %q", got, want)
	}
}

// TestOffsetsProperty checks the converters against straightforward
// definitions at every character boundary of random text.
func TestOffsetsProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		s := randomText(r, 25)
		runeIdx := 0
		for b := 0; b <= len(s); b++ {
			if b < len(s) && !utf8.RuneStart(s[b]) {
				continue
			}
			u16 := UTF16Len(s[:b])
			if got := ByteToUTF16(s, b); got != u16 {
				t.Fatalf("ByteToUTF16(%q, %d) = %d, want %d", s, b, got, u16)
			}
			if got := UTF16ToByte(s, u16); got != b {
				t.Fatalf("UTF16ToByte(%q, %d) = %d, want %d", s, u16, got, b)
			}
			if got := ByteToRune(s, b); got != runeIdx {
				t.Fatalf("ByteToRune(%q, %d) = %d, want %d", s, b, got, runeIdx)
			}
			if got := RuneToByte(s, runeIdx); got != b {
				t.Fatalf("RuneToByte(%q, %d) = %d, want %d", s, runeIdx, got, b)
			}
			runeIdx++
		}
	}
}
