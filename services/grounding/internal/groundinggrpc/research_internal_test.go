package groundinggrpc

import (
	"testing"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	"github.com/groundcrew/groundcrew/services/grounding/internal/research"
)

func TestToActionStatus(t *testing.T) {
	for _, tt := range []struct {
		in   research.ActionStatus
		want groundingv1.PlannedAction_Status
	}{
		{research.ActionAwaitingApproval, groundingv1.PlannedAction_AWAITING_APPROVAL},
		{research.ActionApproved, groundingv1.PlannedAction_QUEUED},
		{research.ActionQueued, groundingv1.PlannedAction_QUEUED},
		{research.ActionExecuted, groundingv1.PlannedAction_EXECUTED},
		{research.ActionSkipped, groundingv1.PlannedAction_SKIPPED},
		{research.ActionFailed, groundingv1.PlannedAction_FAILED},
		{"", groundingv1.PlannedAction_STATUS_UNSPECIFIED},
	} {
		if got := fromActionStatus(tt.in); got != tt.want {
			t.Errorf("fromActionStatus(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
