package grpcserver

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	validatepb "buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"buf.build/go/protovalidate"
	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	middleware "github.com/grpc-ecosystem/go-grpc-middleware/v2"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors"
	grpclogging "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	protovalidatemw "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/protovalidate"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/selector"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/groundcrew/groundcrew/platform/logging"
)

// interceptors builds the unary and stream chains, outermost first.
func (s *Server) interceptors(o *options) ([]grpc.UnaryServerInterceptor, []grpc.StreamServerInterceptor) {
	logger := interceptorLogger(s.logger)
	logOpts := []grpclogging.Option{grpclogging.WithLogOnEvents(grpclogging.FinishCall)}
	// Health checks arrive every few seconds from probes and load balancers;
	// logging each one would drown the service's own lines.
	notHealth := selector.MatchFunc(func(_ context.Context, c interceptors.CallMeta) bool {
		return c.Service != healthpb.Health_ServiceDesc.ServiceName
	})
	promOpts := []grpcprom.Option{grpcprom.WithExemplarFromContext(traceExemplar)}
	recoveryOpts := []recovery.Option{recovery.WithRecoveryHandlerContext(s.recoverPanic)}

	unary := []grpc.UnaryServerInterceptor{
		unaryRequestID,
		selector.UnaryServerInterceptor(grpclogging.UnaryServerInterceptor(logger, logOpts...), notHealth),
		s.metrics.UnaryServerInterceptor(promOpts...),
	}
	stream := []grpc.StreamServerInterceptor{
		streamRequestID,
		selector.StreamServerInterceptor(grpclogging.StreamServerInterceptor(logger, logOpts...), notHealth),
		s.metrics.StreamServerInterceptor(promOpts...),
	}
	if o.transportSet && o.transport.SharedToken != "" {
		tc := newTokenChecker(o.transport.SharedToken)
		unary = append(unary, tc.unary)
		stream = append(stream, tc.stream)
	}
	unary = append(unary, recovery.UnaryServerInterceptor(recoveryOpts...))
	unary = append(unary, o.unary...)
	unary = append(unary, unaryValidation(o.validator))

	stream = append(stream, recovery.StreamServerInterceptor(recoveryOpts...))
	stream = append(stream, o.stream...)
	stream = append(stream, streamValidation(o.validator))
	return unary, stream
}

// interceptorLogger adapts slog to the middleware's logging interface. The
// context is passed through so the logging.Handler adds request and trace
// ids.
func interceptorLogger(l *slog.Logger) grpclogging.Logger {
	return grpclogging.LoggerFunc(func(ctx context.Context, lvl grpclogging.Level, msg string, fields ...any) {
		l.Log(ctx, slog.Level(lvl), msg, fields...)
	})
}

// traceExemplar links histogram observations to the sampled trace.
func traceExemplar(ctx context.Context) prometheus.Labels {
	if sc := trace.SpanContextFromContext(ctx); sc.IsSampled() {
		return prometheus.Labels{"trace_id": sc.TraceID().String()}
	}
	return nil
}

// requestID takes the caller's x-request-id when it is well formed and
// generates one otherwise.
func requestID(ctx context.Context) string {
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if ids := md.Get(logging.RequestIDKey); len(ids) > 0 && logging.ValidRequestID(ids[0]) {
			return ids[0]
		}
	}
	return logging.NewRequestID()
}

func unaryRequestID(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	id := requestID(ctx)
	ctx = logging.WithRequestID(ctx, id)
	// The header is sent with the response or status, so it reaches the
	// caller whether or not the handler succeeds.
	_ = grpc.SetHeader(ctx, metadata.Pairs(logging.RequestIDKey, id))
	return handler(ctx, req)
}

func streamRequestID(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	id := requestID(ss.Context())
	_ = ss.SetHeader(metadata.Pairs(logging.RequestIDKey, id))
	wrapped := middleware.WrapServerStream(ss)
	wrapped.WrappedContext = logging.WithRequestID(ss.Context(), id)
	return handler(srv, wrapped)
}

// recoverPanic logs a handler panic with its stack and gives the caller a
// generic Internal error; the panic value never leaves the process.
func (s *Server) recoverPanic(ctx context.Context, p any) error {
	method, _ := grpc.Method(ctx)
	s.logger.ErrorContext(ctx, "panic in gRPC handler",
		"grpc.method", method,
		"panic", fmt.Sprint(p),
		"stack", string(debug.Stack()),
	)
	return internalStatus(ctx)
}

func unaryValidation(v protovalidate.Validator) grpc.UnaryServerInterceptor {
	inner := protovalidatemw.UnaryServerInterceptor(v)
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		resp, err := inner(ctx, req, info, handler)
		return resp, withBadRequest(err)
	}
}

func streamValidation(v protovalidate.Validator) grpc.StreamServerInterceptor {
	inner := protovalidatemw.StreamServerInterceptor(v)
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		return withBadRequest(inner(srv, ss, info, handler))
	}
}

// withBadRequest adds a google.rpc.BadRequest detail, built from the
// buf.validate.Violations detail the protovalidate interceptor attaches, to
// an InvalidArgument status. Clients (and the REST gateway) then find field
// violations in the same standard detail whether they came from proto rules
// or from handler checks ([FieldViolations]).
func withBadRequest(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.InvalidArgument {
		return err
	}
	var violations *validatepb.Violations
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.BadRequest:
			return err
		case *validatepb.Violations:
			violations = d
		}
	}
	if violations == nil {
		return err
	}
	br := &errdetails.BadRequest{}
	for _, v := range violations.GetViolations() {
		br.FieldViolations = append(br.FieldViolations, &errdetails.BadRequest_FieldViolation{
			Field:       protovalidate.FieldPathString(v.GetField()),
			Description: v.GetMessage(),
			Reason:      v.GetRuleId(),
		})
	}
	withBR, detErr := st.WithDetails(br)
	if detErr != nil {
		return err
	}
	return withBR.Err()
}
