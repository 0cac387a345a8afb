// Package groundingclient is the notifier's adapter to the grounding service: it
// enriches alerts (DeriveQuery, then Ground with the derived query) for the
// pipeline and writes the chat agent's replies (Converse), converting
// between the generated types and the domain's.
package groundingclient

import (
	"context"
	"fmt"
	"strconv"

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
}

var (
	_ pipeline.Enricher = (*Client)(nil)
	_ chat.Converser    = (*Client)(nil)
)

// New returns a Client over api. maxSources bounds the sources Ground keeps
// (1..10; 0 means grounding's default).
func New(api groundingv1.GroundingServiceClient, maxSources int) *Client {
	return &Client{api: api, maxSources: int32(min(max(maxSources, 0), 10))}
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

// Public says which step failed and how, without the peer's message.
func (e *Error) Public() string {
	switch e.code {
	case codes.Unavailable:
		return "grounding service unavailable"
	case codes.DeadlineExceeded:
		return "grounding timed out"
	}
	return fmt.Sprintf("grounding %s failed (%s)", e.step, e.code)
}

func wrap(step string, err error) error {
	return &Error{step: step, code: status.Code(err), err: err}
}

// Enrich derives a search query from the alert text and grounds the text
// with it.
func (c *Client) Enrich(ctx context.Context, text string) (pipeline.Enrichment, error) {
	q, err := c.api.DeriveQuery(ctx, &groundingv1.DeriveQueryRequest{Text: text})
	if err != nil {
		return pipeline.Enrichment{}, wrap("query", err)
	}
	req := &groundingv1.GroundRequest{Text: text, Query: q.GetQuery(), CreatedBy: CreatedBy}
	if c.maxSources > 0 {
		req.MaxSources = &c.maxSources
	}
	resp, err := c.api.Ground(ctx, req)
	if err != nil {
		return pipeline.Enrichment{}, wrap("ground", err)
	}
	m := resp.GetMessage()
	if m.GetStatus() == groundingv1.AnnotatedMessage_FAILED {
		return pipeline.Enrichment{}, &Error{step: "ground", code: codes.Unknown, err: fmt.Errorf("message %s failed: %s", m.GetId(), m.GetError())}
	}
	return toEnrichment(m), nil
}

func toEnrichment(m *groundingv1.AnnotatedMessage) pipeline.Enrichment {
	e := pipeline.Enrichment{MessageID: m.GetId(), Enrichment: format.Enrichment{Summary: m.GetSummary()}}
	if m.Confidence != nil {
		c := m.GetConfidence()
		e.Confidence = &c
	}
	seen := map[string]bool{}
	for _, c := range m.GetCitations() {
		// Several spans often cite one source; list it once.
		if seen[c.GetUrl()] {
			continue
		}
		seen[c.GetUrl()] = true
		e.Citations = append(e.Citations, format.Citation{Title: c.GetTitle(), Snippet: c.GetSnippet(), URL: c.GetUrl()})
	}
	return e
}

// Converse asks grounding for the agent's reply.
func (c *Client) Converse(ctx context.Context, req chat.ConverseRequest) (string, error) {
	resp, err := c.api.Converse(ctx, fromConverseRequest(req))
	if err != nil {
		return "", wrap("converse", err)
	}
	return resp.GetText(), nil
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
