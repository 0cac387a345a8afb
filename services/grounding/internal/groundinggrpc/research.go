package groundinggrpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	"github.com/groundcrew/groundcrew/platform/actor"
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
	run, err := s.svc.Start(ctx, toStartParams(req))
	if err != nil {
		return nil, s.toStatus(ctx, err, "starting research run")
	}
	return &groundingv1.StartResearchResponse{Run: fromRun(run)}, nil
}

// GetResearch returns a run.
func (s *ResearchService) GetResearch(ctx context.Context, req *groundingv1.GetResearchRequest) (*groundingv1.GetResearchResponse, error) {
	run, err := s.svc.Get(ctx, req.GetId())
	if err != nil {
		return nil, s.toStatus(ctx, err, "reading research run")
	}
	return &groundingv1.GetResearchResponse{Run: fromRun(run)}, nil
}

// GetResearchReport returns a finished run's persisted report: Markdown
// content and metadata.
func (s *ResearchService) GetResearchReport(ctx context.Context, req *groundingv1.GetResearchReportRequest) (*groundingv1.GetResearchReportResponse, error) {
	rec, err := s.svc.GetReport(ctx, req.GetId())
	if err != nil {
		return nil, s.toStatus(ctx, err, "reading research report")
	}
	return &groundingv1.GetResearchReportResponse{Content: rec.Content, Metadata: fromReportMetadata(rec.Metadata)}, nil
}

// ListResearch pages a user's runs, or every run without a user id,
// newest first.
func (s *ResearchService) ListResearch(ctx context.Context, req *groundingv1.ListResearchRequest) (*groundingv1.ListResearchResponse, error) {
	runs, next, err := s.svc.List(ctx, req.GetUserId(), research.Page{Size: int(req.GetPageSize()), Token: req.GetPageToken()})
	if err != nil {
		return nil, s.toStatus(ctx, err, "listing research runs")
	}
	resp := &groundingv1.ListResearchResponse{NextPageToken: next, Runs: make([]*groundingv1.ResearchState, len(runs))}
	for i, r := range runs {
		resp.Runs[i] = fromRun(r)
	}
	return resp, nil
}

// WatchResearch streams the run each time it changes until it finishes or
// fails.
func (s *ResearchService) WatchResearch(req *groundingv1.WatchResearchRequest, stream groundingv1.ResearchService_WatchResearchServer) error {
	ctx := stream.Context()
	err := s.svc.Watch(ctx, req.GetId(), func(run *research.Run) error {
		if err := stream.Send(&groundingv1.WatchResearchResponse{Run: fromRun(run)}); err != nil {
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
	f := research.ApprovalFilter{Status: toApprovalStatus(req.GetStatus()), RunID: req.GetRunId()}
	as, next, err := s.svc.ListApprovals(ctx, f, research.Page{Size: int(req.GetPageSize()), Token: req.GetPageToken()})
	if err != nil {
		return nil, s.toStatus(ctx, err, "listing approvals")
	}
	resp := &groundingv1.ListApprovalsResponse{NextPageToken: next, Approvals: make([]*groundingv1.ApprovalRequest, len(as))}
	for i, a := range as {
		resp.Approvals[i] = fromApproval(a)
	}
	return resp, nil
}

// DecideApproval approves (the action runs) or rejects (it is skipped) a
// pending approval; a decided one, or a decision at or after timeout_at
// (which escalates the approval), gives FailedPrecondition. The
// authenticated actor is recorded as the decider; without one, decided_by
// marked "(self-declared)" (actor.Resolve), decided_by kept as a note.
func (s *ResearchService) DecideApproval(ctx context.Context, req *groundingv1.DecideApprovalRequest) (*groundingv1.DecideApprovalResponse, error) {
	if req.GetDecision() == groundingv1.DecideApprovalRequest_DECISION_UNSPECIFIED {
		return nil, grpcserver.FieldViolations(grpcserver.FieldViolation{Field: "decision", Description: "must be APPROVE or REJECT"})
	}
	// Who decided, by the one rule every service follows: the key's name,
	// else decided_by marked "(self-declared)".
	who, _ := actor.Resolve(ctx, req.GetDecidedBy())
	a, err := s.svc.Decide(ctx, research.DecideParams{
		ApprovalID: req.GetId(),
		Approve:    req.GetDecision() == groundingv1.DecideApprovalRequest_APPROVE,
		Actor:      who,
		DecidedBy:  req.GetDecidedBy(),
		Comment:    req.GetComment(),
	})
	if err != nil {
		return nil, s.toStatus(ctx, err, "deciding approval")
	}
	return &groundingv1.DecideApprovalResponse{Approval: fromApproval(a)}, nil
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
	case errors.Is(err, research.ErrEscalated):
		return grpcserver.PreconditionFailed("APPROVAL_ESCALATED", "approvals", "the approval escalated: its timeout passed before the decision, so the action was skipped")
	case errors.Is(err, research.ErrAlreadyDecided):
		return grpcserver.PreconditionFailed("APPROVAL_NOT_PENDING", "approvals", "the approval is no longer pending: it was decided or timed out")
	}
	return grpcserver.InternalError(ctx, s.logger, err, doing)
}

func toStartParams(req *groundingv1.StartResearchRequest) research.StartParams {
	p := research.StartParams{Topic: req.GetTopic(), UserID: req.GetUserId(), Collection: req.GetCollection()}
	for _, a := range req.GetActions() {
		p.Actions = append(p.Actions, research.ActionRequest{
			Type:       a.GetActionType(),
			Risk:       toRiskLevel(a.GetRiskLevel()),
			Parameters: a.GetParameters().AsMap(),
		})
	}
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

func fromRun(r *research.Run) *groundingv1.ResearchState {
	st := &groundingv1.ResearchState{
		Id:               r.ID,
		Topic:            r.Topic,
		UserId:           r.UserID,
		Status:           fromRunStatus(r.Status),
		IterationCount:   int32(r.IterationCount),
		MaxIterations:    int32(r.MaxIterations),
		QualityThreshold: r.QualityThreshold,
		QualityScore:     r.QualityScore,
		Plan:             r.Plan,
		Sources:          fromSources(r.Sources),
		Critique:         fromCritique(r.Critique),
		Report:           fromReport(r.Report),
		Error:            r.Error,
		CreateTime:       timestamppb.New(r.CreatedAt),
		UpdateTime:       timestamppb.New(r.UpdatedAt),
		Collection:       r.Collection,
		RefinedAnswer:    r.RefinedAnswer,
	}
	for _, a := range r.Actions {
		st.PlannedActions = append(st.PlannedActions, fromAction(a))
	}
	return st
}

func fromRunStatus(s research.Status) groundingv1.ResearchState_Status {
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

func fromSources(ss []research.Source) []*groundingv1.SourceReference {
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

func fromCritique(c *research.Critique) *groundingv1.Critique {
	if c == nil {
		return nil
	}
	return &groundingv1.Critique{QualityScore: c.Score, Reasons: c.Reasons, Gaps: c.Gaps}
}

func fromReport(r *research.Report) *groundingv1.ResearchReport {
	if r == nil {
		return nil
	}
	return &groundingv1.ResearchReport{
		ExecutiveSummary: r.ExecutiveSummary,
		FindingsMarkdown: r.FindingsMarkdown,
		Sources:          fromSources(r.Sources),
		Iterations:       int32(r.Iterations),
		GenerateTime:     timestamppb.New(r.GeneratedAt),
		Quality: &groundingv1.QualityIndicators{
			QualityScore:   r.Quality.Score,
			Warnings:       r.Quality.Warnings,
			LimitedSources: r.Quality.LimitedSources,
		},
		Sections: fromSectionEvidence(r.Sections),
	}
}

func fromSectionEvidence(ss []research.SectionEvidence) []*groundingv1.ReportSection {
	out := make([]*groundingv1.ReportSection, len(ss))
	for i, s := range ss {
		sec := &groundingv1.ReportSection{Question: s.Question, RelevanceBar: s.Bar, Scores: make([]*groundingv1.SourceRelevance, len(s.Scores))}
		for j, sc := range s.Scores {
			sec.Scores[j] = &groundingv1.SourceRelevance{Url: sc.URL, Score: sc.Score, Admitted: sc.Admitted}
		}
		out[i] = sec
	}
	return out
}

func toRiskLevel(r groundingv1.RiskLevel) research.RiskLevel {
	switch r {
	case groundingv1.RiskLevel_REVERSIBLE:
		return research.Reversible
	case groundingv1.RiskLevel_REVERSIBLE_WITH_DELAY:
		return research.ReversibleWithDelay
	case groundingv1.RiskLevel_IRREVERSIBLE:
		return research.Irreversible
	}
	return ""
}

func fromRiskLevel(r research.RiskLevel) groundingv1.RiskLevel {
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

// fromAction converts an action; an approved action and one that needs
// no approval are both QUEUED until they run.
func fromAction(a research.Action) *groundingv1.PlannedAction {
	return &groundingv1.PlannedAction{
		Id:          a.ID,
		ActionType:  a.Type,
		Description: a.Description,
		RiskLevel:   fromRiskLevel(a.Risk),
		Status:      fromActionStatus(a.Status),
		ApprovalId:  a.ApprovalID,
		Result:      a.Result,
		Parameters:  fromParameters(a.Parameters),
	}
}

// fromParameters converts an action's parameters; they came from a Struct or
// from the service's own strings, so a conversion error cannot happen and
// would only drop the display copy.
func fromParameters(m map[string]any) *structpb.Struct {
	if len(m) == 0 {
		return nil
	}
	st, err := structpb.NewStruct(m)
	if err != nil {
		return nil
	}
	return st
}

func fromActionStatus(s research.ActionStatus) groundingv1.PlannedAction_Status {
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

func fromApprovalStatus(s research.ApprovalStatus) groundingv1.ApprovalRequest_Status {
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

func toApprovalStatus(s groundingv1.ApprovalRequest_Status) research.ApprovalStatus {
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

func fromApproval(a *research.Approval) *groundingv1.ApprovalRequest {
	return &groundingv1.ApprovalRequest{
		Id:          a.ID,
		RunId:       a.RunID,
		ActionId:    a.ActionID,
		ActionType:  a.ActionType,
		Description: a.Description,
		RiskLevel:   fromRiskLevel(a.Risk),
		Requester:   a.Requester,
		RequestedAt: timestamppb.New(a.RequestedAt),
		TimeoutAt:   timestamppb.New(a.TimeoutAt),
		Status:      fromApprovalStatus(a.Status),
		Decision:    fromDecision(a.Decision),
	}
}

func fromDecision(d *research.Decision) *groundingv1.DecisionMetadata {
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
		Actor:           d.Actor,
		DecidedBy:       d.DecidedBy,
	}
}

func fromReportMetadata(m research.ReportMetadata) *groundingv1.ResearchReportMetadata {
	out := &groundingv1.ResearchReportMetadata{
		Type:           m.Type,
		Topic:          m.Topic,
		UserId:         m.UserID,
		IterationCount: int32(m.IterationCount),
		Timestamp:      timestamppb.New(m.Timestamp),
		Sources:        make([]*groundingv1.ReportSource, len(m.Sources)),
	}
	for i, s := range m.Sources {
		out.Sources[i] = &groundingv1.ReportSource{Title: s.Title, Url: s.URL}
	}
	return out
}
