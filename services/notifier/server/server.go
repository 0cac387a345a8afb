// Package server runs groundcrew's notifier service: notifier takes alert webhooks, enriches them through grounding and delivers Telegram messages without losing an alert; it also hosts the Telegram bot webhook.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/entrypoint"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/services/notifier/internal/notifiergrpc"
)

// Config is the notifier service's configuration, read from the environment.
type Config struct {
	config.Common

	// Addr is where other services dial notifier; it listens there too unless
	// ListenAddr says otherwise.
	Addr string `env:"NOTIFIER_ADDR" envDefault:"127.0.0.1:50054"`
	// ListenAddr overrides the gRPC listen address, e.g. ":50054" in a
	// container.
	ListenAddr string `env:"NOTIFIER_LISTEN_ADDR"`
	// AdminAddr serves /metrics, /healthz and /readyz.
	AdminAddr string `env:"NOTIFIER_ADMIN_ADDR" envDefault:"127.0.0.1:9094"`

	// TelegramBotToken enables Telegram delivery; without it messages go to
	// the delivery log.
	TelegramBotToken      string `env:"TELEGRAM_BOT_TOKEN" secret:"true"`
	TelegramChatID        string `env:"TELEGRAM_CHAT_ID"`
	TelegramAPIURL        string `env:"TELEGRAM_API_URL" envDefault:"https://api.telegram.org"`
	TelegramWebhookSecret string `env:"TELEGRAM_WEBHOOK_SECRET" secret:"true"`
	// DatabaseURL selects Postgres (postgres://…); empty means SQLite under
	// DATA_DIR.
	DatabaseURL string `env:"DATABASE_URL" secret:"true"`
	// GroundingAddr is the grounding service used for enrichment.
	GroundingAddr string `env:"GROUNDING_ADDR" envDefault:"127.0.0.1:50052"`
}

// Validate checks what types cannot.
func (c Config) Validate() error {
	errs := []error{c.Common.Validate()}
	for name, addr := range map[string]string{"NOTIFIER_ADDR": c.Addr, "NOTIFIER_ADMIN_ADDR": c.AdminAddr, "NOTIFIER_LISTEN_ADDR": c.ListenAddr} {
		if addr == "" && name == "NOTIFIER_LISTEN_ADDR" {
			continue
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			errs = append(errs, fmt.Errorf("%s: must be host:port, got %q", name, addr))
		}
	}
	return errors.Join(errs...)
}

// GRPCListenAddr is where the gRPC server listens.
func (c Config) GRPCListenAddr() string {
	if c.ListenAddr != "" {
		return c.ListenAddr
	}
	return c.Addr
}

// Run serves the notifier service until ctx is done.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	logger.Info("starting", "config", config.LogValue(cfg))
	srv, _, cleanup, err := entrypoint.NewServer(ctx, "notifier", cfg.Common,
		grpcserver.Config{GRPCAddr: cfg.GRPCListenAddr(), AdminAddr: cfg.AdminAddr}, logger)
	if err != nil {
		return err
	}
	defer cleanup()
	notifierv1.RegisterNotifierServiceServer(srv, notifiergrpc.NewNotifierService(logger))
	return srv.Run(ctx)
}
