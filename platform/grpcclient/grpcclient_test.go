package grpcclient

import (
	"context"
	"net"
	"testing"

	"go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

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

// A server that refuses a server-streaming call (the gateway's watch and
// ask-stream routes) answers with its status, even when the refusal
// arrives before the request is sent: grpc-go then answers the stub's send
// with nil, not io.EOF (which the gateway would map to "internal error"),
// and leaves the status to the first receive. Bidirectional streams do get
// io.EOF (see grpcserver's transport test); no route uses one.
func TestRefusedServerStreamKeepsItsStatus(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.StreamInterceptor(func(any, grpc.ServerStream, *grpc.StreamServerInfo, grpc.StreamHandler) error {
		return status.Error(codes.Unauthenticated, "missing credentials")
	}))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	// The refusal races the request. This interceptor makes it win every time:
	// it waits for the server's answer (Header returns once the refusal's
	// trailers are in) before the stub sends the request.
	refusalFirst := grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		cs, err := streamer(ctx, desc, cc, method, opts...)
		if err == nil {
			_, _ = cs.Header()
		}
		return cs, err
	})
	conn, err := Dial(lis.Addr().String(), nil, refusalFirst)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)
	for i := range 20 {
		stream, err := client.Watch(context.Background(), &healthpb.HealthCheckRequest{})
		if err == nil {
			_, err = stream.Recv()
		}
		if status.Code(err) != codes.Unauthenticated {
			t.Fatalf("call %d: got %v, want Unauthenticated", i, err)
		}
	}
}
