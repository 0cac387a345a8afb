package grpcserver

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/groundcrew/groundcrew/platform/logging"
)

// InternalError is how gRPC adapters turn an unexpected error into a
// status. It logs err (with the request and trace ids from ctx) under msg,
// which should say what was being done ("storing alert"), and returns an
// Internal status whose message is generic apart from the request id, so
// nothing about the failure leaks to the caller.
//
// If err is the request's own context ending (the caller cancelled or its
// deadline passed), the matching Canceled or DeadlineExceeded status is
// returned instead and the line is logged at info level, since the server
// did nothing wrong.
func InternalError(ctx context.Context, logger *slog.Logger, err error, msg string) error {
	method, _ := grpc.Method(ctx)
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		logger.InfoContext(ctx, msg, "error", err, "grpc.method", method)
		return status.FromContextError(ctxErr).Err()
	}
	logger.ErrorContext(ctx, msg, "error", err, "grpc.method", method)
	return internalStatus(ctx)
}

// internalStatus is the one Internal status callers ever see.
func internalStatus(ctx context.Context) error {
	if id := logging.RequestID(ctx); id != "" {
		return status.Error(codes.Internal, "internal error (request id "+id+")")
	}
	return status.Error(codes.Internal, "internal error")
}

// FieldViolation describes one invalid request field, for [FieldViolations].
type FieldViolation struct {
	// Field is the path of the field, e.g. "round_config.max_results".
	Field string
	// Description says what is wrong, e.g. "must be between 0 and 10".
	Description string
}

// FieldViolations returns an InvalidArgument status carrying the violations
// as a google.rpc.BadRequest detail (the same detail the validation
// interceptor attaches), or nil when there are none, so a handler can collect
// its checks and write:
//
//	if err := grpcserver.FieldViolations(vs...); err != nil {
//		return nil, err
//	}
//
// Use it for checks that cannot be expressed as protovalidate rules.
func FieldViolations(violations ...FieldViolation) error {
	if len(violations) == 0 {
		return nil
	}
	br := &errdetails.BadRequest{FieldViolations: make([]*errdetails.BadRequest_FieldViolation, 0, len(violations))}
	parts := make([]string, 0, len(violations))
	for _, v := range violations {
		br.FieldViolations = append(br.FieldViolations, &errdetails.BadRequest_FieldViolation{
			Field:       v.Field,
			Description: v.Description,
		})
		parts = append(parts, v.Field+": "+v.Description)
	}
	st := status.New(codes.InvalidArgument, "invalid request: "+strings.Join(parts, "; "))
	withDetails, err := st.WithDetails(br)
	if err != nil {
		return st.Err()
	}
	return withDetails.Err()
}

// PreconditionFailed returns a FailedPrecondition status whose message is
// description and which carries a google.rpc.PreconditionFailure detail
// with one violation, so that a client (or the REST body's "details") can
// tell what state refused the request without parsing the message. kind
// is the violation's type, an UPPER_SNAKE word of the service
// ("ENGINE_NOT_CONFIGURED", "APPROVAL_DECIDED"); subject names what it is
// about, relative to kind ("engines/exa", "approvals/<id>"). Use it for a
// refusal caused by the server's configuration or a resource's state, not
// by a field of the request (that is [FieldViolations]).
func PreconditionFailed(kind, subject, description string) error {
	st := status.New(codes.FailedPrecondition, description)
	withDetails, err := st.WithDetails(&errdetails.PreconditionFailure{
		Violations: []*errdetails.PreconditionFailure_Violation{{Type: kind, Subject: subject, Description: description}},
	})
	if err != nil {
		return st.Err()
	}
	return withDetails.Err()
}
