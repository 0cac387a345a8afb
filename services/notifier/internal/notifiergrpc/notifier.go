// Package notifiergrpc is the gRPC adapter of the notifier service: it converts
// between the generated types and the domain, and alone maps domain errors
// to gRPC codes.
package notifiergrpc

import (
	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
)

// NotifierService implements notifierv1.NotifierServiceServer.
type NotifierService struct {
	notifierv1.UnimplementedNotifierServiceServer
}

var _ notifierv1.NotifierServiceServer = (*NotifierService)(nil)

// NewNotifierService returns the NotifierService handlers.
func NewNotifierService() *NotifierService {
	return &NotifierService{}
}
