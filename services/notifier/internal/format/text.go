package format

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/groundcrew/groundcrew/services/notifier/internal/markdownv2"
)

// Ellipsis marks every cut. It is one character and one UTF-16 unit.
const Ellipsis = "…"

// cleanText makes s valid UTF-8 and applies, in advance, the changes
// Telegram makes to every incoming text (tdlib's clean_input_string), so that
// the text we measure and test is the text the user sees: "\r\n" and a lone
// '\r' become '\n' (Telegram would drop a lone '\r' and join the lines),
// U+2028/U+2029 become '\n', other control characters become spaces,
// the bidi embedding controls U+202A–U+202E and the combining marks U+030A,
// U+0333 and U+033F are removed, and in a run of LRM/RLM marks all but the
// last become ZWNJ.
func cleanText(s string) string {
	if isClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '\r':
			if i < len(s) && s[i] == '\n' {
				continue
			}
			b.WriteByte('\n')
		case r == '\n':
			b.WriteByte('\n')
		case r < 0x20:
			b.WriteByte(' ')
		case r == '\u2028' || r == '\u2029':
			b.WriteByte('\n')
		case r >= '\u202a' && r <= '\u202e', r == '\u030a', r == '\u0333', r == '\u033f':
			// Telegram removes these.
		case r == '\u200e' || r == '\u200f':
			if next, _ := utf8.DecodeRuneInString(s[i:]); next == '\u200e' || next == '\u200f' {
				b.WriteRune('\u200c')
			} else {
				b.WriteRune(r)
			}
		default:
			// Invalid bytes decode to utf8.RuneError, written as U+FFFD.
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isClean reports whether cleanText would return s unchanged, without
// decoding: every character cleanText changes is either a control byte or
// starts with 0xCC (U+030A..U+033F) or 0xE2 (U+2000..U+2FFF).
func isClean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 && c != '\n') || c == 0xCC || c == 0xE2 {
			return cleanSlow(s)
		}
	}
	return utf8.ValidString(s)
}

// cleanSlow is isClean for text with bytes that may need a change; 0xE2
// also starts common harmless characters such as '—' and '…'.
func cleanSlow(s string) bool {
	prevMark := false
	for _, r := range s {
		switch {
		case r == utf8.RuneError, r < 0x20 && r != '\n', r >= '\u2028' && r <= '\u202e',
			r == '\u030a', r == '\u0333', r == '\u033f':
			return false
		case r == '\u200e' || r == '\u200f':
			if prevMark {
				return false
			}
			prevMark = true
			continue
		}
		prevMark = false
	}
	return true
}

// oneLine collapses every run of white space (newlines included) into one
// space and trims both ends, for fields that must stay on one line.
func oneLine(s string) string {
	prevSpace := true // so that a leading space counts as a run
	for _, r := range s {
		if unicode.IsSpace(r) {
			if r != ' ' || prevSpace {
				return strings.Join(strings.Fields(s), " ")
			}
			prevSpace = true
			continue
		}
		prevSpace = false
	}
	if prevSpace {
		return strings.TrimRight(s, " ")
	}
	return s
}

// measure is a length in either characters or UTF-16 units.
type measure int

const (
	runes  measure = iota // characters, for the field limits people set
	utf16s                // UTF-16 code units, for Telegram's message limit
)

func (m measure) of(r rune) int {
	if m == utf16s && r >= 0x10000 {
		return 2
	}
	return 1
}

func (m measure) len(s string) int {
	if m == utf16s {
		return markdownv2.UTF16Len(s)
	}
	return utf8.RuneCountInString(s)
}

// truncate shortens s to at most limit units of m, the ellipsis included.
// It cuts at the last white space when that keeps at least half of the room
// (so words stay whole in languages that use spaces) and otherwise between
// characters, never inside a surrogate pair and never between a character
// and the marks, joiners, selectors and modifiers that belong to it. It
// reports whether it cut.
func truncate(s string, limit int, m measure) (string, bool) {
	if m.len(s) <= limit {
		return s, false
	}
	if limit < 1 {
		return "", true
	}
	budget := limit - 1 // room left for the ellipsis
	cut, used := len(s), 0
	lastSpace, lastSpaceUsed := -1, 0
	for i, r := range s {
		w := m.of(r)
		if used+w > budget {
			cut = i
			break
		}
		if unicode.IsSpace(r) {
			lastSpace, lastSpaceUsed = i, used
		}
		used += w
	}
	next, _ := utf8.DecodeRuneInString(s[cut:])
	switch {
	case unicode.IsSpace(next):
		// Already at a word boundary.
	case lastSpace >= 0 && lastSpaceUsed >= budget/2:
		cut = lastSpace
	default:
		cut = graphemeSafe(s, cut)
	}
	prefix := strings.TrimRightFunc(s[:cut], unicode.IsSpace)
	return prefix + Ellipsis, true
}

// graphemeSafe moves a cut at byte cut back until it no longer separates a
// character from what extends it: combining marks, a zero-width joiner and
// what follows it (ZWJ emoji sequences), variation selectors, skin-tone
// modifiers, emoji tag characters and the second half of a flag.
func graphemeSafe(s string, cut int) int {
	for cut > 0 {
		next, _ := utf8.DecodeRuneInString(s[cut:])
		prev, size := utf8.DecodeLastRuneInString(s[:cut])
		if cut < len(s) && (extendsPrevious(next) || prev == '\u200d' ||
			(isRegionalIndicator(next) && isRegionalIndicator(prev) && oddRegionalRun(s[:cut]))) {
			cut -= size
			continue
		}
		return cut
	}
	return 0
}

func extendsPrevious(r rune) bool {
	return unicode.Is(unicode.M, r) || r == '\u200d' ||
		(r >= 0xFE00 && r <= 0xFE0F) || (r >= 0x1F3FB && r <= 0x1F3FF) ||
		(r >= 0xE0020 && r <= 0xE007F) || (r >= 0xE0100 && r <= 0xE01EF)
}

func isRegionalIndicator(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }

// oddRegionalRun reports whether s ends in an odd number of regional
// indicators, i.e. a cut after it would split a flag.
func oddRegionalRun(s string) bool {
	n := 0
	for len(s) > 0 {
		r, size := utf8.DecodeLastRuneInString(s)
		if !isRegionalIndicator(r) {
			break
		}
		n++
		s = s[:len(s)-size]
	}
	return n%2 == 1
}
