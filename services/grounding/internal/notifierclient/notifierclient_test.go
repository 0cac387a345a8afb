package notifierclient_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
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
