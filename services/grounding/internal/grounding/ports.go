package grounding

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Searcher collects evidence (the search service).
type Searcher interface {
	Search(ctx context.Context, req SearchRequest) (SearchResponse, error)
}

// SearchRequest is one evidence search.
type SearchRequest struct {
	Query      string
	MaxResults int
	// Engine is EngineAuto, EngineExa or EngineLocal.
	Engine Engine
	// ExcludeCollections leaves out local documents of these collections
	// (groundcrew's own runbooks, for alerts that are not groundcrew's).
	ExcludeCollections []string
	// IncludeText asks for local results' whole documents
	// (SearchResult.Text).
	IncludeText bool
}

// DocumentFinder is implemented by Searchers that can look documents of
// the search service's local index up by URL. A Service whose Searcher
// implements it starts a round from the indexed documents among
// GroundRequest.EvidenceURLs (the team's own runbook); without it those
// URLs are ignored.
type DocumentFinder interface {
	// Documents returns the indexed documents among urls, in their order,
	// with their whole text, leaving out those of the excluded
	// collections; URLs not in the index are left out, not fetched.
	Documents(ctx context.Context, urls, excludeCollections []string) ([]SearchResult, error)
}

// SearchResponse holds ranked results and the engine that answered
// (EngineAuto when it was neither Exa nor the local index).
type SearchResponse struct {
	Results []SearchResult
	Engine  Engine
}

// Model is a language model provider (Gemini).
type Model interface {
	// Name is the model's name, recorded on messages.
	Name() string
	// Generate runs one prompt. An error means the provider failed after
	// its own retries; a *ProviderError says how.
	Generate(ctx context.Context, p Prompt) (*Generation, error)
	// DeriveQuery asks the model for a web-search query for alert text.
	DeriveQuery(ctx context.Context, text string) (DerivedQuery, error)
}

// Role is who said a turn of a prompt.
type Role string

// Roles: the model's own messages are RoleModel, everyone else's RoleUser.
const (
	// RoleUser is everyone but the model.
	RoleUser Role = "user"
	// RoleModel is the model (the agent) itself.
	RoleModel Role = "model"
)

// Prompt is a provider-neutral model request.
type Prompt struct {
	// System is the system instruction.
	System string
	// Turns alternate between RoleUser and RoleModel, starting with
	// RoleUser.
	Turns []Turn
	// WebSearch enables the provider's own web search tool.
	WebSearch bool
	// MaxOutputTokens caps the response; 0 means the model's default.
	MaxOutputTokens int
	// Temperature, when set, overrides the model's default.
	Temperature *float64
}

// Turn is one content of a prompt: ordered text parts.
type Turn struct {
	Role  Role
	Parts []string
}

// Generation is a model's answer.
type Generation struct {
	// Text is the answer text (thought parts excluded).
	Text string
	// Chunks are the web sources of native grounding, in the provider's
	// order.
	Chunks []WebChunk
	// Supports tie spans of Text to Chunks.
	Supports []Support
	// SearchQueries are the queries the provider's search ran.
	SearchQueries []string
	// Raw is the provider's response body, for the audit artifact.
	Raw []byte
	// PromptTokens and OutputTokens are the provider's usage counts.
	PromptTokens, OutputTokens int
	// FinishReason is why the provider stopped, e.g. "STOP" or
	// FinishMaxTokens (the text is cut short).
	FinishReason string
}

// FinishMaxTokens is the finish reason of an answer cut at the output
// limit.
const FinishMaxTokens = "MAX_TOKENS"

// WebChunk is a web source of native grounding.
type WebChunk struct {
	URI, Title string
}

// Support says that a span of Generation.Text is supported by chunks.
type Support struct {
	// Start and End are the half-open character span in Generation.Text.
	Start, End int
	// Text is the span's text as the provider reported it.
	Text string
	// Chunks are indexes into Generation.Chunks (possibly out of range when
	// the provider errs).
	Chunks []int
	// Scores, when not empty, has one confidence per chunk.
	Scores []float64
}

// DerivedQuery is a web-search query derived from text.
type DerivedQuery struct {
	Query string
	Terms []string
	// Method is "gemini" or "keywords".
	Method string
}

// ProviderError is a model provider's failure after retries. Its Error
// text is safe to show to clients: it holds the HTTP code and status
// name, never the provider's message.
type ProviderError struct {
	// Code is the HTTP status (0 for a transport failure or a timeout).
	Code int
	// Status is the provider's status name, e.g. RESOURCE_EXHAUSTED.
	Status string
	// Attempts is how many requests were made.
	Attempts int
	// Raw is the provider's last error body, for the audit artifact.
	Raw []byte
	// Err is the underlying error, for logs.
	Err error
}

// Error implements error.
func (e *ProviderError) Error() string {
	what := "unreachable"
	switch {
	case errors.Is(e.Err, context.DeadlineExceeded):
		what = "timed out"
	case e.Code != 0 && e.Status != "":
		what = fmt.Sprintf("answered %d %s", e.Code, e.Status)
	case e.Code != 0:
		what = fmt.Sprintf("answered %d", e.Code)
	case e.Err != nil && errors.Is(e.Err, ErrNoAnswer):
		what = "returned no answer"
	}
	return fmt.Sprintf("model provider %s after %d attempt(s)", what, max(e.Attempts, 1))
}

// Unwrap returns the underlying error.
func (e *ProviderError) Unwrap() error { return e.Err }

// ErrNoAnswer: the model returned no usable text (blocked or empty).
var ErrNoAnswer = errors.New("model returned no answer")

// Store persists messages and their raw provider artifacts.
type Store interface {
	// Create stores m (its ID and CreateTime already set) with its
	// citations, writing raw (when not nil) as the artifact and setting
	// m.ArtifactPath.
	Create(ctx context.Context, m *Message, raw []byte) error
	// Get returns the message with its citations and last review, or
	// ErrNotFound.
	Get(ctx context.Context, id string) (*Message, error)
	// List returns one page, newest first, and the next page token.
	List(ctx context.Context, f ListFilter) ([]*Message, string, error)
	// SetReview records r and moves the message from r.PreviousStatus to
	// to; ErrConflict when its status is no longer r.PreviousStatus.
	SetReview(ctx context.Context, id string, to Status, r Review) error
	// RawHTML reads a citation's kept page HTML: ErrNotFound when the
	// message or citation does not exist, ErrNoRawHTML when none is kept.
	RawHTML(ctx context.Context, messageID, citationID string) (*RawHTML, error)
}

// ListFilter selects and pages messages.
type ListFilter struct {
	// PageSize is 1..100.
	PageSize  int
	PageToken string
	// Status filters when not StatusUnspecified.
	Status Status
	// Domain keeps messages citing this domain.
	Domain string
	// CreatedAfter (inclusive) and CreatedBefore (exclusive) filter when
	// not zero.
	CreatedAfter, CreatedBefore time.Time
}

// Pages reads the web pages grounding cites (package pagefetch): only
// public http(s) addresses, bounded in time and size.
type Pages interface {
	// Resolve returns the address a model provider's redirect link stands
	// for, without requesting it; any other link is returned as it is.
	Resolve(ctx context.Context, link string) (string, error)
	// Fetch reads the page at u; nil without an error when page fetching
	// is off.
	Fetch(ctx context.Context, u string) (*Page, error)
}

// Page is a fetched web page.
type Page struct {
	// URL is where the page was read, after redirects.
	URL string
	// MimeType is the page's media type.
	MimeType string
	// Title is the page's own title ("" when it has none).
	Title string
	// Text is the page's visible text, one block per line.
	Text string
	// HTML is the page's HTML as read ("" when it is not HTML).
	HTML string
	// Truncated: the page was longer than the fetcher reads, and HTML and
	// Text are its beginning.
	Truncated bool
}
