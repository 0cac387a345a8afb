package groundingclient

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	"github.com/groundcrew/groundcrew/platform/actor"
	"github.com/groundcrew/groundcrew/services/notifier/internal/approval"
)

// Approvals records approval decisions through grounding's ResearchService.
type Approvals struct {
	api groundingv1.ResearchServiceClient
}

var _ approval.Decider = (*Approvals)(nil)

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
		Id: id, Decision: toDecision(d), DecidedBy: decidedBy, Comment: "decided in Telegram",
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

func toDecision(d approval.Decision) groundingv1.DecideApprovalRequest_Decision {
	if d == approval.Approve {
		return groundingv1.DecideApprovalRequest_APPROVE
	}
	return groundingv1.DecideApprovalRequest_REJECT
}
