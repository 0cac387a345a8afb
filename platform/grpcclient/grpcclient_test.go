package grpcclient

import (
	"context"
	"net"
	"testing"

	"go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	"github.com/groundcrew/groundcrew/platform/logging"
)

func TestRequestIDIsPassedOn(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan []string, 1)
	srv := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		got <- md.Get(logging.RequestIDKey)
		return h(ctx, req)
	}))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	conn, err := Dial(lis.Addr().String(), noop.NewTracerProvider())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)

	ctx := logging.WithRequestID(context.Background(), "req-42")
	if _, err := client.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	if ids := <-got; len(ids) != 1 || ids[0] != "req-42" {
		t.Errorf("server saw x-request-id %v, want [req-42]", ids)
	}
	// No id in the context: none invented here (the server makes one).
	if _, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	if ids := <-got; len(ids) != 0 {
		t.Errorf("server saw x-request-id %v, want none", ids)
	}
}
