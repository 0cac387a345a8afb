// Package grpcclient dials other groundcrew services the same way from every
// service and the gateway: OpenTelemetry client spans, the caller's request
// id passed on as x-request-id metadata so one request can be followed
// through every log, and the service-to-service credentials of
// config.Transport ([Secure]): mTLS when GRPC_TLS_* are set (plaintext
// otherwise) and GRPC_SHARED_TOKEN as a bearer on every call.
package grpcclient

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/logging"
	"github.com/groundcrew/groundcrew/platform/telemetry"
)

// Dial returns a lazy client connection to addr: it does not fail when the
// peer is down, calls do (with Unavailable), so services start in any order.
func Dial(addr string, tp trace.TracerProvider, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	base := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(unaryRequestID),
		grpc.WithChainStreamInterceptor(streamRequestID),
	}
	if tp != nil {
		base = append(base, grpc.WithStatsHandler(otelgrpc.NewClientHandler(
			otelgrpc.WithTracerProvider(tp),
			otelgrpc.WithPropagators(telemetry.Propagator()),
		)))
	}
	conn, err := grpc.NewClient(addr, append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("dialing %s: %w", addr, err)
	}
	return conn, nil
}

// Secure returns the dial options that present t's credentials: pass them
// to [Dial] as grpcclient.Dial(addr, tp, grpcclient.Secure(cfg.Transport)...).
// With mTLS configured but its files unreadable, the options make every
// call fail with Unavailable naming the problem rather than falling back
// to plaintext; config validation at start-up has normally caught it.
func Secure(t config.Transport) []grpc.DialOption {
	var opts []grpc.DialOption
	if t.TLS() {
		tlsCfg, err := t.ClientTLSConfig()
		if err != nil {
			return []grpc.DialOption{grpc.WithChainUnaryInterceptor(failUnary(err)), grpc.WithChainStreamInterceptor(failStream(err))}
		}
		opts = append(opts, grpc.WithTransportCredentials(credentials.NewTLS(tlsCfg)))
	}
	if tok := strings.TrimSpace(t.SharedToken); tok != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearer{token: tok, tls: t.TLS()}))
	}
	return opts
}

// bearer sends the shared token on every call. Without mTLS it travels in
// plaintext like every other byte on the internal network, which is the
// documented trade-off of the token-only mode.
type bearer struct {
	token string
	tls   bool
}

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

func (b bearer) RequireTransportSecurity() bool { return b.tls }

func failUnary(err error) grpc.UnaryClientInterceptor {
	return func(context.Context, string, any, any, *grpc.ClientConn, grpc.UnaryInvoker, ...grpc.CallOption) error {
		return status.Errorf(codes.Unavailable, "grpcclient: %v", err)
	}
}

func failStream(err error) grpc.StreamClientInterceptor {
	return func(context.Context, *grpc.StreamDesc, *grpc.ClientConn, string, grpc.Streamer, ...grpc.CallOption) (grpc.ClientStream, error) {
		return nil, status.Errorf(codes.Unavailable, "grpcclient: %v", err)
	}
}

func withRequestID(ctx context.Context) context.Context {
	id := logging.RequestID(ctx)
	if id == "" {
		return ctx
	}
	if md, ok := metadata.FromOutgoingContext(ctx); ok && len(md.Get(logging.RequestIDKey)) > 0 {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, logging.RequestIDKey, id)
}

func unaryRequestID(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return invoker(withRequestID(ctx), method, req, reply, cc, opts...)
}

func streamRequestID(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return streamer(withRequestID(ctx), desc, cc, method, opts...)
}
