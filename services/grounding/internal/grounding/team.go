package grounding

import (
	"cmp"
	"context"
	"net/url"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/groundcrew/groundcrew/services/grounding/internal/extractive"
	"github.com/groundcrew/groundcrew/services/grounding/internal/relevance"
)

// teamLeadConfidence is the confidence of the sentence an answer leads
// with from the text's own runbook when the summariser chose none of it:
// the alert names the runbook, which is stronger than any word match.
const teamLeadConfidence = 1.0

// teamMinConfidence is the least confidence of an offline answer that
// cites the text's own runbook. The confidence is half how much of the
// query the answer covers and half how well its sentences match; an alert
// that names its runbook has settled the first half whatever words its
// runbook uses, so a few words in common do not send it to review.
const teamMinConfidence = 0.5

// teamDocuments are the documents of the search service's local index
// among req.EvidenceURLs (the alert's runbook_url first), at most
// maxSources, in that order. Groundcrew's own runbooks are among them only
// for groundcrew's own alerts, as in search. URLs not in the index are not
// fetched (the message shows them as links); a failed lookup leaves the
// round to search alone.
func (s *Service) teamDocuments(ctx context.Context, req GroundRequest, maxSources int) []SearchResult {
	finder, ok := s.search.(DocumentFinder)
	if !ok || len(req.EvidenceURLs) == 0 {
		return nil
	}
	var urls []string
	for _, u := range req.EvidenceURLs {
		if webAddress(u) && !slices.Contains(urls, u) {
			urls = append(urls, u)
		}
	}
	if len(urls) == 0 {
		return nil
	}
	var exclude []string
	if !relevance.Parse(req.Text).Groundcrew() {
		exclude = []string{GroundcrewCollection}
	}
	docs, err := finder.Documents(ctx, urls, exclude)
	if err != nil {
		s.logger.WarnContext(ctx, "looking the alert's own runbooks up failed; searching only", "error", err)
		return nil
	}
	return docs[:min(len(docs), maxSources)]
}

// webAddress reports whether u is an absolute http(s) address, the only
// kind the index keys documents by.
func webAddress(u string) bool {
	pu, err := url.Parse(u)
	return err == nil && (pu.Scheme == "http" || pu.Scheme == "https") && pu.Host != ""
}

// withTeamFirst is team followed by the relevant search results that are
// not among team, at most maxSources in all.
func withTeamFirst(team, relevant []SearchResult, maxSources int) []SearchResult {
	if len(team) == 0 {
		return relevant
	}
	out := slices.Clone(team)
	for _, r := range relevant {
		if len(out) >= maxSources {
			break
		}
		if !slices.ContainsFunc(team, func(t SearchResult) bool { return t.URL == r.URL }) {
			out = append(out, r)
		}
	}
	return out
}

// teamCitationsFirst orders citations of the first team sources before the
// others, each group in text order: the message's sources list leads with
// the alert's own runbook.
func teamCitationsFirst(cs []Citation, team int) []Citation {
	if team == 0 {
		return cs
	}
	out := slices.Clone(cs)
	slices.SortStableFunc(out, func(a, b Citation) int {
		return cmp.Compare(teamRank(a.SourceIndex, team), teamRank(b.SourceIndex, team))
	})
	return out
}

// teamRank is 0 for a citation of one of the first team sources, 1 for
// the others.
func teamRank(sourceIndex, team int) int {
	if sourceIndex >= 1 && sourceIndex <= team {
		return 0
	}
	return 1
}

// leadWithTeam makes res cite the text's own runbook (source, whose whole
// text is text) first. When the summariser chose sentences of it, their
// citations are moved first; otherwise the answer leads with the
// runbook's first diagnostic step and mitigation (see leadWithRunbook).
func leadWithTeam(res extractive.Result, source extractive.Source, text string, team, maxChars int) extractive.Result {
	if slices.ContainsFunc(res.Citations, func(c extractive.Citation) bool { return c.SourceID >= 1 && c.SourceID <= team }) {
		slices.SortStableFunc(res.Citations, func(a, b extractive.Citation) int {
			return cmp.Compare(teamRank(a.SourceID, team), teamRank(b.SourceID, team))
		})
		conf := teamMinConfidence
		if res.Confidence != nil {
			conf = max(conf, *res.Confidence)
		}
		res.Confidence = &conf
		return res
	}
	out, ok := leadWithRunbook(res, source, text, maxChars, teamLeadConfidence)
	if !ok {
		return res
	}
	conf := teamMinConfidence
	if len(res.Citations) == 0 {
		// Nothing else matched: the answer is the runbook the alert names.
		conf = teamLeadConfidence
	} else if res.Confidence != nil {
		conf = max(conf, *res.Confidence)
	}
	out.Confidence = &conf
	return out
}

// leadWithRunbook puts the runbook source's own first steps before res,
// cited to it with the given confidence: its first diagnostic step and
// its mitigation, in its order, else the one of them it has, else its
// opening sentences (extractive.RunbookLead of text, its whole text),
// within the summary's limit and, with the marker, maxChars. res's own
// sentences and citations follow. ok is false, and res unchanged, when
// text has nothing to quote. The result's confidence is res's; the
// caller sets it.
func leadWithRunbook(res extractive.Result, source extractive.Source, text string, maxChars int, confidence float64) (_ extractive.Result, ok bool) {
	marker := " [" + strconv.Itoa(source.ID) + "]"
	lead := extractive.RunbookLead(text, min(SummaryMaxChars, maxChars-utf8.RuneCountInString(marker)))
	if lead == "" {
		return res, false
	}
	n := utf8.RuneCountInString(lead)
	shift := n + utf8.RuneCountInString(marker)
	out := extractive.Result{Text: lead + marker, Summary: lead, Confidence: res.Confidence}
	if res.Text != "" {
		out.Text += " " + res.Text
		shift++
	}
	out.Citations = append(out.Citations, extractive.Citation{
		SourceID: source.ID, URL: source.URL, Title: source.Title, Snippet: lead,
		StartIndex: 0, EndIndex: n, Confidence: confidence,
	})
	for _, c := range res.Citations {
		c.StartIndex += shift
		c.EndIndex += shift
		out.Citations = append(out.Citations, c)
	}
	return out, true
}
