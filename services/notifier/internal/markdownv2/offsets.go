package markdownv2

import "unicode/utf8"

// Three ways of counting the same text meet in the notifier: Go strings and
// Gemini's citation indices count UTF-8 bytes, Telegram counts UTF-16 code
// units (message limits, entity offsets), and people count characters, which
// here means Unicode code points (runes). A rune above U+FFFF (most emoji) is
// 4 bytes, 2 UTF-16 units and 1 character; a ZWJ emoji sequence or a letter
// with a combining mark is several characters. Invalid UTF-8 bytes count as
// one character (U+FFFD) each, as in a Go range loop.
//
// The converters below clamp offsets to [0, len] and round an offset that
// falls inside a character down to that character's start, so a converted
// offset always lands on a character boundary.

// UTF16Len returns the length of s in UTF-16 code units, the unit of
// Telegram's message limits and entity offsets.
func UTF16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += runeUTF16(r)
		i += size
	}
	return n
}

// runeUTF16 returns the number of UTF-16 code units r needs.
func runeUTF16(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// ByteToUTF16 converts the byte offset off in s to a UTF-16 offset.
func ByteToUTF16(s string, off int) int {
	off = clamp(off, len(s))
	n := 0
	for i := 0; i < off; {
		r, size := utf8.DecodeRuneInString(s[i:])
		if i+size > off {
			// off points inside this character: round down.
			break
		}
		n += runeUTF16(r)
		i += size
	}
	return n
}

// UTF16ToByte converts the UTF-16 offset off in s to a byte offset. An
// offset between the two halves of a surrogate pair rounds down.
func UTF16ToByte(s string, off int) int {
	if off <= 0 {
		return 0
	}
	n := 0
	for i, r := range s {
		n += runeUTF16(r)
		if n > off {
			return i
		}
		if n == off {
			_, size := utf8.DecodeRuneInString(s[i:])
			return i + size
		}
	}
	return len(s)
}

// ByteToRune converts the byte offset off in s to a character (rune) offset.
func ByteToRune(s string, off int) int {
	off = clamp(off, len(s))
	n := 0
	for i := 0; i < off; {
		_, size := utf8.DecodeRuneInString(s[i:])
		if i+size > off {
			break
		}
		i += size
		n++
	}
	return n
}

// RuneToByte converts the character (rune) offset off in s to a byte offset.
func RuneToByte(s string, off int) int {
	if off <= 0 {
		return 0
	}
	n := 0
	for i := range s {
		if n == off {
			return i
		}
		n++
	}
	return len(s)
}

// UTF16ToRune converts the UTF-16 offset off in s to a character offset.
func UTF16ToRune(s string, off int) int {
	return ByteToRune(s, UTF16ToByte(s, off))
}

// RuneToUTF16 converts the character offset off in s to a UTF-16 offset.
func RuneToUTF16(s string, off int) int {
	return ByteToUTF16(s, RuneToByte(s, off))
}

// SliceUTF16 returns the part of s that starts at UTF-16 offset off and is
// length UTF-16 units long: the text an Entity covers in Parse's plain text.
func SliceUTF16(s string, off, length int) string {
	start := UTF16ToByte(s, off)
	end := UTF16ToByte(s, off+length)
	return s[start:end]
}

func clamp(off, n int) int {
	if off < 0 {
		return 0
	}
	if off > n {
		return n
	}
	return off
}
