// Command gateway is groundcrew's REST edge. It dials the search, grounding,
// rag and notifier services and serves their routes as JSON over HTTP. Like
// the four services it runs through platform/entrypoint, so it shares their
// signals, exit codes and `gateway healthcheck <url>` subcommand (the
// image's HEALTHCHECK).
package main

import (
	"github.com/groundcrew/groundcrew/gateway/server"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/entrypoint"
)

func main() {
	entrypoint.Main("gateway",
		"groundcrew's REST edge: the JSON API, OpenAPI document, API docs and operator console over the search, grounding, rag and notifier services, with API keys, CORS and limits",
		func(c *server.Config) *config.Common { return &c.Common }, server.Run)
}
