package notifiergrpc

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alertwatch"
)

// AlertWatcher streams alert changes (alertwatch.Watcher).
type AlertWatcher interface {
	Watch(ctx context.Context, q alertwatch.Query, fn func(*alert.Alert) error) error
}

var _ AlertWatcher = (*alertwatch.Watcher)(nil)

// WatchAlerts streams each alert as it arrives and changes, after a first
// message without one (the watch listens), until the client
// cancels (the stream ends with the context's code) or the server shuts
// down (Unavailable, so a client reconnects to another instance or later).
func (s *NotifierService) WatchAlerts(req *notifierv1.WatchAlertsRequest, stream notifierv1.NotifierService_WatchAlertsServer) error {
	if s.watcher == nil {
		return status.Error(codes.Unimplemented, "alert store is not configured")
	}
	ctx := stream.Context()
	q := alertwatch.Query{}
	if req.GetStatus() != notifierv1.Alert_STATUS_UNSPECIFIED {
		q.Status = alert.Status(req.GetStatus().String())
	}
	if req.GetUpdatedAfter() != nil {
		q.UpdatedAfter = req.GetUpdatedAfter().AsTime()
	}
	// A message without an alert once the watch listens: the gateway
	// answers the HTTP request (SSE) only with a first message, and a
	// client may write right after. The same every heartbeat without
	// changes, so the gateway's per-write deadline and proxies keep an idle
	// stream open.
	empty := func() error { return stream.Send(&notifierv1.WatchAlertsResponse{}) }
	q.Started, q.Heartbeat = empty, empty
	err := s.watcher.Watch(ctx, q, func(a *alert.Alert) error {
		return stream.Send(&notifierv1.WatchAlertsResponse{Alert: fromAlert(a)})
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, alertwatch.ErrStopping):
		return status.Error(codes.Unavailable, "the server is shutting down; watch again")
	case ctx.Err() != nil:
		return status.FromContextError(ctx.Err()).Err()
	}
	return grpcserver.InternalError(ctx, s.logger, err, "watching alerts")
}
