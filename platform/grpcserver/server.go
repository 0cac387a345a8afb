// Package grpcserver is the runtime every groundcrew service binary runs its
// gRPC API in: one gRPC server plus one admin HTTP server, with health,
// reflection, request ids, panic recovery, logging, request validation,
// Prometheus metrics and OpenTelemetry tracing wired in the same way
// everywhere.
//
// A service builds a [Server] with [New], registers its gRPC services on it
// (Server implements grpc.ServiceRegistrar), and calls [Server.Run] with a
// context that main cancels on SIGINT/SIGTERM. Run returns once both servers
// have stopped.
//
// Unary and stream calls pass through these interceptors, outermost first:
// request id, logging (health checks are not logged), Prometheus metrics,
// the shared-token check (with GRPC_SHARED_TOKEN), panic recovery, the interceptors added with [WithUnaryInterceptors] /
// [WithStreamInterceptors], and protovalidate request validation. Tracing is
// done by an otelgrpc stats handler, so the span exists before any
// interceptor runs.
//
// The admin HTTP server serves /metrics (Prometheus, from a per-server
// registry), /healthz (the process is up), /readyz (200 only when every
// tracked service is SERVING), Go's profiler under /debug/pprof/ when
// ADMIN_PPROF is on (see [WithTransport]), plus handlers added with
// [WithAdminHandler].
//
// [WithTransport] applies the service-to-service settings: a shared bearer
// token checked on every call but health checks, mTLS, reflection on or off.
package grpcserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"

	"buf.build/go/protovalidate"
	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc/filters"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/logging"
	"github.com/groundcrew/groundcrew/platform/telemetry"
)

// DefaultGracePeriod is used when [Config].GracePeriod is zero.
const DefaultGracePeriod = 10 * time.Second

// Config says where a [Server] listens and how long it drains.
type Config struct {
	// GRPCAddr is the gRPC listen address, e.g. ":50051" or "127.0.0.1:0".
	GRPCAddr string
	// AdminAddr is the admin HTTP listen address; empty disables the admin
	// server.
	AdminAddr string
	// GracePeriod bounds how long in-flight calls may finish after shutdown
	// starts; zero means [DefaultGracePeriod], negative means no grace.
	GracePeriod time.Duration
	// GRPCListener and AdminListener, when set, are served instead of
	// listening on GRPCAddr and AdminAddr (for programs that embed several
	// services and open every listener first). Run closes them.
	GRPCListener  net.Listener
	AdminListener net.Listener
}

// Option customises a [Server].
type Option func(*options)

type options struct {
	tp            trace.TracerProvider
	registry      *prometheus.Registry
	unary         []grpc.UnaryServerInterceptor
	stream        []grpc.StreamServerInterceptor
	serverOpts    []grpc.ServerOption
	adminHandlers []adminHandler
	validator     protovalidate.Validator
	transport     config.Transport
	transportSet  bool
}

type adminHandler struct {
	pattern string
	handler http.Handler
}

// WithTracerProvider sets the TracerProvider the otelgrpc stats handler
// uses (typically the one from telemetry.Setup). Without it spans are not
// recorded, but a caller's W3C trace context is still picked up, so trace
// ids still reach the logs.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) { o.tp = tp }
}

// WithRegistry makes the server register its metrics (gRPC server metrics,
// Go and process collectors) on reg and serve reg on /metrics, so a service
// can add its own domain metrics to the same endpoint. Collectors already
// registered on reg are left as they are.
func WithRegistry(reg *prometheus.Registry) Option {
	return func(o *options) { o.registry = reg }
}

// WithUnaryInterceptors adds unary interceptors after recovery and before
// validation, in the order given.
func WithUnaryInterceptors(interceptors ...grpc.UnaryServerInterceptor) Option {
	return func(o *options) { o.unary = append(o.unary, interceptors...) }
}

// WithStreamInterceptors adds stream interceptors after recovery and before
// validation, in the order given.
func WithStreamInterceptors(interceptors ...grpc.StreamServerInterceptor) Option {
	return func(o *options) { o.stream = append(o.stream, interceptors...) }
}

// WithServerOptions passes extra options (message size limits, keepalive
// policy, …) to grpc.NewServer. Do not pass interceptors here; use
// [WithUnaryInterceptors] and [WithStreamInterceptors].
func WithServerOptions(opts ...grpc.ServerOption) Option {
	return func(o *options) { o.serverOpts = append(o.serverOpts, opts...) }
}

// WithAdminHandler serves h on the admin HTTP server under pattern
// (net/http.ServeMux syntax, e.g. "GET /debug/index").
func WithAdminHandler(pattern string, h http.Handler) Option {
	return func(o *options) { o.adminHandlers = append(o.adminHandlers, adminHandler{pattern, h}) }
}

// WithValidator replaces the protovalidate validator (for example one built
// with extra options). By default a new protovalidate.New() validator is
// used.
func WithValidator(v protovalidate.Validator) Option {
	return func(o *options) { o.validator = v }
}

// Server runs one gRPC server and one admin HTTP server. Create it with
// [New], register services, then call [Server.Run] once.
type Server struct {
	cfg      Config
	logger   *slog.Logger
	grpc     *grpc.Server
	health   *health.Server
	registry *prometheus.Registry
	metrics  *grpcprom.ServerMetrics
	admin    *http.Server

	ready chan struct{}

	mu        sync.Mutex
	phase     phase
	services  map[string]serviceStatus // tracked for readiness; "" is computed
	grpcAddr  net.Addr
	adminAddr net.Addr
}

var _ grpc.ServiceRegistrar = (*Server)(nil)

type phase int

const (
	phaseNew phase = iota
	phaseRunning
	phaseStopping
)

type serviceStatus int

const (
	statusPending    serviceStatus = iota // registered; becomes serving when Run starts
	statusServing                         // set explicitly or by Run
	statusNotServing                      // set explicitly
)

// New builds a Server. logger is used for the server's own lines and the
// per-call log lines; if its handler is not a logging.Handler it is wrapped
// in one so records carry request and trace ids.
func New(cfg Config, logger *slog.Logger, opts ...Option) (*Server, error) {
	if cfg.GRPCAddr == "" {
		return nil, errors.New("grpcserver: gRPC listen address is empty")
	}
	if logger == nil {
		return nil, errors.New("grpcserver: logger is nil")
	}
	if _, ok := logger.Handler().(*logging.Handler); !ok {
		logger = slog.New(logging.NewHandler(logger.Handler()))
	}
	if cfg.GracePeriod == 0 {
		cfg.GracePeriod = DefaultGracePeriod
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.tp == nil {
		o.tp = noop.NewTracerProvider()
	}
	if o.registry == nil {
		o.registry = prometheus.NewRegistry()
	}
	if o.validator == nil {
		v, err := protovalidate.New()
		if err != nil {
			return nil, fmt.Errorf("grpcserver: creating protovalidate validator: %w", err)
		}
		o.validator = v
	}

	s := &Server{
		cfg:      cfg,
		logger:   logger,
		health:   health.NewServer(),
		registry: o.registry,
		ready:    make(chan struct{}),
		services: make(map[string]serviceStatus),
	}
	// health.NewServer reports the overall status as SERVING; nothing is
	// serving until Run has its listeners.
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)

	s.metrics = grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram())
	for _, c := range []prometheus.Collector{
		s.metrics,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := s.registry.Register(c); err != nil {
			if _, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); !ok {
				return nil, fmt.Errorf("grpcserver: registering metrics: %w", err)
			}
		}
	}

	reflect, pprof := true, false
	var creds []grpc.ServerOption
	if o.transportSet {
		reflect, pprof = o.transport.Reflection, o.transport.AdminPprof
		if o.transport.TLS() {
			tlsCfg, err := o.transport.ServerTLSConfig()
			if err != nil {
				return nil, fmt.Errorf("grpcserver: %w", err)
			}
			creds = append(creds, grpc.Creds(credentials.NewTLS(tlsCfg)))
		}
	}
	unary, stream := s.interceptors(&o)
	serverOpts := append(append([]grpc.ServerOption{
		grpc.StatsHandler(otelgrpc.NewServerHandler(
			otelgrpc.WithTracerProvider(o.tp),
			otelgrpc.WithPropagators(telemetry.Propagator()),
			otelgrpc.WithFilter(filters.Not(filters.HealthCheck())),
		)),
		grpc.ChainUnaryInterceptor(unary...),
		grpc.ChainStreamInterceptor(stream...),
	}, creds...), o.serverOpts...)
	s.grpc = grpc.NewServer(serverOpts...)
	healthpb.RegisterHealthServer(s.grpc, &healthService{Server: s.health, s: s})
	if reflect {
		reflection.Register(s.grpc)
	}

	if cfg.AdminAddr != "" || cfg.AdminListener != nil {
		mux, err := s.adminMux(o.adminHandlers, pprof)
		if err != nil {
			return nil, err
		}
		s.admin = &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout:       30 * time.Second,
			WriteTimeout:      60 * time.Second,
			IdleTimeout:       2 * time.Minute,
			MaxHeaderBytes:    1 << 16,
			ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		}
	}
	return s, nil
}

// RegisterService registers a gRPC service implementation, as generated
// RegisterXxxServer functions do, and tracks the service's health: it is
// NOT_SERVING until Run starts and SERVING from then on, unless the service
// says otherwise with [Server.SetServingStatus]. It must be called before
// Run; registering later is a programming error and panics (grpc-go itself
// would exit the process).
func (s *Server) RegisterService(desc *grpc.ServiceDesc, impl any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase != phaseNew {
		panic(fmt.Sprintf("grpcserver: RegisterService(%q) called after Run", desc.ServiceName))
	}
	s.grpc.RegisterService(desc, impl)
	if _, ok := s.services[desc.ServiceName]; !ok {
		s.services[desc.ServiceName] = statusPending
	}
	s.publishLocked()
}

// Registry returns the Prometheus registry served on /metrics, for domain
// metrics.
func (s *Server) Registry() *prometheus.Registry {
	return s.registry
}

// SetServingStatus sets the health of one service, as reported by
// grpc.health.v1 and /readyz. The overall status ("") is SERVING only while
// every tracked service is. Any name can be tracked, not only registered
// gRPC services, so a service can hold readiness back on a dependency (for
// example "index-loaded"); service "" sets every tracked service at once.
// A service that needs time to warm up calls SetServingStatus(name, false)
// before Run and SetServingStatus(name, true) when it is ready. Once
// shutdown has begun, calls are ignored.
func (s *Server) SetServingStatus(service string, serving bool) {
	st := statusNotServing
	if serving {
		st = statusServing
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase == phaseStopping {
		return
	}
	if service == "" {
		for name := range s.services {
			s.services[name] = st
		}
	} else {
		s.services[service] = st
	}
	s.publishLocked()
}

// Ready is closed once Run is listening; GRPCAddr and AdminAddr are set
// from then on.
func (s *Server) Ready() <-chan struct{} {
	return s.ready
}

// GRPCAddr is the address the gRPC server listens on, or nil before
// [Server.Ready] is closed.
func (s *Server) GRPCAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.grpcAddr
}

// AdminAddr is the address the admin HTTP server listens on, or nil before
// [Server.Ready] is closed or when the admin server is disabled.
func (s *Server) AdminAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.adminAddr
}

// Run listens on the configured addresses and serves until ctx is done or a
// server fails, then shuts down: every health status becomes NOT_SERVING,
// the gRPC server stops gracefully within the grace period and is then
// stopped hard, and the admin server is shut down last (so /readyz reports
// 503 while draining). It returns nil after a shutdown caused by ctx, and an
// error if listening or serving failed. Run may be called once.
func (s *Server) Run(ctx context.Context) error {
	s.mu.Lock()
	if s.phase != phaseNew {
		s.mu.Unlock()
		return errors.New("grpcserver: Run called more than once")
	}
	s.phase = phaseRunning
	s.mu.Unlock()

	grpcLis, err := config.Listen(ctx, s.cfg.GRPCListener, s.cfg.GRPCAddr)
	if err != nil {
		if s.cfg.AdminListener != nil {
			_ = s.cfg.AdminListener.Close()
		}
		s.stopHealth()
		return fmt.Errorf("grpcserver: listening for gRPC on %s: %w", s.cfg.GRPCAddr, err)
	}
	var adminLis net.Listener
	if s.admin != nil {
		adminLis, err = config.Listen(ctx, s.cfg.AdminListener, s.cfg.AdminAddr)
		if err != nil {
			_ = grpcLis.Close()
			s.stopHealth()
			return fmt.Errorf("grpcserver: listening for admin HTTP on %s: %w", s.cfg.AdminAddr, err)
		}
	} else if s.cfg.AdminListener != nil {
		_ = s.cfg.AdminListener.Close()
	}
	// Pre-create the per-method series so dashboards show zeros rather than
	// gaps before the first call.
	s.metrics.InitializeMetrics(s.grpc)

	s.mu.Lock()
	s.grpcAddr = grpcLis.Addr()
	if adminLis != nil {
		s.adminAddr = adminLis.Addr()
	}
	for name, st := range s.services {
		if st == statusPending {
			s.services[name] = statusServing
		}
	}
	s.publishLocked()
	s.mu.Unlock()
	close(s.ready)

	attrs := []any{"grpc_addr", grpcLis.Addr().String(), "grace_period", s.cfg.GracePeriod.String()}
	if adminLis != nil {
		attrs = append(attrs, "admin_addr", adminLis.Addr().String())
	}
	s.logger.InfoContext(ctx, "serving", attrs...)

	errc := make(chan error, 2)
	running := 1
	go func() {
		// ErrServerStopped: shutdown began before Serve did (a context
		// cancelled right after Ready), a clean stop, not a failure.
		if err := s.grpc.Serve(grpcLis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			errc <- fmt.Errorf("grpcserver: serving gRPC: %w", err)
			return
		}
		errc <- nil
	}()
	if adminLis != nil {
		running++
		go func() {
			if err := s.admin.Serve(adminLis); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("grpcserver: serving admin HTTP: %w", err)
				return
			}
			errc <- nil
		}()
	}

	var runErr error
	select {
	case <-ctx.Done():
		s.logger.Info("shutting down", "reason", context.Cause(ctx).Error())
	case runErr = <-errc:
		running--
		if runErr == nil {
			// A server returned without error before shutdown, which
			// neither does unless stopped; treat it as a failure.
			runErr = errors.New("grpcserver: a server stopped unexpectedly")
		}
		s.logger.Error("server failed; shutting down", "error", runErr)
	}
	s.shutdown()
	for ; running > 0; running-- {
		if err := <-errc; err != nil && runErr == nil {
			runErr = err
		}
	}
	s.logger.Info("stopped")
	return runErr
}

// shutdown reports NOT_SERVING, drains gRPC within the grace period, then
// stops the admin server.
func (s *Server) shutdown() {
	s.stopHealth()

	drained := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(drained)
	}()
	grace := max(s.cfg.GracePeriod, 0)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-drained:
	case <-timer.C:
		s.logger.Warn("grace period over; cancelling remaining calls", "grace_period", grace.String())
		s.grpc.Stop()
		<-drained
	}

	if s.admin != nil {
		// Admin requests are short (scrapes, probes); they get a bounded
		// moment to finish, then connections are closed.
		ctx, cancel := context.WithTimeout(context.Background(), min(max(grace, time.Second), 5*time.Second))
		defer cancel()
		if err := s.admin.Shutdown(ctx); err != nil {
			_ = s.admin.Close()
		}
	}
}

// stopHealth marks every status NOT_SERVING for good.
func (s *Server) stopHealth() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.phase = phaseStopping
	// Shutdown sets every status NOT_SERVING and ignores later updates.
	s.health.Shutdown()
}

func (s *Server) stopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.phase == phaseStopping
}

// publishLocked mirrors the tracked statuses into the health service.
func (s *Server) publishLocked() {
	if s.phase == phaseStopping {
		return
	}
	for name, st := range s.services {
		s.health.SetServingStatus(name, toHealth(st == statusServing))
	}
	s.health.SetServingStatus("", toHealth(s.overallLocked()))
}

func (s *Server) overallLocked() bool {
	if s.phase != phaseRunning || s.grpcAddr == nil {
		return false
	}
	for _, st := range s.services {
		if st != statusServing {
			return false
		}
	}
	return true
}

func toHealth(serving bool) healthpb.HealthCheckResponse_ServingStatus {
	if serving {
		return healthpb.HealthCheckResponse_SERVING
	}
	return healthpb.HealthCheckResponse_NOT_SERVING
}

// ReadyzResponse is the JSON body of /readyz.
type ReadyzResponse struct {
	// Status is SERVING or NOT_SERVING, the overall status.
	Status string `json:"status"`
	// Services maps each tracked service to SERVING or NOT_SERVING.
	Services map[string]string `json:"services"`
}

func (s *Server) readyz() (int, ReadyzResponse) {
	s.mu.Lock()
	defer s.mu.Unlock()
	resp := ReadyzResponse{Services: make(map[string]string, len(s.services))}
	names := make([]string, 0, len(s.services))
	for name := range s.services {
		names = append(names, name)
	}
	sort.Strings(names)
	stopping := s.phase == phaseStopping
	for _, name := range names {
		resp.Services[name] = toHealth(!stopping && s.services[name] == statusServing).String()
	}
	overall := s.overallLocked()
	resp.Status = toHealth(overall).String()
	if !overall {
		return http.StatusServiceUnavailable, resp
	}
	return http.StatusOK, resp
}

func (s *Server) adminMux(extra []adminHandler, pprof bool) (mux *http.ServeMux, err error) {
	mux = http.NewServeMux()
	// ServeMux panics on malformed or conflicting patterns; report that as
	// an error instead.
	defer func() {
		if r := recover(); r != nil {
			mux, err = nil, fmt.Errorf("grpcserver: admin handler: %v", r)
		}
	}()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
	}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		code, body := s.readyz()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(body)
	})
	if pprof {
		telemetry.HandleProfiler(mux)
	}
	for _, h := range extra {
		mux.Handle(h.pattern, h.handler)
	}
	return mux, nil
}
