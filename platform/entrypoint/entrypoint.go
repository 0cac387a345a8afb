// Package entrypoint is what every groundcrew binary's main does: load the
// typed configuration, build the logger, run the service until SIGINT or
// SIGTERM, and turn the outcome into an exit code. It also answers
// `<binary> healthcheck <url>`, so container images without a shell can
// probe the admin /readyz endpoint.
package entrypoint

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/platform/logging"
	"github.com/groundcrew/groundcrew/platform/telemetry"
)

// Exit codes.
const (
	ExitOK     = 0
	ExitFailed = 1
	ExitConfig = 2
)

// HealthcheckTimeout bounds `<binary> healthcheck <url>`: a container
// runtime's probe timeout is typically 3s, and a hung admin port must count
// as unhealthy, not hang the probe.
const HealthcheckTimeout = 3 * time.Second

// Main runs a service and exits. common returns the embedded common settings
// of the service's configuration; run is the service's Run. Every binary
// (the four services and the gateway) calls it, so they share signals,
// configuration errors, exit codes, the `service` log attribute and the
// healthcheck subcommand.
func Main[T any](name string, common func(*T) *config.Common, run func(context.Context, T, *slog.Logger) error) {
	if len(os.Args) == 3 && os.Args[1] == "healthcheck" {
		os.Exit(Healthcheck(os.Args[2], os.Stderr))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, name, os.LookupEnv, os.Stderr, common, run)
	stop()
	os.Exit(code)
}

// Run is Main without the process: it returns the exit code instead of
// exiting, so it can be tested.
func Run[T any](ctx context.Context, name string, lookup func(string) (string, bool), stderr io.Writer,
	common func(*T) *config.Common, run func(context.Context, T, *slog.Logger) error,
) int {
	cfg, err := config.Load[T](lookup)
	if err != nil {
		fmt.Fprintf(stderr, "%s: configuration error:\n%v\n", name, err)
		return ExitConfig
	}
	c := common(&cfg)
	logger, err := logging.New(stderr, c.LogFormat, c.LogLevel)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitConfig
	}
	logger = logger.With("service", name)
	if err := run(ctx, cfg, logger); err != nil {
		logger.Error("stopped with an error", "error", err)
		return ExitFailed
	}
	logger.Info("stopped")
	return ExitOK
}

// Healthcheck GETs url and returns ExitOK on a 2xx answer, ExitFailed on
// anything else or when no answer arrives within [HealthcheckTimeout].
func Healthcheck(url string, stderr io.Writer) int {
	return healthcheck(url, HealthcheckTimeout, stderr)
}

func healthcheck(url string, timeout time.Duration, stderr io.Writer) int {
	client := &http.Client{Timeout: timeout}
	resp, err := client.Get(url)
	if err != nil {
		fmt.Fprintf(stderr, "healthcheck: %v\n", err)
		return ExitFailed
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode/100 != 2 {
		fmt.Fprintf(stderr, "healthcheck: %s answered %s\n", url, resp.Status)
		return ExitFailed
	}
	return ExitOK
}

// NewServer sets up tracing and the gRPC runtime for a service. The returned
// cleanup flushes traces; call it after the server's Run returns.
func NewServer(ctx context.Context, name string, common config.Common, cfg grpcserver.Config, logger *slog.Logger, opts ...grpcserver.Option) (*grpcserver.Server, trace.TracerProvider, func(), error) {
	tp, shutdown, err := telemetry.Setup(ctx, common.ServiceName(name), common.OTLPEndpoint, telemetry.WithLogger(logger))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("setting up tracing: %w", err)
	}
	if cfg.GracePeriod == 0 {
		cfg.GracePeriod = common.GracePeriod
	}
	if cfg.GRPCListener == nil {
		cfg.GRPCListener = common.Listeners.API
	}
	if cfg.AdminListener == nil {
		cfg.AdminListener = common.Listeners.Admin
	}
	srv, err := grpcserver.New(cfg, logger, append([]grpcserver.Option{
		grpcserver.WithTracerProvider(tp), grpcserver.WithTransport(common.Transport),
	}, opts...)...)
	if err != nil {
		_ = shutdown(context.Background())
		return nil, nil, nil, err
	}
	cleanup := func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = shutdown(sctx)
	}
	return srv, tp, cleanup, nil
}
