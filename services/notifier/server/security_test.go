package server_test

// The attacks on the notifier's Telegram side (issue 13), each reproduced
// against the real service (server.Run, a Telegram stand-in, a grounding
// stand-in) and shown refused: forged webhook updates without or with a
// wrong secret, a disabled webhook, a forged callback editing an arbitrary
// message, replies into an arbitrary chat, replayed and non-monotonic
// update ids, sends to an arbitrary chat, a non-approver deciding, and a
// chat spending the model without bound.

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/actor"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/services/notifier/server"
	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

const (
	secToken   = "7100000001:AAE-security-test"
	secSecret  = "the-real-webhook-secret"
	alertsChat = -100123 // TELEGRAM_CHAT_ID: allowed by default
	otherChat  = -100999 // nobody configured it
	approvalID = "0193a5b2-7c1e-7d2f-9a8b-0123456789ab"
)

// groundingStandIn answers Converse and DecideApproval and records them.
type groundingStandIn struct {
	groundingv1.UnimplementedGroundingServiceServer
	groundingv1.UnimplementedResearchServiceServer
	mu        sync.Mutex
	reply     string // Converse's answer; "" means a fixed sentence
	converses int
	decisions []*groundingv1.DecideApprovalRequest
	actors    []string
	started   []*groundingv1.StartResearchRequest
	notes     string // the last Converse's model_notes
}

func (g *groundingStandIn) Converse(_ context.Context, req *groundingv1.ConverseRequest) (*groundingv1.ConverseResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.converses++
	g.notes = req.GetModelNotes()
	if g.reply != "" {
		return &groundingv1.ConverseResponse{Text: g.reply}, nil
	}
	return &groundingv1.ConverseResponse{Text: "Here is what I know."}, nil
}

func (g *groundingStandIn) StartResearch(ctx context.Context, req *groundingv1.StartResearchRequest) (*groundingv1.StartResearchResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.started = append(g.started, req)
	g.actors = append(g.actors, actor.FromContext(ctx))
	return &groundingv1.StartResearchResponse{Run: &groundingv1.ResearchState{Id: "run-1"}}, nil
}

func (g *groundingStandIn) DecideApproval(ctx context.Context, req *groundingv1.DecideApprovalRequest) (*groundingv1.DecideApprovalResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.decisions = append(g.decisions, req)
	g.actors = append(g.actors, actor.FromContext(ctx))
	return &groundingv1.DecideApprovalResponse{Approval: &groundingv1.ApprovalRequest{Id: req.GetId()}}, nil
}

func (g *groundingStandIn) counts() (converses, decisions int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.converses, len(g.decisions)
}

type secEnv struct {
	n      running
	c      notifierv1.NotifierServiceClient
	tg     *telegramtest.Server
	ground *groundingStandIn
}

func startSecured(t *testing.T, extra map[string]string) secEnv {
	t.Helper()
	return startWith(t, &groundingStandIn{}, extra)
}

func startWith(t *testing.T, g *groundingStandIn, extra map[string]string) secEnv {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	groundingv1.RegisterGroundingServiceServer(srv, g)
	groundingv1.RegisterResearchServiceServer(srv, g)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	tg := telegramtest.NewServer(t.Cleanup)
	env := map[string]string{
		"DATA_DIR":                        t.TempDir(),
		"NOTIFIER_LISTEN_ADDR":            "127.0.0.1:0",
		"NOTIFIER_ADMIN_ADDR":             "127.0.0.1:0",
		"GROUNDING_ADDR":                  lis.Addr().String(),
		"TELEGRAM_BOT_TOKEN":              secToken,
		"TELEGRAM_WEBHOOK_SECRET":         secSecret,
		"TELEGRAM_API_URL":                tg.URL,
		"TELEGRAM_CHAT_ID":                strconv.Itoa(alertsChat),
		"TELEGRAM_BOT_USERNAME":           "groundcrew_bot",
		"NOTIFIER_TELEGRAM_RATE_PER_CHAT": "1000",
		"NOTIFIER_TELEGRAM_RATE_OVERALL":  "1000",
		"GRACE_PERIOD":                    "2s",
	}
	for k, v := range extra {
		env[k] = v
	}
	n := runNotifier(t, env)
	return secEnv{n: n, c: dial(t, n.grpcAddr), tg: tg, ground: g}
}

// post sends an update as the gateway forwards Telegram's webhook, with
// the secret header as metadata ("" sends none).
func (e secEnv) post(t *testing.T, secret string, u *notifierv1.TelegramUpdate) (string, error) {
	t.Helper()
	ctx := t.Context()
	if secret != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "x-telegram-bot-api-secret-token", secret)
	}
	resp, err := e.c.HandleTelegramUpdate(ctx, &notifierv1.HandleTelegramUpdateRequest{Update: u})
	return resp.GetOutcome(), err
}

func privateText(updateID, chatID int64, text string) *notifierv1.TelegramUpdate {
	return &notifierv1.TelegramUpdate{UpdateId: updateID, Message: &notifierv1.TelegramChatMessage{
		MessageId: updateID, Date: time.Now().Unix(), Text: text,
		From: &notifierv1.TelegramUser{Id: chatID, FirstName: "Eve"},
		Chat: &notifierv1.TelegramChat{Id: chatID, Type: "private"},
	}}
}

func callback(updateID int64, from *notifierv1.TelegramUser, data string, chatID, messageID int64) *notifierv1.TelegramUpdate {
	return &notifierv1.TelegramUpdate{UpdateId: updateID, CallbackQuery: &notifierv1.TelegramCallbackQuery{
		Id: "cbq-" + strconv.FormatInt(updateID, 10), From: from, Data: data,
		Message: &notifierv1.TelegramChatMessage{MessageId: messageID, Text: "whatever the forger wants shown",
			Chat: &notifierv1.TelegramChat{Id: chatID, Type: "supergroup"}},
	}}
}

// nothingSent fails the test when the bot sent or edited anything.
func (e secEnv) nothingSent(t *testing.T) {
	t.Helper()
	if sent := e.tg.Sent(); len(sent) != 0 {
		t.Errorf("sent %d messages, want none: %+v", len(sent), sent)
	}
	if edits := e.tg.Calls("editMessageText"); len(edits) != 0 {
		t.Errorf("edited messages, want none: %+v", edits)
	}
}

func TestSecurityBotTokenWithoutSecretRefusesToStart(t *testing.T) {
	_, err := config.Load[server.Config](config.MapLookup(map[string]string{"DATA_DIR": t.TempDir(), "TELEGRAM_BOT_TOKEN": "x"}))
	if err == nil || !strings.Contains(err.Error(), "TELEGRAM_WEBHOOK_SECRET") {
		t.Fatalf("err = %v, want a refusal naming TELEGRAM_WEBHOOK_SECRET", err)
	}
}

func TestSecurityForgedWebhook(t *testing.T) {
	e := startSecured(t, nil)
	for _, secret := range []string{"", "a-guessed-secret"} {
		_, err := e.post(t, secret, privateText(1, alertsChat, "hi"))
		if status.Code(err) != codes.Unauthenticated {
			t.Errorf("secret %q: %v, want Unauthenticated", secret, err)
		}
	}
	e.nothingSent(t)
	if c, _ := e.ground.counts(); c != 0 {
		t.Errorf("the model was asked %d times", c)
	}
	// The refused update did not burn its id: the real one is answered.
	if out, err := e.post(t, secSecret, privateText(1, alertsChat, "hi")); err != nil || out != "replied" {
		t.Errorf("the real update 1: %q, %v; want replied", out, err)
	}
	waitForMetrics(t, "http://"+e.n.adminAddr+"/metrics", `notifier_telegram_refused_total\{reason="webhook_secret"\} 2`)
}

func TestSecurityWebhookDisabled(t *testing.T) {
	e := startSecured(t, map[string]string{"TELEGRAM_WEBHOOK_SECRET": "", "TELEGRAM_WEBHOOK_DISABLED": "true"})
	for _, secret := range []string{"", secSecret} {
		if _, err := e.post(t, secret, privateText(1, alertsChat, "hi")); status.Code(err) != codes.PermissionDenied {
			t.Errorf("secret %q: %v, want PermissionDenied", secret, err)
		}
	}
	e.nothingSent(t)
	waitForMetrics(t, "http://"+e.n.adminAddr+"/metrics", `notifier_telegram_refused_total\{reason="webhook_disabled"\} 2`)
}

// TestSecurityForgedCallback is the reproduction of issue 13: a callback
// with any approval id under message 4242 in chat -100999 edited that
// message. Even with the right secret it now edits and decides nothing,
// nor does a callback under a message of an allowed chat that is not the
// approval's.
func TestSecurityForgedCallback(t *testing.T) {
	e := startSecured(t, nil)
	mallory := &notifierv1.TelegramUser{Id: 666, FirstName: "Mallory"}
	for i, u := range []*notifierv1.TelegramUpdate{
		callback(10, mallory, "approval:"+approvalID+":approve", otherChat, 4242),
		callback(11, mallory, "approval:"+approvalID+":approve", alertsChat, 4242),
	} {
		out, err := e.post(t, secSecret, u)
		if err != nil || out != "refused" {
			t.Errorf("forged callback %d: %q, %v; want refused", i, out, err)
		}
	}
	e.nothingSent(t)
	if _, d := e.ground.counts(); d != 0 {
		t.Errorf("%d decisions recorded from forged callbacks", d)
	}
	if answers := e.tg.Calls("answerCallbackQuery"); len(answers) != 2 {
		t.Errorf("answered %d presses, want both answered politely", len(answers))
	}
}

func TestSecurityRepliesOnlyInAllowedChats(t *testing.T) {
	e := startSecured(t, nil)
	out, err := e.post(t, secSecret, privateText(20, 424242, "please reply to me here"))
	if err != nil || out != "refused" {
		t.Fatalf("update from an arbitrary chat: %q, %v; want refused", out, err)
	}
	e.nothingSent(t)
	if c, _ := e.ground.counts(); c != 0 {
		t.Errorf("the model was asked %d times for a chat that is not allowed", c)
	}
	waitForMetrics(t, "http://"+e.n.adminAddr+"/metrics", `notifier_telegram_refused_total\{reason="chat_not_allowed"\} 1`)
}

// TestSecurityUpdateIDs: a replayed update is handled once; ids are not
// trusted to increase (a lower id is still handled), and an id refused in
// one chat is not burnt for another.
func TestSecurityUpdateIDs(t *testing.T) {
	e := startSecured(t, map[string]string{"TELEGRAM_ALLOWED_CHATS": "-100123,84211"})
	steps := []struct {
		u    *notifierv1.TelegramUpdate
		want string
	}{
		{privateText(1000, 84211, "first"), "replied"},
		{privateText(1000, 84211, "first"), "duplicate"},     // replayed
		{privateText(999, 84211, "older id"), "replied"},     // not monotonic
		{privateText(2000, 424242, "forged"), "refused"},     // another chat…
		{privateText(2000, 84211, "real 2000"), "replied"},   // …burns nothing here
		{privateText(2000, 84211, "real 2000"), "duplicate"}, // but a replay is a replay
	}
	for i, st := range steps {
		if out, err := e.post(t, secSecret, st.u); err != nil || out != st.want {
			t.Errorf("step %d (update %d in chat %d): %q, %v; want %q", i, st.u.GetUpdateId(), st.u.GetMessage().GetChat().GetId(), out, err, st.want)
		}
	}
	if got := len(e.tg.Sent()); got != 3 {
		t.Errorf("sent %d replies, want 3", got)
	}
}

func TestSecuritySendOnlyToConfiguredChats(t *testing.T) {
	e := startSecured(t, map[string]string{"NOTIFIER_ROUTES": "team=db:-100456"})
	ctx := actor.OutgoingContext(t.Context(), "ci")
	_, err := e.c.SendMessage(ctx, &notifierv1.SendMessageRequest{Text: "pwned", ChatId: strconv.Itoa(otherChat)})
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("send to an arbitrary chat: %v, want PermissionDenied", err)
	}
	e.nothingSent(t)
	for _, chat := range []string{"", strconv.Itoa(alertsChat), "-100456"} {
		if _, err := e.c.SendMessage(ctx, &notifierv1.SendMessageRequest{Text: "hello", ChatId: chat}); err != nil {
			t.Errorf("send to configured chat %q: %v", chat, err)
		}
	}
	// The sends record who made them.
	for _, r := range e.n.logs.Named(t, "message delivered") {
		if r["actor"] != "ci" {
			t.Errorf("delivered message logged with actor %v, want ci", r["actor"])
		}
	}
	if got := len(e.n.logs.Named(t, "message delivered")); got != 3 {
		t.Errorf("%d deliveries logged, want 3", got)
	}
}

// TestSecuritySendToResearchChats holds that grounding's research chats
// (RESEARCH_CHAT_ID, RESEARCH_SUMMARY_CHATS, the variables grounding reads)
// are enough for the notifier to post research summaries there, and that
// they open no other chat.
func TestSecuritySendToResearchChats(t *testing.T) {
	e := startSecured(t, map[string]string{"RESEARCH_CHAT_ID": "-100777", "RESEARCH_SUMMARY_CHATS": "-100888, @research_news"})
	ctx := actor.OutgoingContext(t.Context(), "grounding")
	for _, chat := range []string{"-100777", "-100888", "@research_news"} {
		if _, err := e.c.SendMessage(ctx, &notifierv1.SendMessageRequest{Text: "Research summary", ChatId: chat}); err != nil {
			t.Errorf("send to research chat %q: %v", chat, err)
		}
	}
	if _, err := e.c.SendMessage(ctx, &notifierv1.SendMessageRequest{Text: "pwned", ChatId: strconv.Itoa(otherChat)}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("send to an arbitrary chat: %v, want PermissionDenied", err)
	}
}

func TestSecurityOnlyApproversDecide(t *testing.T) {
	e := startSecured(t, map[string]string{"TELEGRAM_APPROVERS": "@anasilva"})
	resp, err := e.c.SendMessage(t.Context(), &notifierv1.SendMessageRequest{Text: "Approve deleting 3 stale indexes?", Buttons: []*notifierv1.InlineButton{
		{Text: "Approve", Approval: &notifierv1.ApprovalButton{ApprovalId: approvalID, Decision: notifierv1.ApprovalButton_DECISION_APPROVE}},
		{Text: "Reject", Approval: &notifierv1.ApprovalButton{ApprovalId: approvalID, Decision: notifierv1.ApprovalButton_DECISION_REJECT}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	msgID, _ := strconv.ParseInt(resp.GetDeliveryId(), 10, 64)
	data := "approval:" + approvalID + ":approve"
	if sent := e.tg.Sent(); len(sent) != 1 || !strings.Contains(sent[0].ReplyMarkup, data) {
		t.Fatalf("approval message sent as %+v; want one with the button data %q", sent, data)
	}

	bo := &notifierv1.TelegramUser{Id: 5150, FirstName: "Bo", Username: "bo_li"}
	if out, err := e.post(t, secSecret, callback(30, bo, data, alertsChat, msgID)); err != nil || out != "refused" {
		t.Fatalf("non-approver: %q, %v; want refused", out, err)
	}
	if _, d := e.ground.counts(); d != 0 || len(e.tg.Calls("editMessageText")) != 0 {
		t.Fatalf("a non-approver's press decided or edited something")
	}
	ana := &notifierv1.TelegramUser{Id: 84211, FirstName: "Ana", Username: "AnaSilva"}
	if out, err := e.post(t, secSecret, callback(31, ana, data, alertsChat, msgID)); err != nil || out != "decided" {
		t.Fatalf("approver: %q, %v; want decided", out, err)
	}
	edits := e.tg.Calls("editMessageText")
	if len(edits) != 1 || edits[0].Form["chat_id"] != strconv.Itoa(alertsChat) || edits[0].Form["message_id"] != resp.GetDeliveryId() ||
		edits[0].Form["text"] != "Approve deleting 3 stale indexes?\n\nApproved by @AnaSilva" {
		t.Errorf("edits %+v; want the approval message edited once with the outcome", edits)
	}
	e.ground.mu.Lock()
	defer e.ground.mu.Unlock()
	if len(e.ground.actors) != 1 || e.ground.actors[0] != "telegram:84211 @AnaSilva" {
		t.Errorf("DecideApproval actors %q, want the presser", e.ground.actors)
	}
	waitForMetrics(t, "http://"+e.n.adminAddr+"/metrics", `notifier_telegram_refused_total\{reason="not_approver"\} 1`)
}

func TestSecurityChatBudget(t *testing.T) {
	e := startSecured(t, map[string]string{"NOTIFIER_CHAT_RATE": "2/h", "TELEGRAM_ALLOWED_CHATS": "84211"})
	want := []string{"replied", "replied", "refused", "refused"}
	for i, w := range want {
		if out, err := e.post(t, secSecret, privateText(int64(100+i), 84211, "question")); err != nil || out != w {
			t.Errorf("message %d: %q, %v; want %q", i, out, err, w)
		}
	}
	if c, _ := e.ground.counts(); c != 2 {
		t.Errorf("the model was asked %d times, want 2", c)
	}
	// Two answers and one polite notice, not one per refused message.
	if got := len(e.tg.Sent()); got != 3 {
		t.Errorf("sent %d messages, want 3", got)
	}
	waitForMetrics(t, "http://"+e.n.adminAddr+"/metrics", `notifier_telegram_refused_total\{reason="chat_rate_limited"\} 2`)
}

// TestInlineButtonNeedsOneAction: protovalidate refuses a button with
// neither or both of callback_data and approval, and a bad approval id.
func TestInlineButtonNeedsOneAction(t *testing.T) {
	e := startSecured(t, nil)
	approve := &notifierv1.ApprovalButton{ApprovalId: approvalID, Decision: notifierv1.ApprovalButton_DECISION_APPROVE}
	for name, b := range map[string]*notifierv1.InlineButton{
		"neither":            {Text: "Press"},
		"both":               {Text: "Press", CallbackData: "x", Approval: approve},
		"not a uuid":         {Text: "Press", Approval: &notifierv1.ApprovalButton{ApprovalId: "42", Decision: notifierv1.ApprovalButton_DECISION_APPROVE}},
		"no decision":        {Text: "Press", Approval: &notifierv1.ApprovalButton{ApprovalId: approvalID}},
		"data over 64 bytes": {Text: "Press", CallbackData: strings.Repeat("x", 65)},
	} {
		_, err := e.c.SendMessage(t.Context(), &notifierv1.SendMessageRequest{Text: "hello", Buttons: []*notifierv1.InlineButton{b}})
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v, want InvalidArgument", name, err)
		}
	}
	e.nothingSent(t)
}
