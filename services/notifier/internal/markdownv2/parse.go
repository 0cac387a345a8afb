package markdownv2

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// EntityType names a kind of formatting entity, spelled as the Bot API's
// MessageEntity.type.
type EntityType string

// The entity types MarkdownV2 can produce.
const (
	Bold                 EntityType = "bold"
	Italic               EntityType = "italic"
	Underline            EntityType = "underline"
	Strikethrough        EntityType = "strikethrough"
	Spoiler              EntityType = "spoiler"
	Code                 EntityType = "code"
	Pre                  EntityType = "pre"
	TextLink             EntityType = "text_link"
	TextMention          EntityType = "text_mention"
	CustomEmoji          EntityType = "custom_emoji"
	Blockquote           EntityType = "blockquote"
	ExpandableBlockquote EntityType = "expandable_blockquote"
)

// Entity is one formatting entity found by Parse. Offset and Length count
// UTF-16 code units of the plain text, as Telegram does; SliceUTF16 extracts
// the covered text.
type Entity struct {
	Type   EntityType
	Offset int
	Length int
	// URL is the target of a TextLink.
	URL string
	// Language is the language of a Pre block, when one was given.
	Language string
	// UserID is the user of a TextMention (a tg://user?id= link).
	UserID int64
	// CustomEmojiID is the identifier of a CustomEmoji.
	CustomEmojiID int64
}

// ParseError is Telegram's refusal of a MarkdownV2 text. Telegram answers
// "Bad Request: can't parse entities: <Reason>"; Reason uses Telegram's own
// wording so a message from our checker can be matched against a real one.
type ParseError struct {
	// Reason is the text Telegram puts after "can't parse entities: ".
	Reason string
	// Byte is the byte offset in the input that the error refers to.
	Byte int
	// Char is the same position counted in characters (runes), for people.
	Char int
}

// Error implements error.
func (e *ParseError) Error() string {
	return fmt.Sprintf("can't parse entities: %s (byte %d, character %d)", e.Reason, e.Byte, e.Char)
}

// Parse parses s as Telegram's MarkdownV2 and returns the text the user sees
// (plain), the entities on it, or the error Telegram would answer with.
//
// It follows the algorithm of tdlib's parse_markdown_v2, which the Bot API
// uses, including its corner cases: a '\' escapes any ASCII character; a '\'
// before a non-ASCII character or at the end is an ordinary character; inside
// code and pre only '`' is special; '_' followed by '_' opens underline, not
// two italics; ">" starts a blockquote only at the start of a line; "||" at
// the end of a blockquote's last line makes it expandable ("**>" opens such a
// quote by way of an empty bold entity); empty entities are dropped.
//
// Two steps of Telegram are only approximated: links are checked for a
// plausible http, https, tg or ton URL (an invalid one silently drops the
// entity, as in Telegram), and Telegram's cleaning of the whole text before
// parsing (it removes '\r', turns other control characters into spaces and
// trims the message) is not modelled: callers that want an exact match avoid
// those characters.
func Parse(s string) (plain string, entities []Entity, err error) {
	if !utf8.ValidString(s) {
		i := firstInvalid(s)
		return "", nil, &ParseError{Reason: "Strings must be encoded in UTF-8", Byte: i, Char: ByteToRune(s, i)}
	}
	p := parser{src: s, canStartQuote: true}
	p.out.Grow(len(s))
	if err := p.run(); err != nil {
		return "", nil, err
	}
	slices.SortStableFunc(p.entities, func(a, b Entity) int {
		if c := cmp.Compare(a.Offset, b.Offset); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Length, a.Length); c != 0 {
			return c
		}
		return cmp.Compare(priority(a.Type), priority(b.Type))
	})
	return p.out.String(), p.entities, nil
}

// kind is the parser's internal entity kind; tdlib distinguishes a few more
// kinds than the Bot API reports, and its error messages use these names.
type kind int

const (
	kBold kind = iota
	kItalic
	kUnderline
	kStrikethrough
	kSpoiler
	kCode
	kPre
	kPreCode
	kTextURL
	kCustomEmoji
	kBlockQuote
)

// tdName is the name tdlib prints in "Can't find end of ... entity".
func (k kind) tdName() string {
	return [...]string{"Bold", "Italic", "Underline", "Strikethrough", "Spoiler", "Code", "Pre", "PreCode",
		"TextUrl", "CustomEmoji", "BlockQuote"}[k]
}

// priority orders entities that share offset and length, as tdlib does.
func priority(t EntityType) int {
	switch t {
	case Blockquote, ExpandableBlockquote:
		return 0
	case Pre:
		return 11
	case Code:
		return 20
	case TextLink, TextMention:
		return 49
	case Bold:
		return 90
	case Italic:
		return 91
	case Underline:
		return 92
	case Strikethrough:
		return 93
	case Spoiler:
		return 94
	default:
		return 99
	}
}

type openEntity struct {
	kind     kind
	language string
	u16      int // UTF-16 offset in the output where the entity starts
	srcByte  int // byte offset in the input of the opening marker
	outByte  int // byte offset in the output where the entity starts
}

type parser struct {
	src           string
	out           strings.Builder
	u16           int
	stack         []openEntity
	entities      []Entity
	haveQuote     bool
	canStartQuote bool
}

// at returns the byte at i, or 0 past the end; tdlib reads the terminating
// NUL of its C string in the same places, and the rules rely on it.
func (p *parser) at(i int) byte {
	if i < len(p.src) {
		return p.src[i]
	}
	return 0
}

func isEscapable(c byte) bool { return c > 0 && c <= 126 }

func (p *parser) fail(at int, format string, args ...any) error {
	return &ParseError{Reason: fmt.Sprintf(format, args...), Byte: at, Char: ByteToRune(p.src, at)}
}

func (p *parser) reservedErr(i int) error {
	return p.fail(i, "Character '%c' is reserved and must be escaped with the preceding '\\'", p.src[i])
}

func (p *parser) unclosedErr(e openEntity) error {
	return p.fail(e.srcByte, "Can't find end of %s entity at byte offset %d", e.kind.tdName(), e.srcByte)
}

func (p *parser) top() *openEntity {
	if len(p.stack) == 0 {
		return nil
	}
	return &p.stack[len(p.stack)-1]
}

// emit appends one byte of visible text.
func (p *parser) emit(c byte) {
	p.out.WriteByte(c)
	// Only a character's first byte counts; a 4-byte character is a
	// surrogate pair in UTF-16.
	if c&0xC0 != 0x80 {
		p.u16++
		if c >= 0xF0 {
			p.u16++
		}
	}
}

func (p *parser) run() error {
	s := p.src
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && isEscapable(p.at(i+1)) {
			i++
			p.out.WriteByte(s[i])
			p.u16++
			if s[i] != '\r' {
				p.canStartQuote = s[i] == '\n'
			}
			continue
		}

		special := "_*[]()~`>#+-=|{}.!\n"
		if t := p.top(); t != nil && (t.kind == kCode || t.kind == kPre || t.kind == kPreCode) {
			special = "`"
		}
		if strings.IndexByte(special, c) < 0 {
			if c&0xC0 != 0x80 && c != '\r' {
				p.canStartQuote = false
			}
			p.emit(c)
			continue
		}

		if !p.isEnd(i) {
			next, err := p.begin(i)
			if err != nil {
				return err
			}
			i = next
			continue
		}
		next, err := p.end(i)
		if err != nil {
			return err
		}
		i = next
	}
	return p.finish()
}

// isEnd reports whether the special character at i closes the innermost
// open entity (or, for a newline, the open blockquote).
func (p *parser) isEnd(i int) bool {
	t := p.top()
	if t == nil {
		return false
	}
	c := p.src[i]
	if p.haveQuote && c == '\n' && p.at(i+1) != '>' {
		return true
	}
	switch t.kind {
	case kBold:
		return c == '*'
	case kItalic:
		return c == '_' && p.at(i+1) != '_'
	case kCode:
		return c == '`'
	case kPre, kPreCode:
		return c == '`' && p.at(i+1) == '`' && p.at(i+2) == '`'
	case kTextURL, kCustomEmoji:
		return c == ']'
	case kUnderline:
		return c == '_' && p.at(i+1) == '_'
	case kStrikethrough:
		return c == '~'
	case kSpoiler:
		return c == '|' && p.at(i+1) == '|'
	default: // kBlockQuote ends only at a newline, handled above
		return false
	}
}

// begin handles a special character at i that opens an entity (or is a
// newline or a quote continuation); it returns the index of the last byte
// consumed.
func (p *parser) begin(i int) (int, error) {
	s := p.src
	start := i
	var k kind
	var lang string
	switch s[i] {
	case '_':
		if p.at(i+1) == '_' {
			k = kUnderline
			i++
		} else {
			k = kItalic
		}
	case '*':
		k = kBold
	case '~':
		k = kStrikethrough
	case '|':
		if p.at(i+1) != '|' {
			return 0, p.reservedErr(i)
		}
		i++
		k = kSpoiler
	case '[':
		k = kTextURL
	case '`':
		if p.at(i+1) != '`' || p.at(i+2) != '`' {
			k = kCode
			break
		}
		i += 3
		k = kPre
		end := i
		for end < len(s) && !isSpace(s[end]) && s[end] != '`' {
			end++
		}
		// A word right after the fence is the language, unless the block
		// ends right there.
		if i != end && end < len(s) && s[end] != '`' {
			k = kPreCode
			lang = s[i:end]
			i = end
		}
		// One line break after the fence is not part of the block.
		if c := p.at(i); c == '\n' || c == '\r' {
			if n := p.at(i + 1); (n == '\n' || n == '\r') && n != c {
				i += 2
			} else {
				i++
			}
		}
		i--
	case '!':
		if p.at(i+1) != '[' {
			return 0, p.reservedErr(i)
		}
		i++
		k = kCustomEmoji
	case '\n':
		p.emit('\n')
		p.canStartQuote = true
		return i, nil
	case '>':
		if !p.canStartQuote {
			return 0, p.reservedErr(i)
		}
		if p.haveQuote {
			// The '>' continuing a quote on its next line is not shown.
			return i, nil
		}
		k = kBlockQuote
		p.haveQuote = true
	default:
		return 0, p.reservedErr(i)
	}
	p.stack = append(p.stack, openEntity{kind: k, language: lang, u16: p.u16, srcByte: start, outByte: p.out.Len()})
	return i, nil
}

// end handles a special character at i that closes the innermost entity;
// it returns the index of the last byte consumed.
func (p *parser) end(i int) (int, error) {
	s := p.src
	t := p.stack[len(p.stack)-1]
	k := t.kind
	expandable := false
	if s[i] == '\n' && k != kBlockQuote {
		// Only "||" right before the end of a quote's line may be open
		// here: it marks the quote expandable rather than opening a spoiler.
		lastByte := p.out.Len() - 1
		if k != kSpoiler || !(t.srcByte == i-2 || (t.srcByte == i-3 && lastByte >= 0 && p.out.String()[lastByte] == '\r')) {
			return 0, p.unclosedErr(t)
		}
		p.stack = p.stack[:len(p.stack)-1]
		t = p.stack[len(p.stack)-1]
		if t.kind != kBlockQuote {
			return 0, p.unclosedErr(t)
		}
		k = kBlockQuote
		expandable = true
	}

	e := Entity{Offset: t.u16}
	skip := p.u16 == t.u16
	switch k {
	case kBold:
		e.Type = Bold
	case kItalic:
		e.Type = Italic
	case kCode:
		e.Type = Code
	case kStrikethrough:
		e.Type = Strikethrough
	case kUnderline:
		e.Type = Underline
		i++
	case kSpoiler:
		e.Type = Spoiler
		i++
	case kPre, kPreCode:
		e.Type = Pre
		e.Language = t.language
		i += 2
	case kTextURL:
		var link string
		if p.at(i+1) != '(' {
			// [text] alone links to its own text.
			link = p.out.String()[t.outByte:]
		} else {
			var err error
			link, i, err = p.linkTarget(i+2, "Can't find end of a URL at byte offset %d")
			if err != nil {
				return 0, err
			}
		}
		if id, ok := mentionUserID(link); ok {
			e.Type = TextMention
			e.UserID = id
		} else if checked, ok := checkLink(link); ok {
			e.Type = TextLink
			e.URL = checked
		} else {
			// Telegram drops a link it does not accept and keeps its text.
			skip = true
		}
	case kCustomEmoji:
		if p.at(i+1) != '(' {
			return 0, p.fail(i, "Custom emoji entity must contain a tg://emoji URL")
		}
		link, next, err := p.linkTarget(i+2, "Can't find end of a custom emoji URL at byte offset %d")
		if err != nil {
			return 0, err
		}
		id, err := customEmojiID(link)
		if err != nil {
			return 0, p.fail(i+2, "%s", err.Error())
		}
		i = next
		e.Type = CustomEmoji
		e.CustomEmojiID = id
	case kBlockQuote:
		// The newline that ends the quote belongs to it.
		p.haveQuote = false
		p.out.WriteByte(s[i])
		p.u16++
		p.canStartQuote = true
		skip = false
		e.Type = Blockquote
		if expandable {
			e.Type = ExpandableBlockquote
		}
	}
	if !skip {
		e.Length = p.u16 - t.u16
		p.entities = append(p.entities, e)
	}
	p.stack = p.stack[:len(p.stack)-1]
	return i, nil
}

// linkTarget reads the (...) part of a link starting at i, just after the
// '('; inside it only escapes and ')' matter. It returns the unescaped
// target and the index of the closing ')'.
func (p *parser) linkTarget(i int, errFormat string) (string, int, error) {
	s := p.src
	begin := i
	var b strings.Builder
	for i < len(s) && s[i] != ')' {
		if s[i] == '\\' && isEscapable(p.at(i+1)) {
			b.WriteByte(s[i+1])
			i += 2
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	if p.at(i) != ')' {
		return "", 0, p.fail(begin, errFormat, begin)
	}
	return b.String(), i, nil
}

// finish closes a blockquote still open at the end of the text and rejects
// any other entity left open.
func (p *parser) finish() error {
	if p.haveQuote {
		typ := Blockquote
		if t := p.top(); t.kind == kSpoiler && t.srcByte == len(p.src)-2 {
			p.stack = p.stack[:len(p.stack)-1]
			typ = ExpandableBlockquote
		}
		if t := p.top(); t.kind == kBlockQuote {
			p.haveQuote = false
			if n := p.u16 - t.u16; n != 0 {
				p.entities = append(p.entities, Entity{Type: typ, Offset: t.u16, Length: n})
			}
			p.stack = p.stack[:len(p.stack)-1]
		}
	}
	if t := p.top(); t != nil {
		return p.unclosedErr(*t)
	}
	return nil
}

// isSpace matches tdlib's is_space.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == 0 || c == '\v'
}

// mentionUserID recognises tg://user?id=<id>, which Telegram turns into a
// mention of that user instead of a link.
func mentionUserID(link string) (int64, bool) {
	u, err := url.Parse(strings.TrimSpace(link))
	if err != nil || !strings.EqualFold(u.Scheme, "tg") || !strings.EqualFold(u.Host, "user") {
		return 0, false
	}
	id, err := strconv.ParseInt(u.Query().Get("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, false
	}
	return id, true
}

// checkLink approximates Telegram's link check: http(s), tg and ton links
// and bare domains (which get "http://") are accepted.
func checkLink(link string) (string, bool) {
	link = strings.TrimSpace(link)
	if link == "" {
		return "", false
	}
	u, err := url.Parse(link)
	if err != nil {
		return "", false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return "", false
		}
		return link, true
	case "tg", "ton", "tonsite":
		return link, u.Host != "" || u.Opaque != ""
	case "":
		if strings.ContainsAny(link, " \t\n") || !strings.Contains(link, ".") {
			return "", false
		}
		return "http://" + link, true
	default:
		return "", false
	}
}

// customEmojiID parses tg://emoji?id=<id>.
func customEmojiID(link string) (int64, error) {
	u, err := url.Parse(link)
	if err != nil || !strings.EqualFold(u.Scheme, "tg") {
		return 0, errors.New("Custom emoji URL must have scheme tg")
	}
	if !strings.EqualFold(u.Host, "emoji") {
		return 0, errors.New("Custom emoji URL must have host \"emoji\"")
	}
	id, err := strconv.ParseInt(u.Query().Get("id"), 10, 64)
	if err != nil || id == 0 {
		return 0, errors.New("Invalid custom emoji identifier specified")
	}
	return id, nil
}

func firstInvalid(s string) int {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(s)
}
