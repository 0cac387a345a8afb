package indexdoc

import (
	"strings"
	"unicode"
)

// Limits on what counts as a compound identifier: longer tokens are
// hashes, IDs or base64 rather than names, and their "words" would only
// add noise.
const (
	maxCompoundRunes = 64
	maxCompoundParts = 8
)

// MaxQueryPairs bounds the pairs of adjacent query words an index matches
// against compound identifiers' words: an alert's text can be long, and
// its first words (the alert name) are the ones that tell runbooks apart.
const MaxQueryPairs = 24

// SplitIdentifier returns the lower-case words of a compound identifier —
// camelCase, PascalCase or snake_case, as alert names and Kubernetes and
// Prometheus texts write them — or nil when tok is a single word:
//
//	ResourceQuota           → resource quota
//	CrashLoopBackOff        → crash loop back off
//	OOMKilled, HTTPServer   → oom killed, http server
//	Http2Stream             → http2 stream
//	node_memory_MemFree     → node memory mem free
//
// A word breaks where a lower-case letter or digit meets a capital, and
// before the last capital of a run of two or more followed by lower case;
// a digit stays with the word it follows, and an acronym's plural ("PVCs")
// is one word.
func SplitIdentifier(tok string) []string {
	if tok == "" || len(tok) > 4*maxCompoundRunes || !isIdentifier(tok) {
		return nil
	}
	rs := []rune(tok)
	if len(rs) > maxCompoundRunes {
		return nil
	}
	var out []string
	for piece := range strings.SplitSeq(tok, "_") {
		if piece != "" {
			out = append(out, splitCamel([]rune(piece))...)
		}
	}
	if len(out) < 2 || len(out) > maxCompoundParts {
		return nil
	}
	return out
}

// isIdentifier reports whether s is letters, digits and underscores with
// at least one letter.
func isIdentifier(s string) bool {
	letter := false
	for _, r := range s {
		switch {
		case unicode.IsLetter(r):
			letter = true
		case unicode.IsDigit(r) || r == '_':
		default:
			return false
		}
	}
	return letter
}

// splitCamel splits one underscore-free piece at its case changes,
// lower-cased.
func splitCamel(w []rune) []string {
	var out []string
	start := 0
	for i := 1; i < len(w); i++ {
		lowerToUpper := (unicode.IsLower(w[i-1]) || unicode.IsDigit(w[i-1])) && unicode.IsUpper(w[i])
		// "OOMKilled" breaks before the K, but "IPv6" is one word: a run
		// of one capital is no acronym, and "PVCs" is an acronym's plural.
		plural := i+1 < len(w) && w[i+1] == 's' && (i+2 == len(w) || !unicode.IsLower(w[i+2]))
		acronymEnd := i-start >= 2 && i+1 < len(w) && unicode.IsUpper(w[i-1]) && unicode.IsUpper(w[i]) &&
			unicode.IsLower(w[i+1]) && !plural
		if lowerToUpper || acronymEnd {
			out = append(out, strings.ToLower(string(w[start:i])))
			start = i
		}
	}
	return append(out, strings.ToLower(string(w[start:])))
}

// mayBeCompound is a cheap test that tok may split: it has an underscore
// or a capital after its first character (most words of a text have
// neither, and need no map lookup).
func mayBeCompound(tok string) bool {
	for i, r := range tok {
		if r == '_' || (i > 0 && unicode.IsUpper(r)) {
			return true
		}
	}
	return false
}

// identifiers calls fn with each run of letters, digits and underscores in
// text and its byte offset.
func identifiers(text string, fn func(at int, tok string)) {
	start := -1
	for i, r := range text {
		in := unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_'
		switch {
		case in && start < 0:
			start = i
		case !in && start >= 0:
			fn(start, text[start:i])
			start = -1
		}
	}
	if start >= 0 {
		fn(start, text[start:])
	}
}

// CompoundWords returns the words of every distinct compound identifier
// in texts, one compound per line ("resource quota\ncrash loop back off"),
// or "" when there is none. The indexes keep it beside the text, weighed
// below it, so that "resource quota" finds a document that writes
// ResourceQuota: the text itself holds the identifier as one word.
func CompoundWords(texts ...string) string {
	seen := map[string]bool{}
	var b strings.Builder
	for _, text := range texts {
		identifiers(text, func(_ int, tok string) {
			if !mayBeCompound(tok) || seen[tok] {
				return
			}
			seen[tok] = true
			parts := SplitIdentifier(tok)
			if parts == nil {
				return
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(strings.Join(parts, " "))
		})
	}
	return b.String()
}

// QueryCompounds returns, for each distinct compound identifier in a
// query, its words ("ResourceQuota" → [resource quota]), in the order they
// occur. An index searches them as a phrase, so that the identifier also
// finds a document that writes its words apart, and not one that merely
// holds one of them.
func QueryCompounds(query string) [][]string {
	seen := map[string]bool{}
	var out [][]string
	identifiers(query, func(_ int, tok string) {
		if seen[tok] {
			return
		}
		seen[tok] = true
		if parts := SplitIdentifier(tok); parts != nil {
			out = append(out, parts)
		}
	})
	return out
}

// SplitQuery returns query with each compound identifier replaced by its
// words ("KubeResourceQuotaExceeded on ns" → "kube resource quota exceeded
// on ns"): the form an index matches against CompoundWords.
func SplitQuery(query string) string {
	var b strings.Builder
	last := 0
	identifiers(query, func(i int, tok string) {
		b.WriteString(query[last:i])
		if parts := SplitIdentifier(tok); parts != nil {
			b.WriteString(strings.Join(parts, " "))
		} else {
			b.WriteString(tok)
		}
		last = i + len(tok)
	})
	b.WriteString(query[last:])
	return b.String()
}
