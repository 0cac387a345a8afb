// Command gateway is groundcrew's REST edge. It dials the search, grounding,
// rag and notifier services and serves their routes as JSON over HTTP.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/groundcrew/groundcrew/gateway/server"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/logging"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx)
	stop()
	os.Exit(code)
}

func run(ctx context.Context) int {
	cfg, err := config.Load[server.Config](os.LookupEnv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gateway: configuration error:\n%v\n", err)
		return 2
	}
	logger, err := logging.New(os.Stderr, cfg.LogFormat, cfg.LogLevel)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gateway: %v\n", err)
		return 2
	}
	if err := server.Run(ctx, cfg, logger); err != nil {
		logger.Error("gateway stopped", "error", err)
		return 1
	}
	return 0
}
