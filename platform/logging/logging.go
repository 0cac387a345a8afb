// Package logging builds the structured logger every groundcrew binary uses
// and carries per-request correlation data (request id, OpenTelemetry trace
// and span ids) from a context.Context into each log record.
//
// There is no package-level logger: main builds one with [New] and passes the
// *slog.Logger down explicitly. Code that logs with the *Context methods
// (InfoContext, ErrorContext, …) gets request_id, trace_id and span_id on the
// record without doing anything else.
package logging

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel/trace"
)

// RequestIDKey is the gRPC metadata key and HTTP header name (case-insensitive
// in HTTP; gRPC metadata keys are always lower case) that carries a request id
// between processes.
const RequestIDKey = "x-request-id"

// Attribute keys added to every record by the [Handler] when the context
// carries the corresponding value.
const (
	RequestIDAttr = "request_id"
	TraceIDAttr   = "trace_id"
	SpanIDAttr    = "span_id"
)

// Log formats accepted by [New].
const (
	FormatJSON = "json"
	FormatText = "text"
)

// New returns a logger that writes records at or above level to w in the
// given format ("json" or "text"), wrapped in a [Handler] so context values
// show up on every record. format and level are matched case-insensitively;
// an unknown value is an error naming the accepted ones.
func New(w io.Writer, format, level string) (*slog.Logger, error) {
	lvl, err := ParseLevel(level)
	if err != nil {
		return nil, err
	}
	opts := &slog.HandlerOptions{Level: lvl}
	var h slog.Handler
	switch strings.ToLower(strings.TrimSpace(format)) {
	case FormatJSON, "":
		h = slog.NewJSONHandler(w, opts)
	case FormatText:
		h = slog.NewTextHandler(w, opts)
	default:
		return nil, fmt.Errorf("log format %q: want %q or %q", format, FormatJSON, FormatText)
	}
	return slog.New(NewHandler(h)), nil
}

// ParseLevel parses "debug", "info", "warn" (or "warning") and "error",
// case-insensitively, and the offsets slog accepts such as "info+2".
func ParseLevel(level string) (slog.Level, error) {
	s := strings.ToLower(strings.TrimSpace(level))
	if s == "warning" {
		s = "warn"
	}
	if s == "" {
		return slog.LevelInfo, nil
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("log level %q: want debug, info, warn or error", level)
	}
	return lvl, nil
}

// Handler is a slog.Handler that adds request_id, trace_id and span_id from
// the record's context to every record before passing it on. Like any
// attribute added while handling, they land inside groups opened with
// WithGroup.
type Handler struct {
	next slog.Handler
}

var _ slog.Handler = (*Handler)(nil)

// NewHandler wraps next so records carry the context's correlation ids.
func NewHandler(next slog.Handler) *Handler {
	return &Handler{next: next}
}

// Enabled reports whether the wrapped handler handles records at level.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

// Handle adds the context's correlation ids to r and passes it on.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if ctx != nil {
		if id := RequestID(ctx); id != "" {
			r.AddAttrs(slog.String(RequestIDAttr, id))
		}
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
			r.AddAttrs(
				slog.String(TraceIDAttr, sc.TraceID().String()),
				slog.String(SpanIDAttr, sc.SpanID().String()),
			)
		}
	}
	return h.next.Handle(ctx, r)
}

// WithAttrs returns a Handler whose wrapped handler has attrs added.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &Handler{next: h.next.WithAttrs(attrs)}
}

// WithGroup returns a Handler whose wrapped handler has the group opened.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name)}
}

type requestIDKey struct{}

// WithRequestID returns a copy of ctx that carries the request id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the request id carried by ctx, or "" if there is none.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// NewRequestID returns a fresh random request id: 32 lower-case hex digits.
func NewRequestID() string {
	var b [16]byte
	// crypto/rand.Read never returns an error on supported platforms.
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ValidRequestID reports whether id, received from a caller, is safe to
// adopt as a request id: 1 to 128 printable ASCII characters without spaces,
// so it cannot break log lines or headers.
func ValidRequestID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}
