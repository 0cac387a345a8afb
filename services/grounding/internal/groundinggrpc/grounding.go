// Package groundinggrpc is the gRPC adapter of the grounding service: it converts
// between the generated types and the domain, and alone maps domain errors
// to gRPC codes.
package groundinggrpc

import (
	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
)

// GroundingService implements groundingv1.GroundingServiceServer.
type GroundingService struct {
	groundingv1.UnimplementedGroundingServiceServer
}

var _ groundingv1.GroundingServiceServer = (*GroundingService)(nil)

// NewGroundingService returns the GroundingService handlers.
func NewGroundingService() *GroundingService {
	return &GroundingService{}
}
