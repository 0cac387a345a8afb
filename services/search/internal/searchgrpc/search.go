// Package searchgrpc is the gRPC adapter of the search service: it converts
// between the generated types and the domain, and alone maps domain errors
// to gRPC codes.
package searchgrpc

import (
	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
)

// SearchService implements searchv1.SearchServiceServer.
type SearchService struct {
	searchv1.UnimplementedSearchServiceServer
}

var _ searchv1.SearchServiceServer = (*SearchService)(nil)

// NewSearchService returns the SearchService handlers.
func NewSearchService() *SearchService {
	return &SearchService{}
}
