// Package format renders an alert, and the context grounding found for it,
// as the Telegram message of the notifier's normative contract:
//
//	<original alert text>
//	🔗 Runbook: <runbook_url> · Dashboard: <url> · Source: <generatorURL>
//
//	--- Enriched Context ---
//	Summary: <summary, ≤ 250 characters>
//	Sources:
//	- <title> — <snippet> — <url>
//	- <title> — <url>
//
// The message is MarkdownV2 with every reserved character escaped, so what
// the user sees after Telegram's entity parsing is exactly the text above
// (Result.Plain), and it always fits Telegram's limit of 4096 UTF-16 code
// units. The links line, present when the alert carries its own links, shows
// each as a link whose text is its URL.
//
// Nothing is hidden silently. When the message would not fit, Format gives
// things up in a fixed order, each saying so in the message: first the
// alert text after its first line (cut with "…" and the line AlertCutNote),
// then sources from the last (the first stays with the summary), then
// summary length, then the whole enrichment block, replaced by the note
// "Enrichment unavailable: <ReasonTooLong>" (Result.Unavailable says so,
// for the alert's enrichmentError), then links from the last, and the first
// line itself only when it alone is too long. Every cut is listed in
// Result.Cuts for the caller to log.
package format

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"

	"github.com/groundcrew/groundcrew/platform/weburl"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/markdownv2"
)

// ParseMode is the Telegram parse mode of every Message.
const ParseMode = "MarkdownV2"

// Defaults for Options; the field limits count characters (runes), Limit
// counts UTF-16 code units as Telegram does.
const (
	DefaultMaxSources = 3
	DefaultMaxTitle   = 80
	DefaultMaxSnippet = 160
	DefaultMaxSummary = 250
	DefaultLimit      = 4096
)

// Fixed text of the contract.
const (
	// Header opens the enrichment block.
	Header = "--- Enriched Context ---"
	// EmptyAlert stands in for an alert text that is blank after cleaning:
	// Telegram refuses an empty message and the alert must still arrive.
	EmptyAlert = "(empty alert)"
	// FailedNote starts the note FormatFailed appends.
	FailedNote = "Enrichment unavailable"
	// NoSources is the note's reason when an enrichment has no source to
	// show: a summary without one would read as grounded when it is not.
	NoSources = "no sources found"
	// ReasonTooLong is the note's reason when the enrichment could not be
	// shown beside the alert in one message, even with the alert's text
	// cut to its first line.
	ReasonTooLong = "alert too long to show it in one message"
	// AlertCutNote follows an alert text cut to fit: the rest is in the
	// alert as stored (GET /v1/alerts/{id}).
	AlertCutNote = "(alert text shortened to fit Telegram's limit)"
	// LinksPrefix starts the links line.
	LinksPrefix = "🔗 "
	// maxLinks is how many links the links line shows at most.
	maxLinks      = 5
	linkSeparator = " · "

	summaryPrefix = "Summary: "
	sourcesLine   = "Sources:"
	sourcePrefix  = "- "
	separator     = " — "
	// maxReason caps the failure reason in the note, in characters.
	maxReason = 120
	// maxURL skips sources whose URL is longer than this many bytes: such a
	// link is unusable in a chat and would crowd out everything else.
	maxURL = 2048
	// minSummary is the shortest shortened summary, in UTF-16 units, worth
	// keeping; below it the whole enrichment block is dropped instead.
	minSummary = 20
	// minReasonRoom is the least room, in UTF-16 units, for a shortened
	// failure reason; with less the note says only FailedNote.
	minReasonRoom = 12
)

// Input is an alert as Format renders it: its text and its own links.
type Input struct {
	Text string
	// Links are the alert's own links (runbook, dashboards, the rule that
	// fired), most telling first; those that are not absolute http(s) URLs
	// are left out.
	Links []Link
}

// Link is one of an alert's own links.
type Link struct {
	Label string // e.g. "Runbook"
	URL   string
}

// Citation is one source grounding found for an alert.
type Citation = alert.Citation

// Enrichment is what grounding produced for an alert (alert.Enrichment,
// the one shape): its summary and citations, in priority order.
type Enrichment = alert.Enrichment

// Options tunes Format; a zero field takes its Default.
type Options struct {
	MaxSources int // sources rendered at most
	MaxTitle   int // characters per title, ellipsis included
	MaxSnippet int // characters per snippet, ellipsis included
	MaxSummary int // characters of the summary, ellipsis included
	Limit      int // UTF-16 code units of the whole text after entity parsing
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.MaxSources, DefaultMaxSources)
	def(&o.MaxTitle, DefaultMaxTitle)
	def(&o.MaxSnippet, DefaultMaxSnippet)
	def(&o.MaxSummary, DefaultMaxSummary)
	def(&o.Limit, DefaultLimit)
	return o
}

// Message is a Telegram message ready for sendMessage.
type Message struct {
	Text                  string // MarkdownV2, everything escaped
	ParseMode             string // always ParseMode
	DisableWebPagePreview bool   // always true: a preview of the first source would bury the alert
}

// Result is a formatted message and what was given up to produce it.
type Result struct {
	Message Message
	// Plain is the text the user sees: Message.Text after entity parsing.
	Plain string
	// DroppedSources counts citations not rendered, for any reason.
	DroppedSources int
	// Unavailable is set (to NoSources, or ReasonTooLong) when an
	// enrichment was given but is not shown, so the message carries the
	// note instead of the enrichment block.
	Unavailable string
	// Cuts says what was truncated, dropped or skipped, one entry per
	// decision, for logging; it never contains the user's text.
	Cuts []string
}

func (r *Result) cut(format string, args ...any) {
	r.Cuts = append(r.Cuts, fmt.Sprintf(format, args...))
}

// Format renders alertText and its enrichment. With e == nil the message is
// the alert text alone. An enrichment with no usable source is not shown:
// only a summary with at least one source appears under the enrichment
// header, so the message carries the note "Enrichment unavailable: no
// sources found" instead (and Result.Unavailable says so).
//
// The alert text keeps its lines, empty ones included; it is cleaned of what
// Telegram would change anyway (see cleanText) and trimmed. Summary, titles
// and snippets are put on one line and cut to their limits at a word
// boundary where possible, with "…". A source without a title shows its
// URL's domain; a source whose URL is not http(s) is skipped; at most
// MaxSources are shown.
func Format(alertText string, e *Enrichment, opt Options) Result {
	return FormatAlert(Input{Text: alertText}, e, opt)
}

// FormatAlert is Format for an alert with its own links, shown on the
// links line under its text.
func FormatAlert(in Input, e *Enrichment, opt Options) Result {
	opt = opt.withDefaults()
	var r Result
	m := newMessage(in, &r)
	if e != nil {
		m.addEnrichment(e, opt, &r)
		if len(m.sources) == 0 {
			m.summary = ""
			m.note = FailedNote + ": " + NoSources
			r.Unavailable = NoSources
		}
	}
	m.fit(opt.Limit, &r)
	m.render(&r)
	return r
}

// FormatFailed renders alertText for an alert whose enrichment failed: the
// alert, a blank line and an italic one-line note "Enrichment unavailable:
// <reason>" (the reason cut to 120 characters; no reason, no colon).
func FormatFailed(alertText, reason string, opt Options) Result {
	return FormatAlertFailed(Input{Text: alertText}, reason, opt)
}

// FormatAlertFailed is FormatFailed for an alert with its own links.
func FormatAlertFailed(in Input, reason string, opt Options) Result {
	opt = opt.withDefaults()
	var r Result
	m := newMessage(in, &r)
	m.note = FailedNote
	if reason = oneLine(cleanText(reason)); reason != "" {
		reason, _ = truncate(reason, maxReason, runes)
		m.note += ": " + reason
	}
	m.fit(opt.Limit, &r)
	m.render(&r)
	return r
}

// message holds the parts of the plain text while Format decides what fits.
type message struct {
	alert    string
	alertCut bool // the alert text was cut: AlertCutNote follows it
	links    []link
	summary  string
	sources  []string // complete "- …" lines
	note     string
}

// link is one item of the links line: "<label>: <text>", with text a link
// to href.
type link struct{ label, text, href string }

func (l link) plain() string { return l.label + ": " + l.text }

func newMessage(in Input, r *Result) *message {
	alert := strings.TrimSpace(cleanText(in.Text))
	if strings.TrimFunc(alert, isBlank) == "" {
		alert = EmptyAlert
		r.cut("alert text empty: sent %q", EmptyAlert)
	}
	m := &message{alert: alert}
	seen := map[string]bool{}
	for _, l := range in.Links {
		shown, _, ok := checkURL(l.URL)
		if !ok || seen[shown] || len(m.links) == maxLinks {
			continue
		}
		seen[shown] = true
		label := oneLine(cleanText(l.Label))
		if label == "" {
			label = "Link"
		}
		label, _ = truncate(label, 20, runes)
		m.links = append(m.links, link{label: label, text: shown, href: hrefOf(l.URL)})
	}
	return m
}

// hrefOf is the address a link entity points at: the URL as given,
// trimmed, without credentials and with white space encoded.
func hrefOf(raw string) string {
	raw = strings.TrimSpace(cleanText(raw))
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if u.User == nil && strings.IndexFunc(raw, isSpaceOrControl) < 0 {
		return raw
	}
	u.User = nil
	return u.String()
}

// isBlank matches what Telegram counts as nothing when it refuses an empty
// message: white space and zero-width or direction marks.
func isBlank(r rune) bool {
	return unicode.IsSpace(r) || (r >= '\u200b' && r <= '\u200f') || r == '\u202e' || r == '\ufeff'
}

func (m *message) addEnrichment(e *Enrichment, opt Options, r *Result) {
	summary := oneLine(cleanText(e.Summary))
	summary, cut := truncate(summary, opt.MaxSummary, runes)
	if cut {
		r.cut("summary truncated to %d characters", opt.MaxSummary)
	}
	m.summary = summary
	for i, c := range e.Citations {
		n := i + 1
		link, domain, ok := checkURL(c.URL)
		if !ok {
			r.DroppedSources++
			r.cut("source %d skipped: URL is not an absolute http(s) URL of at most %d bytes", n, maxURL)
			continue
		}
		if len(m.sources) == opt.MaxSources {
			r.DroppedSources++
			r.cut("source %d dropped: more than %d sources", n, opt.MaxSources)
			continue
		}
		title := oneLine(cleanText(c.Title))
		if title == "" {
			title = domain
		}
		if title, cut = truncate(title, opt.MaxTitle, runes); cut {
			r.cut("source %d title truncated to %d characters", n, opt.MaxTitle)
		}
		snippet := oneLine(cleanText(c.Snippet))
		if snippet != "" && repeats(snippet, summary) {
			// The summary already says it: a snippet earns its place only
			// with the passage that supports the citation.
			snippet = ""
			r.cut("source %d snippet left out: it repeats the summary", n)
		}
		if snippet, cut = truncate(snippet, opt.MaxSnippet, runes); cut {
			r.cut("source %d snippet truncated to %d characters", n, opt.MaxSnippet)
		}
		line := sourcePrefix + title + separator + link
		if snippet != "" {
			line = sourcePrefix + title + separator + snippet + separator + link
		}
		m.sources = append(m.sources, line)
	}
	if len(m.sources) == 0 {
		r.cut("enrichment without a usable source: sent the alert with the note %q", NoSources)
	}
}

// repeats reports whether snippet says what summary already does: one
// contains the other, or they open with the same words for most of the
// shorter one (a document's first sentences quoted by both, cut at
// different places).
func repeats(snippet, summary string) bool {
	a, b := comparable(snippet), comparable(summary)
	if a == "" || b == "" {
		return false
	}
	if strings.Contains(b, a) || strings.Contains(a, b) {
		return true
	}
	ra, rb := []rune(a), []rune(b)
	short := min(len(ra), len(rb))
	same := 0
	for same < short && ra[same] == rb[same] {
		same++
	}
	return same >= 20 && same*10 >= short*6
}

// comparable is s lower-cased, on one line, without the ellipsis and the
// punctuation at its ends.
func comparable(s string) string {
	s = strings.ToLower(oneLine(strings.ReplaceAll(s, Ellipsis, " ")))
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
}

// checkURL accepts absolute http and https URLs and returns the form to show
// and the domain to use when a source has no title. Credentials in the URL
// are removed rather than posted to a chat.
func checkURL(raw string) (link, domain string, ok bool) {
	raw = strings.TrimSpace(cleanText(raw))
	if raw == "" || len(raw) > maxURL {
		return "", "", false
	}
	u, err := url.Parse(raw)
	// url.Parse lowercases the scheme.
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return "", "", false
	}
	link = raw
	// Re-encode only when needed: white space would end Telegram's
	// automatic link early, and a password must not be shown.
	if u.User != nil || strings.IndexFunc(raw, isSpaceOrControl) >= 0 {
		u.User = nil
		link = u.String()
		if strings.IndexFunc(link, isSpaceOrControl) >= 0 {
			// url.URL.String keeps the raw query as it came.
			var b strings.Builder
			for _, r := range link {
				if isSpaceOrControl(r) {
					b.WriteString(url.PathEscape(string(r)))
				} else {
					b.WriteRune(r)
				}
			}
			link = b.String()
		}
	}
	domain = strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
	// People read an IRI's readable form (Unicode host, non-ASCII path
	// decoded), as browsers show it; it parses back to the same address.
	if wu, err := weburl.Parse(link); err == nil {
		wu.User = ""
		if readable := wu.Readable(); readable != wu.String() {
			link = readable
			domain = strings.TrimPrefix(wu.ReadableHost(), "www.")
		}
	}
	return link, domain, true
}

func isSpaceOrControl(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }

// Lengths of the fixed parts, in UTF-16 units.
var (
	blockFixed   = len("\n\n") + len(Header)
	summaryFixed = len("\n") + len(summaryPrefix)
	sourcesFixed = len("\n") + len(sourcesLine)
	lineFixed    = len("\n")
	noteFixed    = len("\n\n")
	cutNoteFixed = len("\n") + len(AlertCutNote)
)

// linksLine is the plain links line, "" without links.
func (m *message) linksLine() string {
	if len(m.links) == 0 {
		return ""
	}
	parts := make([]string, len(m.links))
	for i, l := range m.links {
		parts[i] = l.plain()
	}
	return LinksPrefix + strings.Join(parts, linkSeparator)
}

// len16 returns the length of the plain text in UTF-16 units.
func (m *message) len16() int {
	n := markdownv2.UTF16Len(m.alert)
	if m.alertCut {
		n += cutNoteFixed
	}
	if len(m.links) > 0 {
		n += lineFixed + markdownv2.UTF16Len(m.linksLine())
	}
	if m.hasBlock() {
		n += blockFixed
		if m.summary != "" {
			n += summaryFixed + markdownv2.UTF16Len(m.summary)
		}
		if len(m.sources) > 0 {
			n += sourcesFixed
			for _, s := range m.sources {
				n += lineFixed + markdownv2.UTF16Len(s)
			}
		}
	}
	if m.note != "" {
		n += noteFixed + markdownv2.UTF16Len(m.note)
	}
	return n
}

func (m *message) hasBlock() bool { return m.summary != "" || len(m.sources) > 0 }

// fit gives things up, in the contract's order, until the plain text fits
// limit UTF-16 units.
func (m *message) fit(limit int, r *Result) {
	total := m.len16()
	if total <= limit {
		return
	}
	// The alert's text goes first, after its first line: the enrichment
	// is what the on-call engineer reads the message for.
	m.truncateAlertBody(total, limit, r)
	total = m.len16()
	// The first source stays as long as the summary does: a summary is
	// shown only with a source that supports it.
	for total > limit && len(m.sources) > 1 {
		last := len(m.sources) - 1
		m.sources = m.sources[:last]
		r.DroppedSources++
		r.cut("source %d dropped: message over %d UTF-16 units", last+1, limit)
		total = m.len16()
	}
	if total > limit && m.summary != "" {
		room := limit - (total - markdownv2.UTF16Len(m.summary))
		if room >= minSummary {
			m.summary, _ = truncate(m.summary, room, utf16s)
			r.cut("summary shortened to %d UTF-16 units to fit the message limit", room)
			total = m.len16()
		}
	}
	if total > limit && m.hasBlock() {
		r.DroppedSources += len(m.sources)
		m.summary, m.sources = "", nil
		m.note = FailedNote + ": " + ReasonTooLong
		r.Unavailable = ReasonTooLong
		r.cut("enrichment dropped to fit the message limit")
		total = m.len16()
	}
	if total > limit && m.note != "" {
		room := limit - (total - markdownv2.UTF16Len(m.note))
		switch {
		case room >= len(FailedNote)+minReasonRoom:
			m.note, _ = truncate(m.note, room, utf16s)
			r.cut("enrichment note shortened to fit the message limit")
		case room >= len(FailedNote):
			m.note = FailedNote
			r.cut("enrichment note reason dropped to fit the message limit")
		default:
			m.note = ""
			r.cut("enrichment note dropped to fit the message limit")
		}
		total = m.len16()
	}
	for total > limit && len(m.links) > 0 {
		m.links = m.links[:len(m.links)-1]
		r.cut("link %d dropped to fit the message limit", len(m.links)+1)
		total = m.len16()
	}
	if total > limit {
		// The last resort: the first line and "…" without the note, or the
		// first line cut when it alone is over the limit.
		first, _, cut := strings.Cut(m.alert, "\n")
		m.alertCut = false
		if cut && markdownv2.UTF16Len(first)+len("\n")+1 <= limit {
			m.alert = first + "\n" + Ellipsis
			r.cut("alert text after the first line dropped to fit the message limit, without the note")
			return
		}
		// Alone, the first line ends the message: white space at its end
		// (" \r" in the alert) would be trimmed by Telegram.
		m.alert, _ = truncate(strings.TrimRightFunc(first, unicode.IsSpace), limit, utf16s)
		r.cut("alert first line truncated to %d UTF-16 units", limit)
	}
}

// truncateAlertBody shortens the alert text after its first line, which is
// kept whole, so that the message fits if it can; the text then ends with
// "…" and AlertCutNote follows it. With no room at all, only "…" is left of
// the body.
func (m *message) truncateAlertBody(total, limit int, r *Result) {
	first, body, found := strings.Cut(m.alert, "\n")
	if !found || m.alertCut || markdownv2.UTF16Len(body) <= 1+cutNoteFixed {
		// A body shorter than the ellipsis and the note is better left
		// whole: cutting it would make the message longer.
		return
	}
	firstLen := markdownv2.UTF16Len(first)
	rest := total - markdownv2.UTF16Len(m.alert) + cutNoteFixed // everything but the alert, with the note
	room := limit - rest - firstLen - len("\n")
	m.alertCut = true
	if room < 2 {
		m.alert = first + "\n" + Ellipsis
		r.cut("alert text after the first line dropped to fit the message limit")
		return
	}
	body, _ = truncate(body, room, utf16s)
	if !strings.HasSuffix(body, Ellipsis) {
		body += Ellipsis
	}
	m.alert = first + "\n" + body
	r.cut("alert text after the first line truncated to fit the message limit")
}

// render writes the plain text and its MarkdownV2 form into r.
func (m *message) render(r *Result) {
	var b strings.Builder
	b.Grow(len(m.alert) + 64 + len(m.summary) + 200*len(m.sources))
	b.WriteString(m.alert)
	if m.alertCut {
		b.WriteString("\n" + AlertCutNote)
	}
	// Everything up to here is escaped text; the links line adds entities.
	md := markdownv2.Escape(b.String())
	if len(m.links) > 0 {
		b.WriteString("\n" + m.linksLine())
		var l strings.Builder
		l.WriteString("\n" + markdownv2.Escape(LinksPrefix))
		for i, k := range m.links {
			if i > 0 {
				l.WriteString(markdownv2.Escape(linkSeparator))
			}
			l.WriteString(markdownv2.Escape(k.label+": ") + "[" + markdownv2.Escape(k.text) + "](" + markdownv2.EscapeLinkURL(k.href) + ")")
		}
		md += l.String()
	}
	mark := b.Len()
	if m.hasBlock() {
		b.WriteString("\n\n")
		b.WriteString(Header)
		if m.summary != "" {
			b.WriteString("\n")
			b.WriteString(summaryPrefix)
			b.WriteString(m.summary)
		}
		if len(m.sources) > 0 {
			b.WriteString("\n")
			b.WriteString(sourcesLine)
			for _, s := range m.sources {
				b.WriteString("\n")
				b.WriteString(s)
			}
		}
	}
	if m.note != "" {
		b.WriteString("\n\n")
	}
	text := md + markdownv2.Escape(b.String()[mark:])
	if m.note != "" {
		// The note is italic: escaped text between '_' markers. It is never
		// empty, so the markers cannot read as "__" (underline).
		text += "_" + markdownv2.Escape(m.note) + "_"
		b.WriteString(m.note)
	}
	r.Plain = b.String()
	r.Message = Message{Text: text, ParseMode: ParseMode, DisableWebPagePreview: true}
}
