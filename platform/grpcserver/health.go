package grpcserver

import (
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// healthService is grpc-go's health server with one change: once shutdown
// has begun, a Watch stream ends (with Unavailable) right after it has told
// its watcher NOT_SERVING. Without that, every open Watch (client-side
// health checking uses one per connection) would hold GracefulStop until
// the grace period runs out.
type healthService struct {
	*health.Server
	s *Server
}

var _ healthpb.HealthServer = (*healthService)(nil)

// Watch streams status changes of one service until shutdown.
func (h *healthService) Watch(req *healthpb.HealthCheckRequest, stream healthpb.Health_WatchServer) error {
	w := &endingWatch{Health_WatchServer: stream, s: h.s}
	err := h.Server.Watch(req, w)
	if w.ended {
		// grpc-go reports any Send error as Canceled; say why it ended.
		return status.Error(codes.Unavailable, "server is shutting down")
	}
	return err
}

type endingWatch struct {
	healthpb.Health_WatchServer
	s     *Server
	ended bool // set by Send, read after Watch returns on the same goroutine
}

func (w *endingWatch) Send(resp *healthpb.HealthCheckResponse) error {
	if err := w.Health_WatchServer.Send(resp); err != nil {
		return err
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING && w.s.stopping() {
		w.ended = true
		return errShuttingDown
	}
	return nil
}

var errShuttingDown = errors.New("server is shutting down")
