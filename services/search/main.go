// Command search is groundcrew's search service. See package server.
package main

import (
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/entrypoint"
	"github.com/groundcrew/groundcrew/services/search/server"
)

func main() {
	entrypoint.Main("search", func(c *server.Config) *config.Common { return &c.Common }, server.Run)
}
