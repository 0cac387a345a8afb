package notifiergrpc

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/notifier/internal/deliverylog"
	"github.com/groundcrew/groundcrew/services/notifier/internal/outbound"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
	"github.com/groundcrew/groundcrew/services/notifier/internal/telegram"
	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

type sendEnv struct {
	client notifierv1.NotifierServiceClient
	tg     *telegramtest.Server
	store  *store.Store
}

// newSender serves SendMessage over a SQLite store, delivering to a fake
// Telegram with default chat -100777, or to the delivery log when offline.
func newSender(t *testing.T, offline bool) sendEnv {
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
	st := store.New(db)
	env := sendEnv{store: st}
	var tr outbound.Transport = &deliverylog.Deliverer{Logger: discard()}
	if !offline {
		env.tg = telegramtest.NewServer(t.Cleanup)
		hc := &http.Client{Timeout: 5 * time.Second}
		t.Cleanup(hc.CloseIdleConnections)
		tc, err := telegram.New(botToken, telegram.Options{APIURL: env.tg.URL, SkipGetMe: true, HTTPClient: hc, PerChat: 1000, Overall: 1000})
		if err != nil {
			t.Fatal(err)
		}
		tr = &telegram.Deliverer{Client: tc, Router: telegram.Router{Default: "-100777"}, Logger: discard()}
	}
	env.client = serve(t, Deps{Messages: outbound.New(st, tr, discard()), SendChats: []string{"-100123", "-100999"}})
	return env
}

func TestSendMessageToTelegramWithButtons(t *testing.T) {
	env := newSender(t, false)
	ctx := context.Background()
	resp, err := env.client.SendMessage(ctx, &notifierv1.SendMessageRequest{
		Text:   "Approve deleting 3 stale indexes (cost: $1.50)?",
		Sender: "grounding",
		Buttons: []*notifierv1.InlineButton{
			{Text: "Approve", CallbackData: "approval:0193a5b2-7c1e-7d2f-9a8b-0123456789ab:approve"},
			{Text: "Reject", CallbackData: "approval:0193a5b2-7c1e-7d2f-9a8b-0123456789ab:reject"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	sent := env.tg.Delivered()
	if len(sent) != 1 {
		t.Fatalf("Telegram got %d messages, want 1", len(sent))
	}
	got := sent[0]
	if diff := cmp.Diff(&notifierv1.SendMessageResponse{DeliveryId: "101", Destination: "-100777"}, resp, protocmp.Transform()); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	if got.ChatID != "-100777" || got.ParseMode != "MarkdownV2" {
		t.Errorf("chat %q parse mode %q, want the default chat and MarkdownV2", got.ChatID, got.ParseMode)
	}
	if want := `Approve deleting 3 stale indexes \(cost: $1\.50\)?`; got.Text != want {
		t.Errorf("text %q, want %q", got.Text, want)
	}
	var markup any
	if err := json.Unmarshal([]byte(got.ReplyMarkup), &markup); err != nil {
		t.Fatalf("reply_markup %q: %v", got.ReplyMarkup, err)
	}
	// Bot API InlineKeyboardMarkup: one row of buttons with callback_data.
	wantMarkup := map[string]any{"inline_keyboard": []any{[]any{
		map[string]any{"text": "Approve", "callback_data": "approval:0193a5b2-7c1e-7d2f-9a8b-0123456789ab:approve"},
		map[string]any{"text": "Reject", "callback_data": "approval:0193a5b2-7c1e-7d2f-9a8b-0123456789ab:reject"},
	}}}
	if diff := cmp.Diff(wantMarkup, markup); diff != "" {
		t.Errorf("reply_markup (-want +got):\n%s", diff)
	}
}

func TestSendMessageIdempotency(t *testing.T) {
	env := newSender(t, false)
	ctx := context.Background()
	req := &notifierv1.SendMessageRequest{Text: "Research finished: disk usage", ChatId: "-100123", IdempotencyKey: "run-1/summary"}
	first, err := env.client.SendMessage(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		req  *notifierv1.SendMessageRequest
		want *notifierv1.SendMessageResponse
		code codes.Code
	}{
		{"retry", req, &notifierv1.SendMessageResponse{DeliveryId: first.GetDeliveryId(), Destination: "-100123", Duplicate: true}, codes.OK},
		{"same key, other text", &notifierv1.SendMessageRequest{Text: "something else", ChatId: "-100123", IdempotencyKey: "run-1/summary"}, nil, codes.InvalidArgument},
		{"other key", &notifierv1.SendMessageRequest{Text: "Research finished: disk usage", ChatId: "-100123", IdempotencyKey: "run-2/summary"}, &notifierv1.SendMessageResponse{DeliveryId: "102", Destination: "-100123"}, codes.OK},
		{"no key sends again", &notifierv1.SendMessageRequest{Text: "Research finished: disk usage", ChatId: "-100123"}, &notifierv1.SendMessageResponse{DeliveryId: "103", Destination: "-100123"}, codes.OK},
		{"bad chat", &notifierv1.SendMessageRequest{Text: "x", ChatId: "alerts"}, nil, codes.InvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := env.client.SendMessage(ctx, tt.req)
			if status.Code(err) != tt.code {
				t.Fatalf("code %v (%v), want %v", status.Code(err), err, tt.code)
			}
			if diff := cmp.Diff(tt.want, got, protocmp.Transform()); tt.code == codes.OK && diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
	if n := len(env.tg.Delivered()); n != 3 {
		t.Errorf("Telegram got %d messages, want 3 (the retry and the refused reuse send nothing)", n)
	}
}

func TestSendMessageFailureIsStoredAndRetried(t *testing.T) {
	env := newSender(t, false)
	ctx := context.Background()
	env.tg.Handle(func(telegramtest.Sent) telegramtest.Reply {
		return telegramtest.Reply{ErrorCode: 400, Description: "Bad Request: chat not found"}
	})
	req := &notifierv1.SendMessageRequest{Text: "hello", ChatId: "-100999", IdempotencyKey: "k"}
	_, err := env.client.SendMessage(ctx, req)
	if status.Code(err) != codes.FailedPrecondition || status.Convert(err).Message() != "telegram: 400 Bad Request: chat not found" {
		t.Fatalf("err = %v, want FailedPrecondition with Telegram's description", err)
	}
	env.tg.Handle(nil)
	resp, err := env.client.SendMessage(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetDuplicate() || resp.GetDestination() != "-100999" {
		t.Errorf("retry after a failure: %v, want a fresh delivery", resp)
	}

	env.tg.Handle(func(telegramtest.Sent) telegramtest.Reply { return telegramtest.TooManyRequests(7) })
	_, err = env.client.SendMessage(ctx, &notifierv1.SendMessageRequest{Text: "later", ChatId: "-100999"})
	if status.Code(err) != codes.Unavailable {
		t.Errorf("429: err = %v, want Unavailable", err)
	}
}

func TestSendMessageOfflineGoesToTheLog(t *testing.T) {
	env := newSender(t, true)
	resp, err := env.client.SendMessage(context.Background(), &notifierv1.SendMessageRequest{Text: "hello", IdempotencyKey: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetDestination() != deliverylog.Destination || resp.GetDeliveryId() == "" {
		t.Fatalf("response %v, want a log delivery", resp)
	}
	again, err := env.client.SendMessage(context.Background(), &notifierv1.SendMessageRequest{Text: "hello", IdempotencyKey: "k1"})
	if err != nil || !again.GetDuplicate() || again.GetDeliveryId() != resp.GetDeliveryId() {
		t.Fatalf("retry: %v, %v; want a duplicate of %v", again, err, resp)
	}
}

func TestSendMessageUnconfigured(t *testing.T) {
	c := serve(t, Deps{})
	_, err := c.SendMessage(context.Background(), &notifierv1.SendMessageRequest{Text: "x"})
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("err = %v, want Unimplemented", err)
	}
}

func TestSendMessageConcurrentRetriesDeliverOnce(t *testing.T) {
	env := newSender(t, false)
	const n = 5
	dups := make(chan bool, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp, err := env.client.SendMessage(context.Background(), &notifierv1.SendMessageRequest{Text: "once", IdempotencyKey: "same"})
			if err != nil {
				t.Error(err)
				return
			}
			dups <- resp.GetDuplicate()
		})
	}
	wg.Wait()
	close(dups)
	fresh := 0
	for d := range dups {
		if !d {
			fresh++
		}
	}
	if got := len(env.tg.Delivered()); got != 1 || fresh != 1 {
		t.Errorf("Telegram got %d messages and %d answers were not duplicates; want 1 and 1", got, fresh)
	}
}
