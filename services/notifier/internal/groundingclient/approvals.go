package groundingclient

import (
	"context"
	"fmt"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	"github.com/groundcrew/groundcrew/platform/actor"
	"github.com/groundcrew/groundcrew/services/notifier/internal/approval"
	"github.com/groundcrew/groundcrew/services/notifier/internal/taskjobs"
)

// Approvals records approval decisions through grounding's ResearchService,
// and starts the research runs the chat agent's tasks ask for.
type Approvals struct {
	api groundingv1.ResearchServiceClient
}

var (
	_ approval.Decider    = (*Approvals)(nil)
	_ taskjobs.Researcher = (*Approvals)(nil)
)

// NewApprovals returns an Approvals over api.
func NewApprovals(api groundingv1.ResearchServiceClient) *Approvals {
	return &Approvals{api: api}
}

// Decide calls DecideApproval. FailedPrecondition (decided before, or timed
// out) becomes approval.ErrAlreadyDecided and NotFound approval.ErrNotFound.
func (a *Approvals) Decide(ctx context.Context, id string, d approval.Decision, decidedBy string) error {
	// The person who pressed is the actor grounding records.
	ctx = actor.OutgoingContext(ctx, decidedBy)
	_, err := a.api.DecideApproval(ctx, &groundingv1.DecideApprovalRequest{
		Id: id, Decision: fromDecision(d), DecidedBy: decidedBy, Comment: "decided in Telegram",
	})
	switch status.Code(err) {
	case codes.OK:
		return nil
	case codes.FailedPrecondition:
		return fmt.Errorf("approval %s: %w", id, approval.ErrAlreadyDecided)
	case codes.NotFound:
		return fmt.Errorf("approval %s: %w", id, approval.ErrNotFound)
	}
	return &Error{step: "DecideApproval", code: status.Code(err), err: err}
}

func fromDecision(d approval.Decision) groundingv1.DecideApprovalRequest_Decision {
	if d == approval.Approve {
		return groundingv1.DecideApprovalRequest_APPROVE
	}
	return groundingv1.DecideApprovalRequest_REJECT
}

// StartResearch starts a research run for a chat user whose send_summary
// action posts the summary to chatID. InvalidArgument and
// FailedPrecondition (a chat the research service does not post to, a bad
// topic) are taskjobs.ErrRefused.
func (a *Approvals) StartResearch(ctx context.Context, topic, userID, by string, chatID int64) (string, error) {
	params, err := structpb.NewStruct(map[string]any{"chat_id": strconv.FormatInt(chatID, 10)})
	if err != nil {
		return "", err
	}
	ctx = actor.OutgoingContext(ctx, by)
	resp, err := a.api.StartResearch(ctx, &groundingv1.StartResearchRequest{
		Topic: topic, UserId: userID,
		Actions: []*groundingv1.RequestedAction{{ActionType: "send_summary", Parameters: params}},
	})
	switch status.Code(err) {
	case codes.OK:
		return resp.GetRun().GetId(), nil
	case codes.InvalidArgument, codes.FailedPrecondition, codes.PermissionDenied:
		return "", fmt.Errorf("research on %q: %w: %s", topic, taskjobs.ErrRefused, status.Convert(err).Message())
	}
	return "", &Error{step: "StartResearch", code: status.Code(err), err: err}
}
