package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	ragv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/rag/v1"
	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/platform/grpcserver/grpcservertest"
)

// fakeNotifier records what reached it.
type fakeNotifier struct {
	notifierv1.UnimplementedNotifierServiceServer
	mu        sync.Mutex
	lastMD    metadata.MD
	lastList  *notifierv1.ListAlertsRequest
	lastTrace trace.TraceID
	// lastUpdate is the Telegram update the webhook route decoded.
	lastUpdate *notifierv1.TelegramUpdate
}

func (f *fakeNotifier) IngestAlert(ctx context.Context, req *notifierv1.IngestAlertRequest) (*notifierv1.IngestAlertResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	f.mu.Lock()
	f.lastMD = md
	f.lastTrace = trace.SpanContextFromContext(ctx).TraceID()
	f.mu.Unlock()
	return &notifierv1.IngestAlertResponse{Alert: &notifierv1.Alert{
		Id: "a1", Text: req.GetText(), Status: notifierv1.Alert_RECEIVED, ReceivedAt: timestamppb.New(time.Unix(1700000000, 0)),
	}}, nil
}

func (f *fakeNotifier) ListAlerts(_ context.Context, req *notifierv1.ListAlertsRequest) (*notifierv1.ListAlertsResponse, error) {
	f.mu.Lock()
	f.lastList = req
	f.mu.Unlock()
	return &notifierv1.ListAlertsResponse{}, nil
}

func (f *fakeNotifier) HandleTelegramUpdate(ctx context.Context, req *notifierv1.HandleTelegramUpdateRequest) (*notifierv1.HandleTelegramUpdateResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	f.mu.Lock()
	f.lastMD = md
	f.lastUpdate = req.GetUpdate()
	f.mu.Unlock()
	return &notifierv1.HandleTelegramUpdateResponse{Outcome: "stored"}, nil
}

func (f *fakeNotifier) md() metadata.MD {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastMD
}

// fakeSearch echoes the engine it got, and fails on demand.
type fakeSearch struct {
	searchv1.UnimplementedSearchServiceServer
}

func (fakeSearch) Search(_ context.Context, req *searchv1.SearchRequest) (*searchv1.SearchResponse, error) {
	switch req.GetQuery() {
	case "internal":
		return nil, status.Error(codes.Internal, "pq: password authentication failed for user hunter2")
	case "panic":
		panic("secret panic text")
	}
	return &searchv1.SearchResponse{Engine: req.GetEngine(), Results: []*searchv1.SearchResult{{
		Title: "t", Snippet: "s", Url: "https://example.com/a", SourceDomain: "example.com", Score: 1,
	}}}, nil
}

type fakeRag struct {
	ragv1.UnimplementedRagServiceServer
}

func (fakeRag) AskStream(req *ragv1.AskStreamRequest, stream grpc.ServerStreamingServer[ragv1.AskStreamResponse]) error {
	for _, ev := range []*ragv1.AskStreamResponse{
		{Event: &ragv1.AskStreamResponse_State{State: ragv1.AgentResponse_ANSWERING}},
		{Event: &ragv1.AskStreamResponse_Delta{Delta: "hello "}},
		{Event: &ragv1.AskStreamResponse_Response{Response: &ragv1.AgentResponse{Answer: "hello " + req.GetQuery(), Success: true}}},
	} {
		if err := stream.Send(ev); err != nil {
			return err
		}
	}
	return nil
}

type fakeGrounding struct {
	groundingv1.UnimplementedGroundingServiceServer
}

type fakeResearch struct {
	groundingv1.UnimplementedResearchServiceServer
}

type backendServer struct {
	srv  *grpcserver.Server
	addr string
}

func startBackend(t *testing.T, register func(*grpcserver.Server)) *backendServer {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := grpcserver.New(grpcserver.Config{GRPCAddr: "127.0.0.1:0"}, logger)
	if err != nil {
		t.Fatal(err)
	}
	register(srv)
	grpcservertest.Run(t, srv)
	return &backendServer{srv: srv, addr: srv.GRPCAddr().String()}
}

type harness struct {
	url      string
	notifier *fakeNotifier
	search   *backendServer
}

func conn(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func testConfig() Config {
	return Config{
		BodyLimit:         1 << 20,
		RateLimit:         0,
		BackendTimeout:    10 * time.Second,
		ReadinessTimeout:  2 * time.Second,
		JSONMaxDepth:      64,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      5 * time.Minute,
		IdleTimeout:       2 * time.Minute,
	}
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	return newLoggedHarness(t, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
}

// newLoggedHarness is newHarness logging to logger; beforeStart runs once
// the backends are up, before the gateway is built.
func newLoggedHarness(t *testing.T, cfg Config, logger *slog.Logger, beforeStart func(search *backendServer)) *harness {
	t.Helper()
	n := &fakeNotifier{}
	search := startBackend(t, func(s *grpcserver.Server) { searchv1.RegisterSearchServiceServer(s, fakeSearch{}) })
	grounding := startBackend(t, func(s *grpcserver.Server) {
		groundingv1.RegisterGroundingServiceServer(s, fakeGrounding{})
		groundingv1.RegisterResearchServiceServer(s, fakeResearch{})
	})
	rag := startBackend(t, func(s *grpcserver.Server) { ragv1.RegisterRagServiceServer(s, fakeRag{}) })
	notifier := startBackend(t, func(s *grpcserver.Server) { notifierv1.RegisterNotifierServiceServer(s, n) })
	b := Backends{
		Search:    Backend{Name: "search", Services: []string{searchv1.SearchService_ServiceDesc.ServiceName}, Conn: conn(t, search.addr)},
		Grounding: Backend{Name: "grounding", Services: []string{groundingv1.GroundingService_ServiceDesc.ServiceName, groundingv1.ResearchService_ServiceDesc.ServiceName}, Conn: conn(t, grounding.addr)},
		Rag:       Backend{Name: "rag", Services: []string{ragv1.RagService_ServiceDesc.ServiceName}, Conn: conn(t, rag.addr)},
		Notifier:  Backend{Name: "notifier", Services: []string{notifierv1.NotifierService_ServiceDesc.ServiceName}, Conn: conn(t, notifier.addr)},
	}
	if beforeStart != nil {
		beforeStart(search)
	}
	h, err := NewHandler(context.Background(), cfg, b, logger, prometheus.NewRegistry(), noop.NewTracerProvider())
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return &harness{url: ts.URL, notifier: n, search: search}
}

type response struct {
	code   int
	header http.Header
	body   string
}

func do(t *testing.T, method, url, body string, headers ...string) response {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		// What every JSON client sends; tests of other types override it.
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, resp.Header, string(b)}
}

func TestReadyzNamesEveryBackend(t *testing.T) {
	h := newHarness(t, testConfig())
	got := do(t, "GET", h.url+"/readyz", "")
	if got.code != http.StatusOK {
		t.Fatalf("GET /readyz = %d %s, want 200", got.code, got.body)
	}
	var body struct {
		Status   string
		Backends map[string]struct{ Status string }
	}
	if err := json.Unmarshal([]byte(got.body), &body); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"search", "grounding", "rag", "notifier"} {
		if body.Backends[name].Status != "SERVING" {
			t.Errorf("backend %s = %q, want SERVING (body %s)", name, body.Backends[name].Status, got.body)
		}
	}

	// A backend that stops serving makes the gateway not ready.
	h.search.srv.SetServingStatus("", false)
	got = do(t, "GET", h.url+"/readyz", "")
	if got.code != http.StatusServiceUnavailable || !strings.Contains(got.body, `"search":{"status":"NOT_SERVING"`) {
		t.Errorf("GET /readyz with search NOT_SERVING = %d %s, want 503 naming search", got.code, got.body)
	}
}

func TestEmptyAlertTextIsFieldViolation(t *testing.T) {
	h := newHarness(t, testConfig())
	got := do(t, "POST", h.url+"/v1/alerts", `{"text":""}`)
	if got.code != http.StatusBadRequest {
		t.Fatalf("status = %d, want 400; body %s", got.code, got.body)
	}
	var st struct {
		Code    int
		Details []struct {
			Type            string `json:"@type"`
			FieldViolations []struct{ Field, Description string }
		}
	}
	if err := json.Unmarshal([]byte(got.body), &st); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range st.Details {
		if d.Type == "type.googleapis.com/google.rpc.BadRequest" {
			for _, v := range d.FieldViolations {
				if v.Field == "text" {
					found = true
				}
			}
		}
	}
	if st.Code != int(codes.InvalidArgument) || !found {
		t.Errorf("body = %s, want code 3 with a BadRequest field violation for text", got.body)
	}
}

func TestBlankAndMetadataValidation(t *testing.T) {
	h := newHarness(t, testConfig())
	for _, body := range []string{`{"text":"   \n\t"}`, `{"text":"x","metadata":[1,2]}`, `{"text":"x","metadata":"str"}`, `{"text": 5}`, `not json`} {
		if got := do(t, "POST", h.url+"/v1/alerts", body); got.code != http.StatusBadRequest {
			t.Errorf("POST /v1/alerts %s = %d %s, want 400", body, got.code, got.body)
		}
	}
	got := do(t, "POST", h.url+"/v1/alerts", `{"text":"disk full","metadata":{"host":"web-1","n":3},"unknownField":true}`)
	if got.code != http.StatusOK || !strings.Contains(got.body, `"receivedAt"`) || !strings.Contains(got.body, `"status":"RECEIVED"`) {
		t.Errorf("valid alert = %d %s, want 200 with lowerCamelCase fields and status RECEIVED", got.code, got.body)
	}
}

func TestBodyLimit(t *testing.T) {
	h := newHarness(t, testConfig())
	big := `{"text":"` + strings.Repeat("a", 2<<20) + `"}`
	if got := do(t, "POST", h.url+"/v1/alerts", big); got.code != http.StatusRequestEntityTooLarge {
		t.Errorf("2 MiB body = %d, want 413", got.code)
	}
	// Without Content-Length (chunked), the limit still holds.
	req, _ := http.NewRequest("POST", h.url+"/v1/alerts", io.MultiReader(strings.NewReader(big)))
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = -1
	resp, err := http.DefaultClient.Do(req)
	switch {
	case err != nil:
		// The gateway answers 413 and closes the connection without
		// reading the rest (an oversized body is never read whole), so a
		// client still writing may see the reset before the answer.
		if !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.EPIPE) {
			t.Fatalf("chunked 2 MiB body: %v, want 413 or the connection closed", err)
		}
	default:
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("chunked 2 MiB body = %d, want 413", resp.StatusCode)
		}
	}
	if md := h.notifier.md(); md != nil {
		t.Error("an oversized body reached the notifier")
	}
}

func TestAPIKeys(t *testing.T) {
	cfg := testConfig()
	cfg.APIKeys = []string{"k1", "k2"}
	h := newHarness(t, cfg)
	tests := []struct {
		name, method, path, body string
		headers                  []string
		want                     int
	}{
		{"no key", "POST", "/v1/alerts", `{"text":"x"}`, nil, 401},
		{"wrong key", "POST", "/v1/alerts", `{"text":"x"}`, []string{"Authorization", "Bearer nope"}, 401},
		{"not bearer", "POST", "/v1/alerts", `{"text":"x"}`, []string{"Authorization", "k1"}, 401},
		{"first key", "POST", "/v1/alerts", `{"text":"x"}`, []string{"Authorization", "Bearer k1"}, 200},
		{"second key, lower-case scheme", "POST", "/v1/alerts", `{"text":"x"}`, []string{"Authorization", "bearer k2"}, 200},
		{"telegram webhook is open", "POST", "/v1/telegram/webhook", `{"update_id":1}`, nil, 200},
		{"healthz is open", "GET", "/healthz", "", nil, 200},
		{"openapi is open", "GET", "/openapi.json", "", nil, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := do(t, tt.method, h.url+tt.path, tt.body, tt.headers...)
			if got.code != tt.want {
				t.Errorf("%s %s = %d %s, want %d", tt.method, tt.path, got.code, got.body, tt.want)
			}
			if got.code == 401 && got.header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
}

func TestInternalErrorsDoNotLeak(t *testing.T) {
	h := newHarness(t, testConfig())
	for _, q := range []string{"internal", "panic"} {
		got := do(t, "POST", h.url+"/v1/search", `{"query":"`+q+`"}`)
		if got.code != http.StatusInternalServerError {
			t.Errorf("query %q: status = %d, want 500", q, got.code)
		}
		if strings.Contains(got.body, "hunter2") || strings.Contains(got.body, "secret") || strings.Contains(got.body, "pq:") {
			t.Errorf("query %q: body leaks the internal error: %s", q, got.body)
		}
	}
}

func TestUnreachableBackendIsSanitised(t *testing.T) {
	// A port nothing listens on: take one, then close it.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	b := Backends{Search: Backend{Name: "search", Services: []string{"x"}, Conn: conn(t, addr)}}
	b.Grounding, b.Rag, b.Notifier = b.Search, b.Search, b.Search
	h, err := NewHandler(context.Background(), testConfig(), b, slog.New(slog.NewTextHandler(io.Discard, nil)), nil, noop.NewTracerProvider())
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	got := do(t, "POST", ts.URL+"/v1/search", `{"query":"x"}`)
	if got.code != http.StatusServiceUnavailable || strings.Contains(got.body, "127.0.0.1") {
		t.Errorf("status = %d body %s, want 503 without the backend address", got.code, got.body)
	}
	if got := do(t, "GET", ts.URL+"/readyz", ""); got.code != http.StatusServiceUnavailable {
		t.Errorf("/readyz = %d, want 503", got.code)
	}
}

func TestEnumNamesAnyCase(t *testing.T) {
	h := newHarness(t, testConfig())
	for _, engine := range []string{"local", "LOCAL", "Local"} {
		got := do(t, "POST", h.url+"/v1/search", `{"query":"q","engine":"`+engine+`"}`)
		if got.code != 200 || !strings.Contains(got.body, `"engine":"LOCAL"`) {
			t.Errorf("engine %q: %d %s, want 200 echoing LOCAL", engine, got.code, got.body)
		}
	}
	if got := do(t, "POST", h.url+"/v1/search", `{"query":"q","engine":"bing"}`); got.code != 400 {
		t.Errorf("unknown engine: %d %s, want 400", got.code, got.body)
	}
	if got := do(t, "GET", h.url+"/v1/alerts?status=delivered", ""); got.code != 200 {
		t.Fatalf("GET /v1/alerts?status=delivered = %d %s", got.code, got.body)
	}
	h.notifier.mu.Lock()
	gotStatus := h.notifier.lastList.GetStatus()
	h.notifier.mu.Unlock()
	if gotStatus != notifierv1.Alert_DELIVERED {
		t.Errorf("status filter reached the backend as %v, want DELIVERED", gotStatus)
	}
}

func TestHeaderAllowList(t *testing.T) {
	h := newHarness(t, testConfig())
	got := do(t, "POST", h.url+"/v1/alerts", `{"text":"x"}`,
		"X-Request-Id", "req-123", "Grpc-Metadata-Evil", "1", "X-Custom", "2")
	if got.header.Get("X-Request-Id") != "req-123" {
		t.Errorf("X-Request-Id echoed as %q, want req-123", got.header.Get("X-Request-Id"))
	}
	md := h.notifier.md()
	if v := md.Get("x-request-id"); len(v) != 1 || v[0] != "req-123" {
		t.Errorf("backend x-request-id = %v, want [req-123]", v)
	}
	for _, k := range []string{"evil", "grpcgateway-evil", "x-custom", "grpcgateway-x-custom"} {
		if v := md.Get(k); len(v) > 0 {
			t.Errorf("header %s reached the backend: %v", k, v)
		}
	}
	do(t, "POST", h.url+"/v1/telegram/webhook", `{"update_id":1}`, "X-Telegram-Bot-Api-Secret-Token", "s3")
	if v := h.notifier.md().Get("x-telegram-bot-api-secret-token"); len(v) != 1 || v[0] != "s3" {
		t.Errorf("telegram secret header at backend = %v, want [s3]", v)
	}
}

func TestRateLimit(t *testing.T) {
	cfg := testConfig()
	cfg.RateLimit, cfg.RateBurst = 0.001, 2
	cfg.APIKeys = []string{"ci:kci:write", "ops:kops:write"}
	h := newHarness(t, cfg)
	var codes []int
	for range 3 {
		codes = append(codes, do(t, "POST", h.url+"/v1/alerts", `{"text":"x"}`, "Authorization", "Bearer kci").code)
	}
	if codes[0] != 200 || codes[1] != 200 || codes[2] != 429 {
		t.Fatalf("codes = %v, want [200 200 429]", codes)
	}
	got := do(t, "POST", h.url+"/v1/alerts", `{"text":"x"}`, "Authorization", "Bearer kci")
	if got.header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	// Another valid key has its own bucket.
	if got := do(t, "POST", h.url+"/v1/alerts", `{"text":"x"}`, "Authorization", "Bearer kops"); got.code != 200 {
		t.Errorf("second key = %d, want 200", got.code)
	}
	// Requests without a valid key count against the address: junk tokens
	// share one bucket (401, 401, then 429), so guessing keys is limited.
	var junk []int
	for i := range 3 {
		junk = append(junk, do(t, "POST", h.url+"/v1/alerts", `{"text":"x"}`, "Authorization", "Bearer junk-"+strconv.Itoa(i)).code)
	}
	if junk[0] != 401 || junk[1] != 401 || junk[2] != 429 {
		t.Errorf("junk tokens = %v, want [401 401 429]", junk)
	}
	// Probes are not rate limited.
	if got := do(t, "GET", h.url+"/healthz", ""); got.code != 200 {
		t.Errorf("/healthz while limited = %d, want 200", got.code)
	}
}

func TestOpenAPIListsEveryRoute(t *testing.T) {
	h := newHarness(t, testConfig())
	got := do(t, "GET", h.url+"/openapi.json", "")
	var doc struct {
		OpenAPI string `json:"openapi"`
		Paths   map[string]map[string]any
	}
	if err := json.Unmarshal([]byte(got.body), &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi.json says openapi %q, want 3.x", doc.OpenAPI)
	}
	// Every route the REST edge promises its clients: dropping one breaks
	// them.
	want := map[string][]string{
		"/healthz": {"get"}, "/readyz": {"get"},
		"/v1/search": {"post"}, "/v1/search/documents": {"post"},
		"/v1/ground": {"post"}, "/v1/ground:query": {"post"},
		"/v1/messages/{id}": {"get"}, "/v1/messages": {"get"}, "/v1/messages/{id}:review": {"post"},
		"/v1/converse": {"post"}, "/v1/research": {"post"}, "/v1/research/{id}": {"get"},
		"/v1/approvals": {"get"}, "/v1/approvals/{id}:decide": {"post"},
		"/v1/collections/{collection}/documents": {"post"}, "/v1/collections/{collection}:retrieve": {"post"},
		"/v1/collections/{collection}:ask": {"post"},
		"/v1/alerts":                       {"post", "get"}, "/v1/alerts:alertmanager": {"post"}, "/v1/alerts/{id}": {"get"},
		"/v1/notifications:format": {"post"}, "/v1/telegram/webhook": {"post"},
	}
	for path, methods := range want {
		for _, m := range methods {
			if _, ok := doc.Paths[path][m]; !ok {
				t.Errorf("openapi.json lacks %s %s", strings.ToUpper(m), path)
			}
		}
	}
}

func TestDocsPageIsEmbedded(t *testing.T) {
	h := newHarness(t, testConfig())
	page := do(t, "GET", h.url+"/docs/", "")
	if page.code != 200 || !strings.Contains(page.body, "swagger-ui-bundle.js") || strings.Contains(page.body, "://cdn") {
		t.Errorf("/docs/ = %d, want the local Swagger UI page", page.code)
	}
	if js := do(t, "GET", h.url+"/docs/swagger-ui/swagger-ui-bundle.js", ""); js.code != 200 || len(js.body) < 100000 {
		t.Errorf("swagger-ui-bundle.js = %d (%d bytes)", js.code, len(js.body))
	}
}

func TestAskStreamAsServerSentEvents(t *testing.T) {
	h := newHarness(t, testConfig())
	got := do(t, "POST", h.url+"/v1/collections/gospec:askStream", `{"query":"q"}`, "Accept", "text/event-stream")
	if got.code != 200 || !strings.HasPrefix(got.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d content-type %q", got.code, got.header.Get("Content-Type"))
	}
	events := strings.Split(strings.TrimSuffix(got.body, "\n\n"), "\n\n")
	if len(events) != 3 {
		t.Fatalf("got %d events, want 3: %q", len(events), got.body)
	}
	for _, ev := range events {
		if !strings.HasPrefix(ev, "data: ") || !json.Valid([]byte(strings.TrimPrefix(ev, "data: "))) {
			t.Errorf("event %q is not `data: <json>`", ev)
		}
	}
	if !strings.Contains(events[2], `"answer":"hello q"`) {
		t.Errorf("last event = %s, want the full response", events[2])
	}
}

func TestCORS(t *testing.T) {
	cfg := testConfig()
	cfg.CORSOrigins = []string{"https://app.example.com"}
	h := newHarness(t, cfg)
	got := do(t, "OPTIONS", h.url+"/v1/search", "", "Origin", "https://app.example.com",
		"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization,content-type")
	if got.header.Get("Access-Control-Allow-Origin") != "https://app.example.com" {
		t.Errorf("preflight allow-origin = %q", got.header.Get("Access-Control-Allow-Origin"))
	}
	got = do(t, "OPTIONS", h.url+"/v1/search", "", "Origin", "https://evil.example.com", "Access-Control-Request-Method", "POST")
	if got.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("other origin allowed: %q", got.header.Get("Access-Control-Allow-Origin"))
	}
}

func TestConfigValidation(t *testing.T) {
	valid := func() Config {
		cfg := testConfig()
		cfg.DataDir, cfg.LogLevel, cfg.LogFormat = "d", "info", "json"
		cfg.Addr, cfg.AdminAddr = "127.0.0.1:8080", "127.0.0.1:9090"
		cfg.SearchAddr, cfg.GroundingAddr, cfg.RagAddr, cfg.NotifierAddr = "a:1", "b:2", "c:3", "d:4"
		return cfg
	}
	tests := []struct {
		name   string
		change func(*Config)
		want   []string // substrings of the error; none means valid
	}{
		{"valid", func(*Config) {}, nil},
		{"smallest JSON depth", func(c *Config) { c.JSONMaxDepth = 8 }, nil},
		{"several problems at once", func(c *Config) { c.SearchAddr, c.BodyLimit = "nohostport", 10 },
			[]string{"SEARCH_ADDR", "GATEWAY_BODY_LIMIT"}},
		{"JSON depth too small", func(c *Config) { c.JSONMaxDepth = 7 }, []string{"GATEWAY_JSON_MAX_DEPTH: must be at least 8, got 7"}},
		{"JSON depth unset", func(c *Config) { c.JSONMaxDepth = 0 }, []string{"GATEWAY_JSON_MAX_DEPTH"}},
		{"no read-header timeout", func(c *Config) { c.ReadHeaderTimeout = 0 }, []string{`GATEWAY_READ_HEADER_TIMEOUT: must be positive (e.g. 30s), got "0s"`}},
		{"negative read timeout", func(c *Config) { c.ReadTimeout = -time.Second }, []string{"GATEWAY_READ_TIMEOUT"}},
		{"no write timeout", func(c *Config) { c.WriteTimeout = 0 }, []string{"GATEWAY_WRITE_TIMEOUT"}},
		{"no idle timeout", func(c *Config) { c.IdleTimeout = 0 }, []string{"GATEWAY_IDLE_TIMEOUT"}},
		{"every interface without keys", func(c *Config) { c.Addr = ":8080" }, []string{"GATEWAY_API_KEYS", "GATEWAY_ALLOW_OPEN"}},
		{"0.0.0.0 without keys", func(c *Config) { c.Addr = "0.0.0.0:8080" }, []string{"GATEWAY_API_KEYS", "GATEWAY_ALLOW_OPEN"}},
		{"a host name without keys", func(c *Config) { c.Addr = "gateway.internal:8080" }, []string{"GATEWAY_API_KEYS"}},
		{"localhost without keys", func(c *Config) { c.Addr = "localhost:8080" }, nil},
		{"::1 without keys", func(c *Config) { c.Addr = "[::1]:8080" }, nil},
		{"every interface with keys", func(c *Config) { c.Addr, c.APIKeys = ":8080", []string{"ops:k1:admin"} }, nil},
		{"every interface, explicitly open", func(c *Config) { c.Addr, c.AllowOpen = ":8080", true }, nil},
		{"unknown scope", func(c *Config) { c.APIKeys = []string{"ci:k2:read+delete"} }, []string{"GATEWAY_API_KEYS", `unknown scope "delete"`}},
		{"name used twice", func(c *Config) { c.APIKeys = []string{"ci:k1", "ci:k2"} }, []string{`the name "ci" is used twice`}},
		{"empty key", func(c *Config) { c.APIKeys = []string{"ci::read"} }, []string{"empty key"}},
		{"bad proxy", func(c *Config) { c.TrustedProxies = []string{"10.0.0.0/99"} }, []string{"GATEWAY_TRUSTED_PROXIES"}},
		{"forwarding the actor", func(c *Config) { c.ForwardHeaders = []string{"X-Groundcrew-Actor"} }, []string{"GATEWAY_FORWARD_HEADERS"}},
		{"forwarding X-Forwarded-For", func(c *Config) { c.ForwardHeaders = []string{"x-forwarded-for"} }, []string{"GATEWAY_FORWARD_HEADERS"}},
		{"negative stream cap", func(c *Config) { c.MaxStreamsPerClient = -1 }, []string{"GATEWAY_MAX_STREAMS_PER_CLIENT"}},
		{"the alerts scope", func(c *Config) { c.APIKeys = []string{"am:k1:alerts"} }, nil},
		{"budgets", func(c *Config) { c.APIKeys, c.KeyBudgets = []string{"ci:k1:read"}, []string{"ci:1000/d", "*:10/m"} }, nil},
		{"budgets without keys", func(c *Config) { c.KeyBudgets = []string{"*:1000/d"} }, []string{"GATEWAY_KEY_BUDGETS", "GATEWAY_API_KEYS"}},
		{"a budget for no key", func(c *Config) { c.APIKeys, c.KeyBudgets = []string{"ci:k1:read"}, []string{"cd:1000/d"} }, []string{`GATEWAY_KEY_BUDGETS: entry 1: no key in GATEWAY_API_KEYS is named "cd"`}},
		{"a budget in weeks", func(c *Config) { c.APIKeys, c.KeyBudgets = []string{"ci:k1:read"}, []string{"ci:5/w"} }, []string{"GATEWAY_KEY_BUDGETS", `unknown unit "w"`}},
		{"negative unauthenticated bound", func(c *Config) { c.UnauthMaxRequestsPerClient = -1 }, []string{"GATEWAY_UNAUTH_MAX_REQUESTS_PER_CLIENT"}},
		{"open, buffer below the body limit", func(c *Config) { c.UnauthMaxBuffered = 1 << 19 }, []string{"GATEWAY_UNAUTH_MAX_BUFFERED", "524288"}},
		{"keys, buffer below the body limit but above the webhook's", func(c *Config) {
			c.APIKeys, c.UnauthMaxBuffered = []string{"ops:k1"}, 1<<19
		}, nil},
		{"keys, buffer below the webhook's", func(c *Config) { c.APIKeys, c.UnauthMaxBuffered = []string{"ops:k1"}, 1000 }, []string{"GATEWAY_UNAUTH_MAX_BUFFERED", "65536"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := valid()
			tt.change(&cfg)
			err := cfg.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %v, want an error containing %q", err, w)
				}
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	cfg, err := config.Load[Config](config.MapLookup(nil))
	if err != nil {
		t.Fatalf("Load() with no environment: %v", err)
	}
	got := []any{cfg.JSONMaxDepth, cfg.ReadHeaderTimeout, cfg.ReadTimeout, cfg.WriteTimeout, cfg.IdleTimeout}
	want := []any{64, 5 * time.Second, 30 * time.Second, 5 * time.Minute, 2 * time.Minute}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults of JSONMaxDepth and the HTTP timeouts (-want +got):\n%s", diff)
	}
	// The server falls back on the same values for a Config built in code.
	got = []any{defaultReadHeaderTimeout, defaultReadTimeout, defaultWriteTimeout, defaultIdleTimeout}
	if diff := cmp.Diff(want[1:], got); diff != "" {
		t.Errorf("fallback timeouts differ from the envDefault tags (-tags +fallbacks):\n%s", diff)
	}
	// And on the same bounds for requests without a key.
	got = []any{cfg.UnauthMaxRequests, cfg.UnauthMaxRequestsPerClient, cfg.UnauthMaxBuffered, cfg.AlertsScopeStrict}
	want = []any{defaultUnauthMaxRequests, defaultUnauthMaxRequestsPerClient, int64(defaultUnauthMaxBuffered), false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unauthenticated bounds: envDefault tags differ from the fallbacks (-fallbacks +tags):\n%s", diff)
	}

	cfg, err = config.Load[Config](config.MapLookup(map[string]string{
		"GATEWAY_JSON_MAX_DEPTH": "12", "GATEWAY_READ_HEADER_TIMEOUT": "1s",
		"GATEWAY_READ_TIMEOUT": "2s", "GATEWAY_WRITE_TIMEOUT": "3s", "GATEWAY_IDLE_TIMEOUT": "4s",
	}))
	if err != nil {
		t.Fatalf("Load(): %v", err)
	}
	got = []any{cfg.JSONMaxDepth, cfg.ReadHeaderTimeout, cfg.ReadTimeout, cfg.WriteTimeout, cfg.IdleTimeout}
	want = []any{12, time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("JSONMaxDepth and the HTTP timeouts from the environment (-want +got):\n%s", diff)
	}
}

// rpcStatus is the gRPC status JSON the gateway answers errors with.
type rpcStatus struct {
	Code    int
	Message string
	Details []json.RawMessage
}

func TestDeepJSONIsBadRequest(t *testing.T) {
	cfg := testConfig()
	cfg.JSONMaxDepth = 16
	h := newHarness(t, cfg)
	// An alert whose metadata nests so the whole body is levels deep.
	alert := func(levels int) string {
		return `{"text":"deep","metadata":` + strings.Repeat(`{"a":`, levels-1) + `1` + strings.Repeat(`}`, levels-1) + `}`
	}
	const tooDeep = "request body: JSON nested deeper than 16 levels"
	tests := []struct {
		name, path, body string
		wantCode         int
		wantMessage      string
	}{
		{"100,000 arrays", "/v1/alerts", strings.Repeat("[", 100_000), http.StatusBadRequest, tooDeep},
		{"100,000 levels of metadata", "/v1/alerts", alert(100_000), http.StatusBadRequest, tooDeep},
		{"one past the limit", "/v1/alerts", alert(17), http.StatusBadRequest, tooDeep},
		{"on another route", "/v1/search", `{"query":"q","allowedDomains":` + strings.Repeat("[", 50_000) + `}`, http.StatusBadRequest, tooDeep},
		{"exactly at the limit", "/v1/alerts", alert(16), http.StatusOK, ""},
		{"ordinary nested metadata", "/v1/alerts",
			`{"text":"disk full","metadata":{"host":"web-1","labels":{"team":"ops"},"note":"[{\"x\":1}]"}}`, http.StatusOK, ""},
		{"brackets in strings", "/v1/alerts", `{"text":"` + strings.Repeat(`[{\"`, 10_000) + `"}`, http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := do(t, "POST", h.url+tt.path, tt.body)
			if got.code != tt.wantCode {
				t.Fatalf("POST %s = %d %.200s, want %d", tt.path, got.code, got.body, tt.wantCode)
			}
			if tt.wantMessage == "" {
				return
			}
			var st rpcStatus
			if err := json.Unmarshal([]byte(got.body), &st); err != nil {
				t.Fatalf("body %q is not status JSON: %v", got.body, err)
			}
			if st.Code != int(codes.InvalidArgument) || st.Message != tt.wantMessage {
				t.Errorf("body = %s, want code 3 and message %q", got.body, tt.wantMessage)
			}
		})
	}
}

func TestRequestIDGeneratedWhenAbsent(t *testing.T) {
	h := newHarness(t, testConfig())
	got := do(t, "GET", h.url+"/healthz", "")
	if len(got.header.Get("X-Request-Id")) < 16 {
		t.Errorf("X-Request-Id = %q, want a generated id", got.header.Get("X-Request-Id"))
	}
	var buf bytes.Buffer
	buf.WriteString(got.body)
	if !strings.Contains(buf.String(), "ok") {
		t.Errorf("/healthz body = %q", got.body)
	}
}

func TestTraceContextReachesBackend(t *testing.T) {
	h := newHarness(t, testConfig())
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	got := do(t, "POST", h.url+"/v1/alerts", `{"text":"x"}`,
		"traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	if got.code != 200 {
		t.Fatalf("status %d: %s", got.code, got.body)
	}
	h.notifier.mu.Lock()
	defer h.notifier.mu.Unlock()
	if h.notifier.lastTrace.String() != traceID {
		t.Errorf("backend span is in trace %s, want %s", h.notifier.lastTrace, traceID)
	}
}
