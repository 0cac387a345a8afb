// Package raggrpc is the gRPC adapter of the rag service: it converts
// between the generated types and the domain, and alone maps domain errors
// to gRPC codes.
package raggrpc

import (
	ragv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/rag/v1"
)

// RagService implements ragv1.RagServiceServer.
type RagService struct {
	ragv1.UnimplementedRagServiceServer
}

var _ ragv1.RagServiceServer = (*RagService)(nil)

// NewRagService returns the RagService handlers.
func NewRagService() *RagService {
	return &RagService{}
}
