// Package grpcclient dials other groundcrew services the same way from every
// service: plaintext inside the deployment, OpenTelemetry client spans, and
// the caller's request id passed on as x-request-id metadata so one request
// can be followed through every log.
package grpcclient

import (
	"context"
	"fmt"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

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
