// Package remoteembed embeds rag chunks with a remote model instead of the
// local hashing embedder: Gemini (gemini-embedding-001 through
// google.golang.org/genai) or any OpenAI-compatible /embeddings endpoint
// (OpenAI, Ollama, vLLM, TEI…). Both implement rag.Embedder.
//
// Vectors are L2-normalised here whatever the provider returns: the
// store's similarity is a dot product of unit vectors, and Gemini's
// truncated (OutputDimensionality below 3072) vectors are not unit length.
// Texts are sent in batches (100 for Gemini, the batchEmbedContents limit;
// 64 for OpenAI-compatible servers, which small self-hosted ones handle),
// and failed requests are retried by the provider's client.
//
// The API key travels with every request, so redirects are followed only
// within the base URL's origin (httpretry.SameOrigin), and every error
// is scrubbed of the key (platform/redact) before it leaves the package:
// a provider or proxy may echo the request's headers or URL.
package remoteembed

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"google.golang.org/genai"

	"github.com/groundcrew/groundcrew/platform/httpretry"
	"github.com/groundcrew/groundcrew/platform/redact"
	"github.com/groundcrew/groundcrew/services/rag/internal/providerhttp"
)

// Defaults.
const (
	DefaultGeminiModel      = "gemini-embedding-001"
	DefaultGeminiDimensions = 768
	DefaultOpenAIModel      = "text-embedding-3-small"
	DefaultMaxRetries       = 3
	DefaultTimeout          = 60 * time.Second

	geminiBatch = 100
	openAIBatch = 64
)

// Config configures a remote embedder; zero fields take defaults.
type Config struct {
	// APIKey authenticates; required for Gemini, optional for
	// self-hosted OpenAI-compatible servers.
	APIKey string
	// BaseURL is the API root: for Gemini the host
	// (https://generativelanguage.googleapis.com/ by default), for OpenAI
	// the root before /embeddings (e.g. http://localhost:11434/v1).
	BaseURL string
	// Model is the embedding model.
	Model string
	// Dimensions is the vector size. Gemini: sent as
	// OutputDimensionality (default 768). OpenAI-compatible: sent as
	// dimensions when set; when zero, learnt by embedding one probe text
	// at construction, since many servers reject the parameter.
	Dimensions int
	// MaxRetries is the number of retries after a failed attempt
	// (429, 5xx, connection errors); negative disables them.
	MaxRetries int
	// Timeout bounds each attempt.
	Timeout time.Duration
	// HTTPClient sends the requests; default http.DefaultClient. Its
	// redirects are followed only within the base URL's origin.
	HTTPClient *http.Client
}

func (c Config) retries() int {
	if c.MaxRetries < 0 {
		return 0
	}
	return cmp.Or(c.MaxRetries, DefaultMaxRetries)
}

// normalize scales v to unit length in place; a zero vector stays zero.
func normalize(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// batches calls f on consecutive slices of texts of at most n, collecting
// the vectors and checking each has dims components.
func batches(ctx context.Context, texts []string, n, dims int, f func(context.Context, []string) ([][]float32, error)) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += n {
		part := texts[start:min(start+n, len(texts))]
		vecs, err := f(ctx, part)
		if err != nil {
			return nil, fmt.Errorf("embedding texts %d..%d of %d: %w", start, start+len(part)-1, len(texts), err)
		}
		if len(vecs) != len(part) {
			return nil, fmt.Errorf("embedding texts %d..%d: %d vectors for %d texts", start, start+len(part)-1, len(vecs), len(part))
		}
		for _, v := range vecs {
			if dims > 0 && len(v) != dims {
				return nil, fmt.Errorf("embedding returned %d dimensions, want %d", len(v), dims)
			}
			out = append(out, normalize(v))
		}
	}
	return out, nil
}

// Gemini embeds with the Gemini API.
type Gemini struct {
	client *genai.Client
	model  string
	dims   int
	key    string
}

// NewGemini returns a Gemini embedder.
func NewGemini(ctx context.Context, cfg Config) (*Gemini, error) {
	if strings.TrimSpace(cfg.APIKey) == "" {
		return nil, errors.New("gemini embeddings need an API key")
	}
	attempts := int32(cfg.retries() + 1)
	// Short waits: ingest is a batch job that can retry, but a query
	// embedding holds up an answer.
	initial, maxDelay := 1.0, 10.0
	timeout := cmp.Or(cfg.Timeout, DefaultTimeout)
	client, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:     cfg.APIKey,
		Backend:    genai.BackendGeminiAPI,
		HTTPClient: httpretry.SameOrigin(cfg.HTTPClient),
		HTTPOptions: genai.HTTPOptions{
			BaseURL:      cfg.BaseURL,
			Timeout:      &timeout,
			RetryOptions: &genai.HTTPRetryOptions{Attempts: &attempts, InitialDelay: &initial, MaxDelay: &maxDelay},
		},
	})
	if err != nil {
		return nil, redact.Error(fmt.Errorf("creating the Gemini client: %w", err), cfg.APIKey)
	}
	return &Gemini{client: client, model: cmp.Or(cfg.Model, DefaultGeminiModel), dims: cmp.Or(cfg.Dimensions, DefaultGeminiDimensions), key: cfg.APIKey}, nil
}

// Name identifies the model and size; collections embedded with another
// name are refused by the store.
func (g *Gemini) Name() string { return fmt.Sprintf("gemini:%s-%d", g.model, g.dims) }

// Dimensions is the vector size.
func (g *Gemini) Dimensions() int { return g.dims }

// Embed returns one unit vector per text.
func (g *Gemini) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	dims := int32(g.dims)
	vecs, err := batches(ctx, texts, geminiBatch, g.dims, func(ctx context.Context, part []string) ([][]float32, error) {
		contents := make([]*genai.Content, len(part))
		for i, t := range part {
			contents[i] = genai.NewContentFromText(t, genai.RoleUser)
		}
		resp, err := g.client.Models.EmbedContent(ctx, g.model, contents, &genai.EmbedContentConfig{OutputDimensionality: &dims})
		if err != nil {
			return nil, fmt.Errorf("gemini %s: %w", g.model, err)
		}
		out := make([][]float32, len(resp.Embeddings))
		for i, e := range resp.Embeddings {
			out[i] = e.Values
		}
		return out, nil
	})
	return vecs, redact.Error(err, g.key)
}

// OpenAI embeds with an OpenAI-compatible /embeddings endpoint.
type OpenAI struct {
	svc      openai.EmbeddingService
	model    string
	dims     int
	sendDims bool
	key      string
}

// NewOpenAI returns an OpenAI-compatible embedder. Without
// cfg.Dimensions it embeds a probe text to learn the size, so a wrong
// URL or model fails here, at start-up, rather than at the first ingest.
func NewOpenAI(ctx context.Context, cfg Config) (*OpenAI, error) {
	if cfg.BaseURL == "" {
		return nil, errors.New("openai-compatible embeddings need a base URL (e.g. http://localhost:11434/v1)")
	}
	if !strings.HasPrefix(cfg.BaseURL, "http://") && !strings.HasPrefix(cfg.BaseURL, "https://") {
		return nil, fmt.Errorf("embeddings base URL %q must be http(s)", cfg.BaseURL)
	}
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		option.WithMaxRetries(cfg.retries()),
		option.WithRequestTimeout(cmp.Or(cfg.Timeout, DefaultTimeout)),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	opts = append(opts, option.WithHTTPClient(httpretry.SameOrigin(cfg.HTTPClient)))
	e := &OpenAI{
		key: cfg.APIKey,
		// Not openai.NewClient: it would read OPENAI_* variables.
		svc:      openai.NewEmbeddingService(opts...),
		model:    cmp.Or(cfg.Model, DefaultOpenAIModel),
		dims:     cfg.Dimensions,
		sendDims: cfg.Dimensions > 0,
	}
	if e.dims == 0 {
		vecs, err := e.embed(ctx, []string{"dimension probe"})
		if err != nil {
			return nil, redact.Error(fmt.Errorf("probing the embedding size of %s at %s: %w", e.model, cfg.BaseURL, err), cfg.APIKey)
		}
		if len(vecs) != 1 || len(vecs[0]) == 0 {
			return nil, fmt.Errorf("probing the embedding size of %s: no vector returned", e.model)
		}
		e.dims = len(vecs[0])
	}
	return e, nil
}

// Name identifies the model and size.
func (e *OpenAI) Name() string { return fmt.Sprintf("openai:%s-%d", e.model, e.dims) }

// Dimensions is the vector size.
func (e *OpenAI) Dimensions() int { return e.dims }

// Embed returns one unit vector per text.
func (e *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := batches(ctx, texts, openAIBatch, e.dims, e.embed)
	return vecs, redact.Error(err, e.key)
}

func (e *OpenAI) embed(ctx context.Context, part []string) ([][]float32, error) {
	params := openai.EmbeddingNewParams{
		Model: e.model,
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: part},
		// Floats, not base64: every compatible server supports them.
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
	}
	if e.sendDims {
		params.Dimensions = openai.Int(int64(e.dims))
	}
	resp, err := e.svc.New(ctx, params)
	if err != nil {
		return nil, providerhttp.Describe(e.model+" embeddings", err, e.key)
	}
	out := make([][]float32, len(part))
	for _, d := range resp.Data {
		if d.Index < 0 || int(d.Index) >= len(part) || out[d.Index] != nil {
			return nil, fmt.Errorf("%s embeddings: unexpected index %d", e.model, d.Index)
		}
		v := make([]float32, len(d.Embedding))
		for i, x := range d.Embedding {
			v[i] = float32(x)
		}
		out[d.Index] = v
	}
	for i, v := range out {
		if v == nil {
			return nil, fmt.Errorf("%s embeddings: no vector for input %d", e.model, i)
		}
	}
	return out, nil
}
