// Package entrypoint is what every groundcrew binary's main does: load the
// typed configuration, build the logger, run the service until SIGINT or
// SIGTERM, and turn the outcome into an exit code. It also answers
// `<binary> healthcheck <url>`, so container images without a shell can
// probe the admin /readyz endpoint, and `--help`, `--version` and
// `--print-config`, which print and exit without listening or opening a
// store.
package entrypoint

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
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

// Main runs a service and exits. about says in a sentence what the binary
// is (the first line of --help); common returns the embedded common
// settings of the service's configuration; run is the service's Run. Every
// binary (the four services and the gateway) calls it, so they share
// signals, configuration errors, exit codes, the `service` log attribute,
// the healthcheck subcommand and the flags [Command] answers.
func Main[T any](name, about string, common func(*T) *config.Common, run func(context.Context, T, *slog.Logger) error) {
	if code, done := Command[T](name, about, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr); done {
		os.Exit(code)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, name, os.LookupEnv, os.Stderr, common, run)
	stop()
	os.Exit(code)
}

// Command answers a service binary's command line before anything starts:
// `-h`/`--help` (what the binary is and every variable it reads, with its
// default and meaning), `--version`, `--print-config` (the effective
// configuration, secrets masked) and `healthcheck URL`. It returns done
// false for an empty command line: start the service. Anything else is
// refused with ExitConfig (2), like a misspelt flag in the flag package,
// so a typo never starts a service.
func Command[T any](name, about string, args []string, lookup func(string) (string, bool), stdout, stderr io.Writer) (code int, done bool) {
	if len(args) == 0 {
		return ExitOK, false
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		if len(args) == 1 {
			var cfg T
			WriteHelp(stdout, name, about, cfg)
			return ExitOK, true
		}
	case "-version", "--version", "version":
		if len(args) == 1 {
			fmt.Fprintln(stdout, VersionLine(name))
			return ExitOK, true
		}
	case "-print-config", "--print-config":
		if len(args) == 1 {
			cfg, err := config.Load[T](lookup)
			if err != nil {
				fmt.Fprintf(stderr, "%s: configuration error:\n%v\n", name, err)
				return ExitConfig, true
			}
			for _, a := range config.Attrs(cfg) {
				fmt.Fprintf(stdout, "%s=%s\n", a.Key, a.Value.String())
			}
			return ExitOK, true
		}
	case "healthcheck":
		if len(args) == 2 {
			return Healthcheck(args[1], stderr), true
		}
		fmt.Fprintf(stderr, "%s: usage: %s healthcheck URL\n", name, name)
		return ExitConfig, true
	}
	what := "argument"
	if strings.HasPrefix(args[0], "-") {
		what = "flag"
	}
	fmt.Fprintf(stderr, "%s: unknown %s %q (the service is configured by environment variables; see %s --help)\n", name, what, strings.Join(args, " "), name)
	return ExitConfig, true
}

// WriteHelp writes a binary's --help: what it is, how to call it, and the
// variables of cfg's type with their defaults and meanings (from the
// configuration reference, docs/configuration.md).
func WriteHelp(w io.Writer, name, about string, cfg any) {
	for _, line := range config.Wrap(name+" — "+about, 78) {
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Usage:\n  %s                 start (configured by the environment variables below)\n", name)
	fmt.Fprintf(w, "  %s --print-config  print the effective configuration (secrets masked) and exit\n", name)
	fmt.Fprintf(w, "  %s --version       print the version and commit and exit\n", name)
	fmt.Fprintf(w, "  %s healthcheck URL exit 0 when URL (the admin /readyz) answers 2xx\n\n", name)
	fmt.Fprintln(w, "Environment variables (unset ones take the default):")
	config.WriteVariables(w, cfg)
	fmt.Fprintln(w, "\nThe full reference: docs/configuration.md.")
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
	// The start-up line each service logs lists only what differs from the
	// defaults; the whole configuration is here, at debug level.
	logger.Debug("configuration", "config", config.FullLogValue(cfg))
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
