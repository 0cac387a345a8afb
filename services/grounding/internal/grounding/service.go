package grounding

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
)

// Options configures a Service.
type Options struct {
	// Searcher collects evidence; required.
	Searcher Searcher
	// Model writes answers; nil selects the offline extractive method.
	Model Model
	// Pages, when set, resolves the model provider's redirect links and
	// fetches cited pages (their title, a snippet from their text and their
	// HTML, kept as the citation's raw_html); nil fetches nothing.
	Pages Pages
	// Store persists messages; required.
	Store Store
	// Logger is required.
	Logger *slog.Logger
	// Metrics, when not nil, records round latency and outcomes.
	Metrics *Metrics
	// MaxSources is the default number of sources kept (0 means
	// DefaultMaxSources).
	MaxSources int
	// RoundTimeout is the default round bound (0 means
	// DefaultRoundTimeout).
	RoundTimeout time.Duration
	// QueryTimeout bounds the model's part of DeriveQuery, after which the
	// offline keywords are used (0 means DefaultQueryTimeout).
	QueryTimeout time.Duration
	// Now and NewID default to time.Now and UUIDv7; tests inject them.
	Now   func() time.Time
	NewID func() string
	// NewNonce makes the per-request random delimiter of untrusted text in
	// prompts (16 random hex digits by default); golden tests fix it.
	NewNonce func() string
}

// Service is the grounding domain service. It is safe for concurrent use.
type Service struct {
	search       Searcher
	model        Model
	pages        Pages
	store        Store
	logger       *slog.Logger
	metrics      *Metrics
	maxSources   int
	roundTimeout time.Duration
	queryTimeout time.Duration
	now          func() time.Time
	newID        func() string
	newNonce     func() string
}

// MethodExtractive names the offline method on messages and replies.
const MethodExtractive = "extractive"

// answerReserve is the time kept back from the caller's deadline for what
// follows a provider call (the offline fallback, storing the message,
// answering), so the caller gets an answer rather than its own
// DeadlineExceeded when the provider is slow.
const answerReserve = 100 * time.Millisecond

// boundedContext is ctx limited to d and ending answerReserve before ctx's
// own deadline.
func boundedContext(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	end := time.Now().Add(d)
	if dl, ok := ctx.Deadline(); ok && dl.Add(-answerReserve).Before(end) {
		end = dl.Add(-answerReserve)
	}
	return context.WithDeadline(ctx, end)
}

// storeTimeout bounds writing a message after its round, which may have
// used up the round's own deadline.
const storeTimeout = 5 * time.Second

// New returns a Service.
func New(o Options) (*Service, error) {
	if o.Searcher == nil || o.Store == nil || o.Logger == nil {
		return nil, errors.New("grounding: Searcher, Store and Logger are required")
	}
	s := &Service{
		search: o.Searcher, model: o.Model, pages: o.Pages, store: o.Store, logger: o.Logger, metrics: o.Metrics,
		maxSources: o.MaxSources, roundTimeout: o.RoundTimeout, queryTimeout: o.QueryTimeout, now: o.Now, newID: o.NewID,
		newNonce: o.NewNonce,
	}
	if s.newNonce == nil {
		s.newNonce = RandomNonce
	}
	if s.queryTimeout <= 0 {
		s.queryTimeout = DefaultQueryTimeout
	}
	if s.maxSources <= 0 {
		s.maxSources = DefaultMaxSources
	}
	if s.roundTimeout <= 0 {
		s.roundTimeout = DefaultRoundTimeout
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.newID == nil {
		s.newID = func() string { return uuid.Must(uuid.NewV7()).String() }
	}
	return s, nil
}

// RandomNonce is 16 random hex digits: the per-request delimiter of
// untrusted text in prompts.
func RandomNonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// Method is the active model's name, or MethodExtractive offline.
func (s *Service) Method() string {
	if s.model == nil {
		return MethodExtractive
	}
	return s.model.Name()
}

// clock is the current time in UTC at the store's precision
// (microseconds), so a returned message equals the stored one.
func (s *Service) clock() time.Time {
	return s.now().UTC().Truncate(time.Microsecond)
}

// Get returns a stored message.
func (s *Service) Get(ctx context.Context, id string) (*Message, error) {
	return s.store.Get(ctx, id)
}

// List returns one page of stored messages, newest first, and the token of
// the next page ("" on the last).
func (s *Service) List(ctx context.Context, f ListFilter) ([]*Message, string, error) {
	if f.PageSize <= 0 {
		f.PageSize = 20
	}
	f.PageSize = min(f.PageSize, 100)
	return s.store.List(ctx, f)
}

// ReviewRequest is a reviewer's decision.
type ReviewRequest struct {
	ReviewerID string
	Notes      string
	Status     Status
	// Actor is the authenticated caller recording it.
	Actor string
}

// RawHTML returns the redacted page HTML kept for a citation of a
// message: ErrNotFound when there is no such message or citation,
// ErrNoRawHTML when the citation keeps none.
func (s *Service) RawHTML(ctx context.Context, messageID, citationID string) (*RawHTML, error) {
	return s.store.RawHTML(ctx, messageID, citationID)
}

// transitions lists the statuses a reviewer may move a message to. A failed
// message has no answer to judge, so it cannot be reviewed; a decision can
// be reversed, or sent back for review.
var transitions = map[Status][]Status{
	StatusProcessed:   {StatusNeedsReview, StatusApproved, StatusRejected},
	StatusNeedsReview: {StatusProcessed, StatusApproved, StatusRejected},
	StatusApproved:    {StatusNeedsReview, StatusRejected},
	StatusRejected:    {StatusNeedsReview, StatusApproved},
}

// CanTransition reports whether a review may move a message from one
// status to another.
func CanTransition(from, to Status) bool {
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Review records a reviewer's decision and returns the updated message.
// An invalid transition is ErrInvalidTransition.
func (s *Service) Review(ctx context.Context, id string, r ReviewRequest) (*Message, error) {
	m, err := s.store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if !CanTransition(m.Status, r.Status) {
		return nil, fmt.Errorf("%w: %s to %s", ErrInvalidTransition, m.Status, r.Status)
	}
	rev := Review{
		ReviewerID: r.ReviewerID, Notes: r.Notes, ReviewTime: s.clock(), PreviousStatus: m.Status, NewStatus: r.Status,
		Actor: cmp.Or(r.Actor, ServiceActor),
	}
	if err := s.store.SetReview(ctx, id, r.Status, rev); err != nil {
		return nil, err
	}
	return s.store.Get(ctx, id)
}
