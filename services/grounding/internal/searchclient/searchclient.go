// Package searchclient adapts the search service's gRPC API
// (groundcrew.search.v1.SearchService) to grounding.Searcher.
package searchclient

import (
	"context"
	"fmt"

	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
	"github.com/groundcrew/groundcrew/services/grounding/internal/grounding"
)

// maxQueryRunes is the search API's query limit.
const maxQueryRunes = 1000

// Client is a grounding.Searcher over a search service connection.
type Client struct {
	search searchv1.SearchServiceClient
}

var _ grounding.Searcher = (*Client)(nil)

// New returns a Client calling search.
func New(search searchv1.SearchServiceClient) *Client {
	return &Client{search: search}
}

// Search implements grounding.Searcher.
func (c *Client) Search(ctx context.Context, req grounding.SearchRequest) (grounding.SearchResponse, error) {
	q := []rune(req.Query)
	if len(q) > maxQueryRunes {
		q = q[:maxQueryRunes]
	}
	n := int32(min(max(req.MaxResults, 0), 10))
	resp, err := c.search.Search(ctx, &searchv1.SearchRequest{Query: string(q), MaxResults: &n, Engine: toEngine(req.Engine)})
	if err != nil {
		return grounding.SearchResponse{}, fmt.Errorf("searching: %w", err)
	}
	out := grounding.SearchResponse{Engine: fromEngine(resp.GetEngine()), Results: make([]grounding.SearchResult, 0, len(resp.GetResults()))}
	for _, r := range resp.GetResults() {
		out.Results = append(out.Results, FromResult(r))
	}
	return out, nil
}

// FromResult converts a search result to the domain's.
func FromResult(r *searchv1.SearchResult) grounding.SearchResult {
	res := grounding.SearchResult{Title: r.GetTitle(), Snippet: r.GetSnippet(), URL: r.GetUrl(), SourceDomain: r.GetSourceDomain(), Score: r.GetScore()}
	if r.GetPublishedAt() != nil {
		res.PublishedAt = r.GetPublishedAt().AsTime()
	}
	return res
}

func toEngine(e grounding.Engine) searchv1.Engine {
	switch e {
	case grounding.EngineExa:
		return searchv1.Engine_EXA
	case grounding.EngineLocal:
		return searchv1.Engine_LOCAL
	default:
		return searchv1.Engine_AUTO
	}
}

// fromEngine names the engine that answered in the grounding API's terms,
// which know only Exa and the local index by name.
func fromEngine(e searchv1.Engine) grounding.Engine {
	switch e {
	case searchv1.Engine_EXA:
		return grounding.EngineExa
	case searchv1.Engine_LOCAL:
		return grounding.EngineLocal
	default:
		return grounding.EngineAuto
	}
}
