// Command notifier is groundcrew's notifier service. See package server.
package main

import (
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/entrypoint"
	"github.com/groundcrew/groundcrew/services/notifier/server"
)

func main() {
	entrypoint.Main("notifier", func(c *server.Config) *config.Common { return &c.Common }, server.Run)
}
