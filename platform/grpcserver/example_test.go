package grpcserver_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/platform/logging"
	"github.com/groundcrew/groundcrew/platform/telemetry"
)

// searchConfig is what a service's configuration looks like.
type searchConfig struct {
	config.Common
	Addr      string `env:"SEARCH_ADDR" envDefault:"127.0.0.1:50051"`
	AdminAddr string `env:"SEARCH_ADMIN_ADDR" envDefault:"127.0.0.1:9091"`
	ExaAPIKey string `env:"EXA_API_KEY" secret:"true"`
}

// run is what a service's main does after config parsing; main itself is
// only: ctx from signal.NotifyContext, cfg from config.Load, os.Exit(run()).
func run(ctx context.Context, cfg searchConfig) error {
	logger, err := logging.New(os.Stderr, cfg.LogFormat, cfg.LogLevel)
	if err != nil {
		return err
	}
	logger.Info("starting", "config", config.LogValue(cfg))

	tp, shutdownTracing, err := telemetry.Setup(ctx, cfg.ServiceName("search"), cfg.OTLPEndpoint, telemetry.WithLogger(logger))
	if err != nil {
		return err
	}
	defer func() { _ = shutdownTracing(context.Background()) }()

	srv, err := grpcserver.New(grpcserver.Config{
		GRPCAddr:    cfg.Addr,
		AdminAddr:   cfg.AdminAddr,
		GracePeriod: cfg.GracePeriod,
	}, logger, grpcserver.WithTracerProvider(tp))
	if err != nil {
		return err
	}
	// searchv1.RegisterSearchServiceServer(srv, handler)
	return srv.Run(ctx)
}

func Example() {
	cfg, err := config.Load[searchConfig](os.LookupEnv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "search: configuration:\n%v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintf(os.Stderr, "search: %v\n", err)
		os.Exit(1)
	}
}
