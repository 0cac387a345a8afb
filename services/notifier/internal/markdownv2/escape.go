// Package markdownv2 writes and checks text in Telegram's MarkdownV2 parse
// mode (https://core.telegram.org/bots/api#markdownv2-style).
//
// Telegram rejects a whole message when a single reserved character is left
// unescaped, so everything the notifier sends goes through Escape (or
// EscapeCode / EscapeLinkURL inside entities), and the tests run the output
// through Parse, our own implementation of Telegram's entity parser, to prove
// that the message is accepted and that the user sees exactly the intended
// text. Telegram measures text and entity offsets in UTF-16 code units, Gemini
// reports UTF-8 byte offsets and people count characters; the offset helpers
// in this package convert between the three explicitly.
package markdownv2

import "strings"

// reserved lists the characters that must be escaped with a preceding '\'
// in ordinary MarkdownV2 text. '\' itself is included: Telegram treats a
// backslash followed by any ASCII character as an escape, so a literal
// backslash followed by, say, "n" would otherwise vanish.
const reserved = "_*[]()~`>#+-=|{}.!\\"

// IsReserved reports whether c must be escaped in ordinary MarkdownV2 text.
func IsReserved(c byte) bool {
	return strings.IndexByte(reserved, c) >= 0
}

// Escape returns s escaped for use as ordinary MarkdownV2 text, outside any
// entity or inside bold, italic, underline, strikethrough, spoiler,
// blockquote and link text: every reserved character and every backslash gets
// a preceding backslash. Parse(Escape(s)) yields s for any valid UTF-8 s.
//
// Unlike github.com/go-telegram/bot's EscapeMarkdown it escapes '\' too.
func Escape(s string) string {
	return escapeSet(s, isReservedTable)
}

// EscapeCode returns s escaped for use inside a `code` or ```pre``` entity,
// where only '`' and '\' are special.
//
// A pre block opened with "```" takes a language from a word directly after
// the fence and swallows one newline there; write "```\n" + EscapeCode(s) +
// "```" to keep s intact.
func EscapeCode(s string) string {
	return escapeSet(s, isCodeTable)
}

// EscapeLinkURL returns s escaped for use inside the (...) part of an inline
// link or custom emoji, where only ')' and '\' are special.
func EscapeLinkURL(s string) string {
	return escapeSet(s, isLinkTable)
}

var (
	isReservedTable = table(reserved)
	isCodeTable     = table("`\\")
	isLinkTable     = table(")\\")
)

func table(chars string) *[256]bool {
	var t [256]bool
	for i := 0; i < len(chars); i++ {
		t[chars[i]] = true
	}
	return &t
}

// escapeSet works byte by byte: every special character is ASCII and UTF-8
// continuation bytes are never ASCII, so multi-byte characters pass through
// untouched.
func escapeSet(s string, special *[256]bool) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if special[s[i]] {
			n++
		}
	}
	if n == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + n)
	last := 0
	for i := 0; i < len(s); i++ {
		if special[s[i]] {
			b.WriteString(s[last:i])
			b.WriteByte('\\')
			last = i
		}
	}
	b.WriteString(s[last:])
	return b.String()
}
