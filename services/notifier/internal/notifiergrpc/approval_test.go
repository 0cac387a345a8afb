package notifiergrpc

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/testing/protocmp"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/notifier/internal/approval"
	"github.com/groundcrew/groundcrew/services/notifier/internal/chat"
	"github.com/groundcrew/groundcrew/services/notifier/internal/groundingclient"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
	"github.com/groundcrew/groundcrew/services/notifier/internal/telegram"
	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

// Approval ids the fake ResearchService answers specially.
const (
	pendingID   = "0193a5b2-7c1e-7d2f-9a8b-0123456789ab"
	decidedID   = "0193a5b2-7c1e-7d2f-9a8b-00000000dead"
	downID      = "0193a5b2-7c1e-7d2f-9a8b-00000000d0e5"
	approvalMsg = "Approve deleting 3 stale indexes?"
)

// fakeResearch records DecideApproval calls; decidedID is already decided
// and downID finds the service unavailable.
type fakeResearch struct {
	groundingv1.UnimplementedResearchServiceServer
	mu   sync.Mutex
	reqs []*groundingv1.DecideApprovalRequest
}

func (f *fakeResearch) DecideApproval(_ context.Context, req *groundingv1.DecideApprovalRequest) (*groundingv1.DecideApprovalResponse, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	switch req.GetId() {
	case decidedID:
		return nil, status.Error(codes.FailedPrecondition, "approval is ESCALATED, not PENDING")
	case downID:
		return nil, status.Error(codes.Unavailable, "database is locked")
	}
	return &groundingv1.DecideApprovalResponse{Approval: &groundingv1.ApprovalRequest{Id: req.GetId()}}, nil
}

func (f *fakeResearch) requests() []*groundingv1.DecideApprovalRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*groundingv1.DecideApprovalRequest(nil), f.reqs...)
}

// researchClient serves f over bufconn and returns a client of it.
func researchClient(t *testing.T, f *fakeResearch) groundingv1.ResearchServiceClient {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	groundingv1.RegisterResearchServiceServer(srv, f)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("passthrough:///research",
		grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) { return lis.Dial() }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return groundingv1.NewResearchServiceClient(conn)
}

type approvalEnv struct {
	client   notifierv1.NotifierServiceClient
	tg       *telegramtest.Server
	research *fakeResearch
}

func newApprovalEnv(t *testing.T) approvalEnv {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, sqlstoretest.URL(t, "notifiergrpc"), t.TempDir(), "notifier", discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := store.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	tg := telegramtest.NewServer(t.Cleanup)
	hc := &http.Client{Timeout: 5 * time.Second}
	t.Cleanup(hc.CloseIdleConnections)
	tc, err := telegram.New(botToken, telegram.Options{APIURL: tg.URL, SkipGetMe: true, HTTPClient: hc, PerChat: 1000, Overall: 1000})
	if err != nil {
		t.Fatal(err)
	}
	research := &fakeResearch{}
	agent := chat.New(chat.Config{BotID: telegram.BotID(botToken), BotUsername: "groundcrew_bot"},
		store.New(db), &fakeConverser{}, &telegram.Replier{Client: tc}, discard())
	agent.HandleCallbacks(approval.New(groundingclient.NewApprovals(researchClient(t, research)), tc, discard()))
	return approvalEnv{client: serve(t, Deps{Updates: agent}), tg: tg, research: research}
}

// press is a callback_query update for a button under message 5200 in chat
// -100777.
func press(updateID int64, from *notifierv1.TelegramUser, data string) *notifierv1.TelegramUpdate {
	return &notifierv1.TelegramUpdate{UpdateId: updateID, CallbackQuery: &notifierv1.TelegramCallbackQuery{
		Id: "cbq-1", From: from, Data: data,
		Message: &notifierv1.TelegramChatMessage{
			MessageId: 5200, Text: approvalMsg,
			Chat: &notifierv1.TelegramChat{Id: -100777, Type: "supergroup", Title: "SRE"},
		},
	}}
}

func TestApprovalButtons(t *testing.T) {
	ana := &notifierv1.TelegramUser{Id: 84211, FirstName: "Ana", Username: "anasilva"}
	bo := &notifierv1.TelegramUser{Id: 5150, FirstName: "Bo"}
	tests := []struct {
		name        string
		update      *notifierv1.TelegramUpdate
		wantOutcome string
		wantCode    codes.Code
		wantDecide  *groundingv1.DecideApprovalRequest // nil: no call
		wantAnswer  string                             // "": no answerCallbackQuery
		wantEdit    string                             // "": no editMessageText
	}{
		{
			name: "approve", update: press(1, ana, "approval:"+pendingID+":approve"), wantOutcome: chat.Decided,
			wantDecide: &groundingv1.DecideApprovalRequest{Id: pendingID, Decision: groundingv1.DecideApprovalRequest_APPROVE, DecidedBy: "telegram:84211 @anasilva", Comment: "decided in Telegram"},
			wantAnswer: "Approved by @anasilva", wantEdit: approvalMsg + "\n\nApproved by @anasilva",
		},
		{
			name: "reject without a username", update: press(2, bo, "approval:"+pendingID+":reject"), wantOutcome: chat.Decided,
			wantDecide: &groundingv1.DecideApprovalRequest{Id: pendingID, Decision: groundingv1.DecideApprovalRequest_REJECT, DecidedBy: "telegram:5150", Comment: "decided in Telegram"},
			wantAnswer: "Rejected by Bo", wantEdit: approvalMsg + "\n\nRejected by Bo",
		},
		{
			name: "already decided or timed out", update: press(3, ana, "approval:"+decidedID+":approve"), wantOutcome: chat.Decided,
			wantDecide: &groundingv1.DecideApprovalRequest{Id: decidedID, Decision: groundingv1.DecideApprovalRequest_APPROVE, DecidedBy: "telegram:84211 @anasilva", Comment: "decided in Telegram"},
			wantAnswer: "Already decided or timed out", wantEdit: approvalMsg + "\n\nAlready decided or timed out",
		},
		{
			name: "grounding unavailable", update: press(4, ana, "approval:"+downID+":reject"), wantCode: codes.Internal,
			wantDecide: &groundingv1.DecideApprovalRequest{Id: downID, Decision: groundingv1.DecideApprovalRequest_REJECT, DecidedBy: "telegram:84211 @anasilva", Comment: "decided in Telegram"},
			wantAnswer: "Could not record the decision; please try again",
		},
		{name: "other buttons", update: readUpdate(t, "callback_query.json"), wantOutcome: chat.Ignored},
		{name: "not a uuid", update: press(5, ana, "approval:42:approve"), wantOutcome: chat.Ignored},
		{name: "unknown verb", update: press(6, ana, "approval:"+pendingID+":maybe"), wantOutcome: chat.Ignored},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newApprovalEnv(t)
			resp, err := env.client.HandleTelegramUpdate(context.Background(), &notifierv1.HandleTelegramUpdateRequest{Update: tt.update})
			if status.Code(err) != tt.wantCode {
				t.Fatalf("code %v (%v), want %v", status.Code(err), err, tt.wantCode)
			}
			if err != nil && status.Convert(err).Message() == "" {
				t.Errorf("error %v has no message", err)
			}
			if got := resp.GetOutcome(); got != tt.wantOutcome {
				t.Errorf("outcome %q, want %q", got, tt.wantOutcome)
			}
			var wantDecide []*groundingv1.DecideApprovalRequest
			if tt.wantDecide != nil {
				wantDecide = append(wantDecide, tt.wantDecide)
			}
			if diff := cmp.Diff(wantDecide, env.research.requests(), protocmp.Transform()); diff != "" {
				t.Errorf("DecideApproval calls (-want +got):\n%s", diff)
			}
			// The handler makes its Bot API calls before it answers.
			var wantAnswers, wantEdits []telegramtest.Call
			if tt.wantAnswer != "" {
				wantAnswers = []telegramtest.Call{{Method: "answerCallbackQuery", Form: map[string]string{"callback_query_id": "cbq-1", "text": tt.wantAnswer}}}
			}
			if tt.wantEdit != "" {
				wantEdits = []telegramtest.Call{{Method: "editMessageText", Form: map[string]string{
					"chat_id": "-100777", "message_id": "5200", "text": tt.wantEdit, "link_preview_options": `{"is_disabled":true}`,
				}}}
			}
			if diff := cmp.Diff(wantAnswers, env.tg.Calls("answerCallbackQuery")); diff != "" {
				t.Errorf("answerCallbackQuery (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantEdits, env.tg.Calls("editMessageText")); diff != "" {
				t.Errorf("editMessageText (-want +got):\n%s", diff)
			}
		})
	}
}
