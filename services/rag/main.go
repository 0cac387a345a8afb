// Command rag is groundcrew's rag service. See package server.
package main

import (
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/entrypoint"
	"github.com/groundcrew/groundcrew/services/rag/server"
)

func main() {
	entrypoint.Main("rag",
		"groundcrew's rag service: ingests documents into collections and answers questions about one collection with its sources (Qdrant and Groq, or the embedded index and extractive answerer), over gRPC",
		func(c *server.Config) *config.Common { return &c.Common }, server.Run)
}
