// Package queryextract derives a short web-search query from noisy alert
// text: Alertmanager and Grafana notifications, plain sentences, log lines
// and Java, Go, Python or Node.js stack traces.
//
// The aim is what an experienced engineer would type into a search box: the
// alert or error name, the error message's key phrase ("connection
// refused", "deadline exceeded"), the product involved (postgres, kafka) and
// the few words that say what is wrong — and none of the identifiers that
// make every alert unique (pod hashes, IPs, UUIDs, timestamps, hosts) and so
// match nothing on the web. Derivation is rule based, deterministic and
// needs no network or model.
package queryextract

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/groundcrew/groundcrew/services/grounding/internal/logrecord"
)

// Query is a derived search query.
type Query struct {
	// Text is the query: Terms joined by single spaces. Empty when the alert
	// held nothing searchable.
	Text string
	// Terms are the query's words and phrases in the order they appear in
	// the alert. A phrase such as "connection refused" is one term.
	Terms []string
	// Reason says briefly how the query was derived (the input format and
	// what was removed), for logs and the stored grounded context.
	Reason string
}

// Options bounds the query; the zero value selects the defaults.
type Options struct {
	// MaxTerms caps the number of terms (default DefaultMaxTerms).
	MaxTerms int
	// MaxChars caps len(Text) in characters (default DefaultMaxChars).
	MaxChars int
}

// Defaults for Options. Search engines weigh every word, so past about
// eight terms each extra word narrows results more than it helps.
const (
	DefaultMaxTerms = 8
	DefaultMaxChars = 120
)

// maxInput bounds the work on one alert; notifier truncates alert text at
// 4000 characters and the query is decided by the first lines anyway.
const maxInput = 8000

// maxTermChars drops runaway tokens (base64 blobs, minified code).
const maxTermChars = 60

// Priorities, lower is more important: when there are more candidate terms
// than room, the least important go first, later ones before earlier ones.
const (
	prioName      = iota // the alert name or the exception type
	prioError            // error phrases and error identifiers
	prioProduct          // products, languages, the top stack frame
	prioIdent            // other identifiers: camel case, metric names
	prioWord             // ordinary words
	prioComponent        // the organisation's own service names
	prioHint             // hints such as a public host name
)

// term is a candidate query term.
type term struct {
	text string
	pos  int // byte offset in the input, for appearance order
	prio int
}

// Derive returns the search query for alert text with the default options.
func Derive(text string) Query { return DeriveWith(text, Options{}) }

// DeriveWith returns the search query for alert text within opt's bounds.
func DeriveWith(text string, opt Options) Query {
	if opt.MaxTerms <= 0 {
		opt.MaxTerms = DefaultMaxTerms
	}
	if opt.MaxChars <= 0 {
		opt.MaxChars = DefaultMaxChars
	}
	if len(text) > maxInput {
		text = text[:maxInput]
		for !utf8.ValidString(text) {
			text = text[:len(text)-1]
		}
	}
	// A JSON or logfmt record is read as its message and labels.
	text = logrecord.Flatten(text)
	e := newExtractor(text)
	format := e.run()
	terms := choose(e.terms, opt)
	q := Query{Terms: terms, Text: strings.Join(terms, " ")}
	q.Reason = reason(format, len(terms), len(e.terms), e.dropped)
	return q
}

// choose picks the most important terms that fit opt and returns them in
// appearance order, skipping repeats: the same word twice, a synonym of a
// product already chosen, or a word already inside a chosen phrase.
func choose(cands []term, opt Options) []string {
	order := slices.Clone(cands)
	slices.SortStableFunc(order, func(a, b term) int {
		return cmp.Or(cmp.Compare(a.prio, b.prio), cmp.Compare(a.pos, b.pos))
	})
	var (
		picked []term
		keys   = map[string]bool{}
		words  = map[string]bool{} // words of chosen multi-word terms
		size   = -1                // length of the joined text so far
	)
	for _, t := range order {
		if len(picked) == opt.MaxTerms {
			break
		}
		key := dedupKey(t.text)
		if keys[key] || (!strings.Contains(t.text, " ") && words[key]) {
			continue
		}
		n := utf8.RuneCountInString(t.text)
		if size+1+n > opt.MaxChars {
			// A shorter, less important term may still fit.
			continue
		}
		keys[key] = true
		if strings.Contains(t.text, " ") {
			for w := range strings.FieldsSeq(t.text) {
				words[dedupKey(w)] = true
			}
		}
		picked = append(picked, t)
		size += 1 + n
	}
	// A multi-word term chosen after a single word it contains (a phrase of
	// lower priority) makes that word redundant.
	picked = slices.DeleteFunc(picked, func(t term) bool {
		return !strings.Contains(t.text, " ") && words[dedupKey(t.text)] && !keepDespitePhrase(t)
	})
	slices.SortStableFunc(picked, func(a, b term) int { return cmp.Compare(a.pos, b.pos) })
	out := make([]string, len(picked))
	for i, t := range picked {
		out[i] = t.text
	}
	return out
}

// keepDespitePhrase keeps single terms of the highest priorities even when a
// phrase repeats them: an alert name is never dropped.
func keepDespitePhrase(t term) bool { return t.prio <= prioError }

func dedupKey(s string) string {
	k := strings.ToLower(s)
	if c, ok := canonical[k]; ok {
		return c
	}
	return k
}

// reason summarises the derivation deterministically.
func reason(format string, kept, candidates int, dropped map[string]int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d of %d candidate terms", format, kept, candidates)
	if len(dropped) > 0 {
		kinds := make([]string, 0, len(dropped))
		for k := range dropped {
			kinds = append(kinds, k)
		}
		slices.Sort(kinds)
		b.WriteString("; removed")
		for i, k := range kinds {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, " %s %d", k, dropped[k])
		}
	}
	if kept == 0 {
		b.WriteString("; nothing searchable")
	}
	return b.String()
}
