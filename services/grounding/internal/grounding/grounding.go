// Package grounding is the grounding service's domain: it derives search
// queries from alert text, collects evidence, has a model (or, without one,
// an extractive summariser) write a short cited answer, checks every
// citation against the evidence and stores the result for audit. It also
// builds the chat agent's prompts. It imports no gRPC and no generated code;
// package groundinggrpc adapts it to the API.
//
// # A grounding round
//
// [Service.Ground] runs one round under [RoundConfig]:
//
//   - Search: EnableSearch unset means true; MaxResults unset means 5 and 0
//     means no search. With search off the answer is written from the text
//     alone and carries no citations and no confidence.
//   - Engine: Native uses the model's own web search (Gemini's Google Search
//     tool); Exa and Local ask the search service for that engine; Auto
//     asks the search service (its local index and configured web engines)
//     with the round's query, and only when that finds nothing (or fails)
//     and a model with its own search is configured, grounds with Native.
//     Native without a model falls back to Auto. Native sources are
//     redirect links titled with a bare domain: with Pages configured they
//     are resolved to their destination, titled with the page's own title,
//     and their snippets taken from the page (none when it cannot be read),
//     never from the model's sentence; a source whose link cannot be
//     resolved is left out.
//   - Pages: with Pages configured, the page of every cited source is
//     fetched (public http(s) addresses only, bounded) and its HTML kept,
//     redacted, as the citation's restricted raw_html artifact.
//   - Evidence: the search service's results in rank order, of which the
//     first MaxSources (request max_sources, else GROUNDING_MAX_SOURCES) are
//     kept and numbered [1]..[n]; only those can be cited.
//   - ContextScale sets how much evidence text goes into the prompt (see
//     [ContextScale.Budget]): Low 300 characters per source and 1,200 in
//     all, Medium 1,000 and 4,000, High 4,000 and 16,000.
//   - Timeout bounds the whole round (search, generation, retries); unset
//     means the service default. The message is stored even when the round
//     runs out of time, as FAILED.
//   - BudgetTokens caps prompt plus response at about 4 characters per
//     token: a quarter of the budget (at most 1,024 tokens) is reserved for
//     the response and sent as the model's output limit; the evidence is
//     trimmed so that instructions, input text and evidence fit the rest.
//
// # The message
//
// The summary is at most 250 characters and 3 sentences, enforced after
// generation with extractive.TrimSummary. Citation offsets are character
// (code point) offsets into Message.Text. A citation the model invents (a
// source number or grounding chunk that was not in the evidence) is
// dropped, and the message is marked NeedsReview. Status is Processed when
// everything checks out, NeedsReview when there was no evidence, a
// citation was dropped or the confidence is below [LowConfidence], and
// Failed when the model provider failed after its retries: then Error holds
// a text that is safe to show to clients.
//
// # Confidence
//
// Confidence is in [0,1] or absent. Offline it is the extractive
// summariser's score (see extractive.Result.Confidence). With a model it is
//
//	0.5 × coverage + 0.5 × mean(citation confidence scores)
//
// where coverage is the share of the answer's characters (citation markers
// and spaces not counted) that lie inside a cited span. A citation's score
// is the provider's confidence for it when the provider gives one (recent
// Gemini models return none); otherwise the lexical support of its span by
// the source: the share of the span's distinct words found in the source's
// title and snippet; and for native grounding chunks, which carry no text,
// the coverage itself. Confidence is absent when search was off or the
// round failed.
package grounding

import (
	"errors"
	"time"
)

// Engine is where a round's evidence comes from.
type Engine int

// Engines.
const (
	// EngineAuto is the search service's configured engines, and the
	// model's own search when they find nothing.
	EngineAuto Engine = iota
	// EngineNative is the model provider's own web search.
	EngineNative
	// EngineExa is Exa, through the search service.
	EngineExa
	// EngineLocal is the search service's local index.
	EngineLocal
)

// String returns the engine's lower-case name, as stored.
func (e Engine) String() string {
	switch e {
	case EngineNative:
		return "native"
	case EngineExa:
		return "exa"
	case EngineLocal:
		return "local"
	default:
		return "auto"
	}
}

// ParseEngine is the inverse of Engine.String; unknown names are EngineAuto.
func ParseEngine(s string) Engine {
	switch s {
	case "native":
		return EngineNative
	case "exa":
		return EngineExa
	case "local":
		return EngineLocal
	default:
		return EngineAuto
	}
}

// ContextScale sets how much evidence text goes into the prompt.
type ContextScale int

// Context scales; the zero value is ScaleMedium.
const (
	// ScaleMedium: snippets and a short passage per source.
	ScaleMedium ContextScale = iota
	// ScaleLow: snippets only.
	ScaleLow
	// ScaleHigh: as much of each source as the budget allows.
	ScaleHigh
)

// Budget returns the evidence character budget of the scale: per source and
// in all.
func (s ContextScale) Budget() (perSource, total int) {
	switch s {
	case ScaleLow:
		return 300, 1200
	case ScaleHigh:
		return 4000, 16000
	default:
		return 1000, 4000
	}
}

// Status is where a message stands.
type Status int

// Statuses.
const (
	// StatusUnspecified is no status (a filter that matches any).
	StatusUnspecified Status = iota
	// StatusProcessed: generated and every citation checked.
	StatusProcessed
	// StatusNeedsReview: generated, but a person should look (no evidence,
	// a dropped citation, low confidence).
	StatusNeedsReview
	// StatusFailed: generation failed; Message.Error says why.
	StatusFailed
	// StatusApproved: a reviewer accepted it.
	StatusApproved
	// StatusRejected: a reviewer rejected it.
	StatusRejected
)

var statusNames = [...]string{"unspecified", "processed", "needs_review", "failed", "approved", "rejected"}

// String returns the status's lower-case name, as stored.
func (s Status) String() string {
	if s < 0 || int(s) >= len(statusNames) {
		return statusNames[0]
	}
	return statusNames[s]
}

// ParseStatus is the inverse of Status.String; unknown names are
// StatusUnspecified.
func ParseStatus(name string) Status {
	for i, n := range statusNames {
		if n == name {
			return Status(i)
		}
	}
	return StatusUnspecified
}

// RoundConfig tunes one grounding round; the zero value is the default
// round. See the package documentation for the semantics.
type RoundConfig struct {
	// ID identifies the round on a message's effective configuration; it
	// is ignored in requests.
	ID string
	// EnableSearch: nil means true.
	EnableSearch *bool
	Engine       Engine
	// MaxResults: nil means DefaultMaxResults, 0 means no search.
	MaxResults   *int
	ContextScale ContextScale
	// Timeout bounds the round; 0 means the service default.
	Timeout time.Duration
	// BudgetTokens caps prompt plus response; 0 means no cap.
	BudgetTokens int
}

// GroundRequest asks for a grounded answer about Text.
type GroundRequest struct {
	// Text is the alert or question.
	Text  string
	Round RoundConfig
	// MaxSources caps the evidence kept; 0 means the service default.
	MaxSources int
	// Query is the search query; derived from Text when empty.
	Query string
	// CreatedBy names who asked, for audit (the caller's own note).
	CreatedBy string
	// RequestID is the caller's request id; one is generated when empty.
	RequestID string
	// Actor is the authenticated caller (or the service), recorded on the
	// citations.
	Actor string
	// EvidenceURLs are the text's own links, most telling first (an
	// alert's runbook_url, then its dashboards). Those that are documents
	// in the search service's local index are the round's first evidence,
	// whatever their relevance score (see DocumentFinder); the others are
	// not fetched.
	EvidenceURLs []string
}

// Effective returns rc with every default applied: EnableSearch and
// MaxResults set, Timeout the given default when unset. ID is kept.
func (rc RoundConfig) Effective(defaultTimeout time.Duration) RoundConfig {
	out := rc
	search := rc.EnableSearch == nil || *rc.EnableSearch
	out.EnableSearch = &search
	n := DefaultMaxResults
	if rc.MaxResults != nil {
		n = max(*rc.MaxResults, 0)
	}
	out.MaxResults = &n
	if out.Timeout <= 0 {
		out.Timeout = defaultTimeout
	}
	out.BudgetTokens = max(out.BudgetTokens, 0)
	return out
}

// Message is a grounded answer with its citations, as stored.
type Message struct {
	ID      string
	Text    string
	Summary string
	// Confidence is in [0,1], or nil when nothing can be said.
	Confidence *float64
	Citations  []Citation
	Status     Status
	Context    GroundedContext
	InputText  string
	// ArtifactPath is the raw provider response file; empty once retention
	// removed it.
	ArtifactPath string
	// Model is the model or method that wrote the message.
	Model  string
	Engine Engine
	// Error says why generation failed or needs review; safe for clients.
	Error      string
	CreatedBy  string
	CreateTime time.Time
	// Review is the last review, if any.
	Review *Review
	// Reviews is every review, newest first (Reviews[0] is Review).
	Reviews []Review
	// Round is the round's effective configuration (see
	// RoundConfig.Effective); Round.ID identifies the round.
	Round RoundConfig
	// RequestID is the caller's request id or a generated one.
	RequestID string
	// Parsed is what the parser derived from the raw response (markers
	// found, markers dropped, method): JSON-like values only.
	Parsed map[string]any
	// ArtifactArchived: retention archived the artifact; ArtifactPath
	// names the archived form.
	ArtifactArchived bool
	// Purged: message retention removed the bodies (text, summary, input
	// text, evidence, snippets); metadata is kept.
	Purged bool
}

// Citation ties a span of Message.Text to a source.
type Citation struct {
	URL    string
	Domain string
	Title  string
	// Snippet is the supporting passage, at most MaxSnippetChars.
	Snippet          string
	SnippetTruncated bool
	// StartIndex and EndIndex are the half-open character (code point)
	// span in Message.Text.
	StartIndex, EndIndex int
	ConfidenceScore      float64
	FetchTime            time.Time
	MimeType             string
	FaviconURL           string
	// SourceIndex is the 1-based position of the source in the evidence.
	SourceIndex int
	// ID is assigned when the citation is stored.
	ID string
	// CreateTime is when it was stored; CreatedBy the actor who caused it.
	CreateTime time.Time
	CreatedBy  string
	// RawHTML is the source page's HTML when the page was fetched for
	// evidence; it is written (redacted) as a restricted artifact and
	// never read back into a message. HasRawHTML says one is kept.
	RawHTML    string
	HasRawHTML bool
}

// RawHTML is a citation's stored page HTML.
type RawHTML struct {
	HTML      string
	URL       string
	FetchTime time.Time
	// Archived: HTML is the archived (desensitised) form.
	Archived bool
}

// GroundedContext is the evidence a message was built from.
type GroundedContext struct {
	Query     string
	Results   []SearchResult
	Timestamp time.Time
}

// SearchResult is one piece of evidence.
type SearchResult struct {
	Title, Snippet, URL, SourceDomain string
	Score                             float64
	PublishedAt                       time.Time
	// MimeType and FaviconURL, when the search result or page gives them.
	MimeType   string `json:",omitempty"`
	FaviconURL string `json:",omitempty"`
	// HTML is the page's HTML when it was fetched for evidence; it is kept
	// only as a citation's restricted raw_html artifact.
	HTML string `json:"-"`
	// Text is a local result's whole document, when the search service
	// returned it: the summary and the relevance judgement read it rather
	// than the passage. It is not stored (the URL names the document).
	Text string `json:"-"`
}

// Review is a person's decision on a message.
type Review struct {
	ReviewerID     string
	Notes          string
	ReviewTime     time.Time
	PreviousStatus Status
	NewStatus      Status
	// Actor is the authenticated caller who recorded the review.
	Actor string
}

// Limits and defaults.
const (
	// DefaultMaxResults is how many search results a round asks for.
	DefaultMaxResults = 5
	// DefaultMaxSources is how many sources a round keeps.
	DefaultMaxSources = 3
	// DefaultRoundTimeout bounds a round when neither the request nor the
	// service says otherwise.
	DefaultRoundTimeout = 30 * time.Second
	// DefaultQueryTimeout bounds the model's query derivation before the
	// offline keywords are used instead.
	DefaultQueryTimeout = 5 * time.Second
	// MaxSnippetChars caps a stored citation snippet.
	MaxSnippetChars = 1024
	// SummaryMaxChars and SummaryMaxSentences bound Message.Summary.
	SummaryMaxChars     = 250
	SummaryMaxSentences = 3
	// LowConfidence: a message below it needs review.
	LowConfidence = 0.35
	// DefaultHistorySize caps the chat history sent to the model.
	DefaultHistorySize = 500
)

// Domain errors; the gRPC adapter maps them to codes.
var (
	// ErrNotFound: no message with that id.
	ErrNotFound = errors.New("not found")
	// ErrInvalidTransition: the review's status change is not allowed.
	ErrInvalidTransition = errors.New("invalid status transition")
	// ErrInvalidPageToken: the page token is malformed or belongs to
	// another query.
	ErrInvalidPageToken = errors.New("invalid page token")
	// ErrConflict: the message changed while it was being reviewed.
	ErrConflict = errors.New("concurrent update")
	// ErrTargetNotFound: the Converse target is not in the history.
	ErrTargetNotFound = errors.New("target message not in history")
	// ErrNoRawHTML: the citation keeps no page HTML.
	ErrNoRawHTML = errors.New("no raw HTML kept for the citation")
	// ErrTargetIsAgent: the Converse target is the agent's own message.
	ErrTargetIsAgent = errors.New("target message is the agent's own")
)
