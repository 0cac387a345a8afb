// Command grounding is groundcrew's grounding service. See package server.
package main

import (
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/entrypoint"
	"github.com/groundcrew/groundcrew/services/grounding/server"
)

func main() {
	entrypoint.Main("grounding",
		"groundcrew's grounding service: derives a query, collects evidence and writes a short cited summary stored for audit (Gemini, or the offline extractive summariser); the chat agent's replies and the research workflow with approvals, over gRPC",
		func(c *server.Config) *config.Common { return &c.Common }, server.Run)
}
