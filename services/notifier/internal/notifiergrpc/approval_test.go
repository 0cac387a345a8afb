package notifiergrpc

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/grpcserver/grpcservertest"
	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/notifier/internal/approval"
	"github.com/groundcrew/groundcrew/services/notifier/internal/chat"
	"github.com/groundcrew/groundcrew/services/notifier/internal/groundingclient"
	"github.com/groundcrew/groundcrew/services/notifier/internal/outbound"
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
	conn := grpcservertest.Serve(t, func(srv *grpc.Server) { groundingv1.RegisterResearchServiceServer(srv, f) })
	return groundingv1.NewResearchServiceClient(conn)
}

type approvalEnv struct {
	client   notifierv1.NotifierServiceClient
	tg       *telegramtest.Server
	research *fakeResearch
	// sent is the Telegram message id of each approval's message.
	sent map[string]int64
}

// approvalChat is where approval messages go; it is an allowed chat.
const approvalChat = -100777

// newApprovalEnv runs the agent with approval buttons against the Telegram
// stand-in and sends one approval message for each of the three ids, as
// the research service does through SendMessage.
func newApprovalEnv(t *testing.T, cfg approval.Config) approvalEnv {
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
	st := store.New(db)
	research := &fakeResearch{}
	agent := chat.New(chat.Config{BotID: telegram.BotID(botToken), BotUsername: "groundcrew_bot", AllowedChats: []int64{approvalChat, -1001987654321}},
		st, &fakeConverser{}, &telegram.Replier{Client: tc}, discard())
	agent.HandleCallbacks(approval.New(groundingclient.NewApprovals(researchClient(t, research)), tc, st, cfg, discard()), tc)
	messages := outbound.New(st, &telegram.Deliverer{Client: tc, Router: telegram.Router{Default: strconv.Itoa(approvalChat)}, Logger: discard()}, discard())
	client := serve(t, Deps{Updates: agent, Messages: messages, SendChats: []string{strconv.Itoa(approvalChat)}})
	env := approvalEnv{client: client, tg: tg, research: research, sent: map[string]int64{}}
	for _, id := range []string{pendingID, decidedID, downID} {
		resp, err := client.SendMessage(ctx, &notifierv1.SendMessageRequest{Text: approvalMsg, Sender: "grounding", Buttons: []*notifierv1.InlineButton{
			{Text: "Approve", Approval: &notifierv1.ApprovalButton{ApprovalId: id, Decision: notifierv1.ApprovalButton_DECISION_APPROVE}},
			{Text: "Reject", Approval: &notifierv1.ApprovalButton{ApprovalId: id, Decision: notifierv1.ApprovalButton_DECISION_REJECT}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		msgID, err := strconv.ParseInt(resp.GetDeliveryId(), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		env.sent[id] = msgID
	}
	return env
}

// press is a callback_query update for a button under message msgID in
// chatID.
func press(updateID int64, from *notifierv1.TelegramUser, data string, chatID, msgID int64) *notifierv1.TelegramUpdate {
	return &notifierv1.TelegramUpdate{UpdateId: updateID, CallbackQuery: &notifierv1.TelegramCallbackQuery{
		Id: "cbq-1", From: from, Data: data,
		Message: &notifierv1.TelegramChatMessage{
			MessageId: msgID, Text: "forged text the edit must not reuse",
			Chat: &notifierv1.TelegramChat{Id: chatID, Type: "supergroup", Title: "SRE"},
		},
	}}
}

var (
	ana = &notifierv1.TelegramUser{Id: 84211, FirstName: "Ana", Username: "anasilva"}
	bo  = &notifierv1.TelegramUser{Id: 5150, FirstName: "Bo"}
)

func TestApprovalButtons(t *testing.T) {
	decide := func(id string, d groundingv1.DecideApprovalRequest_Decision, by string) *groundingv1.DecideApprovalRequest {
		return &groundingv1.DecideApprovalRequest{Id: id, Decision: d, DecidedBy: by, Comment: "decided in Telegram"}
	}
	tests := []struct {
		name        string
		cfg         approval.Config
		update      func(sent map[string]int64) *notifierv1.TelegramUpdate
		wantOutcome string
		wantCode    codes.Code
		wantDecide  *groundingv1.DecideApprovalRequest // nil: no call
		wantAnswer  string                             // "": no answerCallbackQuery
		wantEditOf  string                             // the approval whose message is edited; "": none
		wantEdit    string
	}{
		{
			name: "approve", wantOutcome: chat.Decided,
			update: func(sent map[string]int64) *notifierv1.TelegramUpdate {
				return press(1, ana, approval.CallbackData(pendingID, approval.Approve), approvalChat, sent[pendingID])
			},
			wantDecide: decide(pendingID, groundingv1.DecideApprovalRequest_APPROVE, "telegram:84211 @anasilva"),
			wantAnswer: "Approved by @anasilva", wantEditOf: pendingID, wantEdit: approvalMsg + "\n\nApproved by @anasilva",
		},
		{
			name: "reject without a username", wantOutcome: chat.Decided,
			update: func(sent map[string]int64) *notifierv1.TelegramUpdate {
				return press(2, bo, approval.CallbackData(pendingID, approval.Reject), approvalChat, sent[pendingID])
			},
			wantDecide: decide(pendingID, groundingv1.DecideApprovalRequest_REJECT, "telegram:5150"),
			wantAnswer: "Rejected by Bo", wantEditOf: pendingID, wantEdit: approvalMsg + "\n\nRejected by Bo",
		},
		{
			name: "already decided or timed out: answered, not edited", wantOutcome: chat.Decided,
			update: func(sent map[string]int64) *notifierv1.TelegramUpdate {
				return press(3, ana, approval.CallbackData(decidedID, approval.Approve), approvalChat, sent[decidedID])
			},
			wantDecide: decide(decidedID, groundingv1.DecideApprovalRequest_APPROVE, "telegram:84211 @anasilva"),
			wantAnswer: "Already decided or timed out",
		},
		{
			name: "grounding unavailable", wantCode: codes.Internal,
			update: func(sent map[string]int64) *notifierv1.TelegramUpdate {
				return press(4, ana, approval.CallbackData(downID, approval.Reject), approvalChat, sent[downID])
			},
			wantDecide: decide(downID, groundingv1.DecideApprovalRequest_REJECT, "telegram:84211 @anasilva"),
			wantAnswer: "Could not record the decision; please try again",
		},
		{
			name: "approver by username", wantOutcome: chat.Decided, cfg: approval.Config{Approvers: mustApprovers(t, "@AnaSilva, 1")},
			update: func(sent map[string]int64) *notifierv1.TelegramUpdate {
				return press(7, ana, approval.CallbackData(pendingID, approval.Approve), approvalChat, sent[pendingID])
			},
			wantDecide: decide(pendingID, groundingv1.DecideApprovalRequest_APPROVE, "telegram:84211 @anasilva"),
			wantAnswer: "Approved by @anasilva", wantEditOf: pendingID, wantEdit: approvalMsg + "\n\nApproved by @anasilva",
		},
		{name: "other buttons", update: func(sent map[string]int64) *notifierv1.TelegramUpdate {
			return press(8, ana, "ack:01931c2e", approvalChat, sent[pendingID])
		}, wantOutcome: chat.Ignored},
		{name: "not a uuid", update: func(map[string]int64) *notifierv1.TelegramUpdate {
			return press(5, ana, "approval:42:approve", approvalChat, 100)
		}, wantOutcome: chat.Ignored},
		{name: "unknown verb", update: func(sent map[string]int64) *notifierv1.TelegramUpdate {
			return press(6, ana, "approval:"+pendingID+":maybe", approvalChat, sent[pendingID])
		}, wantOutcome: chat.Ignored},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newApprovalEnv(t, tt.cfg)
			resp, err := env.client.HandleTelegramUpdate(context.Background(), &notifierv1.HandleTelegramUpdateRequest{Update: tt.update(env.sent)})
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
			if tt.wantEditOf != "" {
				wantEdits = []telegramtest.Call{{Method: "editMessageText", Form: map[string]string{
					"chat_id": strconv.Itoa(approvalChat), "message_id": strconv.FormatInt(env.sent[tt.wantEditOf], 10), "text": tt.wantEdit,
					"link_preview_options": `{"is_disabled":true}`,
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

func mustApprovers(t *testing.T, spec string) approval.Approvers {
	t.Helper()
	a, err := approval.ParseApprovers(spec)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
