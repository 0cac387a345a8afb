// Package grpcservertest runs a grpcserver.Server for the length of a test,
// on its loopback listeners, and dials it: the few lines every service's
// gRPC tests need, written once.
package grpcservertest

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/groundcrew/groundcrew/platform/grpcserver"
)

// Run starts srv and returns once it is listening; a server that stops
// before that fails the test. When the test ends srv is shut down, and an
// error from its Run is reported.
func Run(t testing.TB, srv *grpcserver.Server) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	select {
	case <-srv.Ready():
	case err := <-done:
		cancel()
		t.Fatalf("grpcserver stopped before it was ready: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("grpcserver: %v", err)
		}
	})
}

// Dial runs srv like Run and returns a plain-text client connection to its
// gRPC address (srv must not require TLS), closed when the test ends.
func Dial(t testing.TB, srv *grpcserver.Server, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	Run(t, srv)
	conn, err := grpc.NewClient(srv.GRPCAddr().String(),
		append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}
