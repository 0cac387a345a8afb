package grounding

import (
	"context"
	"strings"
	"sync"
	"unicode/utf8"
)

// fetchedSource is what reading one cited source gave.
type fetchedSource struct {
	url  string // the destination ("" when a redirect link could not be resolved)
	page *Page  // nil when the page could not be read
}

// readSources fetches links concurrently, in their order, resolving them
// first when they are a model provider's (resolve).
func (s *Service) readSources(ctx context.Context, links []string, resolve bool) []fetchedSource {
	out := make([]fetchedSource, len(links))
	var wg sync.WaitGroup
	for i, link := range links {
		wg.Go(func() {
			dest := link
			if resolve {
				var err error
				if dest, err = s.pages.Resolve(ctx, link); err != nil {
					s.logger.WarnContext(ctx, "could not resolve a cited redirect link; the source is left out", "error", err)
					return
				}
			}
			out[i].url = dest
			p, err := s.pages.Fetch(ctx, dest)
			if err != nil || p == nil {
				if err != nil {
					s.logger.InfoContext(ctx, "could not fetch a cited page", "domain", hostDomain(dest), "error", err)
				}
				return
			}
			out[i].page = p
		})
	}
	wg.Wait()
	return out
}

// resolveNative replaces the native grounding sources of a — redirect
// links titled with a bare domain, snippets written by the model — with
// their destinations: the destination's URL, its own title (the chunk's
// title when the page has none and the chunk's is more than a domain, else
// the domain), a snippet from the page's text that best supports the
// citation's span (none when the page could not be read) and the page's
// HTML. A source whose redirect link cannot be resolved is left out with
// its citations (recorded as lost), since the link expires; sources are
// renumbered in order.
func (s *Service) resolveNative(ctx context.Context, a *answer) {
	if s.pages == nil || len(a.results) == 0 {
		return
	}
	links := make([]string, len(a.results))
	for i, r := range a.results {
		links[i] = r.URL
	}
	got := s.readSources(ctx, links, true)
	renumber := make([]int, len(a.results)+1) // old 1-based index → new (0: dropped)
	var (
		results []SearchResult
		from    []fetchedSource // of each kept source
	)
	byURL := map[string]int{}
	for i, r := range a.results {
		f := got[i]
		if f.url == "" {
			a.lost = append(a.lost, map[string]any{"source": i + 1, "reason": "redirect link could not be resolved"})
			continue
		}
		if n, ok := byURL[f.url]; ok {
			// Two links to one page: one source.
			renumber[i+1] = n
			continue
		}
		domain := hostDomain(f.url)
		title := r.Title
		if looksLikeDomain(strings.TrimPrefix(strings.ToLower(strings.TrimSpace(title)), "www.")) || title == "" {
			title = domain
		}
		nr := SearchResult{URL: f.url, SourceDomain: domain, Title: title}
		if f.page != nil {
			if f.page.Title != "" {
				nr.Title = f.page.Title
			}
			nr.MimeType, nr.HTML = f.page.MimeType, f.page.HTML
		}
		results, from = append(results, nr), append(from, f)
		renumber[i+1] = len(results)
		byURL[f.url] = len(results)
	}
	runes := []rune(a.text)
	var cites []Citation
	for _, c := range a.citations {
		n := renumber[c.SourceIndex]
		if n == 0 {
			continue
		}
		r := &results[n-1]
		c.SourceIndex, c.URL, c.Domain, c.Title, c.MimeType = n, r.URL, r.SourceDomain, r.Title, r.MimeType
		c.Snippet, c.SnippetTruncated = "", false
		if f := from[n-1]; f.page != nil {
			claim := ""
			if c.StartIndex >= 0 && c.EndIndex <= len(runes) && c.StartIndex < c.EndIndex {
				claim = string(runes[c.StartIndex:c.EndIndex])
			}
			c.Snippet, c.SnippetTruncated = capSnippet(bestPassage(f.page.Text, claim))
			if r.Snippet == "" {
				r.Snippet = c.Snippet
			}
		}
		cites = append(cites, c)
	}
	a.results, a.citations = results, cites
	a.confidence = combinedConfidence(runes, nil, cites, nil)
}

// keepCitedPages fetches the page of every source m cites whose HTML is
// not already at hand, for the citation's restricted raw_html artifact
// (stampCitations copies it), and fills a missing media type.
func (s *Service) keepCitedPages(ctx context.Context, m *Message) {
	if s.pages == nil || m.Engine == EngineNative {
		// Native sources were read as they were resolved.
		return
	}
	var idx []int
	var links []string
	seen := map[int]bool{}
	for _, c := range m.Citations {
		i := c.SourceIndex - 1
		if i < 0 || i >= len(m.Context.Results) || seen[i] || m.Context.Results[i].HTML != "" || m.Context.Results[i].URL != c.URL {
			continue
		}
		seen[i] = true
		idx = append(idx, i)
		links = append(links, c.URL)
	}
	for j, f := range s.readSources(ctx, links, false) {
		if f.page == nil {
			continue
		}
		r := &m.Context.Results[idx[j]]
		r.HTML = f.page.HTML
		if r.MimeType == "" {
			r.MimeType = f.page.MimeType
		}
	}
}

// passageMaxChars bounds a snippet taken from a page.
const passageMaxChars = 300

// bestPassage is the sentence of a page's text that shares the most words
// with claim (the first on a tie), with the sentences after it while they
// fit passageMaxChars; without any shared word, the page's first line of
// some length. "" for an empty text.
func bestPassage(text, claim string) string {
	var sents []string
	for line := range strings.SplitSeq(text, "\n") {
		sents = append(sents, splitSentences(line)...)
	}
	if len(sents) == 0 {
		return ""
	}
	cw := words(claim)
	best, bestScore := -1, 0
	for i, sent := range sents {
		n := 0
		for w := range words(sent) {
			if cw[w] {
				n++
			}
		}
		if n > bestScore {
			best, bestScore = i, n
		}
	}
	if best < 0 {
		for i, sent := range sents {
			if utf8.RuneCountInString(sent) >= minSourceChars {
				best = i
				break
			}
		}
		if best < 0 {
			best = 0
		}
	}
	out := sents[best]
	for _, next := range sents[best+1:] {
		if utf8.RuneCountInString(out)+1+utf8.RuneCountInString(next) > passageMaxChars {
			break
		}
		out += " " + next
	}
	return out
}

// splitSentences splits a line after ".", "!" or "?" followed by a space,
// and after the full-width stops of Chinese and Japanese.
func splitSentences(line string) []string {
	var out []string
	start := 0
	rs := []rune(line)
	for i, r := range rs {
		end := false
		switch r {
		case '。', '！', '？':
			end = true
		case '.', '!', '?':
			end = i+1 < len(rs) && rs[i+1] == ' '
		}
		if end {
			if s := strings.TrimSpace(string(rs[start : i+1])); s != "" {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	if s := strings.TrimSpace(string(rs[start:])); s != "" {
		out = append(out, s)
	}
	return out
}
