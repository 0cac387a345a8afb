package grpcserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	validatepb "buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/platform/logging"
	"github.com/groundcrew/groundcrew/platform/logging/logtest"
)

// waitLimit bounds every wait in these tests so a broken shutdown fails the
// test instead of hanging it.
const waitLimit = 20 * time.Second

type harness struct {
	srv    *grpcserver.Server
	echo   *echoServer
	conn   *grpc.ClientConn
	logs   *logtest.Buffer
	cancel context.CancelFunc
	done   chan error
}

type setup struct {
	grace     time.Duration
	beforeRun func(*grpcserver.Server)
	opts      []grpcserver.Option
}

// start runs a Server with the test service on loopback ":0" listeners.
func start(t *testing.T, su setup) *harness {
	t.Helper()
	logs := &logtest.Buffer{}
	logger, err := logging.New(logs, "json", "debug")
	if err != nil {
		t.Fatalf("logging.New: %v", err)
	}
	if su.grace == 0 {
		su.grace = time.Minute
	}
	srv, err := grpcserver.New(grpcserver.Config{
		GRPCAddr:    "127.0.0.1:0",
		AdminAddr:   "127.0.0.1:0",
		GracePeriod: su.grace,
	}, logger, su.opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	echo := newEchoServer(logger)
	srv.RegisterService(&echoServiceDesc, echo)
	if su.beforeRun != nil {
		su.beforeRun(srv)
	}

	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{srv: srv, echo: echo, logs: logs, cancel: cancel, done: make(chan error, 1)}
	go func() { h.done <- srv.Run(ctx) }()
	select {
	case <-srv.Ready():
	case err := <-h.done:
		cancel()
		t.Fatalf("Run returned before ready: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		if err := h.wait(t); err != nil {
			t.Errorf("Run: %v", err)
		}
	})

	conn, err := grpc.NewClient(srv.GRPCAddr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	h.conn = conn
	return h
}

// wait returns Run's result, failing the test if Run does not return.
func (h *harness) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-h.done:
		h.done <- err // later callers (t.Cleanup) see the same result
		return err
	case <-time.After(waitLimit):
		t.Fatal("Run did not return after cancellation")
		return nil
	}
}

func (h *harness) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + h.srv.AdminAddr().String() + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return resp.StatusCode, string(body)
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	t.Cleanup(cancel)
	return ctx
}

func TestHealthServingThenNotServingOnShutdown(t *testing.T) {
	h := start(t, setup{})
	ctx := testContext(t)
	client := healthpb.NewHealthClient(h.conn)

	for _, svc := range []string{"", echoService} {
		resp, err := client.Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("Check(%q) = %v, %v; want SERVING", svc, resp.GetStatus(), err)
		}
	}
	if _, err := client.Check(ctx, &healthpb.HealthCheckRequest{Service: "nope"}); status.Code(err) != codes.NotFound {
		t.Errorf("Check(unknown) error = %v, want NotFound", err)
	}

	watch, err := client.Watch(ctx, &healthpb.HealthCheckRequest{Service: echoService})
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	if resp, err := watch.Recv(); err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("first Watch update = %v, %v; want SERVING", resp.GetStatus(), err)
	}

	start := time.Now()
	h.cancel()
	if resp, err := watch.Recv(); err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("Watch update after shutdown = %v, %v; want NOT_SERVING", resp.GetStatus(), err)
	}
	if _, err := watch.Recv(); status.Code(err) != codes.Unavailable {
		t.Errorf("Watch after NOT_SERVING: error = %v, want Unavailable", err)
	}
	if err := h.wait(t); err != nil {
		t.Errorf("Run = %v, want nil", err)
	}
	// The open Watch must not hold GracefulStop for the whole grace period.
	if elapsed := time.Since(start); elapsed > 30*time.Second {
		t.Errorf("shutdown took %v with an open Watch", elapsed)
	}
}

func TestInFlightCallDrainsAfterNotServing(t *testing.T) {
	h := start(t, setup{})
	ctx := testContext(t)
	watch, err := healthpb.NewHealthClient(h.conn).Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	if resp, err := watch.Recv(); err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Watch update = %v, %v; want SERVING", resp.GetStatus(), err)
	}

	type result struct {
		text string
		err  error
	}
	callDone := make(chan result, 1)
	go func() {
		text, err := invoke(ctx, t, h.conn, "Block", "drain")
		callDone <- result{text, err}
	}()
	<-h.echo.entered

	h.cancel()
	if resp, err := watch.Recv(); err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("Watch update = %v, %v; want NOT_SERVING while a call is in flight", resp.GetStatus(), err)
	}
	select {
	case err := <-h.done:
		t.Fatalf("Run returned %v while a call was in flight", err)
	default:
	}
	if code, _ := h.get(t, "/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz while draining = %d, want 503", code)
	}

	close(h.echo.release)
	if r := <-callDone; r.err != nil || r.text != "drain" {
		t.Errorf("in-flight call = %q, %v; want it to finish", r.text, r.err)
	}
	if err := h.wait(t); err != nil {
		t.Errorf("Run = %v, want nil", err)
	}
}

func TestGracePeriodBoundsShutdown(t *testing.T) {
	h := start(t, setup{grace: 50 * time.Millisecond})
	ctx := testContext(t)
	callErr := make(chan error, 1)
	go func() {
		_, err := invoke(ctx, t, h.conn, "Block", "stuck")
		callErr <- err
	}()
	<-h.echo.entered

	h.cancel()
	if err := h.wait(t); err != nil {
		t.Errorf("Run = %v, want nil", err)
	}
	if err := <-callErr; status.Code(err) != codes.Unavailable && status.Code(err) != codes.Canceled {
		t.Errorf("stuck call error = %v, want Unavailable or Canceled", err)
	}
	if !strings.Contains(h.logs.String(), "grace period over") {
		t.Errorf("logs lack the grace-period warning:\n%s", h.logs)
	}
}

func TestReflectionListsServices(t *testing.T) {
	h := start(t, setup{})
	stream, err := reflectionpb.NewServerReflectionClient(h.conn).ServerReflectionInfo(testContext(t))
	if err != nil {
		t.Fatalf("ServerReflectionInfo: %v", err)
	}
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{
		MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{},
	}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatalf("Recv: %v", err)
	}
	got := map[string]bool{}
	for _, s := range resp.GetListServicesResponse().GetService() {
		got[s.GetName()] = true
	}
	for _, want := range []string{"grpc.health.v1.Health", echoService, "grpc.reflection.v1.ServerReflection"} {
		if !got[want] {
			t.Errorf("reflection lists %v, missing %s", got, want)
		}
	}
}

func TestPanicBecomesInternal(t *testing.T) {
	h := start(t, setup{})
	ctx := testContext(t)
	_, err := invoke(ctx, t, h.conn, "Panic", "kaboom-42")
	if status.Code(err) != codes.Internal {
		t.Fatalf("Panic error = %v, want Internal", err)
	}
	if strings.Contains(err.Error(), "kaboom-42") {
		t.Errorf("client error %q contains the panic value", err)
	}
	panics := h.logs.Named(t, "panic in gRPC handler")
	if len(panics) != 1 {
		t.Fatalf("got %d panic log records, want 1; logs:\n%s", len(panics), h.logs)
	}
	if panics[0]["panic"] != "kaboom-42" || !strings.Contains(panics[0]["stack"].(string), "echoServer") {
		t.Errorf("panic record = %v, want the panic value and a stack naming the handler", panics[0])
	}
	if panics[0]["request_id"] == nil || !strings.Contains(err.Error(), panics[0]["request_id"].(string)) {
		t.Errorf("panic record request_id = %v, client error %q; want the same id in both", panics[0]["request_id"], err)
	}

	// The process is still serving.
	if text, err := invoke(ctx, t, h.conn, "Echo", "alive"); err != nil || text != "alive" {
		t.Errorf("Echo after panic = %q, %v", text, err)
	}
}

func TestInternalErrorHidesCause(t *testing.T) {
	h := start(t, setup{})
	_, err := invoke(testContext(t), t, h.conn, "Fail", "pw=hunter2")
	if status.Code(err) != codes.Internal || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("Fail error = %v, want a generic Internal", err)
	}
	recs := h.logs.Named(t, "failing on purpose")
	if len(recs) != 1 || recs[0]["error"] != "pw=hunter2" || recs[0]["grpc.method"] != "/"+echoService+"/Fail" {
		t.Errorf("log records = %v, want one with the real error and method", recs)
	}
}

func TestValidationRejectsInvalidRequests(t *testing.T) {
	h := start(t, setup{})
	ctx := testContext(t)
	tests := []struct {
		text, wantRule string
	}{
		{"", "string.min_len"},
		{"far too long for ten", "string.max_len"},
	}
	for _, tt := range tests {
		_, err := invoke(ctx, t, h.conn, "Echo", tt.text)
		checkViolation(t, err, tt.wantRule)
	}

	stream, err := h.conn.NewStream(ctx, echoStreamDesc, "/"+echoService+"/EchoStream")
	if err != nil {
		t.Fatalf("NewStream: %v", err)
	}
	if err := stream.SendMsg(newEchoRequest("")); err != nil {
		t.Fatalf("SendMsg: %v", err)
	}
	_ = stream.CloseSend()
	err = stream.RecvMsg(dynamicpb.NewMessage(echoRespDesc))
	checkViolation(t, err, "string.min_len")

	if text, err := invoke(ctx, t, h.conn, "Echo", "valid"); err != nil || text != "valid" {
		t.Errorf("Echo(valid) = %q, %v", text, err)
	}
}

func checkViolation(t *testing.T, err error, wantRule string) {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != codes.InvalidArgument {
		t.Fatalf("error = %v, want InvalidArgument", err)
	}
	var gotViolations, gotBadRequest bool
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *validatepb.Violations:
			gotViolations = len(d.GetViolations()) == 1 && d.GetViolations()[0].GetRuleId() == wantRule
		case *errdetails.BadRequest:
			want := []*errdetails.BadRequest_FieldViolation{{Field: "text", Reason: wantRule}}
			got := d.GetFieldViolations()
			gotBadRequest = len(got) == 1 && got[0].GetField() == want[0].GetField() &&
				got[0].GetReason() == want[0].GetReason() && got[0].GetDescription() != ""
		}
	}
	if !gotViolations || !gotBadRequest {
		t.Errorf("details = %v, want buf.validate.Violations and a BadRequest for field text, rule %s", st.Details(), wantRule)
	}
}

func TestReadyzFollowsServingStatus(t *testing.T) {
	h := start(t, setup{beforeRun: func(s *grpcserver.Server) { s.SetServingStatus(echoService, false) }})
	ctx := testContext(t)
	health := healthpb.NewHealthClient(h.conn)

	if code, body := h.get(t, "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d %q, want 200", code, body)
	}
	checkReadyz(t, h, http.StatusServiceUnavailable, grpcserver.ReadyzResponse{
		Status:   "NOT_SERVING",
		Services: map[string]string{echoService: "NOT_SERVING"},
	})
	if resp, err := health.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("Check(\"\") = %v, %v; want NOT_SERVING", resp.GetStatus(), err)
	}

	h.srv.SetServingStatus(echoService, true)
	checkReadyz(t, h, http.StatusOK, grpcserver.ReadyzResponse{
		Status:   "SERVING",
		Services: map[string]string{echoService: "SERVING"},
	})
	if resp, err := health.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("Check(\"\") = %v, %v; want SERVING", resp.GetStatus(), err)
	}

	// A dependency that is not a gRPC service can hold readiness back too.
	h.srv.SetServingStatus("index-loaded", false)
	checkReadyz(t, h, http.StatusServiceUnavailable, grpcserver.ReadyzResponse{
		Status:   "NOT_SERVING",
		Services: map[string]string{echoService: "SERVING", "index-loaded": "NOT_SERVING"},
	})
}

func checkReadyz(t *testing.T, h *harness, wantCode int, want grpcserver.ReadyzResponse) {
	t.Helper()
	code, body := h.get(t, "/readyz")
	var got grpcserver.ReadyzResponse
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("/readyz body %q: %v", body, err)
	}
	if code != wantCode {
		t.Errorf("/readyz status = %d, want %d", code, wantCode)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("/readyz body mismatch (-want +got):\n%s", diff)
	}
}

func TestMetricsExposeHandledTotal(t *testing.T) {
	reg := prometheus.NewRegistry()
	domain := prometheus.NewCounter(prometheus.CounterOpts{Name: "groundcrew_test_things_total", Help: "Things."})
	reg.MustRegister(domain)
	domain.Inc()
	h := start(t, setup{opts: []grpcserver.Option{grpcserver.WithRegistry(reg)}})
	if h.srv.Registry() != reg {
		t.Error("Registry() is not the registry passed with WithRegistry")
	}

	if _, err := invoke(testContext(t), t, h.conn, "Echo", "count me"); err != nil {
		t.Fatalf("Echo: %v", err)
	}
	code, body := h.get(t, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics = %d", code)
	}
	for _, want := range []string{
		`grpc_server_handled_total{grpc_code="OK",grpc_method="Echo",grpc_service="` + echoService + `",grpc_type="unary"} 1`,
		`grpc_server_handling_seconds_bucket{grpc_method="Echo"`,
		`grpc_server_started_total{grpc_method="Block"`, // pre-initialised series
		"go_goroutines",
		"process_cpu_seconds_total",
		"groundcrew_test_things_total 1",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

var hexID = regexp.MustCompile(`^[0-9a-f]{32}$`)

func TestRequestIDRoundTrips(t *testing.T) {
	h := start(t, setup{})
	ctx := testContext(t)
	tests := []struct {
		name, sent string
		wantSame   bool
	}{
		{"caller id kept", "abc-123", true},
		{"missing id generated", "", false},
		{"malformed id replaced", "two words", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			callCtx := ctx
			if tt.sent != "" {
				callCtx = metadata.AppendToOutgoingContext(ctx, logging.RequestIDKey, tt.sent)
			}
			var header metadata.MD
			if _, err := invoke(callCtx, t, h.conn, "Echo", "id", grpc.Header(&header)); err != nil {
				t.Fatalf("Echo: %v", err)
			}
			got := header.Get(logging.RequestIDKey)
			if len(got) != 1 {
				t.Fatalf("response header %s = %v, want one value", logging.RequestIDKey, got)
			}
			if tt.wantSame && got[0] != tt.sent {
				t.Errorf("request id = %q, want %q", got[0], tt.sent)
			}
			if !tt.wantSame && !hexID.MatchString(got[0]) {
				t.Errorf("request id = %q, want a generated 32-hex-digit id", got[0])
			}
			if !hasFinishedCall(t, h.logs, "Echo", got[0]) {
				t.Errorf("no finished-call log line with request_id %q:\n%s", got[0], h.logs)
			}
		})
	}

	// Streams get the header too.
	stream, err := h.conn.NewStream(metadata.AppendToOutgoingContext(ctx, logging.RequestIDKey, "stream-1"),
		echoStreamDesc, "/"+echoService+"/EchoStream")
	if err != nil {
		t.Fatalf("NewStream: %v", err)
	}
	if err := stream.SendMsg(newEchoRequest("s")); err != nil {
		t.Fatalf("SendMsg: %v", err)
	}
	_ = stream.CloseSend()
	header, err := stream.Header()
	if err != nil || !cmp.Equal(header.Get(logging.RequestIDKey), []string{"stream-1"}) {
		t.Errorf("stream header = %v, %v; want request id stream-1", header, err)
	}
	for {
		if err := stream.RecvMsg(dynamicpb.NewMessage(echoRespDesc)); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Errorf("RecvMsg: %v", err)
			}
			break
		}
	}
}

func hasFinishedCall(t *testing.T, logs *logtest.Buffer, method, requestID string) bool {
	t.Helper()
	for _, rec := range logs.Named(t, "finished call") {
		if rec["grpc.method"] == method && rec["request_id"] == requestID && rec["grpc.code"] == "OK" {
			return true
		}
	}
	return false
}

func TestTraceIDReachesLogs(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	h := start(t, setup{opts: []grpcserver.Option{grpcserver.WithTracerProvider(tp)}})

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	ctx := metadata.AppendToOutgoingContext(testContext(t),
		"traceparent", "00-"+traceID+"-00f067aa0ba902b7-01",
		logging.RequestIDKey, "traced-call")
	if _, err := invoke(ctx, t, h.conn, "Echo", "trace"); err != nil {
		t.Fatalf("Echo: %v", err)
	}
	for _, rec := range h.logs.Named(t, "finished call") {
		if rec["request_id"] == "traced-call" {
			if rec["trace_id"] != traceID || rec["span_id"] == "00f067aa0ba902b7" || rec["span_id"] == nil {
				t.Errorf("finished call record = %v, want trace_id %s and the server span's id", rec, traceID)
			}
			return
		}
	}
	t.Errorf("no finished-call record for the traced call:\n%s", h.logs)
}

func TestHealthChecksAreNotLogged(t *testing.T) {
	h := start(t, setup{})
	if _, err := healthpb.NewHealthClient(h.conn).Check(testContext(t), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatalf("Check: %v", err)
	}
	for _, rec := range h.logs.Named(t, "finished call") {
		if rec["grpc.service"] == "grpc.health.v1.Health" {
			t.Errorf("health check logged: %v", rec)
		}
	}
}

func TestAdminHandlerOption(t *testing.T) {
	h := start(t, setup{opts: []grpcserver.Option{
		grpcserver.WithAdminHandler("GET /debug/hello", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, "hello")
		})),
	}})
	if code, body := h.get(t, "/debug/hello"); code != http.StatusOK || body != "hello" {
		t.Errorf("/debug/hello = %d %q", code, body)
	}
}

func TestAdminServesProfiler(t *testing.T) {
	h := start(t, setup{opts: []grpcserver.Option{grpcserver.WithTransport(config.Transport{AdminPprof: true})}})
	if code, body := h.get(t, "/debug/pprof/goroutine?debug=1"); code != http.StatusOK || !strings.Contains(body, "goroutine profile:") {
		t.Errorf("/debug/pprof/goroutine = %d %.80q", code, body)
	}
}

func TestExtraInterceptorsRun(t *testing.T) {
	var seen []string
	var mu sync.Mutex
	h := start(t, setup{opts: []grpcserver.Option{
		grpcserver.WithUnaryInterceptors(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			mu.Lock()
			seen = append(seen, info.FullMethod+" "+logging.RequestID(ctx))
			mu.Unlock()
			return handler(ctx, req)
		}),
	}})
	ctx := metadata.AppendToOutgoingContext(testContext(t), logging.RequestIDKey, "rid")
	if _, err := invoke(ctx, t, h.conn, "Echo", "x"); err != nil {
		t.Fatalf("Echo: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"/" + echoService + "/Echo rid"}, seen); diff != "" {
		t.Errorf("interceptor calls mismatch (-want +got):\n%s", diff)
	}
}

func TestNewAndRunErrors(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	if _, err := grpcserver.New(grpcserver.Config{}, logger); err == nil {
		t.Error("New with no gRPC address: error = nil")
	}
	if _, err := grpcserver.New(grpcserver.Config{GRPCAddr: ":0", AdminAddr: ":0"}, logger,
		grpcserver.WithAdminHandler("GET /metrics", http.NotFoundHandler())); err == nil {
		t.Error("New with a conflicting admin handler: error = nil")
	}

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	t.Cleanup(func() { _ = busy.Close() })
	srv, err := grpcserver.New(grpcserver.Config{GRPCAddr: busy.Addr().String()}, logger)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	err = srv.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), busy.Addr().String()) {
		t.Errorf("Run on a busy port: error = %v, want one naming the address", err)
	}
	if err := srv.Run(context.Background()); err == nil {
		t.Error("second Run: error = nil")
	}
}

func TestInternalErrorForCancelledRequest(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := grpcserver.InternalError(ctx, slog.New(slog.DiscardHandler), ctx.Err(), "querying")
	if status.Code(err) != codes.Canceled {
		t.Errorf("InternalError(cancelled) = %v, want Canceled", err)
	}
	err = grpcserver.InternalError(logging.WithRequestID(context.Background(), "r1"), slog.New(slog.DiscardHandler),
		errors.New("disk on fire"), "writing")
	if st := status.Convert(err); st.Code() != codes.Internal || st.Message() != "internal error (request id r1)" {
		t.Errorf("InternalError = %v, want a generic Internal naming the request id", err)
	}
}

func TestFieldViolations(t *testing.T) {
	if err := grpcserver.FieldViolations(); err != nil {
		t.Errorf("FieldViolations() = %v, want nil", err)
	}
	err := grpcserver.FieldViolations(
		grpcserver.FieldViolation{Field: "round_config.max_results", Description: "must be between 0 and 10"},
		grpcserver.FieldViolation{Field: "text", Description: "must not be blank"},
	)
	st := status.Convert(err)
	if st.Code() != codes.InvalidArgument {
		t.Fatalf("code = %v, want InvalidArgument", st.Code())
	}
	if want := "invalid request: round_config.max_results: must be between 0 and 10; text: must not be blank"; st.Message() != want {
		t.Errorf("message = %q, want %q", st.Message(), want)
	}
	var got []string
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				got = append(got, v.GetField()+"="+v.GetDescription())
			}
		}
	}
	want := []string{"round_config.max_results=must be between 0 and 10", "text=must not be blank"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("BadRequest violations mismatch (-want +got):\n%s", diff)
	}
}

// TestPreconditionFailed: the status says the description and carries it
// as a PreconditionFailure with its type and subject.
func TestPreconditionFailed(t *testing.T) {
	st := status.Convert(grpcserver.PreconditionFailed("ENGINE_NOT_CONFIGURED", "engines/exa", "engine exa is not configured: set EXA_API_KEY"))
	if st.Code() != codes.FailedPrecondition || st.Message() != "engine exa is not configured: set EXA_API_KEY" {
		t.Fatalf("status = %v %q", st.Code(), st.Message())
	}
	var got []string
	for _, d := range st.Details() {
		if pf, ok := d.(*errdetails.PreconditionFailure); ok {
			for _, v := range pf.GetViolations() {
				got = append(got, v.GetType()+" "+v.GetSubject()+" "+v.GetDescription())
			}
		}
	}
	if diff := cmp.Diff([]string{"ENGINE_NOT_CONFIGURED engines/exa engine exa is not configured: set EXA_API_KEY"}, got); diff != "" {
		t.Errorf("PreconditionFailure violations mismatch (-want +got):\n%s", diff)
	}
}

// TestServesInjectedListeners runs a Server on listeners its embedder opened
// (config.Listeners), ignoring the configured addresses, and closes them on
// shutdown so the ports are free again.
func TestServesInjectedListeners(t *testing.T) {
	grpcLis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	adminLis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logger, err := logging.New(io.Discard, "json", "info")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := grpcserver.New(grpcserver.Config{
		// Addresses nothing may listen on: the listeners must win.
		GRPCAddr: "192.0.2.1:1", AdminAddr: "192.0.2.1:2",
		GRPCListener: grpcLis, AdminListener: adminLis,
	}, logger)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv.RegisterService(&echoServiceDesc, newEchoServer(logger))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	select {
	case <-srv.Ready():
	case err := <-done:
		cancel()
		t.Fatalf("Run returned before ready: %v", err)
	}
	if got, want := srv.GRPCAddr().String(), grpcLis.Addr().String(); got != want {
		t.Errorf("GRPCAddr() = %s, want the injected %s", got, want)
	}

	conn, err := grpc.NewClient(grpcLis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(testContext(t), &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health on the injected gRPC listener = %v, %v; want SERVING", resp, err)
	}
	r, err := http.Get("http://" + adminLis.Addr().String() + "/healthz")
	if err != nil {
		t.Fatalf("GET /healthz on the injected admin listener: %v", err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz = %d, want 200", r.StatusCode)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("Run did not return after cancellation")
	}
	// Both ports are free again: the server closed what it was given.
	for _, addr := range []string{grpcLis.Addr().String(), adminLis.Addr().String()} {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Errorf("listening on %s after shutdown: %v (listener not closed)", addr, err)
			continue
		}
		l.Close()
	}
}
