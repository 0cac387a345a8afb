// Package stack runs the whole groundcrew suite (search, grounding, rag,
// notifier and the gateway) inside one process, each service through its
// own server.Run exactly as its binary does, on loopback listeners opened
// beforehand (config.Listeners). Tests use it to drive the real services
// end to end, with providers replaced by local stand-ins.
package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"path/filepath"
	"sync"
	"time"

	gateway "github.com/groundcrew/groundcrew/gateway/server"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/logging"
	grounding "github.com/groundcrew/groundcrew/services/grounding/server"
	notifier "github.com/groundcrew/groundcrew/services/notifier/server"
	rag "github.com/groundcrew/groundcrew/services/rag/server"
	search "github.com/groundcrew/groundcrew/services/search/server"
)

// Options configure a Stack.
type Options struct {
	// DataDir holds every service's data, one folder each; required.
	DataDir string
	// Env is the environment every service sees, on top of the addresses
	// the stack sets: provider keys and URLs, DATABASE_URL, tuning.
	Env map[string]string
	// Logs receives every service's JSON log lines; nil discards them.
	Logs io.Writer
	// LogLevel is LOG_LEVEL (default "info").
	LogLevel string
}

// Services are the names of the stack's parts, in start order.
var Services = []string{"search", "rag", "grounding", "notifier", "gateway"}

// Stack is a running suite.
type Stack struct {
	// GatewayURL is the REST edge, e.g. http://127.0.0.1:41234.
	GatewayURL string
	// Addrs are the gRPC addresses of the four services, by name, and
	// AdminAddrs every part's admin (metrics, health) address.
	Addrs, AdminAddrs map[string]string

	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	errs   []error
	lis    []net.Listener
}

// Start starts every service and the gateway and returns once each is
// running (their Run has been called; use the gateway's /readyz to wait
// for readiness). Stop it with Stop.
func Start(ctx context.Context, opts Options) (*Stack, error) {
	if opts.DataDir == "" {
		return nil, errors.New("stack: DataDir is required")
	}
	s := &Stack{Addrs: map[string]string{}, AdminAddrs: map[string]string{}}
	listeners := map[string]config.Listeners{}
	for _, name := range Services {
		api, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			s.closeListeners()
			return nil, err
		}
		admin, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			_ = api.Close()
			s.closeListeners()
			return nil, err
		}
		s.lis = append(s.lis, api, admin)
		listeners[name] = config.Listeners{API: api, Admin: admin}
		s.AdminAddrs[name] = admin.Addr().String()
		if name != "gateway" {
			s.Addrs[name] = api.Addr().String()
		}
	}
	s.GatewayURL = "http://" + listeners["gateway"].API.Addr().String()

	base := map[string]string{
		"LOG_FORMAT": "json", "LOG_LEVEL": "info", "GRACE_PERIOD": "2s",
		"SEARCH_ADDR": s.Addrs["search"], "GROUNDING_ADDR": s.Addrs["grounding"],
		"RAG_ADDR": s.Addrs["rag"], "NOTIFIER_ADDR": s.Addrs["notifier"],
		"GATEWAY_ADDR":       listeners["gateway"].API.Addr().String(),
		"GATEWAY_RATE_LIMIT": "0",
		// The storm and soak tests post from one address without a key,
		// many at once: the bounds on keyless requests in flight (their
		// own security tests are in gateway/securitytest) would refuse them.
		"GATEWAY_UNAUTH_MAX_REQUESTS_PER_CLIENT": "4096",
		"GATEWAY_UNAUTH_MAX_REQUESTS":            "4096",
		"GATEWAY_UNAUTH_MAX_BUFFERED":            "268435456",
		// The stack stays on loopback: grounding resolves the Gemini
		// stand-in's redirect links (on its own host) but fetches no cited
		// page (the runbooks' addresses are not on this machine).
		"GROUNDING_FETCH_PAGES": "false",
	}
	if opts.LogLevel != "" {
		base["LOG_LEVEL"] = opts.LogLevel
	}
	maps.Copy(base, opts.Env)
	logs := opts.Logs
	if logs == nil {
		logs = io.Discard
	}

	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	for _, name := range Services {
		env := maps.Clone(base)
		env["DATA_DIR"] = filepath.Join(opts.DataDir, name)
		env[adminVar(name)] = s.AdminAddrs[name]
		logger, err := logging.New(logs, "json", env["LOG_LEVEL"])
		if err != nil {
			s.Stop()
			return nil, err
		}
		logger = logger.With("service", name)
		run, err := runner(name, env, listeners[name])
		if err != nil {
			s.Stop()
			return nil, fmt.Errorf("stack: %s: %w", name, err)
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := run(runCtx, logger); err != nil {
				s.mu.Lock()
				s.errs = append(s.errs, fmt.Errorf("%s: %w", name, err))
				s.mu.Unlock()
				logger.Error("stopped with an error", "error", err)
			}
		}()
	}
	return s, nil
}

func adminVar(name string) string {
	if name == "gateway" {
		return "GATEWAY_ADMIN_ADDR"
	}
	return map[string]string{"search": "SEARCH", "grounding": "GROUNDING", "rag": "RAG", "notifier": "NOTIFIER"}[name] + "_ADMIN_ADDR"
}

// runner loads one part's configuration from env, as its main would, and
// returns its Run bound to the stack's listeners.
func runner(name string, env map[string]string, lis config.Listeners) (func(context.Context, *slog.Logger) error, error) {
	lookup := config.MapLookup(env)
	switch name {
	case "search":
		cfg, err := config.Load[search.Config](lookup)
		cfg.Listeners = lis
		return func(ctx context.Context, l *slog.Logger) error { return search.Run(ctx, cfg, l) }, err
	case "rag":
		cfg, err := config.Load[rag.Config](lookup)
		cfg.Listeners = lis
		return func(ctx context.Context, l *slog.Logger) error { return rag.Run(ctx, cfg, l) }, err
	case "grounding":
		cfg, err := config.Load[grounding.Config](lookup)
		cfg.Listeners = lis
		return func(ctx context.Context, l *slog.Logger) error { return grounding.Run(ctx, cfg, l) }, err
	case "notifier":
		cfg, err := config.Load[notifier.Config](lookup)
		cfg.Listeners = lis
		return func(ctx context.Context, l *slog.Logger) error { return notifier.Run(ctx, cfg, l) }, err
	case "gateway":
		cfg, err := config.Load[gateway.Config](lookup)
		cfg.Listeners = lis
		return func(ctx context.Context, l *slog.Logger) error { return gateway.Run(ctx, cfg, l) }, err
	}
	return nil, fmt.Errorf("unknown service %q", name)
}

// Err returns the errors of the parts that have stopped on their own so
// far (a failed start, say); nil while they all run.
func (s *Stack) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.errs...)
}

// Stop shuts every part down, waits for them (bounded by a minute), closes
// any listener a part did not get to serve, and returns the parts' errors.
func (s *Stack) Stop() error {
	if s.cancel != nil {
		s.cancel()
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		return errors.New("stack: services did not stop within a minute")
	}
	s.closeListeners()
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.errs...)
}

func (s *Stack) closeListeners() {
	for _, l := range s.lis {
		_ = l.Close()
	}
}
