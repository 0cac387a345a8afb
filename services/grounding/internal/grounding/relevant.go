package grounding

import (
	"context"
	"slices"
	"strings"

	"github.com/groundcrew/groundcrew/services/grounding/internal/extractive"
	"github.com/groundcrew/groundcrew/services/grounding/internal/relevance"
)

// NoRelevantSource is a message's Error when search found sources but
// none is about the text: the message is NeedsReview with no citations,
// and the notifier says "Enrichment unavailable: no relevant runbook
// found".
const NoRelevantSource = "no relevant runbook found"

// relevantEvidence keeps the results that are about text (see package
// relevance), at most maxSources of them, in the search service's order.
func relevantEvidence(text string, results []SearchResult, maxSources int) []SearchResult {
	subject := relevance.Parse(text)
	scores := make([]relevance.Score, len(results))
	for i, r := range results {
		scores[i] = subject.Score(relevance.Source{Title: r.Title, Text: evidenceText(r)})
	}
	keep := relevance.Select(scores)
	// In the search service's order: its rank is evidence too, and the
	// team's own runbook comes first there.
	slices.Sort(keep)
	out := make([]SearchResult, 0, min(len(keep), maxSources))
	for _, i := range keep[:min(len(keep), maxSources)] {
		out = append(out, results[i])
	}
	return out
}

// GroundcrewCollection is the search collection groundcrew's own runbooks
// are indexed in (scripts/run.sh): they are evidence only for groundcrew's
// own alerts.
const GroundcrewCollection = "groundcrew"

// evidenceRequest is the search for text's evidence: whole documents, and
// groundcrew's own runbooks only when text is one of groundcrew's alerts.
func evidenceRequest(text, query string, maxResults int, engine Engine) SearchRequest {
	req := SearchRequest{Query: query, MaxResults: maxResults, Engine: engine, IncludeText: true}
	if !relevance.Parse(text).Groundcrew() {
		req.ExcludeCollections = []string{GroundcrewCollection}
	}
	return req
}

// evidenceText is what a result says: its whole document when the search
// service returned it, else its passage.
func evidenceText(r SearchResult) string {
	if r.Text != "" {
		return r.Text
	}
	return r.Snippet
}

// withoutText is results without their documents' text, as a message keeps
// them.
func withoutText(results []SearchResult) []SearchResult {
	out := slices.Clone(results)
	for i := range out {
		out[i].Text = ""
	}
	return out
}

// runbookSummary is the offline summary when the first cited source is a
// runbook: its first diagnostic step and its mitigation, in its order
// (extractive.RunbookSummary); "" when nothing is cited or the source has
// no such sections.
func runbookSummary(evidence []SearchResult, cites []Citation) string {
	if len(cites) == 0 {
		return ""
	}
	i := cites[0].SourceIndex - 1
	if i < 0 || i >= len(evidence) {
		return ""
	}
	return extractive.RunbookSummary(evidenceText(evidence[i]), SummaryMaxChars)
}

// leadWithRelevant answers from the runbooks themselves when the
// summariser quoted none of their sentences: evidence is what relevance
// kept as being about text (after the team's own runbooks), but a
// runbook's sentences need not share the query's words (an alert that is
// a log line the runbook quotes further down than the summariser reads,
// a terse alert name its steps never repeat). The answer then leads with
// the first source's own first diagnostic step and mitigation (see
// leadWithRunbook), cited to it with its relevance score as confidence,
// rather than saying no evidence matched while a relevant runbook was
// found. Only evidence is quoted, never a source relevance dropped; with
// no evidence res stays empty.
func leadWithRelevant(res extractive.Result, text string, sources []extractive.Source, evidence []SearchResult, team, maxChars int) extractive.Result {
	subject := relevance.Parse(text)
	for i, r := range evidence {
		conf := teamLeadConfidence
		if i >= team {
			conf = subject.Score(relevance.Source{Title: r.Title, Text: evidenceText(r)}).Value
		}
		if out, ok := leadWithRunbook(res, sources[i], evidenceText(r), maxChars, conf); ok {
			out.Confidence = &conf
			return out
		}
	}
	return res
}

// citedRelevance is an offline answer's confidence: the summariser's
// (how much of the query its sentences cover), raised to the relevance
// score of the best cited source when that is higher. The summariser
// measures word coverage, and a runbook's steps rarely repeat an alert's
// words, so a runbook that relevance calibrated as being about the alert
// (at or above relevance.Bar, with precision ≥ 0.95 on the labelled sets)
// would otherwise be sent for review as "low confidence" while it is
// the right one. nil stays nil (nothing was summarised).
func citedRelevance(text string, evidence []SearchResult, cites []Citation, conf *float64) *float64 {
	if conf == nil || len(cites) == 0 {
		return conf
	}
	subject := relevance.Parse(text)
	best := *conf
	seen := map[int]bool{}
	for _, c := range cites {
		i := c.SourceIndex - 1
		if i < 0 || i >= len(evidence) || seen[i] {
			continue
		}
		seen[i] = true
		r := evidence[i]
		if sc := subject.Score(relevance.Source{Title: r.Title, Text: evidenceText(r)}); sc.Relevant() {
			best = max(best, sc.Value)
		}
	}
	return &best
}

// searchEvidence searches for text's evidence with query, as Ground and
// the chat agent do (evidenceRequest: whole documents, groundcrew's own
// runbooks only for groundcrew's alerts): relevant are the results about
// text (relevantEvidence), at most maxSources, and when none is, those
// a second search with text's own keywords finds (searchKeywords). resp
// is the first search's answer (whether it found anything at all); err
// is its failure.
func (s *Service) searchEvidence(ctx context.Context, text, query string, maxResults, maxSources int, engine Engine) (relevant []SearchResult, resp SearchResponse, err error) {
	resp, err = s.search.Search(ctx, evidenceRequest(text, query, maxResults, engine))
	if err != nil || len(resp.Results) == 0 {
		return nil, resp, err
	}
	// Only sources about the text are evidence, with a model or without;
	// none means no citation, not the nearest runbook.
	relevant = relevantEvidence(text, resp.Results, maxSources)
	if len(relevant) == 0 {
		relevant = s.searchKeywords(ctx, text, query, resp.Results, maxResults, maxSources, engine)
	}
	return relevant, resp, nil
}

// searchKeywords searches again, when nothing the query found is about
// text, with text's own keywords (relevance's Keywords: the alert name's
// words split, the specific words of its summary and description) and
// judges what both searches found together. A query keeps an alert name
// whole and a log line's first words; the runbook may say the name's
// words or the line's later ones. Nothing new (the same query, a failed
// search) leaves the answer as it was: no relevant source.
func (s *Service) searchKeywords(ctx context.Context, text, query string, first []SearchResult, maxResults, maxSources int, engine Engine) []SearchResult {
	keywords := strings.Join(relevance.Parse(text).Keywords(text), " ")
	if keywords == "" || strings.EqualFold(keywords, query) {
		return nil
	}
	resp, err := s.search.Search(ctx, evidenceRequest(text, keywords, maxResults, engine))
	if err != nil {
		s.logger.WarnContext(ctx, "search by the text's keywords failed", "error", err)
		return nil
	}
	all := slices.Clone(first)
	for _, r := range resp.Results {
		if !slices.ContainsFunc(all, func(o SearchResult) bool { return o.URL == r.URL }) {
			all = append(all, r)
		}
	}
	if len(all) == len(first) {
		return nil
	}
	return relevantEvidence(text, all, maxSources)
}
