// Command search is groundcrew's search service. See package server.
package main

import (
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/entrypoint"
	"github.com/groundcrew/groundcrew/services/search/server"
)

func main() {
	entrypoint.Main("search",
		"groundcrew's search service: web and local search (SearxNG, Exa, Tavily, Brave, or the embedded local index) with normalised, de-duplicated results, over gRPC",
		func(c *server.Config) *config.Common { return &c.Common }, server.Run)
}
