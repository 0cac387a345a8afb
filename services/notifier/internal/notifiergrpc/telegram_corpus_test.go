package notifiergrpc

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/notifier/internal/chat"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
	"github.com/groundcrew/groundcrew/services/notifier/internal/telegram"
	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

// The update corpus (testdata/updates) holds one update of every kind of
// the Bot API (9.6), named after the kind, with every field Telegram sends
// for it, and scenario_*.json: updates a bot in a real group gets (a
// question in a forum topic, a reply with a quote, forwarded messages, an
// album, a sticker with its thumbnail, the bot removed, a group migrated).
// Each is decoded as the gateway decodes the webhook's body (protojson,
// unknown fields discarded) and handled by the chat agent.

// readCorpusUpdate decodes an update of the corpus as the gateway does.
func readCorpusUpdate(t *testing.T, name string) *notifierv1.TelegramUpdate {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "updates", name))
	if err != nil {
		t.Fatal(err)
	}
	var u notifierv1.TelegramUpdate
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(data, &u); err != nil {
		t.Fatalf("decoding %s: %v", name, err)
	}
	return &u
}

type countedUpdate struct{ kind, outcome string }

type updateCounts struct {
	mu  sync.Mutex
	got []countedUpdate
}

func (c *updateCounts) Count(kind, outcome string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, countedUpdate{kind, outcome})
}

// syncBuffer is a log sink safe for the handler's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type corpusEnv struct {
	agentEnv
	counts *updateCounts
	log    *syncBuffer
}

func newCorpusAgent(t *testing.T) corpusEnv {
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
	counts := &updateCounts{}
	buf := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(buf, nil))
	// The corpus's old group (before its upgrade to the on-call
	// supergroup) is allowed too.
	allowed := append([]int64{-4001234567}, fixtureChats...)
	agent := chat.New(chat.Config{BotID: telegram.BotID(botToken), BotUsername: "groundcrew_bot", Persona: "p", AllowedChats: allowed, Updates: counts, Migrations: st},
		st, conv, &telegram.Replier{Client: tc}, logger)
	return corpusEnv{
		agentEnv: agentEnv{client: serve(t, Deps{Updates: agent}), conv: conv, tg: tg, store: st},
		counts:   counts, log: buf,
	}
}

func TestUpdateCorpus(t *testing.T) {
	tests := []struct {
		file, kind, want string
		// replyTo and thread: the reply expected (0: none).
		replyTo int64
		thread  string
		// parts are texts the target message's stored parts must hold.
		parts []string
		// logs are texts the log must hold.
		logs []string
		// migrated: the move of -4001234567 to -1001987654321 is stored.
		migrated bool
	}{
		{file: "message.json", kind: chat.KindMessage, want: chat.Replied, replyTo: 77, parts: []string{"/start"}},
		{file: "edited_message.json", kind: chat.KindEditedMessage, want: chat.Stored},
		{file: "channel_post.json", kind: chat.KindChannelPost, want: chat.Refused},
		{file: "edited_channel_post.json", kind: chat.KindEditedChannelPost, want: chat.Refused},
		{file: "business_connection.json", kind: chat.KindBusinessConnection, want: chat.Ignored},
		{file: "business_message.json", kind: chat.KindBusinessMessage, want: chat.Ignored},
		{file: "edited_business_message.json", kind: chat.KindEditedBusinessMessage, want: chat.Ignored},
		{file: "deleted_business_messages.json", kind: chat.KindDeletedBusinessMessages, want: chat.Ignored},
		{file: "message_reaction.json", kind: chat.KindMessageReaction, want: chat.Ignored},
		{file: "message_reaction_count.json", kind: chat.KindMessageReactionCount, want: chat.Ignored},
		{file: "inline_query.json", kind: chat.KindInlineQuery, want: chat.Ignored},
		{file: "chosen_inline_result.json", kind: chat.KindChosenInlineResult, want: chat.Ignored},
		// Without button handlers (the server test presses it for real).
		{file: "callback_query.json", kind: chat.KindCallbackQuery, want: chat.Ignored},
		{file: "shipping_query.json", kind: chat.KindShippingQuery, want: chat.Ignored},
		{file: "pre_checkout_query.json", kind: chat.KindPreCheckoutQuery, want: chat.Ignored},
		{file: "purchased_paid_media.json", kind: chat.KindPurchasedPaidMedia, want: chat.Ignored},
		{file: "poll.json", kind: chat.KindPoll, want: chat.Ignored},
		{file: "poll_answer.json", kind: chat.KindPollAnswer, want: chat.Ignored},
		{file: "my_chat_member.json", kind: chat.KindMyChatMember, want: chat.Noted,
			logs: []string{`msg="telegram: the bot was added to a chat" chat_id=-1001987654321 chat_type=supergroup chat_title="SRE on-call" old_status=left new_status=member by_user_id=84211 by="Ana Silva"`}},
		{file: "chat_member.json", kind: chat.KindChatMember, want: chat.Ignored},
		{file: "chat_join_request.json", kind: chat.KindChatJoinRequest, want: chat.Ignored},
		{file: "chat_boost.json", kind: chat.KindChatBoost, want: chat.Ignored},
		{file: "removed_chat_boost.json", kind: chat.KindRemovedChatBoost, want: chat.Ignored},
		{file: "managed_bot.json", kind: chat.KindManagedBot, want: chat.Ignored},

		{file: "scenario_forum_topic_question.json", kind: chat.KindMessage, want: chat.Replied, replyTo: 3502, thread: "3481",
			parts: []string{"@groundcrew_bot what does the runbook say about checkout 502s?"}},
		{file: "scenario_reply_with_quote.json", kind: chat.KindMessage, want: chat.Replied, replyTo: 5130,
			parts: []string{"[quoting the replied message: «Pod shop/web-2 is crash looping»]", "why only web-2? web-1 recovered on its own"}},
		{file: "scenario_forwarded_message.json", kind: chat.KindMessage, want: chat.Replied, replyTo: 80,
			parts: []string{"[forwarded from channel Ops announcements (Platform team), sent 2025-11-25 20:00 UTC]", "Maintenance tonight"}},
		{file: "scenario_forwarded_from_user.json", kind: chat.KindMessage, want: chat.Replied, replyTo: 81,
			parts: []string{"[forwarded from Jonas Berg, sent 2025-11-25 19:00 UTC]", "db-1 backups stopped"}},
		{file: "scenario_external_reply.json", kind: chat.KindMessage, want: chat.Replied, replyTo: 82,
			parts: []string{"[replying to a message in Ops announcements [photo 1280×853]]", "[quoting the replied message: «payments cluster is drained first»]", "does this affect our alerts tonight?"}},
		{file: "scenario_photo_album_1.json", kind: chat.KindMessage, want: chat.Stored},
		{file: "scenario_photo_album_2.json", kind: chat.KindMessage, want: chat.Stored},
		{file: "scenario_sticker_with_thumbnail.json", kind: chat.KindMessage, want: chat.Stored},
		{file: "scenario_bot_removed.json", kind: chat.KindMyChatMember, want: chat.Noted,
			logs: []string{`msg="telegram: the bot was removed from a chat" chat_id=-4001234567`, `new_status=kicked by_user_id=91532`}},
		// The old group's last message says where it went, and the
		// supergroup's first where it came from: the move is recorded.
		{file: "scenario_group_migrated.json", kind: chat.KindMessage, want: chat.Noted, migrated: true,
			logs: []string{`old_chat_id=-4001234567 new_chat_id=-1001987654321`}},
		{file: "scenario_supergroup_migrated_from.json", kind: chat.KindMessage, want: chat.Noted, migrated: true},
	}
	files, err := os.ReadDir(filepath.Join("testdata", "updates"))
	if err != nil {
		t.Fatal(err)
	}
	inTable := map[string]bool{}
	for _, tt := range tests {
		inTable[tt.file] = true
	}
	for _, f := range files {
		if !inTable[f.Name()] {
			t.Errorf("testdata/updates/%s is not in the table", f.Name())
		}
	}
	for _, k := range chat.UpdateKinds {
		if k != chat.KindUnknown && !inTable[k+".json"] {
			t.Errorf("no corpus file for update kind %s", k)
		}
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			e := newCorpusAgent(t)
			u := readCorpusUpdate(t, tt.file)
			resp, err := e.client.HandleTelegramUpdate(context.Background(), &notifierv1.HandleTelegramUpdateRequest{Update: u})
			if err != nil {
				t.Fatalf("handled with %v; every update kind must be answered 2xx", err)
			}
			if resp.GetOutcome() != tt.want {
				t.Errorf("outcome %q, want %q", resp.GetOutcome(), tt.want)
			}
			if want := []countedUpdate{{tt.kind, tt.want}}; len(e.counts.got) != 1 || e.counts.got[0] != want[0] {
				t.Errorf("counted %v, want %v", e.counts.got, want)
			}
			sent := e.tg.Sent()
			if tt.replyTo == 0 {
				if len(sent) != 0 || len(e.conv.reqs) != 0 {
					t.Errorf("answered (%d sends, %d converse calls); want no answer", len(sent), len(e.conv.reqs))
				}
			} else {
				if len(sent) != 1 || sent[0].ReplyParameters["message_id"] != float64(tt.replyTo) || sent[0].MessageThreadID != tt.thread {
					t.Fatalf("sent %+v; want one reply to %d in thread %q", sent, tt.replyTo, tt.thread)
				}
				req := e.conv.reqs[0]
				var target *chat.Message
				for i, m := range req.History {
					if m.MessageID == req.TargetID {
						target = &req.History[i]
					}
				}
				if target == nil {
					t.Fatalf("target %d not in the history", req.TargetID)
				}
				var texts []string
				for _, p := range target.Parts {
					texts = append(texts, p.Text)
				}
				joined := strings.Join(texts, "\n")
				for _, p := range tt.parts {
					if !strings.Contains(joined, p) {
						t.Errorf("the target's parts lack %q:\n%s", p, joined)
					}
				}
			}
			if to, ok, err := e.store.MigratedChat(context.Background(), "-4001234567"); err != nil || ok != tt.migrated || (ok && to != "-1001987654321") {
				t.Errorf("stored migration %q %v %v; want recorded %v", to, ok, err, tt.migrated)
			}
			for _, l := range tt.logs {
				if !strings.Contains(e.log.String(), l) {
					t.Errorf("log lacks %q:\n%s", l, e.log.String())
				}
			}
			// Telegram re-sends an update it got no 2xx for; a repeat of one
			// handled is a duplicate, whatever its kind.
			again, err := e.client.HandleTelegramUpdate(context.Background(), &notifierv1.HandleTelegramUpdateRequest{Update: u})
			if err != nil || again.GetOutcome() != chat.Duplicate {
				t.Errorf("repeat: %q, %v; want duplicate", again.GetOutcome(), err)
			}
		})
	}
}

// TestUnknownUpdateKind: an update of a kind newer than this code reaches
// the notifier as its update_id alone (the gateway drops the field it does
// not know) and is answered, counted as unknown and dropped.
func TestUnknownUpdateKind(t *testing.T) {
	e := newCorpusAgent(t)
	var u notifierv1.TelegramUpdate
	body := `{"update_id":824417999,"guest_message":{"message_id":1,"chat":{"id":1,"type":"private"},"date":1764104400,"text":"hi"}}`
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal([]byte(body), &u); err != nil {
		t.Fatal(err)
	}
	resp, err := e.client.HandleTelegramUpdate(context.Background(), &notifierv1.HandleTelegramUpdateRequest{Update: &u})
	if err != nil || resp.GetOutcome() != chat.Ignored {
		t.Fatalf("%q, %v; want ignored", resp.GetOutcome(), err)
	}
	if len(e.counts.got) != 1 || e.counts.got[0] != (countedUpdate{chat.KindUnknown, chat.Ignored}) {
		t.Errorf("counted %v, want unknown/ignored", e.counts.got)
	}
}
