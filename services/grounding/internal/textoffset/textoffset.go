// Package textoffset converts positions in a string between the three units
// groundcrew meets: UTF-8 byte offsets (what Gemini reports for grounding
// segments and what Go slices by), rune offsets (Unicode code points; what
// groundcrew stores in start_index/end_index and what people call
// "characters") and UTF-16 code unit offsets (what Telegram uses for message
// entities).
//
// Every function takes an offset counted from the start of s and returns the
// same position in the other unit. Offsets never make the functions fail;
// they are clamped so that the result can always be used to slice or index:
//
//   - a negative offset becomes 0;
//   - an offset past the end becomes the length of s in the target unit;
//   - an offset that falls inside a character (a continuation byte of a
//     multi-byte UTF-8 sequence, or between the two halves of a UTF-16
//     surrogate pair) is rounded down to the start of that character. Rounding
//     down keeps the functions monotonic and makes a start offset include the
//     character it points into; use the Span helpers, which round an end
//     offset up, to convert a half-open range without losing a character.
//
// Invalid UTF-8 follows the Go convention of utf8.DecodeRuneInString and of
// converting a string to []rune: each byte that is not part of a valid
// sequence counts as one rune (U+FFFD), which is one UTF-16 code unit.
//
// A "character" here is a code point, not a user-perceived grapheme: an emoji
// ZWJ sequence such as 👩‍💻 is three runes (and five UTF-16 units), and "é"
// written as "e" plus a combining accent is two runes. That matches what the
// APIs we talk to count.
package textoffset

import "unicode/utf8"

// ByteToRune returns the rune offset of the UTF-8 byte offset b in s.
// A b inside a multi-byte character maps to that character's rune offset.
func ByteToRune(s string, b int) int {
	if b <= 0 {
		return 0
	}
	if b >= len(s) {
		return utf8.RuneCountInString(s)
	}
	n := 0
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		if i+size > b {
			// b is i itself or a continuation byte of the rune at i.
			return n
		}
		i += size
		n++
	}
	return n
}

// RuneToByte returns the UTF-8 byte offset of the rune offset r in s, which
// is always a valid place to slice s.
func RuneToByte(s string, r int) int {
	if r <= 0 {
		return 0
	}
	n := 0
	for i := 0; i < len(s); {
		if n == r {
			return i
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n++
	}
	return len(s)
}

// RuneToUTF16 returns the UTF-16 code unit offset of the rune offset r in s.
func RuneToUTF16(s string, r int) int {
	if r <= 0 {
		return 0
	}
	n, u := 0, 0
	for i := 0; i < len(s) && n < r; {
		c, size := utf8.DecodeRuneInString(s[i:])
		u += utf16Len(c)
		i += size
		n++
	}
	return u
}

// UTF16ToRune returns the rune offset of the UTF-16 code unit offset u in s.
// A u between the two halves of a surrogate pair (inside an emoji, say) maps
// to the rune offset of that character.
func UTF16ToRune(s string, u int) int {
	if u <= 0 {
		return 0
	}
	n, at := 0, 0
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		w := utf16Len(c)
		if at+w > u {
			return n
		}
		at += w
		i += size
		n++
	}
	return n
}

// ByteToUTF16 returns the UTF-16 code unit offset of the UTF-8 byte offset b
// in s, rounding a b inside a character down to its start.
func ByteToUTF16(s string, b int) int {
	if b <= 0 {
		return 0
	}
	u := 0
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		if i+size > b {
			return u
		}
		u += utf16Len(c)
		i += size
	}
	return u
}

// UTF16ToByte returns the UTF-8 byte offset of the UTF-16 code unit offset u
// in s, rounding a u inside a surrogate pair down to the start of the
// character.
func UTF16ToByte(s string, u int) int {
	if u <= 0 {
		return 0
	}
	at := 0
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		w := utf16Len(c)
		if at+w > u {
			return i
		}
		at += w
		i += size
	}
	return len(s)
}

// ByteSpanToRune converts the half-open byte range [start, end) of s to a
// rune range. Unlike two ByteToRune calls it rounds a mid-character end up,
// so a range that covers part of a character covers all of it; the result
// always has start <= end.
func ByteSpanToRune(s string, start, end int) (int, int) {
	rs := ByteToRune(s, start)
	re := ByteToRune(s, end)
	if end > 0 && end < len(s) && RuneToByte(s, re) < end {
		// end points into the middle of the character at re.
		re++
	}
	return rs, max(rs, re)
}

// UTF16SpanToRune converts the half-open UTF-16 range [start, end) of s to a
// rune range, rounding a start inside a surrogate pair down and such an end
// up, so the result always covers whole characters and has start <= end.
func UTF16SpanToRune(s string, start, end int) (int, int) {
	rs := UTF16ToRune(s, start)
	re := UTF16ToRune(s, end)
	if RuneToUTF16(s, re) < end && re < utf8.RuneCountInString(s) {
		re++
	}
	return rs, max(rs, re)
}

// utf16Len is the number of UTF-16 code units that encode c once the string
// has been decoded: two for supplementary-plane characters, one for the rest
// (including utf8.RuneError, which stands for one invalid byte).
func utf16Len(c rune) int {
	if c >= 0x10000 {
		return 2
	}
	return 1
}
