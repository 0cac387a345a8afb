package notifierclient_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/grpcserver/grpcservertest"
	"github.com/groundcrew/groundcrew/services/grounding/internal/notifierclient"
	"github.com/groundcrew/groundcrew/services/grounding/internal/research"
)

type fakeNotifier struct {
	notifierv1.UnimplementedNotifierServiceServer
	got *notifierv1.SendMessageRequest
}

func (f *fakeNotifier) SendMessage(_ context.Context, req *notifierv1.SendMessageRequest) (*notifierv1.SendMessageResponse, error) {
	f.got = req
	return &notifierv1.SendMessageResponse{DeliveryId: "d-1", Destination: "log"}, nil
}

func TestSend(t *testing.T) {
	f := &fakeNotifier{}
	conn := grpcservertest.Serve(t, func(s *grpc.Server) { notifierv1.RegisterNotifierServiceServer(s, f) })
	c := notifierclient.New(notifierv1.NewNotifierServiceClient(conn))

	const id = "0195c2b4-7c1e-7b3a-9d7e-1f2a3b4c5d6e"
	got, err := c.Send(t.Context(), research.Message{
		ChatID: "-100200", Text: "Approval needed", IdempotencyKey: "research-approval:" + id,
		Buttons: []research.Button{{Text: "Approve", ApprovalID: id, Approve: true}, {Text: "Reject", ApprovalID: id}},
	})
	if err != nil || got != "d-1" {
		t.Fatalf("Send = %q, %v", got, err)
	}
	want := &notifierv1.SendMessageRequest{
		Text: "Approval needed", ChatId: "-100200", IdempotencyKey: "research-approval:" + id, Sender: notifierclient.Sender,
		Buttons: []*notifierv1.InlineButton{
			{Text: "Approve", Approval: &notifierv1.ApprovalButton{ApprovalId: id, Decision: notifierv1.ApprovalButton_DECISION_APPROVE}},
			{Text: "Reject", Approval: &notifierv1.ApprovalButton{ApprovalId: id, Decision: notifierv1.ApprovalButton_DECISION_REJECT}},
		},
	}
	if diff := cmp.Diff(want, f.got, protocmp.Transform()); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
}

type refusingNotifier struct {
	notifierv1.UnimplementedNotifierServiceServer
	err error
}

func (f refusingNotifier) SendMessage(context.Context, *notifierv1.SendMessageRequest) (*notifierv1.SendMessageResponse, error) {
	return nil, f.err
}

// TestSendRefused holds which answers are permanent refusals (the action
// fails with the notifier's words) and which are worth retrying.
func TestSendRefused(t *testing.T) {
	tests := []struct {
		code    codes.Code
		refused bool
	}{
		{codes.PermissionDenied, true},
		{codes.InvalidArgument, true},
		{codes.NotFound, true},
		{codes.FailedPrecondition, true},
		{codes.Unavailable, false},
		{codes.DeadlineExceeded, false},
		{codes.ResourceExhausted, false},
		{codes.Internal, false},
	}
	for _, tt := range tests {
		t.Run(tt.code.String(), func(t *testing.T) {
			conn := grpcservertest.Serve(t, func(s *grpc.Server) {
				notifierv1.RegisterNotifierServiceServer(s, refusingNotifier{err: status.Error(tt.code, "chat_id is not a configured chat")})
			})
			_, err := notifierclient.New(notifierv1.NewNotifierServiceClient(conn)).Send(t.Context(), research.Message{ChatID: "-1001234", Text: "x"})
			var refused *research.RefusedError
			if got := errors.As(err, &refused); got != tt.refused {
				t.Fatalf("Send error %v: refused = %v, want %v", err, got, tt.refused)
			}
			if tt.refused && refused.Reason != "chat_id is not a configured chat" {
				t.Errorf("reason = %q, want the notifier's message", refused.Reason)
			}
		})
	}
}
