// Command grounding is groundcrew's grounding service. See package server.
package main

import (
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/entrypoint"
	"github.com/groundcrew/groundcrew/services/grounding/server"
)

func main() {
	entrypoint.Main("grounding", func(c *server.Config) *config.Common { return &c.Common }, server.Run)
}
