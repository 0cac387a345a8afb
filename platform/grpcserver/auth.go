package grpcserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/groundcrew/groundcrew/platform/config"
)

// WithTransport applies the service-to-service settings every service
// reads (config.Transport): GRPC_SHARED_TOKEN is required on every call
// except health checks, GRPC_TLS_* serve mTLS with verified client
// certificates, GRPC_REFLECTION=false turns reflection off and
// ADMIN_PPROF=true mounts the profiler on the admin port. Without this
// option reflection is on and the profiler off.
func WithTransport(t config.Transport) Option {
	return func(o *options) {
		o.transport = t
		o.transportSet = true
	}
}

// errUnauthenticated is what a caller without the shared token gets; it
// says what is missing and nothing about the expected value.
var errUnauthenticated = status.Error(codes.Unauthenticated, "missing or invalid service token: send authorization: Bearer <GRPC_SHARED_TOKEN>")

// tokenChecker compares a call's bearer token with the shared one in
// constant time (over SHA-256 digests, so length does not leak either).
type tokenChecker struct{ want [32]byte }

func newTokenChecker(token string) *tokenChecker {
	return &tokenChecker{want: sha256.Sum256([]byte(strings.TrimSpace(token)))}
}

func (c *tokenChecker) check(ctx context.Context, fullMethod string) error {
	// Probes (kubelet, compose, the gateway's /readyz) have no token.
	if strings.HasPrefix(fullMethod, "/"+healthpb.Health_ServiceDesc.ServiceName+"/") {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get("authorization")
	if len(vals) != 1 {
		return errUnauthenticated
	}
	const prefix = "bearer "
	v := vals[0]
	if len(v) <= len(prefix) || !strings.EqualFold(v[:len(prefix)], prefix) {
		return errUnauthenticated
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(v[len(prefix):])))
	if subtle.ConstantTimeCompare(got[:], c.want[:]) != 1 {
		return errUnauthenticated
	}
	return nil
}

func (c *tokenChecker) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if err := c.check(ctx, info.FullMethod); err != nil {
		return nil, err
	}
	return handler(ctx, req)
}

func (c *tokenChecker) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if err := c.check(ss.Context(), info.FullMethod); err != nil {
		return err
	}
	return handler(srv, ss)
}
