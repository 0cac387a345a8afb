package telemetry_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	collectortracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"

	"github.com/groundcrew/groundcrew/platform/telemetry"
)

func TestSetupWithoutEndpointStillCreatesSpans(t *testing.T) {
	tp, shutdown, err := telemetry.Setup(context.Background(), "test", "")
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	t.Cleanup(func() { _ = shutdown(context.Background()) })

	_, span := tp.Tracer("t").Start(context.Background(), "op")
	defer span.End()
	if sc := span.SpanContext(); !sc.IsValid() || !sc.IsSampled() {
		t.Errorf("span context = %+v, want a valid sampled one", sc)
	}

	carrier := propagation.MapCarrier{}
	ctx, child := tp.Tracer("t").Start(context.Background(), "inject")
	defer child.End()
	otel.GetTextMapPropagator().Inject(ctx, carrier)
	if !strings.Contains(carrier.Get("traceparent"), child.SpanContext().TraceID().String()) {
		t.Errorf("global propagator injected %v, want a W3C traceparent", carrier)
	}
}

func TestSetupRejectsEndpointWithoutScheme(t *testing.T) {
	_, _, err := telemetry.Setup(context.Background(), "test", "localhost:4317")
	if err == nil || !strings.Contains(err.Error(), "want a URL such as http://localhost:4317") {
		t.Errorf("Setup error = %v, want one asking for a URL", err)
	}
}

// collector is an in-process OTLP/gRPC trace collector.
type collector struct {
	collectortracepb.UnimplementedTraceServiceServer
	got chan *collectortracepb.ExportTraceServiceRequest
}

func (c *collector) Export(_ context.Context, req *collectortracepb.ExportTraceServiceRequest) (*collectortracepb.ExportTraceServiceResponse, error) {
	c.got <- req
	return &collectortracepb.ExportTraceServiceResponse{}, nil
}

func TestSetupExportsOverOTLP(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	srv := grpc.NewServer()
	c := &collector{got: make(chan *collectortracepb.ExportTraceServiceRequest, 10)}
	collectortracepb.RegisterTraceServiceServer(srv, c)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	tp, shutdown, err := telemetry.Setup(context.Background(), "exporter-test", "http://"+lis.Addr().String())
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	_, span := tp.Tracer("t").Start(context.Background(), "exported-span")
	span.End()
	// Shutdown flushes the batcher, so the export has happened when it returns.
	if err := shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown: %v", err)
	}

	req := <-c.got
	rs := req.GetResourceSpans()
	if len(rs) == 0 || len(rs[0].GetScopeSpans()) == 0 || len(rs[0].GetScopeSpans()[0].GetSpans()) == 0 {
		t.Fatalf("export request %v has no spans", req)
	}
	if got := rs[0].GetScopeSpans()[0].GetSpans()[0].GetName(); got != "exported-span" {
		t.Errorf("span name = %q, want %q", got, "exported-span")
	}
	var service string
	for _, kv := range rs[0].GetResource().GetAttributes() {
		if kv.GetKey() == "service.name" {
			service = kv.GetValue().GetStringValue()
		}
	}
	if service != "exporter-test" {
		t.Errorf("service.name = %q, want %q", service, "exporter-test")
	}
}

func TestHTTPClientCarriesTraceContext(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("traceparent")
	}))
	defer srv.Close()
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()
	ctx, span := tp.Tracer("test").Start(context.Background(), "caller")
	defer span.End()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := telemetry.HTTPClient(tp, time.Second).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	tp2 := <-got
	if !strings.Contains(tp2, span.SpanContext().TraceID().String()) {
		t.Errorf("traceparent = %q, want the caller's trace %s", tp2, span.SpanContext().TraceID())
	}
}
