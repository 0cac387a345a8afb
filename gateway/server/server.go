package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/cors"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/groundcrew/groundcrew/gateway/internal/apidocs"
	"github.com/groundcrew/groundcrew/gateway/internal/codec"
	"github.com/groundcrew/groundcrew/gateway/internal/console"
	"github.com/groundcrew/groundcrew/gateway/internal/edge"
	"github.com/groundcrew/groundcrew/gen"
	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	ragv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/rag/v1"
	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
	"github.com/groundcrew/groundcrew/platform/actor"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/grpcclient"
	"github.com/groundcrew/groundcrew/platform/telemetry"
)

// Backend is one service behind the gateway: its name, the gRPC services it
// must report SERVING for readiness, and a connection to it.
type Backend struct {
	Name     string
	Services []string
	Conn     grpc.ClientConnInterface
}

// Backends are the four services the gateway fronts.
type Backends struct {
	Search, Grounding, Rag, Notifier Backend
}

func (b Backends) all() []Backend { return []Backend{b.Search, b.Grounding, b.Rag, b.Notifier} }

// Dial opens a client connection to each backend through
// platform/grpcclient, as the services dial each other (tracing, request
// ids, GRPC_SHARED_TOKEN or mTLS), with room for large answers. Connections
// are lazy: a backend that is down makes its routes answer 503 and /readyz
// fail, not the gateway's start.
func Dial(cfg Config, tp trace.TracerProvider) (Backends, func() error, error) {
	opts := append(grpcclient.Secure(cfg.Transport),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxBackendMessage)),
	)
	var conns []*grpc.ClientConn
	closeAll := func() error {
		var errs []error
		for _, c := range conns {
			errs = append(errs, c.Close())
		}
		return errors.Join(errs...)
	}
	dial := func(name, addr string, services ...string) (Backend, error) {
		conn, err := grpcclient.Dial(addr, tp, opts...)
		if err != nil {
			return Backend{}, fmt.Errorf("%s: %w", name, err)
		}
		conns = append(conns, conn)
		return Backend{Name: name, Services: services, Conn: conn}, nil
	}
	var b Backends
	var err error
	if b.Search, err = dial("search", cfg.SearchAddr, searchv1.SearchService_ServiceDesc.ServiceName); err != nil {
		return Backends{}, closeAll, err
	}
	if b.Grounding, err = dial("grounding", cfg.GroundingAddr,
		groundingv1.GroundingService_ServiceDesc.ServiceName, groundingv1.ResearchService_ServiceDesc.ServiceName); err != nil {
		return Backends{}, closeAll, err
	}
	if b.Rag, err = dial("rag", cfg.RagAddr, ragv1.RagService_ServiceDesc.ServiceName); err != nil {
		return Backends{}, closeAll, err
	}
	if b.Notifier, err = dial("notifier", cfg.NotifierAddr, notifierv1.NotifierService_ServiceDesc.ServiceName); err != nil {
		return Backends{}, closeAll, err
	}
	return b, closeAll, nil
}

// maxBackendMessage is the largest answer the gateway accepts from a
// backend (a long research report, a page of messages with evidence).
const maxBackendMessage = 32 << 20

// forwardedHeaders are the request headers passed to the backends as gRPC
// metadata. Everything else stays at the edge: in particular clients cannot
// inject arbitrary metadata with Grpc-Metadata-* headers, and credentials,
// cookies, baggage, forwarding chains and the actor are scrubbed before
// the routes run (edge.Scrub).
var forwardedHeaders = []string{
	"x-request-id",
	"traceparent",
	"tracestate",
	"x-telegram-bot-api-secret-token",
	"accept-language",
}

// actorConn puts the authenticated caller's name (the API key's, from
// edge.Identify) on every backend call as actor metadata, replacing
// whatever else is there: the name comes from the gateway, never from the
// client. NewHandler wraps every backend connection in one, so no route can
// forget it.
type actorConn struct{ grpc.ClientConnInterface }

func (c actorConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	return c.ClientConnInterface.Invoke(actor.OutgoingContext(ctx, edge.ClientFrom(ctx).Actor()), method, args, reply, opts...)
}

func (c actorConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return c.ClientConnInterface.NewStream(actor.OutgoingContext(ctx, edge.ClientFrom(ctx).Actor()), desc, method, opts...)
}

// Handler is the REST edge, ready to serve.
type Handler struct {
	http.Handler
	readiness *readiness
}

// NewHandler builds the edge over the given backends. reg receives the
// gateway's HTTP metrics; it may be nil.
func NewHandler(ctx context.Context, cfg Config, b Backends, logger *slog.Logger, reg prometheus.Registerer, tp trace.TracerProvider) (*Handler, error) {
	allowed := map[string]bool{}
	for _, h := range append(append([]string{}, forwardedHeaders...), cfg.ForwardHeaders...) {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" && !edge.ReservedMetadata(h) {
			allowed[h] = true
		}
	}
	keys, err := edge.ParseKeys(cfg.APIKeys)
	if err != nil {
		return nil, err
	}
	proxies, err := edge.ParseProxies(cfg.TrustedProxies)
	if err != nil {
		return nil, err
	}
	jsonCodec := codec.NewJSON(cfg.JSONMaxDepth)
	metrics := newHTTPMetrics(reg)
	mux := runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, jsonCodec),
		runtime.WithMarshalerOption(codec.SSEContentType, codec.NewSSE(jsonCodec)),
		runtime.WithIncomingHeaderMatcher(func(key string) (string, bool) {
			k := strings.ToLower(key)
			return k, allowed[k]
		}),
		runtime.WithOutgoingHeaderMatcher(func(key string) (string, bool) {
			if strings.EqualFold(key, "retry-after") {
				return "Retry-After", true
			}
			return "", false
		}),
		runtime.WithOutgoingTrailerMatcher(func(string) (string, bool) { return "", false }),
		runtime.WithErrorHandler(errorHandler(logger, jsonCodec)),
		runtime.WithStreamErrorHandler(streamErrorHandler(logger, jsonCodec)),
		// A process-wide setting in grpc-gateway; every mux here wants it.
		runtime.SetQueryParameterParser(codec.QueryParser{}),
		runtime.WithMiddlewares(metrics.middleware),
		runtime.WithDisablePathLengthFallback(),
	)
	// Each service's routes are registered on its backend's connection,
	// named by the typed field (research runs on grounding, on call on the
	// notifier).
	for _, reg := range []struct {
		register func(context.Context, *runtime.ServeMux, grpc.ClientConnInterface) error
		name     string
		conn     grpc.ClientConnInterface
	}{
		{func(ctx context.Context, m *runtime.ServeMux, c grpc.ClientConnInterface) error {
			return searchv1.RegisterSearchServiceHandlerClient(ctx, m, searchv1.NewSearchServiceClient(c))
		}, "search", b.Search.Conn},
		{func(ctx context.Context, m *runtime.ServeMux, c grpc.ClientConnInterface) error {
			return groundingv1.RegisterGroundingServiceHandlerClient(ctx, m, groundingv1.NewGroundingServiceClient(c))
		}, "grounding", b.Grounding.Conn},
		{func(ctx context.Context, m *runtime.ServeMux, c grpc.ClientConnInterface) error {
			return groundingv1.RegisterResearchServiceHandlerClient(ctx, m, groundingv1.NewResearchServiceClient(c))
		}, "research", b.Grounding.Conn},
		{func(ctx context.Context, m *runtime.ServeMux, c grpc.ClientConnInterface) error {
			return ragv1.RegisterRagServiceHandlerClient(ctx, m, ragv1.NewRagServiceClient(c))
		}, "rag", b.Rag.Conn},
		{func(ctx context.Context, m *runtime.ServeMux, c grpc.ClientConnInterface) error {
			return notifierv1.RegisterNotifierServiceHandlerClient(ctx, m, notifierv1.NewNotifierServiceClient(c))
		}, "notifier", b.Notifier.Conn},
		{func(ctx context.Context, m *runtime.ServeMux, c grpc.ClientConnInterface) error {
			return notifierv1.RegisterOnCallServiceHandlerClient(ctx, m, notifierv1.NewOnCallServiceClient(c))
		}, "oncall", b.Notifier.Conn},
	} {
		if err := reg.register(ctx, mux, actorConn{reg.conn}); err != nil {
			return nil, fmt.Errorf("registering %s routes: %w", reg.name, err)
		}
	}

	// The OpenAPI 3 document, complete as tools/openapi3 generates it.
	openapi := gen.OpenAPI3

	budgets, err := edge.ParseBudgets(cfg.KeyBudgets, keys)
	if err != nil {
		return nil, err
	}
	if names := edge.LegacyAlertKeys(keys); len(names) > 0 {
		if cfg.AlertsScopeStrict {
			logger.Warn("these API keys hold write but not alerts, so they can no longer post alerts (GATEWAY_ALERTS_SCOPE_STRICT=true): "+
				"give the webhook senders' keys the alerts scope", "keys", names)
		} else {
			logger.Warn("deprecated: these API keys post alerts only because write still covers the alerts routes; "+
				"give webhook senders (Alertmanager, Grafana) a key with the alerts scope alone, then set GATEWAY_ALERTS_SCOPE_STRICT=true",
				"keys", names)
		}
	}
	admission := edge.NewAdmission(
		orDefaultN(cfg.UnauthMaxRequests, defaultUnauthMaxRequests),
		orDefaultN(cfg.UnauthMaxRequestsPerClient, defaultUnauthMaxRequestsPerClient),
		orDefaultN(cfg.UnauthMaxBuffered, defaultUnauthMaxBuffered))
	admission.Refused = metrics.refusal
	// Counted by reason, not by key: a label per key would grow with
	// GATEWAY_API_KEYS, and the 429 itself names the key to its holder.
	budgets.Refused = func(string) { metrics.refusal("key_budget") }
	limit := bodyLimit(cfg.BodyLimit)

	// The API, innermost last: which route, who is calling, counted
	// against its limit, allowed (key and scope, or the webhook's secret),
	// sending JSON, within its key's budget, admitted if it proved no
	// credential, within the body limit and its stream cap; then the
	// client's headers are scrubbed and the call gets its deadline and its
	// actor. Everything up to the admission refuses without reading the
	// body.
	var api http.Handler = withTimeout(cfg.BackendTimeout, orDefault(cfg.WriteTimeout, defaultWriteTimeout), mux)
	api = edge.Scrub(api)
	if cfg.MaxStreamsPerClient > 0 {
		api = edge.NewStreamLimiter(cfg.MaxStreamsPerClient).Middleware(isStream, api)
	}
	api = edge.BodyLimit(limit, api)
	api = admission.Middleware(isStream, limit, api)
	api = budgets.Middleware(isCostly, api)
	api = edge.RequireJSON(api)
	api = edge.WebhookSecret(cfg.TelegramWebhookSecret, isWebhook, func() { metrics.refusal("webhook_secret") }, api)
	api = edge.Require(len(keys) > 0, edge.Access{Scope: routeScope, WriteCoversAlerts: !cfg.AlertsScopeStrict}, api)
	if cfg.RateLimit > 0 {
		api = edge.NewRateLimiter(cfg.RateLimit, cfg.RateBurst, cfg.RateClients).Middleware(api)
	}
	api = edge.Identify(keys, proxies, api)
	api = secureHeaders(api)
	api = withRoute(api)

	rd := &readiness{backends: b.all(), timeout: cfg.ReadinessTimeout, logger: logger}
	root := http.NewServeMux()
	root.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	})
	root.Handle("GET /readyz", rd)
	root.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(openapi)
	})
	root.Handle("GET /docs/", http.StripPrefix("/docs/", apidocs.Handler()))
	root.Handle("GET /docs", http.RedirectHandler("/docs/", http.StatusMovedPermanently))
	consoleHandler, err := console.Handler()
	if err != nil {
		return nil, fmt.Errorf("preparing the console: %w", err)
	}
	root.Handle("GET "+console.Prefix, consoleHandler)
	root.Handle("GET /console", http.RedirectHandler(console.Prefix, http.StatusMovedPermanently))
	// The root is where a person lands: the console.
	root.Handle("GET /{$}", http.RedirectHandler(console.Prefix, http.StatusFound))
	root.Handle("/", api)

	var h http.Handler = root
	// An open gateway is reachable from any web page through DNS
	// rebinding; it serves only loopback hosts and GATEWAY_HOSTS.
	// Probes stay answerable under any Host (a kubelet sends the pod's
	// address); they say only whether the gateway is up.
	if len(keys) == 0 || len(cfg.Hosts) > 0 {
		guarded := edge.NewHosts(cfg.Hosts).Middleware(root)
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && (r.URL.Path == "/healthz" || r.URL.Path == "/readyz") {
				root.ServeHTTP(w, r)
				return
			}
			guarded.ServeHTTP(w, r)
		})
	}
	if len(cfg.CORSOrigins) > 0 {
		h = cors.New(cors.Options{
			AllowedOrigins:   cfg.CORSOrigins,
			AllowedMethods:   []string{http.MethodGet, http.MethodPost, http.MethodOptions},
			AllowedHeaders:   []string{"Authorization", "Content-Type", "Accept", "X-Request-Id", "Grpc-Timeout"},
			ExposedHeaders:   []string{"X-Request-Id", "Retry-After"},
			AllowCredentials: false,
			MaxAge:           600,
		}).Handler(h)
	}
	h = otelhttp.NewHandler(h, "gateway",
		otelhttp.WithTracerProvider(tp),
		otelhttp.WithPropagators(telemetry.Propagator()),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + r.URL.Path }),
	)
	h = edge.AccessLog(logger, h)
	h = edge.RequestID(h)
	h = edge.Recover(logger, h)
	return &Handler{Handler: h, readiness: rd}, nil
}

// withTimeout bounds every unary call by d. A client's Grpc-Timeout still
// applies (grpc-gateway derives its deadline from this context), so it can
// shorten the call but never lift it past d. Streams (Server-Sent Events,
// watches), chosen by route, run until the client goes away: their writes
// each get writeTimeout, instead of the server's one deadline for the
// whole response.
func withTimeout(d, writeTimeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isStream(r) {
			next.ServeHTTP(&streamWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: writeTimeout}, r)
			return
		}
		if d <= 0 {
			next.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// streamWriter moves the connection's write deadline forward before each
// write of a server stream. http.Server's WriteTimeout is one deadline for
// the whole response, which would cut a long watch or answer stream short;
// here it bounds each event instead, so a client that stops reading is
// still dropped.
type streamWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func (w *streamWriter) Write(p []byte) (int, error) {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
	return w.ResponseWriter.Write(p)
}

// Flush sends what is buffered (grpc-gateway flushes after each event).
func (w *streamWriter) Flush() {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
	_ = w.rc.Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (w *streamWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// sanitize keeps a backend's error text away from clients where it may hold
// internals: Internal, Unknown and DataLoss become "internal error", and
// transport failures become "<service> unavailable".
func sanitize(ctx context.Context, logger *slog.Logger, r *http.Request, err error) error {
	st := status.Convert(err)
	switch st.Code() {
	case codes.Internal, codes.Unknown, codes.DataLoss:
		logger.ErrorContext(ctx, "backend error", "code", st.Code().String(), "error", st.Message(),
			"path", r.URL.Path, "request_id", r.Header.Get(edge.RequestIDHeader))
		return status.Error(st.Code(), "internal error")
	case codes.Unavailable:
		msg := st.Message()
		if strings.Contains(msg, "connection") || strings.Contains(msg, "dial") || strings.Contains(msg, "transport") || strings.Contains(msg, "name resolver") {
			logger.WarnContext(ctx, "backend unavailable", "error", msg, "path", r.URL.Path,
				"request_id", r.Header.Get(edge.RequestIDHeader))
			return status.Error(codes.Unavailable, "service unavailable: try again later")
		}
	}
	return err
}

// errorHandler writes a route's error: internals sanitised, bad input
// explained field by field ([explain]).
func errorHandler(logger *slog.Logger, j *codec.JSON) runtime.ErrorHandlerFunc {
	return func(ctx context.Context, mux *runtime.ServeMux, m runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
		runtime.DefaultHTTPErrorHandler(ctx, mux, m, w, r, explain(ctx, j, r, sanitize(ctx, logger, r, err)))
	}
}

// streamErrorHandler is errorHandler for an error in a stream already
// under way.
func streamErrorHandler(logger *slog.Logger, j *codec.JSON) runtime.StreamErrorHandlerFunc {
	return func(ctx context.Context, err error) *status.Status {
		st := status.Convert(explain(ctx, j, nil, err))
		switch st.Code() {
		case codes.Internal, codes.Unknown, codes.DataLoss:
			logger.ErrorContext(ctx, "backend stream error", "code", st.Code().String(), "error", st.Message())
			return status.New(st.Code(), "internal error")
		}
		return st
	}
}

// readiness answers /readyz: ready when every backend reports SERVING for
// every service it hosts. It logs when that changes, not every answer:
// "ready" once every backend serves, a warning naming the backends when
// a ready gateway stops being so. The 503s of a start, before the first
// ready, are expected and not logged.
type readiness struct {
	backends []Backend
	timeout  time.Duration
	logger   *slog.Logger

	mu sync.Mutex
	// state is 0 before the first ready, then 1 ready, 2 not ready.
	state int
}

// note logs a change of readiness.
func (rd *readiness) note(ctx context.Context, ready bool, backends map[string]backendReport) {
	rd.mu.Lock()
	prev := rd.state
	switch {
	case ready:
		rd.state = 1
	case prev != 0:
		rd.state = 2
	}
	now := rd.state
	rd.mu.Unlock()
	if now == prev || rd.logger == nil {
		return
	}
	if ready {
		rd.logger.InfoContext(ctx, "every backend is serving: ready")
		return
	}
	var down []string
	for name, rep := range backends {
		if rep.Status != "SERVING" {
			down = append(down, name+" "+rep.Status)
		}
	}
	slices.Sort(down)
	rd.logger.WarnContext(ctx, "not ready: a backend is not serving", "backends", down)
}

type backendReport struct {
	Status   string            `json:"status"`
	Services map[string]string `json:"services"`
}

func (rd *readiness) check(ctx context.Context) (bool, map[string]backendReport) {
	out := make(map[string]backendReport, len(rd.backends))
	var mu sync.Mutex
	var wg sync.WaitGroup
	ready := true
	for _, b := range rd.backends {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep := backendReport{Status: "SERVING", Services: map[string]string{}}
			client := healthpb.NewHealthClient(b.Conn)
			for _, svc := range b.Services {
				cctx, cancel := context.WithTimeout(ctx, rd.timeout)
				resp, err := client.Check(cctx, &healthpb.HealthCheckRequest{Service: svc})
				cancel()
				state := "UNREACHABLE"
				if err == nil {
					state = resp.GetStatus().String()
				} else if status.Code(err) == codes.NotFound {
					state = "SERVICE_UNKNOWN"
				}
				rep.Services[svc] = state
				if state != "SERVING" {
					rep.Status = state
				}
			}
			mu.Lock()
			out[b.Name] = rep
			if rep.Status != "SERVING" {
				ready = false
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return ready, out
}

func (rd *readiness) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ready, backends := rd.check(r.Context())
	rd.note(r.Context(), ready, backends)
	body := struct {
		Status   string                   `json:"status"`
		Backends map[string]backendReport `json:"backends"`
	}{Status: "ready", Backends: backends}
	code := http.StatusOK
	if !ready {
		body.Status = "not ready"
		code = http.StatusServiceUnavailable
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}

// Run serves the REST edge on cfg.Addr and the admin endpoints on
// cfg.AdminAddr until ctx is done, then shuts down within the grace period.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	logger.Info("starting gateway", "config", config.LogValue(cfg))
	if len(cfg.APIKeys) == 0 {
		logger.Warn("GATEWAY_API_KEYS is not set: the API is open to anyone who can reach it; only localhost and GATEWAY_HOSTS are served",
			"addr", cfg.Addr, "allow_open", cfg.AllowOpen)
	}
	tp, shutdownTracing, err := telemetry.Setup(ctx, cfg.ServiceName("gateway"), cfg.OTLPEndpoint, telemetry.WithLogger(logger))
	if err != nil {
		return fmt.Errorf("setting up tracing: %w", err)
	}
	defer func() { _ = shutdownTracing(context.Background()) }()

	backends, closeConns, err := Dial(cfg, tp)
	if err != nil {
		return err
	}
	defer func() { _ = closeConns() }()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	h, err := NewHandler(ctx, cfg, backends, logger, reg, tp)
	if err != nil {
		return err
	}

	lis, err := config.Listen(ctx, cfg.Listeners.API, cfg.Addr)
	if err != nil {
		return fmt.Errorf("GATEWAY_ADDR %s: %w", cfg.Addr, err)
	}
	adminLis, err := config.Listen(ctx, cfg.Listeners.Admin, cfg.AdminAddr)
	if err != nil {
		_ = lis.Close()
		return fmt.Errorf("GATEWAY_ADMIN_ADDR %s: %w", cfg.AdminAddr, err)
	}
	srv := newHTTPServer(h, cfg, logger)
	admin := http.NewServeMux()
	admin.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	admin.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	admin.Handle("GET /readyz", h.readiness)
	// Go's profiler, as on every service's admin port, only with
	// ADMIN_PPROF=true.
	if cfg.Transport.AdminPprof {
		telemetry.HandleProfiler(admin)
	}
	adminSrv := newHTTPServer(admin, cfg, logger)

	logger.Info("gateway listening", "rest", "http://"+displayAddr(lis.Addr()), "admin", "http://"+displayAddr(adminLis.Addr()),
		"docs", "http://"+displayAddr(lis.Addr())+"/docs/")

	errc := make(chan error, 2)
	go func() { errc <- serve(srv, lis) }()
	go func() { errc <- serve(adminSrv, adminLis) }()

	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	logger.Info("gateway shutting down", "grace_period", cfg.GracePeriod)
	sctx, cancel := context.WithTimeout(context.Background(), cfg.GracePeriod)
	defer cancel()
	shutdownErr := errors.Join(shutdown(sctx, srv, logger), shutdown(sctx, adminSrv, logger))
	if err != nil {
		return err
	}
	return shutdownErr
}

// shutdown drains srv within ctx's grace period, then closes what is still
// open, as the services' GracefulStop-then-Stop does: running out of grace
// is how shutdown ends under load, not an error. (A connection a client
// opened but never sent a request on counts as busy for its first five
// seconds in net/http, so a burst of clients leaves some behind.)
func shutdown(ctx context.Context, srv *http.Server, logger *slog.Logger) error {
	err := srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		logger.Warn("grace period over; closing the connections still open")
		return srv.Close()
	}
	return err
}

func serve(srv *http.Server, lis net.Listener) error {
	if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// newHTTPServer sets every timeout from cfg, so slow clients (slowloris)
// cannot hold connections; one left at zero takes its default.
func newHTTPServer(h http.Handler, cfg Config, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: orDefault(cfg.ReadHeaderTimeout, defaultReadHeaderTimeout),
		ReadTimeout:       orDefault(cfg.ReadTimeout, defaultReadTimeout),
		WriteTimeout:      orDefault(cfg.WriteTimeout, defaultWriteTimeout),
		IdleTimeout:       orDefault(cfg.IdleTimeout, defaultIdleTimeout),
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// displayAddr turns ":8080" or "[::]:8080" into "localhost:8080" for people.
func displayAddr(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}

// orDefault is d, or def when d is not positive.
func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
