package groundinggrpc

import (
	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
)

// ResearchService implements groundingv1.ResearchServiceServer.
type ResearchService struct {
	groundingv1.UnimplementedResearchServiceServer
}

var _ groundingv1.ResearchServiceServer = (*ResearchService)(nil)

// NewResearchService returns the ResearchService handlers.
func NewResearchService() *ResearchService {
	return &ResearchService{}
}
