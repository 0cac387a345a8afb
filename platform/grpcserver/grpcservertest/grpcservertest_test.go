package grpcservertest_test

import (
	"io"
	"log/slog"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/platform/grpcserver/grpcservertest"
)

// recorder is a testing.TB that records failures instead of ending the
// test, so that Run's own failures can be asserted on.
type recorder struct {
	testing.TB
	failed   bool
	cleanups []func()
}

func (r *recorder) Helper()               {}
func (r *recorder) Fatalf(string, ...any) { r.failed = true; panic(r) }
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Cleanup(f func())      { r.cleanups = append(r.cleanups, f) }
func (r *recorder) runCleanups() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

func newServer(t *testing.T, cfg grpcserver.Config) *grpcserver.Server {
	t.Helper()
	srv, err := grpcserver.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func TestDialServesUntilTheTestEnds(t *testing.T) {
	srv := newServer(t, grpcserver.Config{GRPCAddr: "127.0.0.1:0", GracePeriod: -1})
	conn := grpcservertest.Dial(t, srv)
	_, err := healthpb.NewHealthClient(conn).Check(t.Context(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatalf("health check through the returned connection: %v", err)
	}
}

func TestRunFailsWhenTheServerCannotStart(t *testing.T) {
	// A port someone else holds: Run cannot listen, so it stops before
	// it is ready.
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = taken.Close() })
	srv := newServer(t, grpcserver.Config{GRPCAddr: taken.Addr().String(), GracePeriod: -1})

	r := &recorder{TB: t}
	func() {
		defer func() {
			if p := recover(); p != nil && p != r {
				panic(p)
			}
		}()
		grpcservertest.Run(r, srv)
	}()
	r.runCleanups()
	if !r.failed {
		t.Error("Run did not fail the test although the server could not listen")
	}
}

func TestRunStopsTheServerAtTheEnd(t *testing.T) {
	srv := newServer(t, grpcserver.Config{GRPCAddr: "127.0.0.1:0", GracePeriod: -1})
	r := &recorder{TB: t}
	grpcservertest.Run(r, srv)
	addr := srv.GRPCAddr().String()
	r.runCleanups() // returns once Run has returned
	if r.failed {
		t.Fatal("a clean shutdown was reported as a failure")
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		_ = c.Close()
		t.Errorf("%s still accepts connections after the test's cleanup", addr)
	}
}

func TestServeReachesTheRegisteredServices(t *testing.T) {
	conn := grpcservertest.Serve(t, func(s *grpc.Server) {
		hs := health.NewServer()
		hs.SetServingStatus("fake", healthpb.HealthCheckResponse_SERVING)
		healthpb.RegisterHealthServer(s, hs)
	})
	resp, err := healthpb.NewHealthClient(conn).Check(t.Context(), &healthpb.HealthCheckRequest{Service: "fake"})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Check(fake) = %v, %v; want SERVING from the registered service", resp, err)
	}
}
