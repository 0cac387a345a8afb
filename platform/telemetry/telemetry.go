// Package telemetry sets up OpenTelemetry tracing for a groundcrew binary.
//
// [Setup] always returns a working SDK TracerProvider, so spans are created
// and their trace and span ids reach the logs (see package logging) even
// when nothing is exported. Spans are exported only when an OTLP endpoint is
// configured; the exporter is OTLP over gRPC (otlptracegrpc, collector port
// 4317 by convention), chosen because every binary already links gRPC.
// Nothing dials out unless the endpoint is set.
//
// The TracerProvider is returned, not installed globally: callers pass it
// explicitly (for example to grpcserver.WithTracerProvider). The W3C
// TraceContext + Baggage propagator, however, is installed as the global
// propagator, because that is where OpenTelemetry instrumentation
// (otelgrpc, otelhttp) looks for it by default; propagation format is a
// process-wide wire contract, not per-component state.
package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Option configures [Setup].
type Option func(*options)

type options struct {
	logger *slog.Logger
}

// WithLogger routes errors that the OpenTelemetry SDK reports in the
// background (for example a collector that cannot be reached) to logger
// instead of OpenTelemetry's default stderr logger. Like the propagator,
// OpenTelemetry only offers a process-wide error handler.
func WithLogger(logger *slog.Logger) Option {
	return func(o *options) { o.logger = logger }
}

// Propagator returns the W3C TraceContext + Baggage propagator that [Setup]
// installs globally.
func Propagator() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

// Setup builds a TracerProvider for serviceName. When otlpEndpoint is
// non-empty it must be a URL such as "http://otel-collector:4317" ("http"
// means plaintext, "https" TLS); spans are then batched and exported over
// OTLP/gRPC. When it is empty no exporter is created and nothing is sent.
//
// Call shutdown before the process exits to flush buffered spans; it is safe
// to call with an already cancelled context, in which case pending spans are
// dropped.
func Setup(ctx context.Context, serviceName, otlpEndpoint string, opts ...Option) (tp trace.TracerProvider, shutdown func(context.Context) error, err error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if serviceName == "" {
		return nil, nil, fmt.Errorf("telemetry: service name is empty")
	}
	res, err := resource.New(ctx,
		resource.WithSchemaURL(semconv.SchemaURL),
		resource.WithAttributes(semconv.ServiceName(serviceName)),
		resource.WithTelemetrySDK(),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("telemetry: building resource: %w", err)
	}
	tpOpts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}

	if otlpEndpoint != "" {
		u, err := url.Parse(otlpEndpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, nil, fmt.Errorf("telemetry: OTLP endpoint %q: want a URL such as http://localhost:4317", otlpEndpoint)
		}
		// The exporter connects lazily, so an unreachable collector does not
		// fail start-up; export errors go to the OpenTelemetry error handler.
		exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(otlpEndpoint))
		if err != nil {
			return nil, nil, fmt.Errorf("telemetry: creating OTLP exporter for %s: %w", u.Redacted(), err)
		}
		tpOpts = append(tpOpts, sdktrace.WithBatcher(exp))
	}

	provider := sdktrace.NewTracerProvider(tpOpts...)
	otel.SetTextMapPropagator(Propagator())
	if o.logger != nil {
		logger := o.logger
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
			logger.Warn("opentelemetry error", "error", err)
		}))
	}
	return provider, provider.Shutdown, nil
}

// HTTPClient returns an HTTP client for calls to providers (Gemini, Groq,
// search engines): each request gets a client span under the caller's span
// and carries the trace context, so a trace runs from the gateway through
// every service out to the provider. timeout 0 means none (callers bound
// requests with their context). [ProviderMetrics.Client] is the same client,
// counted per provider.
func HTTPClient(tp trace.TracerProvider, timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: tracedTransport(tp, newBaseTransport())}
}
