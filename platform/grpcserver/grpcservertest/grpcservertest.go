// Package grpcservertest runs gRPC servers for the length of a test and
// dials them: a grpcserver.Server on its loopback listeners (Run, Dial), or
// fakes on a bare server over an in-memory listener (Serve). These are the
// few lines every service's gRPC tests need, written once.
package grpcservertest

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

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

// Serve serves the services register adds on a bare grpc.Server (none of
// grpcserver's interceptors) over an in-memory listener, and returns a
// connection to it; both are closed when the test ends. It suits fakes of
// another service that a client package is tested against.
func Serve(t testing.TB, register func(*grpc.Server)) *grpc.ClientConn {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	register(srv)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}
