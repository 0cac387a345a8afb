package server

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"

	"github.com/groundcrew/groundcrew/services/rag/internal/answer"
	"github.com/groundcrew/groundcrew/services/rag/internal/embedder"
	"github.com/groundcrew/groundcrew/services/rag/internal/groq"
	"github.com/groundcrew/groundcrew/services/rag/internal/library"
	"github.com/groundcrew/groundcrew/services/rag/internal/qdrantstore"
	"github.com/groundcrew/groundcrew/services/rag/internal/rag"
	"github.com/groundcrew/groundcrew/services/rag/internal/remoteembed"
	"github.com/groundcrew/groundcrew/services/rag/internal/vectorindex"
)

// store is what the service needs of a document store; the embedded
// vectorindex and the Qdrant adapter both provide it.
type store interface {
	library.Store
	Close() error
}

// Both stores count terms, so the scope check weighs words by their
// specificity to the collection whichever is configured.
var (
	_ library.Store      = (*vectorindex.Store)(nil)
	_ library.Store      = (*qdrantstore.Store)(nil)
	_ answer.TermCounter = (*vectorindex.Store)(nil)
	_ answer.TermCounter = (*qdrantstore.Store)(nil)
)

// backends are the service's dependencies, chosen from the configuration.
type backends struct {
	embedder  rag.Embedder
	store     store
	lib       *library.Library
	generator answer.Generator

	// What the start-up line names.
	storeDesc, embedderDesc, answererDesc string
}

// Provider names for the HTTP clients newBackends asks for; they label the
// provider request metrics.
const (
	providerGroq             = "groq"
	providerGeminiEmbeddings = "gemini-embeddings"
	providerOpenAIEmbeddings = "openai-embeddings"
)

// newBackends opens the store and builds the embedder and answer writer
// the configuration selects, defaulting to the offline ones. httpClient
// gives the HTTP client for one provider (nil: the provider client's
// default).
func newBackends(ctx context.Context, cfg Config, logger *slog.Logger, httpClient func(provider string) *http.Client) (*backends, error) {
	if httpClient == nil {
		httpClient = func(string) *http.Client { return nil }
	}
	b := &backends{}
	var err error
	if b.embedder, b.embedderDesc, err = newEmbedder(ctx, cfg, httpClient); err != nil {
		return nil, err
	}

	if cfg.QdrantURL != "" {
		qs, err := qdrantstore.Open(ctx, qdrantstore.Config{URL: cfg.QdrantURL, APIKey: cfg.QdrantAPIKey, Embedder: b.embedder, Limits: cfg.Limits()})
		if err != nil {
			return nil, fmt.Errorf("QDRANT_URL: %w", err)
		}
		version, err := qs.Version(ctx)
		if err != nil {
			qs.Close()
			return nil, fmt.Errorf("QDRANT_URL: checking %s: %w", cfg.QdrantURL, err)
		}
		b.store, b.storeDesc = qs, "qdrant "+version+" ("+cfg.QdrantURL+")"
	} else {
		dir := filepath.Join(cfg.DataDir, "rag")
		vs, err := vectorindex.Open(dir, b.embedder, vectorindex.Options{Limits: cfg.Limits()})
		if err != nil {
			return nil, fmt.Errorf("opening the embedded index in %s: %w", dir, err)
		}
		b.store, b.storeDesc = vs, "embedded ("+dir+")"
	}

	b.generator, b.answererDesc = &answer.Extractive{}, answer.ExtractiveModel
	if cfg.GroqAPIKey != "" {
		g, err := groq.New(groq.Config{APIKey: cfg.GroqAPIKey, Model: cfg.GroqModel, BaseURL: cfg.GroqBaseURL,
			MaxRetries: retries(cfg.GroqMaxRetries), Timeout: cfg.GroqTimeout, HTTPClient: httpClient(providerGroq)})
		if err != nil {
			b.store.Close()
			return nil, fmt.Errorf("GROQ_*: %w", err)
		}
		b.generator = g
		b.answererDesc = "groq (" + cfg.GroqModel + " at " + cfg.GroqBaseURL + ", extractive fallback)"
	}
	b.lib = library.New(b.store, library.Options{Logger: logger, MaxCollectionsPerKey: cfg.MaxCollectionsPerKey})
	return b, nil
}

// newEmbedder builds the embedder EMBEDDINGS_PROVIDER names.
func newEmbedder(ctx context.Context, cfg Config, httpClient func(provider string) *http.Client) (rag.Embedder, string, error) {
	rc := remoteembed.Config{
		APIKey:     cfg.EmbeddingsAPIKey,
		BaseURL:    cfg.EmbeddingsBaseURL,
		Model:      cfg.EmbeddingsModel,
		Dimensions: cfg.EmbeddingsDimensions,
	}
	switch cfg.EmbeddingsProvider {
	case "gemini":
		rc.APIKey = cmp.Or(rc.APIKey, cfg.GeminiAPIKey)
		rc.HTTPClient = httpClient(providerGeminiEmbeddings)
		e, err := remoteembed.NewGemini(ctx, rc)
		if err != nil {
			return nil, "", fmt.Errorf("EMBEDDINGS_PROVIDER=gemini: %w", err)
		}
		return e, "gemini (" + e.Name() + ")", nil
	case "openai":
		rc.HTTPClient = httpClient(providerOpenAIEmbeddings)
		e, err := remoteembed.NewOpenAI(ctx, rc)
		if err != nil {
			return nil, "", fmt.Errorf("EMBEDDINGS_PROVIDER=openai: %w", err)
		}
		return e, "openai-compatible (" + e.Name() + " at " + cfg.EmbeddingsBaseURL + ")", nil
	}
	e := embedder.NewHashing(0)
	return e, "local (" + e.Name() + ", lexical feature hashing)", nil
}

// retries maps a configured retry count to the clients' convention, where
// zero means their default and a negative number none.
func retries(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// close stops calibration and closes the store.
func (b *backends) close() {
	b.lib.Close()
	_ = b.store.Close()
}
