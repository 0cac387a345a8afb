package notifiergrpc

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/actor"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/services/notifier/internal/approval"
	"github.com/groundcrew/groundcrew/services/notifier/internal/outbound"
	"github.com/groundcrew/groundcrew/services/notifier/internal/senderr"
	"github.com/groundcrew/groundcrew/services/notifier/internal/telegram"
)

// Messages sends non-alert messages (outbound.Service).
type Messages interface {
	Send(ctx context.Context, req outbound.Request) (outbound.Result, error)
}

// SendMessage delivers a message synchronously, within the call's deadline,
// through the configured delivery (see package outbound).
func (s *NotifierService) SendMessage(ctx context.Context, req *notifierv1.SendMessageRequest) (*notifierv1.SendMessageResponse, error) {
	if s.messages == nil {
		return nil, status.Error(codes.Unimplemented, "sending messages is not configured")
	}
	if c := req.GetChatId(); c != "" && !telegram.ValidChatID(c) {
		return nil, grpcserver.FieldViolations(grpcserver.FieldViolation{Field: "chat_id", Description: "must be a chat id such as -100123 or @channelname"})
	}
	who := actor.FromContext(ctx)
	if c := req.GetChatId(); c != "" && !s.chats[c] {
		s.logger.WarnContext(ctx, "send to a chat that is not configured refused", "chat_id", c, "actor", who, "sender", req.GetSender())
		return nil, status.Error(codes.PermissionDenied, "chat_id is not a configured chat (TELEGRAM_CHAT_ID, NOTIFIER_ROUTES, TELEGRAM_ALLOWED_CHATS, RESEARCH_CHAT_ID or RESEARCH_SUMMARY_CHATS)")
	}
	sr := toSendRequest(req)
	sr.Actor = who
	res, err := s.messages.Send(ctx, sr)
	if err != nil {
		return nil, s.sendError(ctx, err)
	}
	return fromSendResult(res), nil
}

func toSendRequest(req *notifierv1.SendMessageRequest) outbound.Request {
	out := outbound.Request{
		Text: req.GetText(), ChatID: req.GetChatId(), IdempotencyKey: req.GetIdempotencyKey(), Sender: req.GetSender(),
	}
	for _, b := range req.GetButtons() {
		out.Buttons = append(out.Buttons, toButton(b))
	}
	return out
}

// toButton writes an approval button's callback data (the one contract,
// package approval); other buttons keep theirs.
func toButton(b *notifierv1.InlineButton) outbound.Button {
	if a := b.GetApproval(); a != nil {
		d := approval.Approve
		if a.GetDecision() == notifierv1.ApprovalButton_DECISION_REJECT {
			d = approval.Reject
		}
		return outbound.Button{Text: b.GetText(), CallbackData: approval.CallbackData(a.GetApprovalId(), d)}
	}
	return outbound.Button{Text: b.GetText(), CallbackData: b.GetCallbackData()}
}

func fromSendResult(res outbound.Result) *notifierv1.SendMessageResponse {
	return &notifierv1.SendMessageResponse{
		DeliveryId: res.Record.DeliveryID, Destination: res.Record.Destination, Duplicate: res.Duplicate,
	}
}

// sendError maps a send's error to a status. Delivery errors carry only
// their public description; anything else is Internal.
func (s *NotifierService) sendError(ctx context.Context, err error) error {
	if errors.Is(err, outbound.ErrKeyReused) {
		return grpcserver.FieldViolations(grpcserver.FieldViolation{Field: "idempotency_key", Description: "already used for a different message"})
	}
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return status.Error(codes.DeadlineExceeded, "the message was not delivered before the deadline")
	}
	// What the send error means is decided where it is for every delivery
	// (senderr.Classify); here it only becomes a code.
	v := senderr.Classify(err)
	if v.Action == senderr.RetryAfter {
		return status.Error(codes.Unavailable, fmt.Sprintf("rate limited by Telegram; retry after %s", v.Wait))
	}
	var pub interface{ Public() string }
	if !errors.As(err, &pub) {
		return grpcserver.InternalError(ctx, s.logger, err, "sending a message")
	}
	if v.Action != senderr.Retry {
		// Sending the same message again would be refused again.
		return grpcserver.PreconditionFailed("RECEIVER_REFUSED", "chats", pub.Public())
	}
	return status.Error(codes.Unavailable, pub.Public())
}
