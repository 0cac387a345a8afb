// Package groundinggrpc is the gRPC adapter of the grounding service: it converts
// between the generated types and the domain, and alone maps domain errors
// to gRPC codes.
package groundinggrpc

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
	"github.com/groundcrew/groundcrew/platform/actor"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/platform/logging"
	"github.com/groundcrew/groundcrew/services/grounding/internal/grounding"
)

// GroundingService implements groundingv1.GroundingServiceServer.
type GroundingService struct {
	groundingv1.UnimplementedGroundingServiceServer
	svc    *grounding.Service
	logger *slog.Logger
}

var _ groundingv1.GroundingServiceServer = (*GroundingService)(nil)

// NewGroundingService returns the GroundingService handlers over svc.
func NewGroundingService(svc *grounding.Service, logger *slog.Logger) *GroundingService {
	return &GroundingService{svc: svc, logger: logger}
}

// DeriveQuery derives a web-search query: with Gemini from one
// structured-output call, falling back to the offline keyword extractor,
// which alone is used without a key. It does not fail.
func (s *GroundingService) DeriveQuery(ctx context.Context, req *groundingv1.DeriveQueryRequest) (*groundingv1.DeriveQueryResponse, error) {
	q := s.svc.DeriveQuery(ctx, req.GetText())
	return &groundingv1.DeriveQueryResponse{Query: q.Query, Terms: q.Terms, Method: q.Method}, nil
}

// Ground runs a grounding round and returns the stored AnnotatedMessage.
//
// A model provider failure (after its retries, within timeout_ms) is not
// an RPC error: the message is stored with status FAILED and a client-safe
// error text, and returned with OK. The caller (the alert pipeline) then
// sees the failure in the message, can deliver the alert unenriched, and
// the failure stays on record for audit, with the provider's raw error
// body as its artifact. The RPC fails only when the message cannot be
// stored (Internal) or the caller's own deadline passes.
func (s *GroundingService) Ground(ctx context.Context, req *groundingv1.GroundRequest) (*groundingv1.GroundResponse, error) {
	gr := toGroundRequest(req)
	gr.RequestID, gr.Actor = logging.RequestID(ctx), actor.FromContext(ctx)
	m, err := s.svc.Ground(ctx, gr)
	if err != nil {
		return nil, grpcserver.InternalError(ctx, s.logger, err, "grounding")
	}
	return &groundingv1.GroundResponse{Message: fromMessage(m)}, nil
}

// GetAnnotatedMessage returns a stored message; NotFound when there is
// none with that id.
func (s *GroundingService) GetAnnotatedMessage(ctx context.Context, req *groundingv1.GetAnnotatedMessageRequest) (*groundingv1.GetAnnotatedMessageResponse, error) {
	m, err := s.svc.Get(ctx, req.GetId())
	if err != nil {
		return nil, s.toStatusError(ctx, err, "reading message")
	}
	return &groundingv1.GetAnnotatedMessageResponse{Message: fromMessage(m)}, nil
}

// ListAnnotatedMessages lists stored messages newest first; a malformed
// page token, or one from a query with other filters, is InvalidArgument.
func (s *GroundingService) ListAnnotatedMessages(ctx context.Context, req *groundingv1.ListAnnotatedMessagesRequest) (*groundingv1.ListAnnotatedMessagesResponse, error) {
	f, err := toListFilter(req)
	if err != nil {
		return nil, err
	}
	msgs, next, err := s.svc.List(ctx, f)
	if err != nil {
		return nil, s.toStatusError(ctx, err, "listing messages")
	}
	resp := &groundingv1.ListAnnotatedMessagesResponse{NextPageToken: next, Messages: make([]*groundingv1.AnnotatedMessage, 0, len(msgs))}
	for _, m := range msgs {
		resp.Messages = append(resp.Messages, fromMessage(m))
	}
	return resp, nil
}

// ReviewAnnotatedMessage records a review. A status change the workflow
// does not allow (see grounding.CanTransition; a FAILED message cannot be
// reviewed) is FailedPrecondition; a concurrent review is Aborted.
func (s *GroundingService) ReviewAnnotatedMessage(ctx context.Context, req *groundingv1.ReviewAnnotatedMessageRequest) (*groundingv1.ReviewAnnotatedMessageResponse, error) {
	m, err := s.svc.Review(ctx, req.GetId(), grounding.ReviewRequest{
		ReviewerID: req.GetReviewerId(), Notes: req.GetNotes(), Status: toStatus(req.GetStatus()),
		Actor: actor.FromContext(ctx),
	})
	if err != nil {
		return nil, s.toStatusError(ctx, err, "reviewing message")
	}
	return &groundingv1.ReviewAnnotatedMessageResponse{Message: fromMessage(m)}, nil
}

// GetCitationRawHtml returns the redacted HTML kept for a citation's page.
// NotFound when the message or citation does not exist or no page was
// kept for it. The gateway restricts the route to admin-scoped keys; the
// HTML is never part of a message.
func (s *GroundingService) GetCitationRawHtml(ctx context.Context, req *groundingv1.GetCitationRawHtmlRequest) (*groundingv1.GetCitationRawHtmlResponse, error) {
	page, err := s.svc.RawHTML(ctx, req.GetMessageId(), req.GetCitationId())
	switch {
	case errors.Is(err, grounding.ErrNotFound):
		return nil, status.Error(codes.NotFound, "citation not found")
	case errors.Is(err, grounding.ErrNoRawHTML):
		return nil, status.Error(codes.NotFound, "no page HTML is kept for this citation")
	case err != nil:
		return nil, s.toStatusError(ctx, err, "reading page HTML")
	}
	return &groundingv1.GetCitationRawHtmlResponse{
		Html: page.HTML, Url: page.URL, FetchTime: fromTime(page.FetchTime), Archived: page.Archived,
	}, nil
}

// Converse writes the chat agent's reply. A target that is not in the
// history, or is the agent's own message, is InvalidArgument; a model
// provider failure is Unavailable.
func (s *GroundingService) Converse(ctx context.Context, req *groundingv1.ConverseRequest) (*groundingv1.ConverseResponse, error) {
	r, err := s.svc.Converse(ctx, toConverseRequest(req))
	if err != nil {
		return nil, s.toStatusError(ctx, err, "conversing")
	}
	resp := &groundingv1.ConverseResponse{Text: r.Text, Model: r.Model, ReplyToMessageId: r.ReplyToID}
	if st := r.Sticker; st != nil {
		resp.Sticker = &groundingv1.Sticker{SetName: st.SetName, Emoji: st.Emoji, Description: st.Description, FileId: st.FileID}
	}
	for _, c := range r.Citations {
		resp.Citations = append(resp.Citations, fromCitation(c))
	}
	return resp, nil
}

// toStatusError maps a domain error to a status; anything unexpected is
// logged and returned as a generic Internal error.
func (s *GroundingService) toStatusError(ctx context.Context, err error, what string) error {
	switch {
	case errors.Is(err, grounding.ErrNotFound):
		return status.Error(codes.NotFound, "message not found")
	case errors.Is(err, grounding.ErrInvalidTransition):
		// The domain's text names only the two statuses.
		return grpcserver.PreconditionFailed("MESSAGE_STATUS", "messages", err.Error())
	case errors.Is(err, grounding.ErrConflict):
		return status.Error(codes.Aborted, "the message was reviewed concurrently; read it and try again")
	case errors.Is(err, grounding.ErrInvalidPageToken):
		return grpcserver.FieldViolations(grpcserver.FieldViolation{Field: "page_token", Description: "is not a token of this query"})
	case errors.Is(err, grounding.ErrTargetNotFound):
		return grpcserver.FieldViolations(grpcserver.FieldViolation{Field: "target_message_id", Description: "is not in history"})
	case errors.Is(err, grounding.ErrTargetIsAgent):
		return grpcserver.FieldViolations(grpcserver.FieldViolation{Field: "target_message_id", Description: "names the agent's own message"})
	}
	if pe, ok := errors.AsType[*grounding.ProviderError](err); ok && ctx.Err() == nil {
		s.logger.WarnContext(ctx, what, "error", err)
		return status.Error(codes.Unavailable, pe.Error())
	}
	return grpcserver.InternalError(ctx, s.logger, err, what)
}

func toGroundRequest(req *groundingv1.GroundRequest) grounding.GroundRequest {
	return grounding.GroundRequest{
		Text:       req.GetText(),
		Round:      toRoundConfig(req.GetRoundConfig()),
		MaxSources: int(req.GetMaxSources()),
		Query:      req.GetQuery(),
		CreatedBy:  req.GetCreatedBy(),
		// The team's own links: an indexed runbook among them is the
		// evidence the round starts from.
		EvidenceURLs: req.GetEvidenceUrls(),
	}
}

func toRoundConfig(rc *groundingv1.RoundConfig) grounding.RoundConfig {
	out := grounding.RoundConfig{
		Engine:       toEngine(rc.GetEngine()),
		ContextScale: toContextScale(rc.GetContextScale()),
		Timeout:      time.Duration(rc.GetTimeoutMs()) * time.Millisecond,
		BudgetTokens: int(rc.GetBudgetTokens()),
	}
	if rc != nil && rc.EnableSearch != nil {
		v := *rc.EnableSearch
		out.EnableSearch = &v
	}
	if rc != nil && rc.MaxResults != nil {
		v := int(*rc.MaxResults)
		out.MaxResults = &v
	}
	return out
}

func toEngine(e groundingv1.RoundConfig_Engine) grounding.Engine {
	switch e {
	case groundingv1.RoundConfig_NATIVE:
		return grounding.EngineNative
	case groundingv1.RoundConfig_EXA:
		return grounding.EngineExa
	case groundingv1.RoundConfig_LOCAL:
		return grounding.EngineLocal
	default:
		return grounding.EngineAuto
	}
}

func fromEngine(e grounding.Engine) groundingv1.RoundConfig_Engine {
	switch e {
	case grounding.EngineNative:
		return groundingv1.RoundConfig_NATIVE
	case grounding.EngineExa:
		return groundingv1.RoundConfig_EXA
	case grounding.EngineLocal:
		return groundingv1.RoundConfig_LOCAL
	default:
		return groundingv1.RoundConfig_AUTO
	}
}

func fromContextScale(s grounding.ContextScale) groundingv1.RoundConfig_ContextScale {
	switch s {
	case grounding.ScaleLow:
		return groundingv1.RoundConfig_LOW
	case grounding.ScaleHigh:
		return groundingv1.RoundConfig_HIGH
	default:
		return groundingv1.RoundConfig_MEDIUM
	}
}

// fromRoundConfig is a message's effective round: every field set.
func fromRoundConfig(rc grounding.RoundConfig) *groundingv1.RoundConfig {
	if rc.ID == "" {
		return nil // a message stored before rounds were recorded
	}
	search := rc.EnableSearch == nil || *rc.EnableSearch
	n := int32(grounding.DefaultMaxResults)
	if rc.MaxResults != nil {
		n = int32(*rc.MaxResults)
	}
	return &groundingv1.RoundConfig{
		Id: rc.ID, EnableSearch: &search, Engine: fromEngine(rc.Engine), MaxResults: &n,
		ContextScale: fromContextScale(rc.ContextScale), TimeoutMs: proto.Int32(int32(rc.Timeout.Milliseconds())),
		BudgetTokens: proto.Int32(int32(rc.BudgetTokens)),
	}
}

func toContextScale(s groundingv1.RoundConfig_ContextScale) grounding.ContextScale {
	switch s {
	case groundingv1.RoundConfig_LOW:
		return grounding.ScaleLow
	case groundingv1.RoundConfig_HIGH:
		return grounding.ScaleHigh
	default:
		return grounding.ScaleMedium
	}
}

var statuses = map[grounding.Status]groundingv1.AnnotatedMessage_Status{
	grounding.StatusProcessed:   groundingv1.AnnotatedMessage_PROCESSED,
	grounding.StatusNeedsReview: groundingv1.AnnotatedMessage_NEEDS_REVIEW,
	grounding.StatusFailed:      groundingv1.AnnotatedMessage_FAILED,
	grounding.StatusApproved:    groundingv1.AnnotatedMessage_APPROVED,
	grounding.StatusRejected:    groundingv1.AnnotatedMessage_REJECTED,
}

func fromStatus(s grounding.Status) groundingv1.AnnotatedMessage_Status {
	return statuses[s] // STATUS_UNSPECIFIED for anything else
}

func toStatus(s groundingv1.AnnotatedMessage_Status) grounding.Status {
	for d, p := range statuses {
		if p == s {
			return d
		}
	}
	return grounding.StatusUnspecified
}

func fromTime(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

func fromMessage(m *grounding.Message) *groundingv1.AnnotatedMessage {
	out := &groundingv1.AnnotatedMessage{
		Id:               m.ID,
		Text:             m.Text,
		Summary:          m.Summary,
		Confidence:       m.Confidence,
		Status:           fromStatus(m.Status),
		GroundedContext:  fromGroundedContext(m.Context),
		InputText:        m.InputText,
		ArtifactPath:     m.ArtifactPath,
		Model:            m.Model,
		Engine:           fromEngine(m.Engine),
		Error:            m.Error,
		CreatedBy:        m.CreatedBy,
		CreateTime:       fromTime(m.CreateTime),
		RoundId:          m.Round.ID,
		RoundConfig:      fromRoundConfig(m.Round),
		RequestId:        m.RequestID,
		ArtifactArchived: m.ArtifactArchived,
		Purged:           m.Purged,
	}
	for _, c := range m.Citations {
		out.Citations = append(out.Citations, fromCitation(c))
	}
	if r := m.Review; r != nil {
		out.Review = fromReview(*r)
	}
	for _, r := range m.Reviews {
		out.Reviews = append(out.Reviews, fromReview(r))
	}
	if m.Parsed != nil {
		// Parsed holds JSON values only, which always convert.
		if st, err := structpb.NewStruct(m.Parsed); err == nil {
			out.ParsedMetadata = st
		}
	}
	return out
}

func fromReview(r grounding.Review) *groundingv1.Review {
	return &groundingv1.Review{
		ReviewerId: r.ReviewerID, Notes: r.Notes, ReviewTime: fromTime(r.ReviewTime), PreviousStatus: fromStatus(r.PreviousStatus),
		NewStatus: fromStatus(r.NewStatus), Actor: r.Actor,
	}
}

func fromCitation(c grounding.Citation) *groundingv1.Citation {
	return &groundingv1.Citation{
		Url: c.URL, Domain: c.Domain, Title: c.Title, Snippet: c.Snippet, SnippetTruncated: c.SnippetTruncated,
		StartIndex: int32(c.StartIndex), EndIndex: int32(c.EndIndex), ConfidenceScore: c.ConfidenceScore,
		FetchTime: fromTime(c.FetchTime), MimeType: c.MimeType, FaviconUrl: c.FaviconURL, SourceIndex: int32(c.SourceIndex),
		Id: c.ID, CreateTime: fromTime(c.CreateTime), CreatedBy: c.CreatedBy, HasRawHtml: c.HasRawHTML,
	}
}

func fromGroundedContext(g grounding.GroundedContext) *groundingv1.GroundedContext {
	out := &groundingv1.GroundedContext{Query: g.Query, Timestamp: fromTime(g.Timestamp)}
	for _, r := range g.Results {
		out.Results = append(out.Results, fromSearchResult(r))
	}
	return out
}

func fromSearchResult(r grounding.SearchResult) *searchv1.SearchResult {
	return &searchv1.SearchResult{
		Title: r.Title, Snippet: r.Snippet, Url: r.URL, SourceDomain: r.SourceDomain, Score: r.Score, PublishedAt: fromTime(r.PublishedAt),
		MimeType: r.MimeType, FaviconUrl: r.FaviconURL,
	}
}

func toListFilter(req *groundingv1.ListAnnotatedMessagesRequest) (grounding.ListFilter, error) {
	f := grounding.ListFilter{
		PageSize: int(req.GetPageSize()), PageToken: req.GetPageToken(), Status: toStatus(req.GetStatus()), Domain: req.GetDomain(),
	}
	var vs []grpcserver.FieldViolation
	if ts := req.GetCreatedAfter(); ts != nil {
		if err := ts.CheckValid(); err != nil {
			vs = append(vs, grpcserver.FieldViolation{Field: "created_after", Description: "is not a valid timestamp"})
		}
		f.CreatedAfter = ts.AsTime()
	}
	if ts := req.GetCreatedBefore(); ts != nil {
		if err := ts.CheckValid(); err != nil {
			vs = append(vs, grpcserver.FieldViolation{Field: "created_before", Description: "is not a valid timestamp"})
		}
		f.CreatedBefore = ts.AsTime()
	}
	if err := grpcserver.FieldViolations(vs...); err != nil {
		return f, err
	}
	return f, nil
}

func toConverseRequest(req *groundingv1.ConverseRequest) grounding.ConverseRequest {
	out := grounding.ConverseRequest{
		Persona:        req.GetPersona(),
		ModelNotes:     req.GetModelNotes(),
		TargetID:       req.GetTargetMessageId(),
		HistorySize:    int(req.GetHistorySize()),
		ConversationID: req.GetConversationId(),
	}
	if req.GetChatType() == groundingv1.ChatType_GROUP {
		out.ChatType = grounding.ChatGroup
	}
	if req.GetCurrentTime() != nil {
		out.CurrentTime = req.GetCurrentTime().AsTime()
	}
	for _, m := range req.GetHistory() {
		out.History = append(out.History, toChatMsg(m))
	}
	for _, st := range req.GetStickers() {
		out.Stickers = append(out.Stickers, grounding.Sticker{
			SetName: st.GetSetName(), Emoji: st.GetEmoji(), Description: st.GetDescription(), FileID: st.GetFileId(),
		})
	}
	return out
}

func toChatMsg(m *groundingv1.ChatMsg) grounding.ChatMsg {
	out := grounding.ChatMsg{
		ID: m.GetId(), Speaker: m.GetSpeaker(), SpeakerID: m.GetSpeakerId(), IsAgent: m.GetIsAgent(), ReplyToID: m.GetReplyToId(),
	}
	if m.GetSendTime() != nil {
		out.SendTime = m.GetSendTime().AsTime()
	}
	for _, p := range m.GetParts() {
		if md := p.GetMedia(); md != nil {
			out.Parts = append(out.Parts, grounding.ChatPart{Media: &grounding.Media{
				Kind: md.GetMediaKind(), RenderedText: md.GetRenderedText(), UniqueID: md.GetUniqueId(),
			}})
			continue
		}
		out.Parts = append(out.Parts, grounding.ChatPart{Text: p.GetText()})
	}
	return out
}
