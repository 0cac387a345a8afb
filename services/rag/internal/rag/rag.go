// Package rag is the rag service's vocabulary: collections ("books") of
// documents cut into chunks, the queries and hits of retrieval, the
// embedder that turns text into vectors, the errors every document store
// returns, and the product rules that do not depend on where chunks are
// stored (retrieval limits, the default out-of-scope answer, quotas). Both
// document stores (the embedded vectorindex and the Qdrant adapter) speak
// it; neither imports the other.
//
// Similarity. Every hit's [Hit.Score] is the cosine similarity of the
// query's and the chunk's embeddings, clamped to [0,1] (negative cosines,
// meaning unrelated, become 0), whatever the ranking mode. One scale for
// all modes is what makes [Query.MinScore] and the scope threshold mean the
// same thing everywhere: "the embedding says this chunk is at least this
// close". RRF scores are rank-based and BM25 scores are unbounded and
// query-dependent, so neither can carry a threshold.
package rag

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/groundcrew/groundcrew/services/rag/internal/chunker"
)

// Embedder turns texts into unit-length vectors of a fixed dimension.
type Embedder interface {
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Dimensions is the length of every vector.
	Dimensions() int
	// Name identifies the model; vectors of different models are never
	// mixed in one collection.
	Name() string
}

// EmbedChunks embeds the texts of chunks and holds the embedder to its
// contract, one vector per text, so that no store pairs a chunk with
// another chunk's vector.
func EmbedChunks(ctx context.Context, e Embedder, texts []string) ([][]float32, error) {
	vecs, err := e.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embedding %d chunks: %w", len(texts), err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(texts))
	}
	return vecs, nil
}

// Errors returned by the document stores; test with errors.Is.
var (
	// ErrNotFound means the collection does not exist.
	ErrNotFound = errors.New("collection not found")
	// ErrInvalidName means a collection name is empty, too long or uses
	// characters other than letters, digits, '.', '_' and '-'.
	ErrInvalidName = errors.New("invalid collection name")
	// ErrInvalidArgument means a query or document is malformed.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrEmbedderMismatch means the collection was built with another
	// embedding model than the store's; re-ingest it or drop it.
	ErrEmbedderMismatch = errors.New("collection was embedded with a different model")
	// ErrClosed means the store has been closed.
	ErrClosed = errors.New("store closed")
	// ErrQuota means a write would exceed one of the [Limits]; the error
	// is a [*QuotaError] saying which.
	ErrQuota = errors.New("quota exceeded")
)

// Retrieval limits: a query returns 1 to 50 chunks, 5 unless asked.
const (
	DefaultTopK = 5
	MaxTopK     = 50
)

// DefaultOutOfScopeAnswer is the answer for questions a collection does
// not cover, unless its settings say otherwise.
const DefaultOutOfScopeAnswer = "sorry this content is not related to this book"

// OutOfScopeAnswerOrDefault returns the answer a collection gives to questions it
// does not cover: its own, else [DefaultOutOfScopeAnswer].
func (s Settings) OutOfScopeAnswerOrDefault() string {
	if strings.TrimSpace(s.OutOfScopeAnswer) != "" {
		return s.OutOfScopeAnswer
	}
	return DefaultOutOfScopeAnswer
}

// validName is the collection name rule, the one the API's protovalidate
// rules state (pattern ^[a-z0-9][a-z0-9_-]*$, at most 63 characters) and
// every store keeps; raggrpc's tests hold the two equal.
var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// ValidName reports whether name can name a collection: 1..63 lowercase
// letters, digits, '_' or '-', starting with a letter or digit.
func ValidName(name string) bool { return validName.MatchString(name) }

// Settings describe a collection.
type Settings struct {
	// Description says what the collection is about, for people, for the
	// scope check and for answering models.
	Description string `json:"description,omitempty"`
	// OutOfScopeAnswer replaces the answer to out-of-scope questions;
	// empty means [DefaultOutOfScopeAnswer].
	OutOfScopeAnswer string `json:"out_of_scope_answer,omitempty"`
	// EmbeddingModel is the [Embedder.Name] the collection's vectors were
	// made with. The store sets it when the collection is created.
	EmbeddingModel string `json:"embedding_model,omitempty"`
	// ScopeThreshold is the similarity below which a question is out of
	// scope. Zero means use CalibratedThreshold.
	ScopeThreshold float64 `json:"scope_threshold,omitempty"`
	// CalibratedThreshold is the threshold learnt from the collection's
	// own score distribution (see package answer), and CalibratedChunks
	// the number of chunks it was learnt on.
	CalibratedThreshold float64 `json:"calibrated_threshold,omitempty"`
	CalibratedChunks    int     `json:"calibrated_chunks,omitempty"`
	// Created is when the collection was created; set by the store.
	Created time.Time `json:"created"`
	// CreatedBy names who created the collection (the caller's API key
	// name; empty when unknown), for the per-key collection quota. Set
	// at creation and kept by the store afterwards.
	CreatedBy string `json:"created_by,omitempty"`
}

// UpsertResult counts what an upsert stored.
type UpsertResult struct {
	// Documents and Chunks count what was stored.
	Documents int
	Chunks    int
	// ReplacedChunks were stored under the same URLs before and are gone.
	ReplacedChunks int
	// Replaced lists the URLs of the documents that replaced an indexed
	// one (had chunks stored before).
	Replaced []string
}

// Document is one source document, already chunked.
type Document struct {
	// URL identifies the document; ingesting a URL again replaces all of
	// its chunks.
	URL string
	// Title names the document in answers' sources; never empty once the
	// library has prepared the document.
	Title string
	// Metadata are free-form labels that queries can filter on.
	Metadata map[string]string
	// Chunks are the document's pieces, as the chunker made them.
	Chunks []chunker.Chunk
}

// Mode selects the ranking.
type Mode int

// Ranking modes.
const (
	// ModeHybrid fuses the BM25 and dense rankings with RRF.
	ModeHybrid Mode = iota
	// ModeDense ranks by embedding cosine only.
	ModeDense
	// ModeBM25 ranks by BM25 (k1 = 1.2, b = 0.75) only.
	ModeBM25
)

// String returns the mode's name as used in flags and reports.
func (m Mode) String() string {
	switch m {
	case ModeHybrid:
		return "hybrid"
	case ModeDense:
		return "dense"
	case ModeBM25:
		return "bm25"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Filter restricts a search to some documents; zero fields match all.
type Filter struct {
	// URLs keeps documents whose URL is one of these.
	URLs []string
	// URLPrefix keeps documents whose URL starts with it.
	URLPrefix string
	// Metadata keeps documents having every one of these labels.
	Metadata map[string]string
}

// IsZero reports whether f lets every document through.
func (f Filter) IsZero() bool {
	return len(f.URLs) == 0 && f.URLPrefix == "" && len(f.Metadata) == 0
}

// Query is a search request.
type Query struct {
	// Text is the query, not blank.
	Text string
	// TopK is the number of hits wanted: 0 means [DefaultTopK], at most
	// [MaxTopK].
	TopK int
	// MinScore drops hits whose Score is lower, in [0,1].
	MinScore float64
	// Mode is the ranking; the zero value is hybrid.
	Mode Mode
	// Filter restricts the documents searched.
	Filter Filter
}

// Normalize applies the query's defaults and checks its limits, for every
// store alike. Errors wrap [ErrInvalidArgument].
func (q Query) Normalize() (Query, error) {
	if strings.TrimSpace(q.Text) == "" {
		return q, fmt.Errorf("%w: empty query", ErrInvalidArgument)
	}
	if q.TopK == 0 {
		q.TopK = DefaultTopK
	}
	if q.TopK < 0 || q.TopK > MaxTopK {
		return q, fmt.Errorf("%w: top_k %d is outside 1..%d", ErrInvalidArgument, q.TopK, MaxTopK)
	}
	if q.MinScore < 0 || q.MinScore > 1 {
		return q, fmt.Errorf("%w: score threshold %v is outside [0,1]", ErrInvalidArgument, q.MinScore)
	}
	if q.Mode < ModeHybrid || q.Mode > ModeBM25 {
		return q, fmt.Errorf("%w: unknown mode %v", ErrInvalidArgument, q.Mode)
	}
	return q, nil
}

// Hit is a chunk returned by a search.
type Hit struct {
	// URL and Title are the chunk's document's.
	URL   string
	Title string
	// ChunkIndex is the chunk's position in its document, from 0.
	ChunkIndex int
	// HeadingPath lists the headings above the chunk, outermost first.
	HeadingPath []string
	// Text is the chunk's text.
	Text string
	// Metadata are the document's labels.
	Metadata map[string]string
	// Score is the similarity in [0,1]: the cosine clamped at 0 (see the
	// package comment).
	Score float64
	// Cosine is the raw embedding cosine, in [-1,1].
	Cosine float64
	// BM25 is the chunk's BM25 score for the query, 0 if no term matched.
	BM25 float64
}

// Stats summarise a collection.
type Stats struct {
	// Documents and Chunks count what a search can return.
	Documents int
	Chunks    int
	// LogBytes is the size of the collection's file on disk (embedded
	// store only).
	LogBytes int64
}

// IndexText is what BM25 and the embedder see of a chunk: its heading
// path, its deepest heading once more, then its text. A section heading
// is the most concise statement of what the chunk is about, so its words
// count twice (a field boost without a second field).
func IndexText(headings []string, text string) string {
	if len(headings) == 0 {
		return text
	}
	return strings.Join(headings, " / ") + "\n" + headings[len(headings)-1] + "\n" + text
}

// TermStats say how specific words are to a collection: how many chunks
// it has and how many of them contain each term (terms as
// embedder.Analyze makes them). The scope check weighs a question's words
// by them (inverse document frequency over the collection).
type TermStats struct {
	// Chunks counts the collection's chunks.
	Chunks int
	// DF maps each asked term to the number of chunks containing it;
	// terms the collection lacks map to 0.
	DF map[string]int
}

// maxDerivedTitle bounds a title taken from a document's first line, in
// characters.
const maxDerivedTitle = 120

// DocumentTitle returns the title a document is shown under: its own
// when it has one, else the first line of its text, else the name of its
// file (the URL's last path segment), else its host or URL. Sources never
// show an empty title.
func DocumentTitle(title, firstText, rawURL string) string {
	if t := strings.TrimSpace(title); t != "" {
		return t
	}
	for line := range strings.Lines(firstText) {
		line = strings.Join(strings.Fields(line), " ")
		line = strings.Trim(line, "#*=_`> ")
		if line == "" {
			continue
		}
		if r := []rune(line); len(r) > maxDerivedTitle {
			line = strings.TrimSpace(string(r[:maxDerivedTitle])) + "…"
		}
		return line
	}
	return TitleFromURL(rawURL)
}

// TitleFromURL names a document after its URL: the last path segment
// (the file name, decoded), else the host, else the URL itself.
func TitleFromURL(rawURL string) string {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return rawURL
	}
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	if last := segs[len(segs)-1]; last != "" {
		if dec, err := url.PathUnescape(last); err == nil {
			return dec
		}
		return last
	}
	if u.Host != "" {
		return u.Host
	}
	return rawURL
}
