package groundinggrpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	ragv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/rag/v1"
	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/services/grounding/internal/research"
)

// ResearchService implements groundingv1.ResearchServiceServer over a
// research.Service.
type ResearchService struct {
	groundingv1.UnimplementedResearchServiceServer
	svc    *research.Service
	logger *slog.Logger
}

var _ groundingv1.ResearchServiceServer = (*ResearchService)(nil)

// NewResearch returns the ResearchService handlers for svc.
func NewResearch(svc *research.Service, logger *slog.Logger) *ResearchService {
	return &ResearchService{svc: svc, logger: logger}
}

// StartResearch starts a run; the run proceeds as durable jobs.
func (s *ResearchService) StartResearch(ctx context.Context, req *groundingv1.StartResearchRequest) (*groundingv1.StartResearchResponse, error) {
	run, err := s.svc.Start(ctx, fromStartResearchRequest(req))
	if err != nil {
		return nil, s.toStatus(ctx, err, "starting research run")
	}
	return &groundingv1.StartResearchResponse{Run: toResearchState(run)}, nil
}

// GetResearch returns a run.
func (s *ResearchService) GetResearch(ctx context.Context, req *groundingv1.GetResearchRequest) (*groundingv1.GetResearchResponse, error) {
	run, err := s.svc.Get(ctx, req.GetId())
	if err != nil {
		return nil, s.toStatus(ctx, err, "reading research run")
	}
	return &groundingv1.GetResearchResponse{Run: toResearchState(run)}, nil
}

// ListResearch pages a user's runs, newest first.
func (s *ResearchService) ListResearch(ctx context.Context, req *groundingv1.ListResearchRequest) (*groundingv1.ListResearchResponse, error) {
	runs, next, err := s.svc.List(ctx, req.GetUserId(), research.Page{Size: int(req.GetPageSize()), Token: req.GetPageToken()})
	if err != nil {
		return nil, s.toStatus(ctx, err, "listing research runs")
	}
	resp := &groundingv1.ListResearchResponse{NextPageToken: next, Runs: make([]*groundingv1.ResearchState, len(runs))}
	for i, r := range runs {
		resp.Runs[i] = toResearchState(r)
	}
	return resp, nil
}

// WatchResearch streams the run each time it changes until it finishes or
// fails.
func (s *ResearchService) WatchResearch(req *groundingv1.WatchResearchRequest, stream groundingv1.ResearchService_WatchResearchServer) error {
	ctx := stream.Context()
	err := s.svc.Watch(ctx, req.GetId(), func(run *research.Run) error {
		if err := stream.Send(&groundingv1.WatchResearchResponse{Run: toResearchState(run)}); err != nil {
			return fmt.Errorf("sending run state: %w", err)
		}
		return nil
	})
	if err != nil {
		return s.toStatus(ctx, err, "watching research run")
	}
	return nil
}

// ListApprovals pages approval requests, newest first.
func (s *ResearchService) ListApprovals(ctx context.Context, req *groundingv1.ListApprovalsRequest) (*groundingv1.ListApprovalsResponse, error) {
	f := research.ApprovalFilter{Status: fromApprovalStatus(req.GetStatus()), RunID: req.GetRunId()}
	as, next, err := s.svc.ListApprovals(ctx, f, research.Page{Size: int(req.GetPageSize()), Token: req.GetPageToken()})
	if err != nil {
		return nil, s.toStatus(ctx, err, "listing approvals")
	}
	resp := &groundingv1.ListApprovalsResponse{NextPageToken: next, Approvals: make([]*groundingv1.ApprovalRequest, len(as))}
	for i, a := range as {
		resp.Approvals[i] = toApprovalRequest(a)
	}
	return resp, nil
}

// DecideApproval approves (the action runs) or rejects (it is skipped) a
// pending approval; a decided one gives FailedPrecondition.
func (s *ResearchService) DecideApproval(ctx context.Context, req *groundingv1.DecideApprovalRequest) (*groundingv1.DecideApprovalResponse, error) {
	if req.GetDecision() == groundingv1.DecideApprovalRequest_DECISION_UNSPECIFIED {
		return nil, grpcserver.FieldViolations(grpcserver.FieldViolation{Field: "decision", Description: "must be APPROVE or REJECT"})
	}
	a, err := s.svc.Decide(ctx, research.DecideParams{
		ApprovalID: req.GetId(),
		Approve:    req.GetDecision() == groundingv1.DecideApprovalRequest_APPROVE,
		DecidedBy:  req.GetDecidedBy(),
		Comment:    req.GetComment(),
	})
	if err != nil {
		return nil, s.toStatus(ctx, err, "deciding approval")
	}
	return &groundingv1.DecideApprovalResponse{Approval: toApprovalRequest(a)}, nil
}

// toStatus maps domain errors to codes; anything else is internal and
// logged, never shown.
func (s *ResearchService) toStatus(ctx context.Context, err error, doing string) error {
	var inv *research.InvalidError
	switch {
	case errors.As(err, &inv):
		return grpcserver.FieldViolations(grpcserver.FieldViolation{Field: inv.Field, Description: inv.Reason})
	case errors.Is(err, research.ErrInvalidPageToken):
		return grpcserver.FieldViolations(grpcserver.FieldViolation{Field: "page_token", Description: "not a token from a previous page"})
	case errors.Is(err, research.ErrNotFound):
		return status.Error(codes.NotFound, doing+": not found")
	case errors.Is(err, research.ErrAlreadyDecided):
		return status.Error(codes.FailedPrecondition, "the approval is no longer pending: it was decided or timed out")
	}
	return grpcserver.InternalError(ctx, s.logger, err, doing)
}

func fromStartResearchRequest(req *groundingv1.StartResearchRequest) research.StartParams {
	p := research.StartParams{Topic: req.GetTopic(), UserID: req.GetUserId(), Collection: req.GetCollection()}
	if req.MaxIterations != nil {
		n := int(req.GetMaxIterations())
		p.MaxIterations = &n
	}
	if req.QualityThreshold != nil {
		t := req.GetQualityThreshold()
		p.QualityThreshold = &t
	}
	return p
}

func toResearchState(r *research.Run) *groundingv1.ResearchState {
	st := &groundingv1.ResearchState{
		Id:               r.ID,
		Topic:            r.Topic,
		UserId:           r.UserID,
		Status:           toRunStatus(r.Status),
		IterationCount:   int32(r.IterationCount),
		MaxIterations:    int32(r.MaxIterations),
		QualityThreshold: r.QualityThreshold,
		QualityScore:     r.QualityScore,
		Plan:             r.Plan,
		Sources:          toSourceReferences(r.Sources),
		Critique:         toCritique(r.Critique),
		Report:           toResearchReport(r.Report),
		Error:            r.Error,
		CreateTime:       timestamppb.New(r.CreatedAt),
		UpdateTime:       timestamppb.New(r.UpdatedAt),
		Collection:       r.Collection,
	}
	for _, a := range r.Actions {
		st.PlannedActions = append(st.PlannedActions, toPlannedAction(a))
	}
	return st
}

func toRunStatus(s research.Status) groundingv1.ResearchState_Status {
	switch s {
	case research.StatusPlanning:
		return groundingv1.ResearchState_PLANNING
	case research.StatusResearching:
		return groundingv1.ResearchState_RESEARCHING
	case research.StatusCritiquing:
		return groundingv1.ResearchState_CRITIQUING
	case research.StatusRefining:
		return groundingv1.ResearchState_REFINING
	case research.StatusFinished:
		return groundingv1.ResearchState_FINISHED
	case research.StatusFailed:
		return groundingv1.ResearchState_FAILED
	}
	return groundingv1.ResearchState_STATUS_UNSPECIFIED
}

func toSourceReferences(ss []research.Source) []*groundingv1.SourceReference {
	out := make([]*groundingv1.SourceReference, len(ss))
	for i, s := range ss {
		out[i] = &groundingv1.SourceReference{
			Title:       s.Title,
			Url:         s.URL,
			Snippet:     s.Snippet,
			RetrievedAt: timestamppb.New(s.RetrievedAt),
			SubQuestion: s.SubQuestion,
		}
	}
	return out
}

func toCritique(c *research.Critique) *groundingv1.Critique {
	if c == nil {
		return nil
	}
	return &groundingv1.Critique{QualityScore: c.Score, Reasons: c.Reasons, Gaps: c.Gaps}
}

func toResearchReport(r *research.Report) *groundingv1.ResearchReport {
	if r == nil {
		return nil
	}
	return &groundingv1.ResearchReport{
		ExecutiveSummary: r.ExecutiveSummary,
		FindingsMarkdown: r.FindingsMarkdown,
		Sources:          toSourceReferences(r.Sources),
		Iterations:       int32(r.Iterations),
		GenerateTime:     timestamppb.New(r.GeneratedAt),
		Quality: &groundingv1.QualityIndicators{
			QualityScore:   r.Quality.Score,
			Warnings:       r.Quality.Warnings,
			LimitedSources: r.Quality.LimitedSources,
		},
	}
}

func toRiskLevel(r research.RiskLevel) groundingv1.RiskLevel {
	switch r {
	case research.Reversible:
		return groundingv1.RiskLevel_REVERSIBLE
	case research.ReversibleWithDelay:
		return groundingv1.RiskLevel_REVERSIBLE_WITH_DELAY
	case research.Irreversible:
		return groundingv1.RiskLevel_IRREVERSIBLE
	}
	return groundingv1.RiskLevel_RISK_LEVEL_UNSPECIFIED
}

// toPlannedAction converts an action; an approved action and one that needs
// no approval are both QUEUED until they run.
func toPlannedAction(a research.Action) *groundingv1.PlannedAction {
	return &groundingv1.PlannedAction{
		Id:          a.ID,
		ActionType:  a.Type,
		Description: a.Description,
		RiskLevel:   toRiskLevel(a.Risk),
		Status:      toActionStatus(a.Status),
		ApprovalId:  a.ApprovalID,
		Result:      a.Result,
	}
}

func toActionStatus(s research.ActionStatus) groundingv1.PlannedAction_Status {
	switch {
	case s == research.ActionAwaitingApproval:
		return groundingv1.PlannedAction_AWAITING_APPROVAL
	case s.Queued():
		return groundingv1.PlannedAction_QUEUED
	case s == research.ActionExecuted:
		return groundingv1.PlannedAction_EXECUTED
	case s == research.ActionSkipped:
		return groundingv1.PlannedAction_SKIPPED
	case s == research.ActionFailed:
		return groundingv1.PlannedAction_FAILED
	}
	return groundingv1.PlannedAction_STATUS_UNSPECIFIED
}

func toApprovalStatus(s research.ApprovalStatus) groundingv1.ApprovalRequest_Status {
	switch s {
	case research.ApprovalPending:
		return groundingv1.ApprovalRequest_PENDING
	case research.ApprovalApproved:
		return groundingv1.ApprovalRequest_APPROVED
	case research.ApprovalRejected:
		return groundingv1.ApprovalRequest_REJECTED
	case research.ApprovalEscalated:
		return groundingv1.ApprovalRequest_ESCALATED
	}
	return groundingv1.ApprovalRequest_STATUS_UNSPECIFIED
}

func fromApprovalStatus(s groundingv1.ApprovalRequest_Status) research.ApprovalStatus {
	switch s {
	case groundingv1.ApprovalRequest_PENDING:
		return research.ApprovalPending
	case groundingv1.ApprovalRequest_APPROVED:
		return research.ApprovalApproved
	case groundingv1.ApprovalRequest_REJECTED:
		return research.ApprovalRejected
	case groundingv1.ApprovalRequest_ESCALATED:
		return research.ApprovalEscalated
	}
	return ""
}

func toApprovalRequest(a *research.Approval) *groundingv1.ApprovalRequest {
	return &groundingv1.ApprovalRequest{
		Id:          a.ID,
		RunId:       a.RunID,
		ActionId:    a.ActionID,
		ActionType:  a.ActionType,
		Description: a.Description,
		RiskLevel:   toRiskLevel(a.Risk),
		Requester:   a.Requester,
		RequestedAt: timestamppb.New(a.RequestedAt),
		TimeoutAt:   timestamppb.New(a.TimeoutAt),
		Status:      toApprovalStatus(a.Status),
		Decision:    toDecisionMetadata(a.Decision),
	}
}

func toDecisionMetadata(d *research.Decision) *groundingv1.DecisionMetadata {
	if d == nil {
		return nil
	}
	return &groundingv1.DecisionMetadata{
		ApprovedBy:      d.ApprovedBy,
		RejectedBy:      d.RejectedBy,
		Comment:         d.Comment,
		DurationSeconds: d.DurationSeconds,
		Reason:          d.Reason,
		DecideTime:      timestamppb.New(d.DecidedAt),
	}
}

// SearchEvidence is research.Searcher over the search service.
type SearchEvidence struct {
	Client searchv1.SearchServiceClient
}

var _ research.Searcher = SearchEvidence{}

// Search asks the search service's automatic engine choice.
func (s SearchEvidence) Search(ctx context.Context, query string, maxResults int) ([]research.Evidence, error) {
	n := int32(min(max(maxResults, 1), 10))
	resp, err := s.Client.Search(ctx, &searchv1.SearchRequest{Query: query, MaxResults: &n})
	if err != nil {
		return nil, fmt.Errorf("search service: %w", err)
	}
	out := make([]research.Evidence, 0, len(resp.GetResults()))
	for _, r := range resp.GetResults() {
		out = append(out, research.Evidence{Title: r.GetTitle(), URL: r.GetUrl(), Snippet: r.GetSnippet()})
	}
	return out, nil
}

// RagPassages is research.Retriever over the rag service.
type RagPassages struct {
	Client ragv1.RagServiceClient
}

var _ research.Retriever = RagPassages{}

// Retrieve returns a collection's passages most similar to query. A
// document without a URL gets a rag:// one naming collection and title, so
// it can be cited and de-duplicated like a web page.
func (r RagPassages) Retrieve(ctx context.Context, collection, query string, topK int) ([]research.Evidence, error) {
	k := int32(min(max(topK, 1), 50))
	resp, err := r.Client.Retrieve(ctx, &ragv1.RetrieveRequest{Collection: collection, Query: query, TopK: &k})
	if err != nil {
		return nil, fmt.Errorf("rag service: %w", err)
	}
	out := make([]research.Evidence, 0, len(resp.GetChunks()))
	for _, c := range resp.GetChunks() {
		src := c.GetSource()
		u := src.GetUrl()
		if u == "" {
			u = "rag://" + collection + "/" + url.PathEscape(src.GetTitle())
		}
		out = append(out, research.Evidence{Title: src.GetTitle(), URL: u, Snippet: c.GetText()})
	}
	return out, nil
}

// NotifierMessages is research.Notifier over the notifier service.
type NotifierMessages struct {
	Client notifierv1.NotifierServiceClient
	// ChatID is where to post; empty means the notifier's default chat.
	ChatID string
}

var _ research.Notifier = NotifierMessages{}

// Send posts msg through the notifier and returns its delivery id.
func (n NotifierMessages) Send(ctx context.Context, msg research.Message) (string, error) {
	req := &notifierv1.SendMessageRequest{
		Text:           msg.Text,
		ChatId:         n.ChatID,
		IdempotencyKey: msg.IdempotencyKey,
		Sender:         "grounding-research",
	}
	for _, b := range msg.Buttons {
		req.Buttons = append(req.Buttons, &notifierv1.InlineButton{Text: b.Text, CallbackData: b.Data})
	}
	resp, err := n.Client.SendMessage(ctx, req)
	if err != nil {
		return "", fmt.Errorf("notifier service: %w", err)
	}
	return resp.GetDeliveryId(), nil
}
