// Package searchclient adapts the search service's gRPC API
// (groundcrew.search.v1.SearchService) to what grounding calls it for:
// grounding.Searcher for Ground's evidence and, through Client.Evidence,
// research.Searcher for the research workflow. Both go through one call,
// so both trim long queries to the API's limit and clamp the result count.
package searchclient

import (
	"context"
	"fmt"

	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
	"github.com/groundcrew/groundcrew/services/grounding/internal/grounding"
	"github.com/groundcrew/groundcrew/services/grounding/internal/research"
)

// maxQueryRunes is the search API's query limit.
const maxQueryRunes = 1000

// Client is a grounding.Searcher over a search service connection.
type Client struct {
	search searchv1.SearchServiceClient
}

var (
	_ grounding.Searcher       = (*Client)(nil)
	_ grounding.DocumentFinder = (*Client)(nil)
)

// maxLookups is how many URLs one GetDocuments call takes.
const maxLookups = 10

// New returns a Client calling search.
func New(search searchv1.SearchServiceClient) *Client {
	return &Client{search: search}
}

// call asks the search service: the query trimmed to the API's limit, the
// result count clamped to 0..10.
func (c *Client) call(ctx context.Context, query string, maxResults int, engine searchv1.Engine, exclude []string, includeText bool) (*searchv1.SearchResponse, error) {
	q := []rune(query)
	if len(q) > maxQueryRunes {
		q = q[:maxQueryRunes]
	}
	n := int32(min(max(maxResults, 0), 10))
	resp, err := c.search.Search(ctx, &searchv1.SearchRequest{
		Query: string(q), MaxResults: &n, Engine: engine, ExcludeCollections: exclude, IncludeText: includeText,
	})
	if err != nil {
		return nil, fmt.Errorf("searching: %w", err)
	}
	return resp, nil
}

// Search implements grounding.Searcher.
func (c *Client) Search(ctx context.Context, req grounding.SearchRequest) (grounding.SearchResponse, error) {
	resp, err := c.call(ctx, req.Query, req.MaxResults, fromEngine(req.Engine), req.ExcludeCollections, req.IncludeText)
	if err != nil {
		return grounding.SearchResponse{}, err
	}
	out := grounding.SearchResponse{Engine: toEngine(resp.GetEngine()), Results: make([]grounding.SearchResult, 0, len(resp.GetResults()))}
	for _, r := range resp.GetResults() {
		out.Results = append(out.Results, FromResult(r))
	}
	return out, nil
}

// Documents implements grounding.DocumentFinder with the search service's
// GetDocuments: the first maxLookups URLs are looked up.
func (c *Client) Documents(ctx context.Context, urls, excludeCollections []string) ([]grounding.SearchResult, error) {
	if len(urls) == 0 {
		return nil, nil
	}
	resp, err := c.search.GetDocuments(ctx, &searchv1.GetDocumentsRequest{
		Urls: urls[:min(len(urls), maxLookups)], ExcludeCollections: excludeCollections,
	})
	if err != nil {
		return nil, fmt.Errorf("looking documents up: %w", err)
	}
	out := make([]grounding.SearchResult, 0, len(resp.GetDocuments()))
	for _, r := range resp.GetDocuments() {
		out = append(out, FromResult(r))
	}
	return out, nil
}

// FromResult converts a search result to the domain's.
func FromResult(r *searchv1.SearchResult) grounding.SearchResult {
	res := grounding.SearchResult{
		Title: r.GetTitle(), Snippet: r.GetSnippet(), URL: r.GetUrl(), SourceDomain: r.GetSourceDomain(), Score: r.GetScore(),
		MimeType: r.GetMimeType(), FaviconURL: r.GetFaviconUrl(), Text: r.GetText(),
	}
	if r.GetPublishedAt() != nil {
		res.PublishedAt = r.GetPublishedAt().AsTime()
	}
	return res
}

func fromEngine(e grounding.Engine) searchv1.Engine {
	switch e {
	case grounding.EngineExa:
		return searchv1.Engine_EXA
	case grounding.EngineLocal:
		return searchv1.Engine_LOCAL
	default:
		return searchv1.Engine_AUTO
	}
}

// toEngine names the engine that answered in the grounding API's terms,
// which know only Exa and the local index by name.
func toEngine(e searchv1.Engine) grounding.Engine {
	switch e {
	case searchv1.Engine_EXA:
		return grounding.EngineExa
	case searchv1.Engine_LOCAL:
		return grounding.EngineLocal
	default:
		return grounding.EngineAuto
	}
}

// Evidence is the client as a research.Searcher.
func (c *Client) Evidence() research.Searcher { return evidence{c} }

// evidence adapts Client to research.Searcher; the two interfaces share the
// method name Search, so one type cannot implement both.
type evidence struct{ c *Client }

var _ research.Searcher = evidence{}

// Search asks the search service's automatic engine choice for at least
// one result.
func (e evidence) Search(ctx context.Context, query string, maxResults int) ([]research.Evidence, error) {
	// Whole documents, so a report can quote what a runbook says about
	// every angle; groundcrew's own runbooks are for its own alerts.
	resp, err := e.c.call(ctx, query, max(maxResults, 1), searchv1.Engine_AUTO, []string{grounding.GroundcrewCollection}, true)
	if err != nil {
		return nil, err
	}
	out := make([]research.Evidence, 0, len(resp.GetResults()))
	for _, r := range resp.GetResults() {
		out = append(out, research.Evidence{Title: r.GetTitle(), URL: r.GetUrl(), Snippet: r.GetSnippet(), Text: r.GetText()})
	}
	return out, nil
}
