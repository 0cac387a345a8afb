// Package groundingclient is the notifier's adapter to the grounding service: it
// enriches alerts (DeriveQuery, then Ground with the derived query) for the
// pipeline and writes the chat agent's replies (Converse), converting
// between the generated types and the domain's.
package groundingclient

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	"github.com/groundcrew/groundcrew/services/notifier/internal/chat"
	"github.com/groundcrew/groundcrew/services/notifier/internal/format"
	"github.com/groundcrew/groundcrew/services/notifier/internal/pipeline"
)

// CreatedBy is who the notifier says asked, in grounding's audit trail.
const CreatedBy = "notifier"

// Client calls the grounding service.
type Client struct {
	api groundingv1.GroundingServiceClient
	// MaxSources is passed as Ground's max_sources; 0 leaves grounding's
	// default (GROUNDING_MAX_SOURCES).
	maxSources int32
	// engine is sent in Ground's round config.
	engine groundingv1.RoundConfig_Engine
}

var (
	_ pipeline.Enricher       = (*Client)(nil)
	_ pipeline.LinkedEnricher = (*Client)(nil)
	_ chat.Converser          = (*Client)(nil)
	_ chat.ReplyConverser     = (*Client)(nil)
)

// New returns a Client over api. maxSources bounds the sources Ground keeps
// (1..10; 0 means grounding's default); engine is where Ground's evidence
// comes from (see ParseEngine).
func New(api groundingv1.GroundingServiceClient, maxSources int, engine groundingv1.RoundConfig_Engine) *Client {
	return &Client{api: api, maxSources: int32(min(max(maxSources, 0), 10)), engine: engine}
}

// ParseEngine reads NOTIFIER_ENRICH_ENGINE: auto, native, exa or local,
// in any case ("" is auto).
func ParseEngine(s string) (groundingv1.RoundConfig_Engine, error) {
	name := strings.ToUpper(strings.TrimSpace(s))
	if name == "" {
		return groundingv1.RoundConfig_AUTO, nil
	}
	if v, ok := groundingv1.RoundConfig_Engine_value[name]; ok && v != int32(groundingv1.RoundConfig_ENGINE_UNSPECIFIED) {
		return groundingv1.RoundConfig_Engine(v), nil
	}
	return 0, fmt.Errorf("must be auto, native, exa or local, got %q", s)
}

// Error is a failed grounding call; Public is safe to show in a message.
type Error struct {
	step string
	code codes.Code
	err  error
}

// Error says which call failed, with the peer's message (for logs only).
func (e *Error) Error() string { return "grounding " + e.step + ": " + e.err.Error() }

// Unwrap returns the call's error.
func (e *Error) Unwrap() error { return e.err }

// Reasons an enrichment is unavailable, in words an on-call engineer
// reads in the message (never gRPC code names).
const (
	// ReasonGroundingUnavailable: the grounding service did not answer.
	ReasonGroundingUnavailable = "grounding service unavailable"
	// ReasonModelUnavailable: grounding answered, but its model provider
	// failed.
	ReasonModelUnavailable = "model unavailable"
	// ReasonSearchTimedOut: the search and answer did not finish in time.
	ReasonSearchTimedOut = "search timed out"
	// ReasonSearchUnavailable: grounding's search failed, so there was no
	// evidence to cite.
	ReasonSearchUnavailable = "search unavailable"
	// ReasonNoSources: grounding answered without a source to cite.
	ReasonNoSources = format.NoSources
	// ReasonNoRelevant: search found sources, but none is about the
	// alert (grounding's NEEDS_REVIEW error, word for word).
	ReasonNoRelevant = "no relevant runbook found"
	// ReasonFailed: anything else.
	ReasonFailed = "grounding failed"
)

// Public says why enrichment is unavailable, in plain words, without the
// peer's message.
func (e *Error) Public() string {
	switch {
	case e.code == codes.DeadlineExceeded:
		return ReasonSearchTimedOut
	case e.step == stepFailed, e.code == codes.Unavailable && e.step == stepGround:
		// Ground answers Unavailable when its model provider fails; the
		// grounding service itself answered DeriveQuery just before.
		return ReasonModelUnavailable
	case e.code == codes.Unavailable:
		// DeriveQuery never calls out (it falls back to keywords), so its
		// Unavailable is the grounding service itself.
		return ReasonGroundingUnavailable
	}
	return ReasonFailed
}

// Steps of an enrichment, for Error.
const (
	stepQuery    = "query"
	stepGround   = "ground"
	stepFailed   = "ground (message FAILED)"
	stepConverse = "converse"
)

func wrap(step string, err error) error {
	return &Error{step: step, code: status.Code(err), err: err}
}

// Enrich derives a search query from the alert text and grounds the text
// with it.
func (c *Client) Enrich(ctx context.Context, text string) (pipeline.Enrichment, error) {
	return c.EnrichLinked(ctx, text, nil)
}

// EnrichLinked is Enrich for an alert with its own links (its runbook
// first): they go to Ground as evidence_urls, so that an indexed runbook
// is the evidence grounding starts from.
func (c *Client) EnrichLinked(ctx context.Context, text string, evidenceURLs []string) (pipeline.Enrichment, error) {
	q, err := c.api.DeriveQuery(ctx, &groundingv1.DeriveQueryRequest{Text: text})
	if err != nil {
		return pipeline.Enrichment{}, wrap(stepQuery, err)
	}
	req := &groundingv1.GroundRequest{
		Text: text, Query: q.GetQuery(), CreatedBy: CreatedBy,
		RoundConfig:  &groundingv1.RoundConfig{Engine: c.engine},
		EvidenceUrls: evidenceURLs[:min(len(evidenceURLs), maxEvidenceURLs)],
	}
	if c.maxSources > 0 {
		req.MaxSources = &c.maxSources
	}
	resp, err := c.api.Ground(ctx, req)
	if err != nil {
		return pipeline.Enrichment{}, wrap(stepGround, err)
	}
	m := resp.GetMessage()
	if m.GetStatus() == groundingv1.AnnotatedMessage_FAILED {
		code := codes.Unknown
		if strings.Contains(m.GetError(), "timed out") {
			// Grounding ends the model's call before our deadline and
			// stores the round as FAILED: the search ran out of time.
			code = codes.DeadlineExceeded
		}
		return pipeline.Enrichment{}, &Error{step: stepFailed, code: code, err: fmt.Errorf("message %s failed: %s", m.GetId(), m.GetError())}
	}
	return toEnrichment(m), nil
}

// maxEvidenceURLs is how many evidence_urls GroundRequest takes.
const maxEvidenceURLs = 8

// toEnrichment keeps the citations that resolve to a source: one of the
// search results the answer was grounded on (any http(s) citation when
// grounding reports no results, as a native search may not). With none
// left, the enrichment says why it is unavailable, and the summary is not
// shown.
func toEnrichment(m *groundingv1.AnnotatedMessage) pipeline.Enrichment {
	e := pipeline.Enrichment{MessageID: m.GetId(), Summary: m.GetSummary()}
	if m.Confidence != nil {
		c := m.GetConfidence()
		e.Confidence = &c
	}
	results := map[string]bool{}
	for _, r := range m.GetGroundedContext().GetResults() {
		results[r.GetUrl()] = true
	}
	seen := map[string]bool{}
	for _, c := range m.GetCitations() {
		u := c.GetUrl()
		// Several spans often cite one source; list it once.
		if seen[u] || !httpURL(u) || (len(results) > 0 && !results[u]) {
			continue
		}
		seen[u] = true
		e.Citations = append(e.Citations, format.Citation{Title: c.GetTitle(), Snippet: c.GetSnippet(), URL: u})
	}
	if len(e.Citations) == 0 {
		e.Unavailable = ReasonNoSources
		switch {
		case len(results) == 0 && strings.HasPrefix(m.GetError(), "search failed"):
			// Grounding's note when its search service failed.
			e.Unavailable = ReasonSearchUnavailable
		case m.GetError() == ReasonNoRelevant:
			// Grounding's note when search found sources, none of them
			// about the alert.
			e.Unavailable = ReasonNoRelevant
		}
	}
	return e
}

func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// Converse asks grounding for the agent's reply text.
func (c *Client) Converse(ctx context.Context, req chat.ConverseRequest) (string, error) {
	r, err := c.ConverseReply(ctx, req)
	return r.Text, err
}

// ConverseReply asks grounding for the agent's reply: its text and the
// sticker it chose, if any.
func (c *Client) ConverseReply(ctx context.Context, req chat.ConverseRequest) (chat.Reply, error) {
	resp, err := c.api.Converse(ctx, fromConverseRequest(req))
	if err != nil {
		return chat.Reply{}, wrap(stepConverse, err)
	}
	out := chat.Reply{Text: resp.GetText()}
	if st := resp.GetSticker(); st.GetFileId() != "" {
		out.Sticker = &chat.Sticker{FileID: st.GetFileId(), Emoji: st.GetEmoji(), Set: st.GetSetName(), Description: st.GetDescription()}
	}
	return out, nil
}

func fromConverseRequest(r chat.ConverseRequest) *groundingv1.ConverseRequest {
	out := &groundingv1.ConverseRequest{
		Persona:         r.Persona,
		ModelNotes:      r.ModelNotes,
		ChatType:        groundingv1.ChatType_PRIVATE,
		TargetMessageId: strconv.FormatInt(r.TargetID, 10),
		ConversationId:  r.ConversationID,
	}
	if r.Group {
		out.ChatType = groundingv1.ChatType_GROUP
	}
	if r.HistorySize > 0 {
		n := int32(min(r.HistorySize, 5000))
		out.HistorySize = &n
	}
	if !r.Now.IsZero() {
		out.CurrentTime = timestamppb.New(r.Now)
	}
	for _, m := range r.History {
		out.History = append(out.History, fromChatMessage(m))
	}
	for _, st := range r.Stickers {
		out.Stickers = append(out.Stickers, &groundingv1.Sticker{SetName: st.Set, Emoji: st.Emoji, Description: st.Description, FileId: st.FileID})
	}
	return out
}

func fromChatMessage(m chat.Message) *groundingv1.ChatMsg {
	out := &groundingv1.ChatMsg{
		Id:        strconv.FormatInt(m.MessageID, 10),
		Speaker:   m.Speaker,
		SpeakerId: m.SpeakerID,
		IsAgent:   m.IsAgent,
	}
	if !m.SentAt.IsZero() {
		out.SendTime = timestamppb.New(m.SentAt)
	}
	if m.ReplyToID != 0 {
		out.ReplyToId = strconv.FormatInt(m.ReplyToID, 10)
	}
	for _, p := range m.Parts {
		if p.MediaKind == "" {
			out.Parts = append(out.Parts, &groundingv1.ChatPart{Part: &groundingv1.ChatPart_Text{Text: p.Text}})
			continue
		}
		out.Parts = append(out.Parts, &groundingv1.ChatPart{Part: &groundingv1.ChatPart_Media{Media: &groundingv1.Media{
			MediaKind: p.MediaKind, RenderedText: p.Text, UniqueId: p.UniqueID,
		}}})
	}
	return out
}
