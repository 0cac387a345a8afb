package notifiergrpc

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/notifier/internal/chat"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
	"github.com/groundcrew/groundcrew/services/notifier/internal/telegram"
	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

// readUpdate decodes a Telegram update fixture as the gateway does:
// protojson, ignoring the many fields Telegram sends that the proto leaves
// out.
func readUpdate(t *testing.T, name string) *notifierv1.TelegramUpdate {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "chat", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var u notifierv1.TelegramUpdate
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(data, &u); err != nil {
		t.Fatalf("decoding %s: %v", name, err)
	}
	return &u
}

type fakeConverser struct {
	mu   sync.Mutex
	reqs []chat.ConverseRequest
}

func (f *fakeConverser) Converse(_ context.Context, req chat.ConverseRequest) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, req)
	return "Reply to " + req.ConversationID, nil
}

const botToken = "7100000001:AAE-test"

// fixtureChats are the chats of the update fixtures: the on-call group and
// Ana's private chat.
var fixtureChats = []int64{-1001987654321, 84211}

type agentEnv struct {
	client notifierv1.NotifierServiceClient
	conv   *fakeConverser
	tg     *telegramtest.Server
	store  *store.Store
}

func newAgent(t *testing.T) agentEnv {
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
	tg := telegramtest.NewServer(t.Cleanup)
	hc := &http.Client{Timeout: 5 * time.Second}
	t.Cleanup(hc.CloseIdleConnections)
	tc, err := telegram.New(botToken, telegram.Options{APIURL: tg.URL, SkipGetMe: true, HTTPClient: hc, PerChat: 1000, Overall: 1000})
	if err != nil {
		t.Fatal(err)
	}
	conv := &fakeConverser{}
	agent := chat.New(chat.Config{BotID: telegram.BotID(botToken), BotUsername: "groundcrew_bot", Persona: "p", AllowedChats: fixtureChats},
		st, conv, &telegram.Replier{Client: tc}, discard())
	return agentEnv{client: serve(t, Deps{Updates: agent, WebhookSecret: ""}), conv: conv, tg: tg, store: st}
}

func (e agentEnv) handle(t *testing.T, name string) string {
	t.Helper()
	resp, err := e.client.HandleTelegramUpdate(context.Background(), &notifierv1.HandleTelegramUpdateRequest{Update: readUpdate(t, name)})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return resp.GetOutcome()
}

func TestTelegramUpdateFixtures(t *testing.T) {
	tests := []struct {
		file        string
		want        string
		wantTarget  int64 // 0: no reply
		wantReplyTo int64
	}{
		{file: "private_text.json", want: chat.Replied, wantTarget: 77, wantReplyTo: 77},
		{file: "group_chatter.json", want: chat.Stored},
		{file: "group_sticker.json", want: chat.Stored},
		{file: "group_photo_reply.json", want: chat.Replied, wantTarget: 5121, wantReplyTo: 5121},
		{file: "group_mention_reply_to_other.json", want: chat.Replied, wantTarget: 5123, wantReplyTo: 5123},
		{file: "edited_message.json", want: chat.Stored},
		{file: "callback_query.json", want: chat.Ignored},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			e := newAgent(t)
			if got := e.handle(t, tt.file); got != tt.want {
				t.Fatalf("outcome %q, want %q", got, tt.want)
			}
			if tt.wantTarget == 0 {
				if len(e.conv.reqs) != 0 || len(e.tg.Sent()) != 0 {
					t.Errorf("answered although it should not: %d converse calls, %d sends", len(e.conv.reqs), len(e.tg.Sent()))
				}
				return
			}
			req := e.conv.reqs[0]
			if req.TargetID != tt.wantTarget {
				t.Errorf("target %d, want %d", req.TargetID, tt.wantTarget)
			}
			if found := false; true {
				for _, m := range req.History {
					found = found || m.MessageID == req.TargetID
				}
				if !found {
					t.Errorf("target %d not in the history", req.TargetID)
				}
			}
			sent := e.tg.Sent()
			if len(sent) != 1 || sent[0].ReplyParameters["message_id"] != float64(tt.wantReplyTo) || sent[0].ParseMode != "" {
				t.Errorf("sent %+v; want one plain reply to %d", sent, tt.wantReplyTo)
			}
			// Idempotent: Telegram retrying the same update changes nothing.
			if got := e.handle(t, tt.file); got != chat.Duplicate {
				t.Errorf("second delivery: outcome %q, want duplicate", got)
			}
			if len(e.tg.Sent()) != 1 {
				t.Errorf("replied again to a repeated update")
			}
		})
	}
}

func TestConversationHistory(t *testing.T) {
	e := newAgent(t)
	for _, f := range []string{"group_chatter.json", "group_sticker.json", "group_photo_reply.json"} {
		e.handle(t, f)
	}
	if len(e.conv.reqs) != 1 {
		t.Fatalf("%d converse calls, want 1", len(e.conv.reqs))
	}
	type line struct {
		ID      int64
		Speaker string
		Agent   bool
		Parts   string
	}
	var got []line
	for _, m := range e.conv.reqs[0].History {
		var parts []string
		for _, p := range m.Parts {
			parts = append(parts, p.MediaKind+":"+p.Text)
		}
		got = append(got, line{m.MessageID, m.Speaker, m.IsAgent, strings.Join(parts, " | ")})
	}
	want := []line{
		{5119, "Groundcrew", true, ":[FIRING] Disk usage above 90% (warning): Disk almost full on db-1"},
		{5122, "Jonas", false, ":looking at db-1 now, @anasilva can you check the backups?"},
		{5125, "Jonas", false, "sticker:[animated sticker 🔥 from set HotCherry]"},
		{5121, "Ana Silva", false, "photo:[photo 1280×720] | :@groundcrew_bot is this the same disk issue as last week?"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("history sent to grounding (-want +got):\n%s", diff)
	}
	if !e.conv.reqs[0].Group || e.conv.reqs[0].ConversationID != "telegram:-1001987654321" {
		t.Errorf("request %+v", e.conv.reqs[0])
	}
	// The agent's reply joined the history.
	hist, err := e.store.ChatHistory(context.Background(), -1001987654321, 10)
	if err != nil {
		t.Fatal(err)
	}
	last := hist[len(hist)-1]
	if !last.IsAgent || last.ReplyToID != 5121 || last.Parts[0].Text != "Reply to telegram:-1001987654321" {
		t.Errorf("last stored message %+v", last)
	}
}
