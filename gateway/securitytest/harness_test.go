package securitytest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/groundcrew/groundcrew/gateway/server"
	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	ragv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/rag/v1"
	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
	"github.com/groundcrew/groundcrew/platform/actor"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/platform/grpcserver/grpcservertest"
)

// TestMain fails the package's tests when they leave goroutines behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// call is what one backend call looked like on arrival.
type call struct {
	md       metadata.MD
	deadline time.Time
	actor    string
}

// recorder keeps the last call of every method that reached a backend.
type recorder struct {
	mu    sync.Mutex
	calls map[string]call
}

func (r *recorder) record(ctx context.Context, method string) {
	md, _ := metadata.FromIncomingContext(ctx)
	dl, _ := ctx.Deadline()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[method] = call{md: md.Copy(), deadline: dl, actor: actor.FromContext(ctx)}
}

// last returns the last call of the method whose name ends with suffix.
func (r *recorder) last(suffix string) (call, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for m, c := range r.calls {
		if strings.HasSuffix(m, "/"+suffix) {
			return c, true
		}
	}
	return call{}, false
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = map[string]call{}
}

func (r *recorder) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	r.record(ctx, info.FullMethod)
	return h(ctx, req)
}

func (r *recorder) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	r.record(ss.Context(), info.FullMethod)
	return h(srv, ss)
}

type fakeSearch struct {
	searchv1.UnimplementedSearchServiceServer
}

func (fakeSearch) Search(context.Context, *searchv1.SearchRequest) (*searchv1.SearchResponse, error) {
	return &searchv1.SearchResponse{}, nil
}

type fakeResearch struct {
	groundingv1.UnimplementedResearchServiceServer
}

// DecideApproval records the decision under the authenticated actor, with
// the self-declared decided_by as a display note, as the research service
// does.
func (fakeResearch) DecideApproval(ctx context.Context, req *groundingv1.DecideApprovalRequest) (*groundingv1.DecideApprovalResponse, error) {
	return &groundingv1.DecideApprovalResponse{Approval: &groundingv1.ApprovalRequest{
		Id: req.GetId(), Requester: actor.Or(ctx, req.GetDecidedBy()),
	}}, nil
}

type fakeGrounding struct {
	groundingv1.UnimplementedGroundingServiceServer
}

type fakeRag struct {
	ragv1.UnimplementedRagServiceServer
	started chan struct{}
}

func (fakeRag) IngestDocuments(context.Context, *ragv1.IngestDocumentsRequest) (*ragv1.IngestDocumentsResponse, error) {
	return &ragv1.IngestDocumentsResponse{}, nil
}

// AskStream holds the stream open until the client leaves.
func (f fakeRag) AskStream(_ *ragv1.AskStreamRequest, stream grpc.ServerStreamingServer[ragv1.AskStreamResponse]) error {
	if err := stream.Send(&ragv1.AskStreamResponse{Event: &ragv1.AskStreamResponse_Delta{Delta: "…"}}); err != nil {
		return err
	}
	f.started <- struct{}{}
	<-stream.Context().Done()
	return nil
}

type fakeNotifier struct {
	notifierv1.UnimplementedNotifierServiceServer
}

func (fakeNotifier) IngestAlert(_ context.Context, req *notifierv1.IngestAlertRequest) (*notifierv1.IngestAlertResponse, error) {
	return &notifierv1.IngestAlertResponse{Alert: &notifierv1.Alert{Id: "a1", Text: req.GetText()}}, nil
}

func (fakeNotifier) IngestAlertmanager(context.Context, *notifierv1.IngestAlertmanagerRequest) (*notifierv1.IngestAlertmanagerResponse, error) {
	return &notifierv1.IngestAlertmanagerResponse{}, nil
}

func (fakeNotifier) IngestGrafana(context.Context, *notifierv1.IngestGrafanaRequest) (*notifierv1.IngestGrafanaResponse, error) {
	return &notifierv1.IngestGrafanaResponse{}, nil
}

func (fakeNotifier) ListAlerts(context.Context, *notifierv1.ListAlertsRequest) (*notifierv1.ListAlertsResponse, error) {
	return &notifierv1.ListAlertsResponse{}, nil
}

func (fakeNotifier) HandleTelegramUpdate(context.Context, *notifierv1.HandleTelegramUpdateRequest) (*notifierv1.HandleTelegramUpdateResponse, error) {
	return &notifierv1.HandleTelegramUpdateResponse{Outcome: "stored"}, nil
}

// edge is a gateway over four recording backends.
type edge struct {
	url      string
	rec      *recorder
	streams  chan struct{}
	backends string // the backends' shared address
}

// baseConfig is a loopback gateway with generous limits; tests change what
// they attack.
func baseConfig() server.Config {
	return server.Config{
		Addr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0",
		BodyLimit: 1 << 20, BackendTimeout: 10 * time.Second, ReadinessTimeout: 2 * time.Second,
		JSONMaxDepth: 64, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 5 * time.Minute, IdleTimeout: 2 * time.Minute, MaxStreamsPerClient: 8,
	}
}

// newEdge starts the backends (all four services on one gRPC server, with
// backendTransport's settings) and the gateway over them, dialled through
// server.Dial exactly as the binary does.
func newEdge(t testing.TB, cfg server.Config, backendTransport *config.Transport) *edge {
	t.Helper()
	addr, rec, streams := startBackends(t, backendTransport)
	cfg.SearchAddr, cfg.GroundingAddr, cfg.RagAddr, cfg.NotifierAddr = addr, addr, addr, addr

	b, closeConns, err := server.Dial(cfg, noop.NewTracerProvider())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeConns() })
	h, err := server.NewHandler(context.Background(), cfg, b, discardLogger(), prometheus.NewRegistry(), noop.NewTracerProvider())
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return &edge{url: ts.URL, rec: rec, streams: streams, backends: addr}
}

// startBackends serves all four services' fakes on one gRPC server and
// returns its address, the recorder of the calls that reach it and the
// channel AskStream reports its streams on.
func startBackends(t testing.TB, backendTransport *config.Transport) (string, *recorder, chan struct{}) {
	t.Helper()
	rec := &recorder{calls: map[string]call{}}
	streams := make(chan struct{}, 16)
	opts := []grpcserver.Option{grpcserver.WithUnaryInterceptors(rec.unary), grpcserver.WithStreamInterceptors(rec.stream)}
	if backendTransport != nil {
		opts = append(opts, grpcserver.WithTransport(*backendTransport))
	}
	srv, err := grpcserver.New(grpcserver.Config{GRPCAddr: "127.0.0.1:0"}, discardLogger(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	searchv1.RegisterSearchServiceServer(srv, fakeSearch{})
	groundingv1.RegisterGroundingServiceServer(srv, fakeGrounding{})
	groundingv1.RegisterResearchServiceServer(srv, fakeResearch{})
	ragv1.RegisterRagServiceServer(srv, fakeRag{started: streams})
	notifierv1.RegisterNotifierServiceServer(srv, fakeNotifier{})
	grpcservertest.Run(t, srv)
	return srv.GRPCAddr().String(), rec, streams
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// request is one HTTP request; headers are name, value pairs and "Host"
// sets the Host header.
type request struct {
	method, path, body string
	headers            []string
}

type response struct {
	code   int
	header http.Header
	body   string
}

func (e *edge) do(t *testing.T, r request) response {
	t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	// A request that should have been refused but streams instead fails
	// the test rather than hanging it.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, r.method, e.url+r.path, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(r.headers); i += 2 {
		if strings.EqualFold(r.headers[i], "Host") {
			req.Host = r.headers[i+1]
			continue
		}
		req.Header.Add(r.headers[i], r.headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, resp.Header, string(b)}
}

// jsonPost is a POST as a well-behaved JSON client sends it.
func jsonPost(path, body string, headers ...string) request {
	return request{method: "POST", path: path, body: body, headers: append([]string{"Content-Type", "application/json"}, headers...)}
}
