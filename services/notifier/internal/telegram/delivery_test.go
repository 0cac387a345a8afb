package telegram

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

// TestPipelineGivesUpOnChatGone: a chat the bot cannot reach fails the
// alert at once with Telegram's reason, after one send (no hour of
// retries).
func TestPipelineGivesUpOnChatGone(t *testing.T) {
	for _, tt := range []struct{ file, want string }{
		{"403_bot_blocked_by_user.json", "telegram: 403 Forbidden: bot was blocked by the user"},
		{"403_bot_kicked_from_group.json", "telegram: 403 Forbidden: bot was kicked from the group chat"},
		{"400_chat_not_found.json", "telegram: 400 Bad Request: chat not found"},
	} {
		t.Run(tt.file, func(t *testing.T) {
			srv := telegramtest.NewServer(t.Cleanup)
			body := errorBody(t, tt.file)
			srv.Handle(func(telegramtest.Sent) telegramtest.Reply { return telegramtest.Reply{Body: body} })
			a := deliverThroughPipeline(t, srv, "DiskFull")
			if a.Status != alert.StatusFailed || a.Error != tt.want || a.Attempts != 1 || len(srv.Sent()) != 1 {
				t.Errorf("status %s error %q attempts %d after %d sends; want FAILED %q after one", a.Status, a.Error, a.Attempts, len(srv.Sent()), tt.want)
			}
		})
	}
}

// TestPipelineRetriesTransientErrors: a 502 is retried until it passes.
func TestPipelineRetriesTransientErrors(t *testing.T) {
	srv := telegramtest.NewServer(t.Cleanup)
	body := errorBody(t, "502_bad_gateway.json")
	calls := 0
	srv.Handle(func(telegramtest.Sent) telegramtest.Reply {
		calls++
		if calls <= 2 {
			return telegramtest.Reply{Body: body}
		}
		return telegramtest.Reply{}
	})
	a := deliverThroughPipeline(t, srv, "DiskFull")
	if a.Status != alert.StatusDelivered || len(srv.Sent()) != 3 {
		t.Errorf("status %s after %d sends; want DELIVERED after 3", a.Status, len(srv.Sent()))
	}
}

// TestPipelineFollowsMigratedGroup: a group that became a supergroup gets
// the alert at its new id, and so does every later alert, from the
// recorded migration, without asking the old id again.
func TestPipelineFollowsMigratedGroup(t *testing.T) {
	const oldChat, newChat = "-4001", "-1001987654321"
	srv := telegramtest.NewServer(t.Cleanup)
	body := errorBody(t, "400_group_upgraded_to_supergroup.json")
	srv.Handle(func(m telegramtest.Sent) telegramtest.Reply {
		if m.ChatID == oldChat {
			return telegramtest.Reply{Body: body}
		}
		return telegramtest.Reply{}
	})
	e := newPipeline(t, srv, oldChat)
	first := e.deliver(t, "DiskFull")
	if first.Status != alert.StatusDelivered || first.Destination != newChat {
		t.Fatalf("first alert %s to %q (%q); want DELIVERED to %s", first.Status, first.Destination, first.Error, newChat)
	}
	to, ok, err := e.store.MigratedChat(context.Background(), oldChat)
	if err != nil || !ok || to != newChat {
		t.Errorf("stored migration %q %v %v; want %s", to, ok, err, newChat)
	}
	second := e.deliver(t, "HighCPU")
	if second.Status != alert.StatusDelivered || second.Destination != newChat {
		t.Errorf("second alert %s to %q", second.Status, second.Destination)
	}
	var toOld int
	for _, m := range srv.Sent() {
		if m.ChatID == oldChat {
			toOld++
		}
	}
	if toOld != 1 || len(srv.Delivered()) != 2 {
		t.Errorf("%d sends to the old chat, %d delivered; want 1 and 2", toOld, len(srv.Delivered()))
	}
}

// TestGroupRootThatCannotBeEditedIsSentAnew: when the next notification of
// a group edits the root and Telegram answers "message to edit not found"
// (or "message can't be edited"), a new root goes out and later replies
// thread under it.
func TestGroupRootThatCannotBeEditedIsSentAnew(t *testing.T) {
	for _, file := range []string{"400_message_to_edit_not_found.json", "400_message_cant_be_edited.json"} {
		t.Run(file, func(t *testing.T) {
			srv := telegramtest.NewServer(t.Cleanup)
			body := errorBody(t, file)
			srv.HandleCall(func(c telegramtest.Call) telegramtest.Reply {
				if c.Method == "editMessageText" {
					return telegramtest.Reply{Body: body}
				}
				return telegramtest.Reply{}
			})
			e := newPipeline(t, srv, "-100123")
			ctx := context.Background()
			post := func(names ...string) {
				t.Helper()
				p := alert.AlertmanagerPayload{Version: "4", GroupKey: `{}:{alertname="DiskFull"}`, Status: "firing", Receiver: "groundcrew",
					GroupLabels: map[string]string{"alertname": "DiskFull"}, CommonLabels: map[string]string{"alertname": "DiskFull"}}
				for _, n := range names {
					p.Alerts = append(p.Alerts, alert.AlertmanagerAlert{Status: "firing", Labels: map[string]string{"alertname": "DiskFull", "instance": n},
						Fingerprint: n, StartsAt: time.Date(2026, 11, 25, 21, 0, 0, 0, time.UTC)})
				}
				as, err := alert.FromAlertmanager(p)
				if err != nil {
					t.Fatal(err)
				}
				gp, ok := alert.AlertmanagerGroup(p)
				if !ok {
					t.Fatal("no group")
				}
				if _, err := e.p.IngestGroup(ctx, gp, as); err != nil {
					t.Fatal(err)
				}
			}
			post("db-1")
			if got := srv.WaitDelivered(1, 20*time.Second); len(got) != 1 {
				t.Fatalf("root not sent: %+v", got)
			}
			post("db-1", "db-2")
			// The reply, then a new root in place of the one that could not be
			// edited.
			got := srv.WaitDelivered(3, 20*time.Second)
			if len(got) != 3 {
				t.Fatalf("delivered %d messages, want root, reply, new root", len(got))
			}
			if got[1].ReplyParameters["message_id"] != float64(got[0].MessageID) {
				t.Errorf("reply %+v does not answer the root %d", got[1].ReplyParameters, got[0].MessageID)
			}
			if got[2].ReplyParameters != nil || got[2].ReplyMarkup == "" {
				t.Errorf("new root %+v; want a message of its own with the buttons", got[2])
			}
			// The new root is recorded right after it is sent.
			want := strconv.FormatInt(got[2].MessageID, 10)
			var root string
			for deadline := time.Now().Add(10 * time.Second); root != want && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				page, err := e.p.ListGroups(ctx, groupQuery())
				if err != nil {
					t.Fatal(err)
				}
				if g := firstGroup(page); g != nil {
					root = g.RootMessageID
				}
			}
			if root != want {
				t.Errorf("group root %q; want the new root %s", root, want)
			}
			if n := len(srv.Calls("editMessageText")); n != 1 {
				t.Errorf("%d edits, want the one that failed", n)
			}
		})
	}
}

func groupQuery() store.GroupListQuery { return store.GroupListQuery{PageSize: 10} }

func firstGroup(p store.Page[*alert.Group]) *alert.Group {
	if len(p.Items) == 0 {
		return nil
	}
	return p.Items[0]
}

// TestTokenNeverLeaks: when the Bot API or a proxy before it echoes the
// request path (which holds the bot token) in an error, neither the
// alert's stored error nor any log line carries the token.
func TestTokenNeverLeaks(t *testing.T) {
	for _, file := range []string{"400_proxy_echoes_path.json", "502_proxy_echoes_path.html"} {
		t.Run(file, func(t *testing.T) {
			srv := telegramtest.NewServer(t.Cleanup)
			body := errorBody(t, file)
			calls := 0
			srv.Handle(func(telegramtest.Sent) telegramtest.Reply {
				// Fail twice, so that a transient error is retried and logged.
				if calls++; calls <= 2 {
					return telegramtest.Reply{Body: body}
				}
				return telegramtest.Reply{}
			})
			logs := &syncLog{}
			e := newPipelineLogged(t, srv, "-100123", slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
			a := e.deliver(t, "DiskFull")
			if strings.Contains(a.Error, token) {
				t.Errorf("stored error leaks the token: %q", a.Error)
			}
			if !strings.Contains(logs.String(), "[REDACTED]") {
				t.Fatalf("the failure, with the echoed path, was not logged:\n%s", logs.String())
			}
			if strings.Contains(logs.String(), token) || strings.Contains(logs.String(), "TEST-token") {
				t.Errorf("a log line leaks the token:\n%s", logs.String())
			}
		})
	}
}

// syncLog is a log sink safe for the pipeline's goroutines.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncLog) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDelivererFollowsMigrationForGroups: once a send learnt that the chat
// moved, alert groups are made for the new chat (so that their buttons
// work there), also without a store.
func TestDelivererFollowsMigrationForGroups(t *testing.T) {
	srv := telegramtest.NewServer(t.Cleanup)
	body := errorBody(t, "400_group_upgraded_to_supergroup.json")
	srv.Handle(func(m telegramtest.Sent) telegramtest.Reply {
		if m.ChatID == "-4001" {
			return telegramtest.Reply{Body: body}
		}
		return telegramtest.Reply{}
	})
	d := &Deliverer{Client: newClient(t, srv, 1000), Router: Router{Default: "-4001"}, Logger: discard()}
	labels := map[string]string{"alertname": "DiskFull"}
	if got := d.Chat(labels); got != "-4001" {
		t.Fatalf("before the move: chat %q", got)
	}
	id, err := d.SendGroupMessage(context.Background(), "-4001", alert.Message{Text: "x", Plain: "x"}, "", nil)
	if err != nil || id == "" {
		t.Fatalf("SendGroupMessage = %q, %v", id, err)
	}
	if got := d.Chat(labels); got != "-1001987654321" {
		t.Errorf("after the move: chat %q, want the supergroup", got)
	}
}
