// Package indexdoc turns a document someone indexes into what the local
// indexes store, the same way for each of them (bleve on disk, PostgreSQL
// full-text search): the canonical URL that is its key, the cleaned URL,
// title, headings and plain text (HTML reduced to its readable text,
// Markdown to one block per line), domains for filters, dates, metadata,
// its language and who indexed it.
package indexdoc

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"
	"unicode"

	"github.com/groundcrew/groundcrew/services/search/internal/htmltext"
	"github.com/groundcrew/groundcrew/services/search/internal/search"
)

// Limits on indexed documents.
const (
	// MaxDocumentBytes bounds a document's text plus HTML.
	MaxDocumentBytes = 8 << 20
	// maxTitleRunes bounds a title derived from the text.
	maxTitleRunes = 120
)

// ReservedMetaPrefix starts the metadata keys the indexes keep for
// themselves (provenance); a caller's keys with it are dropped, so nobody
// can forge who indexed a document.
const ReservedMetaPrefix = "groundcrew."

// Prepared is a document ready to store.
type Prepared struct {
	// ID is the canonical URL: the document's key.
	ID string
	// URL is the cleaned URL results show.
	URL string
	// Domains are the host and each parent domain, so that a filter on
	// "example.com" matches "docs.example.com" with one lookup, and the
	// document's collection as CollectionTerm (a term no host name can
	// be), so that the same field and lookup exclude a collection in
	// indexes whose schema predates collections.
	Domains []string
	Title   string
	// Headings are the section headings (Markdown), one per line; they
	// are in Text as well.
	Headings string
	Text     string
	// Language is the PostgreSQL text search configuration for the text
	// ("english", "german", …, or "simple" when unknown).
	Language string
	// Date is the publication date, or the indexing time without one;
	// recency filters use it. Published is the publication date alone.
	Date      time.Time
	Published time.Time
	// Metadata is the caller's metadata (reserved keys dropped) with the
	// media type and icon under search.MetaMimeType and
	// search.MetaFaviconURL.
	Metadata   map[string]string
	MimeType   string
	FaviconURL string
	// IndexedBy is who indexed it (search.Document.IndexedBy); IndexedAt
	// is now.
	IndexedBy string
	IndexedAt time.Time
}

// Prepare validates d and returns what to store; now is the indexing
// time.
func Prepare(d search.Document, now time.Time) (Prepared, error) {
	if len(d.Text)+len(d.HTML) > MaxDocumentBytes {
		return Prepared{}, fmt.Errorf("document is %d bytes; the limit is %d", len(d.Text)+len(d.HTML), MaxDocumentBytes)
	}
	id, err := search.CanonicalURL(d.URL)
	if err != nil {
		return Prepared{}, fmt.Errorf("url: %w", err)
	}
	cleanURL, _ := search.CleanURL(d.URL)

	p := Prepared{ID: id, URL: cleanURL, Domains: DomainTerms(d.URL, d.Metadata[search.MetaCollection]), IndexedBy: d.IndexedBy, IndexedAt: now}
	title := d.Title
	text := d.Text
	p.MimeType = search.CleanMimeType(firstOf(d.Metadata, search.MetaMimeType, "mimeType", "content_type", "contentType"))
	p.FaviconURL = search.CleanIconURL(firstOf(d.Metadata, search.MetaFaviconURL, "faviconUrl", "favicon"), cleanURL)
	mimeFromContent := "text/plain"
	if looksLikeMarkdown(text) {
		mimeFromContent = "text/markdown"
		var h1 string
		var headings []string
		text, h1, headings = markdownText(strings.ToValidUTF8(text, ""), title)
		if strings.TrimSpace(title) == "" {
			title = h1
		}
		p.Headings = strings.Join(headings, "\n")
	}
	text = NormalizeText(text)
	if text == "" && strings.TrimSpace(d.HTML) != "" {
		page := htmltext.Extract(d.HTML)
		text = page.Text
		if strings.TrimSpace(title) == "" {
			title = page.Title
		}
		mimeFromContent = "text/html"
		if p.FaviconURL == "" {
			p.FaviconURL = search.CleanIconURL(page.Icon, cleanURL)
		}
	}
	if p.MimeType == "" {
		p.MimeType = mimeFromContent
	}
	if text == "" {
		return Prepared{}, errors.New("document has no text (set text or html)")
	}
	title = strings.Join(strings.Fields(strings.ToValidUTF8(title, "")), " ")
	if title == "" {
		first, _, _ := strings.Cut(text, "\n")
		title = search.Truncate(first, maxTitleRunes)
	}
	p.Title, p.Text = title, text
	p.Language = Language(firstOf(d.Metadata, "language", "lang", "content_language", "contentLanguage"), title+"\n"+text)

	p.Date = now
	if !d.PublishedAt.IsZero() {
		p.Published = d.PublishedAt.UTC()
		p.Date = p.Published
	}
	meta := maps.Clone(d.Metadata)
	if meta == nil {
		meta = make(map[string]string, 2)
	}
	maps.DeleteFunc(meta, func(k, _ string) bool { return strings.HasPrefix(k, ReservedMetaPrefix) })
	meta[search.MetaMimeType] = p.MimeType
	if p.FaviconURL != "" {
		meta[search.MetaFaviconURL] = p.FaviconURL
	} else {
		delete(meta, search.MetaFaviconURL)
	}
	p.Metadata = meta
	return p, nil
}

// DomainTerms are Prepared.Domains of a document at rawURL in collection
// ("" for none): its host and each parent domain, and the collection's
// CollectionTerm.
func DomainTerms(rawURL, collection string) []string {
	domain, _ := search.Domain(rawURL)
	out := domainSuffixes(domain)
	if c := strings.TrimSpace(collection); c != "" {
		out = append(out, CollectionTerm(c))
	}
	return out
}

// CollectionTerm is the filter term of a collection in Prepared.Domains:
// "collection:" and its name, which no host name can be.
func CollectionTerm(name string) string { return "collection:" + strings.TrimSpace(name) }

// CollectionTerms are the filter terms of names.
func CollectionTerms(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, CollectionTerm(n))
	}
	return out
}

// firstOf returns the first non-empty value of keys in m.
func firstOf(m map[string]string, keys ...string) string {
	for _, k := range keys {
		if v := strings.TrimSpace(m[k]); v != "" {
			return v
		}
	}
	return ""
}

// NormalizeText makes plain text valid UTF-8 with whitespace collapsed
// within lines and empty lines removed.
func NormalizeText(s string) string {
	s = strings.ToValidUTF8(s, "")
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		if l := strings.Join(strings.Fields(line), " "); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// domainSuffixes returns the domain and each parent domain.
func domainSuffixes(domain string) []string {
	var out []string
	for d := domain; d != ""; {
		out = append(out, d)
		_, rest, ok := strings.Cut(d, ".")
		if !ok {
			break
		}
		d = rest
	}
	return out
}

// configs maps ISO 639-1 codes to the text search configurations
// PostgreSQL ships (snowball stemmers and stop words).
var configs = map[string]string{
	"ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "da": "danish",
	"nl": "dutch", "en": "english", "fi": "finnish", "fr": "french", "de": "german",
	"el": "greek", "hi": "hindi", "hu": "hungarian", "id": "indonesian", "ga": "irish",
	"it": "italian", "lt": "lithuanian", "ne": "nepali", "no": "norwegian", "nb": "norwegian",
	"nn": "norwegian", "pt": "portuguese", "ro": "romanian", "ru": "russian", "sr": "serbian",
	"es": "spanish", "sv": "swedish", "ta": "tamil", "tr": "turkish", "yi": "yiddish",
}

// Language returns the text search configuration for a document: the one
// its metadata names ("de", "de-CH", "german"), else "english" when the
// text reads as English (its common function words make up a good share
// of it), else "simple", which stems nothing and drops nothing, so text in
// any language still matches its own words.
func Language(declared, text string) string {
	if d := strings.ToLower(strings.TrimSpace(declared)); d != "" {
		code, _, _ := strings.Cut(strings.ReplaceAll(d, "_", "-"), "-")
		if c, ok := configs[code]; ok {
			return c
		}
		for _, c := range configs {
			if d == c {
				return c
			}
		}
		if d == "simple" {
			return d
		}
	}
	if looksEnglish(text) {
		return "english"
	}
	return "simple"
}

// englishWords are frequent English function words.
var englishWords = map[string]bool{
	"the": true, "and": true, "of": true, "to": true, "a": true, "in": true, "is": true,
	"it": true, "that": true, "for": true, "on": true, "with": true, "as": true, "are": true,
	"be": true, "this": true, "by": true, "or": true, "not": true, "if": true, "when": true,
	"from": true, "at": true, "an": true, "was": true, "can": true, "then": true, "you": true,
	"check": true, "run": true, "use": true, "until": true, "before": true, "after": true,
}

// looksEnglish reports whether at least 15% of the first 400 words are
// English function words (or, for short texts of fewer than 12 words, any
// one is).
func looksEnglish(text string) bool {
	words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' })
	words = words[:min(len(words), 400)]
	hits := 0
	for _, w := range words {
		if englishWords[strings.ToLower(w)] {
			hits++
		}
	}
	if len(words) < 12 {
		return hits > 0
	}
	return hits*100 >= 15*len(words)
}
