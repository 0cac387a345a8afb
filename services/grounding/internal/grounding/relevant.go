package grounding

import (
	"slices"

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
		scores[i] = subject.Score(relevance.Source{Title: r.Title, Text: r.Snippet})
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
