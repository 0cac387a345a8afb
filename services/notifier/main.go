// Command notifier is groundcrew's notifier service. See package server.
package main

import (
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/entrypoint"
	"github.com/groundcrew/groundcrew/services/notifier/server"
)

func main() {
	entrypoint.Main("notifier",
		"groundcrew's notifier service: takes alert webhooks, enriches them through grounding and delivers them to Telegram (or the delivery log), never losing one; the Telegram chat agent, over gRPC",
		func(c *server.Config) *config.Common { return &c.Common }, server.Run)
}
