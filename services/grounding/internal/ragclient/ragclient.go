// Package ragclient adapts the rag service's gRPC API
// (groundcrew.rag.v1.RagService) to research.Retriever: the research
// workflow's evidence from a named document collection.
package ragclient

import (
	"context"
	"fmt"
	"net/url"

	ragv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/rag/v1"
	"github.com/groundcrew/groundcrew/services/grounding/internal/research"
)

// Client is a research.Retriever over a rag service connection.
type Client struct {
	rag ragv1.RagServiceClient
}

var _ research.Retriever = (*Client)(nil)

// New returns a Client calling rag.
func New(rag ragv1.RagServiceClient) *Client {
	return &Client{rag: rag}
}

// Retrieve returns a collection's passages most similar to query (topK
// clamped to 1..50). A document without a URL gets a rag:// one naming
// collection and title, so it can be cited and de-duplicated like a web
// page.
func (c *Client) Retrieve(ctx context.Context, collection, query string, topK int) ([]research.Evidence, error) {
	k := int32(min(max(topK, 1), 50))
	resp, err := c.rag.Retrieve(ctx, &ragv1.RetrieveRequest{Collection: collection, Query: query, TopK: &k})
	if err != nil {
		return nil, fmt.Errorf("rag service: %w", err)
	}
	out := make([]research.Evidence, 0, len(resp.GetChunks()))
	for _, ch := range resp.GetChunks() {
		src := ch.GetSource()
		u := src.GetUrl()
		if u == "" {
			u = "rag://" + collection + "/" + url.PathEscape(src.GetTitle())
		}
		out = append(out, research.Evidence{Title: src.GetTitle(), URL: u, Snippet: ch.GetText()})
	}
	return out, nil
}
