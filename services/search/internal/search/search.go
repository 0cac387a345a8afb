// Package search is the domain of the search service: the query and result
// types, the Engine interface every backend implements, URL
// canonicalisation, and the Service that validates a query, picks engines
// (with fallback), cleans, filters and de-duplicates results, and caches
// them. It imports no gRPC and no generated code; the gRPC adapter maps its
// types and errors at the boundary.
package search

import (
	"context"
	"time"
	"unicode/utf8"
)

// Engine names. EngineAuto is not an engine: it asks the Service to try the
// configured engines in its auto order.
const (
	EngineAuto    = "auto"
	EngineLocal   = "local"
	EngineSearxng = "searxng"
	EngineExa     = "exa"
	EngineTavily  = "tavily"
	EngineBrave   = "brave"
)

// DefaultAutoOrder is the order in which engine "auto" tries the configured
// engines, moving to the next on error or timeout.
//
// Web answers are what auto is for (grounding alerts and LLM output in the
// current web), so the web engines come first and the local index, which
// only knows what someone indexed, is the last resort that still answers
// when every web engine is down or unconfigured. Among the web engines:
// SearXNG first because it is self-hosted, so it costs nothing per call and
// has no vendor quota to burn on alert storms; then Exa and Tavily, whose
// results carry query-relevant passages (highlights, content) that make
// better evidence snippets; Brave last because its descriptions are short
// and its free plan is limited to one request per second.
var DefaultAutoOrder = []string{EngineSearxng, EngineExa, EngineTavily, EngineBrave, EngineLocal}

// KnownEngines lists the engines this service can run.
var KnownEngines = []string{EngineSearxng, EngineExa, EngineTavily, EngineBrave, EngineLocal}

// EnvVar returns the environment variable that configures the named engine,
// or "" for an unknown engine. The local engine is always available; its
// index lives under DATA_DIR.
func EnvVar(engine string) string {
	switch engine {
	case EngineSearxng:
		return "SEARXNG_URL"
	case EngineExa:
		return "EXA_API_KEY"
	case EngineTavily:
		return "TAVILY_API_KEY"
	case EngineBrave:
		return "BRAVE_API_KEY"
	case EngineLocal:
		return "DATA_DIR"
	}
	return ""
}

// Limits on queries and index requests.
const (
	// MaxQueryChars is the longest query accepted, in characters (runes).
	MaxQueryChars = 1000
	// MaxResultsLimit is the largest MaxResults accepted.
	MaxResultsLimit = 10
	// MaxFetch is the most results asked of an engine in one call.
	MaxFetch = 20
	// MaxDocumentsPerCall bounds one IndexDocuments call.
	MaxDocumentsPerCall = 1000
	// MaxSnippetChars and MaxTitleChars bound returned text, in runes.
	// Snippets are long enough to serve as evidence (grounding puts up to
	// 1000 characters of each source in its prompt at the default context
	// scale); engines that return shorter snippets are unaffected.
	MaxSnippetChars = 1000
	MaxTitleChars   = 300
)

// Query is one search request.
type Query struct {
	// Text is what to search for: 1..MaxQueryChars characters, not blank.
	Text string
	// MaxResults is how many results are wanted, 0..MaxResultsLimit. Zero
	// means none: the Service answers without calling any engine. Engines
	// receive the number of results to fetch, which may exceed the number
	// returned so that filtering and de-duplication still leave enough.
	MaxResults int
	// Engine is "auto" (or empty) or one engine name.
	Engine string
	// AllowedDomains, when not empty, keeps only results from these domains
	// or their subdomains. BlockedDomains removes results from these domains
	// or their subdomains, and wins over AllowedDomains.
	AllowedDomains []string
	BlockedDomains []string
	// MaxAge, when positive, asks for results published within this long.
	// Engines that support a recency filter apply it; afterwards results
	// with a known publication date older than that are removed. Results
	// with no known date are kept.
	MaxAge time.Duration
	// ExcludeCollections leaves out local documents indexed in these
	// collections (their metadata MetaCollection); web engines ignore it.
	ExcludeCollections []string
	// IncludeText asks local engines for each result's whole document in
	// Result.Text; web engines ignore it.
	IncludeText bool
}

// Result is one search hit as returned to callers. Every returned result has
// a non-empty Title and Snippet, an http or https URL and the SourceDomain
// of that URL.
type Result struct {
	Title   string
	Snippet string
	// URL is the result's address with tracking parameters, fragment and
	// default port removed (see CleanURL).
	URL string
	// SourceDomain is the lower-case host without "www.".
	SourceDomain string
	// Score is the engine's relevance score; scales differ between engines,
	// only the order within one response is meaningful.
	Score float64
	// PublishedAt is when the page was published, zero when unknown.
	PublishedAt time.Time
	// DisplayURL is URL as people read it (Unicode host, non-ASCII
	// characters decoded); the Service fills it in.
	DisplayURL string
	// MimeType is the page's media type ("text/html", "application/pdf")
	// and FaviconURL its site's icon, when the engine or the indexed
	// document provides them; empty otherwise.
	MimeType   string
	FaviconURL string
	// Provenance says who indexed a local result; nil for web results.
	Provenance *Provenance
	// Text is a local result's whole document, at most MaxTextChars
	// characters, when the query asked for it (Query.IncludeText).
	Text string
}

// MaxTextChars bounds Result.Text.
const MaxTextChars = 20000

// TruncateText cuts a document's text to MaxTextChars characters.
func TruncateText(s string) string {
	if utf8.RuneCountInString(s) <= MaxTextChars {
		return s
	}
	return string([]rune(s)[:MaxTextChars])
}

// Provenance records who put a document in the local index.
type Provenance struct {
	// IndexedBy is the caller that indexed this version (the API key's
	// name from the REST edge), empty when the call named none.
	IndexedBy string
	IndexedAt time.Time
	// Revision is 1 for the first version under a URL, one more with each
	// replacement.
	Revision int
	// PreviousIndexedBy and PreviousIndexedAt are who indexed the version
	// this one replaced, and when; empty for revision 1.
	PreviousIndexedBy string
	PreviousIndexedAt time.Time
}

// Response is the answer to one Query.
type Response struct {
	Results []Result
	// Engine is the engine that answered; empty when none was called
	// (MaxResults 0).
	Engine string
	// Dropped counts results removed because they were invalid (no title or
	// snippet, or not an http/https URL). Filtered counts valid results
	// removed by the domain or recency filters, and Duplicates those removed
	// as duplicates by canonical URL.
	Dropped    int
	Filtered   int
	Duplicates int
	// Cached reports that the response came from the result cache.
	Cached bool
	// FallbackFrom lists the engines that failed, in order, before Engine
	// answered.
	FallbackFrom []string
}

// Engine is a search backend. Implementations must return promptly when ctx
// is done, and may return results that the Service will still validate,
// filter and trim.
type Engine interface {
	// Name is the engine's name as used in Query.Engine, e.g. "exa".
	Name() string
	// Search runs q. q.Text is already validated and whitespace-collapsed,
	// q.AllowedDomains and q.BlockedDomains are normalised (see
	// NormalizeDomain), and q.MaxResults is the number to fetch (1..MaxFetch).
	Search(ctx context.Context, q Query) ([]Result, error)
}

// HealthChecker is implemented by engines that can check their backend
// cheaply. Engines without it are judged by the outcome of their last call.
type HealthChecker interface {
	Healthy(ctx context.Context) error
}

// Document is a page to add to the local index.
type Document struct {
	// URL identifies the document: re-indexing the same canonical URL
	// replaces it. Must be http or https; IRIs are welcome and one
	// document with their percent-encoded form.
	URL string
	// Title is optional when HTML carries a <title> or the text has a first
	// line to use.
	Title string
	// Text is the document's plain text; HTML is used instead when Text is
	// empty, its readable text extracted.
	Text string
	HTML string
	// Metadata is stored with the document. The keys MetaMimeType (or
	// "content_type") and MetaFaviconURL (or "favicon") fill the results'
	// MimeType and FaviconURL.
	Metadata map[string]string
	// PublishedAt, if set, is the publication date used by recency filters.
	PublishedAt time.Time
	// IndexedBy is who is indexing it, recorded with it: the server sets
	// it from the caller's identity, never from the request body.
	IndexedBy string
}

// Metadata keys the local index reads the media type, icon and collection
// from.
const (
	MetaMimeType = "mime_type"
	// MetaCollection names the collection a local document was indexed in
	// (Query.ExcludeCollections); e.g. "groundcrew" for groundcrew's own
	// runbooks.
	MetaCollection = "collection"
	MetaFaviconURL = "favicon_url"
)

// IndexResult counts the outcome of an IndexDocuments call.
type IndexResult struct {
	// Indexed is the number of documents written. Replaced is how many of
	// them replaced a document with the same canonical URL (already in the
	// index or earlier in the same call).
	Indexed  int
	Replaced int
	// Rejected lists documents that were not indexed, and why.
	Rejected []Rejection
	// Replacements lists the documents that replaced an indexed version
	// (Replaced of them), with the new version's provenance.
	Replacements []Replacement
}

// Replacement is one document of an IndexDocuments call that replaced an
// indexed version.
type Replacement struct {
	// Index is the document's position in the request; URL its canonical
	// form.
	Index int
	URL   string
	// Provenance is the new version's, naming the replaced version's
	// indexer.
	Provenance Provenance
}

// Rejection explains why one document of an IndexDocuments call was not
// indexed.
type Rejection struct {
	// Index is the document's position in the request.
	Index  int
	URL    string
	Reason string
}

// DocumentIndexer stores documents for the local engine.
type DocumentIndexer interface {
	Upsert(ctx context.Context, docs []Document) (IndexResult, error)
}

// SharedIndex is implemented by local indexes that other instances write
// to as well (PostgreSQL): the Service does not cache their answers, so a
// document indexed through any instance is found through every one at
// once.
type SharedIndex interface {
	Shared() bool
}

// EngineStatus describes one engine for ListEngines.
type EngineStatus struct {
	Name string
	// Configured reports whether the engine can be used; when false, EnvVar
	// names the variable to set.
	Configured bool
	EnvVar     string
	// Healthy is the result of the engine's health check, or for engines
	// without one, whether its last call succeeded (true before any call).
	Healthy bool
	// Detail explains an unconfigured or unhealthy engine.
	Detail string
	// AutoRank is the engine's 1-based position in the auto order among the
	// configured engines, 0 when auto does not use it.
	AutoRank int
}

// MaxDocumentLookups bounds the URLs of one Documents call.
const MaxDocumentLookups = 10

// DocumentReader is implemented by local indexes that look documents up
// by key.
type DocumentReader interface {
	// Documents returns the indexed documents among ids (canonical URLs)
	// that are in none of the excluded collections, in any order: each
	// with its whole text (at most MaxTextChars) in Text, its beginning as
	// Snippet, and its provenance.
	Documents(ctx context.Context, ids, excludeCollections []string) ([]Result, error)
}
