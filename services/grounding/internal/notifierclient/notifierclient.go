// Package notifierclient adapts the notifier service's gRPC API
// (groundcrew.notifier.v1.NotifierService) to research.Notifier: research
// summaries and approval requests posted to the team chat.
package notifierclient

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/services/grounding/internal/research"
)

// Sender names grounding's research workflow to the notifier.
const Sender = "grounding-research"

// Client is a research.Notifier over a notifier service connection.
type Client struct {
	notifier notifierv1.NotifierServiceClient
}

var _ research.Notifier = (*Client)(nil)

// New returns a Client calling notifier.
func New(notifier notifierv1.NotifierServiceClient) *Client {
	return &Client{notifier: notifier}
}

// Send posts msg (to msg.ChatID, or the notifier's default chat when it is
// empty) with its approval buttons, whose callback data the notifier
// writes, and returns the delivery id.
func (c *Client) Send(ctx context.Context, msg research.Message) (string, error) {
	req := &notifierv1.SendMessageRequest{
		Text:           msg.Text,
		ChatId:         msg.ChatID,
		IdempotencyKey: msg.IdempotencyKey,
		Sender:         Sender,
	}
	for _, b := range msg.Buttons {
		d := notifierv1.ApprovalButton_DECISION_REJECT
		if b.Approve {
			d = notifierv1.ApprovalButton_DECISION_APPROVE
		}
		req.Buttons = append(req.Buttons, &notifierv1.InlineButton{
			Text:     b.Text,
			Approval: &notifierv1.ApprovalButton{ApprovalId: b.ApprovalID, Decision: d},
		})
	}
	resp, err := c.notifier.SendMessage(ctx, req)
	if err != nil {
		if refused := toRefused(err); refused != nil {
			return "", refused
		}
		return "", fmt.Errorf("notifier service: %w", err)
	}
	return resp.GetDeliveryId(), nil
}

// toRefused returns the notifier's permanent refusals as a
// research.RefusedError, with the notifier's own words (its messages for
// these codes are written for callers; see notifiergrpc.SendMessage), and
// nil for anything worth retrying (Unavailable, DeadlineExceeded,
// ResourceExhausted, Internal, …).
func toRefused(err error) *research.RefusedError {
	st, ok := status.FromError(err)
	if !ok {
		return nil
	}
	switch st.Code() {
	case codes.PermissionDenied, codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition:
		return &research.RefusedError{Reason: st.Message()}
	default:
		return nil
	}
}
