package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

// TestChatTaskBlocks goes through the running service and the Telegram
// stand-in: the agent's reply carries task blocks; the text sent has none
// of them; the reminder arrives as a reply at its time from a durable job;
// the research task starts a run whose summary goes to the chat; unknown
// and malformed blocks are logged and dropped.
func TestChatTaskBlocks(t *testing.T) {
	g := &groundingStandIn{reply: "I will remind you, and look into it.\n\n" +
		"```task\nkind: remind\nin: 1s\ntext: check the db-1 backup\n```\n" +
		"```task\nkind: research\ntopic: why the db-1 disk fills up\n```\n" +
		"```task\nkind: deploy\nservice: api\n```\n" +
		"```task\nkind: remind\nin: 30d\ntext: too far ahead\n```\n" +
		"```task\nkind: remind\ntext: unterminated"}
	e := startWith(t, g, map[string]string{"TELEGRAM_ALLOWED_CHATS": "84211", "NOTIFIER_POLL_INTERVAL": "20ms"})
	const chatID, msgID = 84211, 501
	u := privateText(msgID, chatID, "remind me in a second to check the backup, and find out why the disk fills up")
	if out, err := e.post(t, secSecret, u); err != nil || out != "replied" {
		t.Fatalf("update: %q, %v; want replied", out, err)
	}
	// The reply, "Research started …" and the reminder.
	sent := e.tg.WaitDelivered(3, 30*time.Second)
	if len(sent) != 3 {
		t.Fatalf("sent %d messages, want 3: %+v", len(sent), sent)
	}
	byText := map[string]telegramtest.Sent{}
	for _, m := range sent {
		if strings.Contains(m.Text, "```") || strings.Contains(m.Text, "kind:") {
			t.Errorf("a task block was sent raw: %q", m.Text)
		}
		byText[m.Text] = m
	}
	for _, want := range []string{
		"I will remind you, and look into it.",
		"Research started on “why the db-1 disk fills up”; its summary will be posted here when it finishes.",
		"⏰ Reminder: check the db-1 backup",
	} {
		m, ok := byText[want]
		if !ok {
			t.Errorf("no message %q among %q", want, texts(sent))
			continue
		}
		if m.ChatID != "84211" || m.ReplyParameters["message_id"] != float64(msgID) {
			t.Errorf("%q went to chat %s replying to %v; want chat 84211, a reply to %d", want, m.ChatID, m.ReplyParameters["message_id"], msgID)
		}
	}

	g.mu.Lock()
	started := g.started
	actors := append([]string(nil), g.actors...)
	notes := g.notes
	g.mu.Unlock()
	if !strings.Contains(notes, "```task") {
		t.Errorf("the model was not told how to write task blocks: model_notes %q", notes)
	}
	if len(started) != 1 {
		t.Fatalf("%d research runs started, want 1", len(started))
	}
	r := started[0]
	if r.GetTopic() != "why the db-1 disk fills up" || len(r.GetActions()) != 1 || r.GetActions()[0].GetActionType() != "send_summary" ||
		r.GetActions()[0].GetParameters().GetFields()["chat_id"].GetStringValue() != "84211" {
		t.Errorf("StartResearch %v; want the topic with send_summary to chat 84211", r)
	}
	if _, err := uuid.Parse(r.GetUserId()); err != nil {
		t.Errorf("user id %q is not a UUID", r.GetUserId())
	}
	if diff := cmp.Diff([]string{"telegram:84211"}, actors); diff != "" {
		t.Errorf("actors (-want +got):\n%s", diff)
	}
	if got := len(e.n.logs.Named(t, "task block dropped")); got != 3 {
		t.Errorf("%d task blocks logged as dropped, want 3 (unknown kind, too far ahead, unterminated)", got)
	}
	// Telegram delivering the update again schedules nothing more.
	if out, err := e.post(t, secSecret, u); err != nil || out != "duplicate" {
		t.Errorf("repeated update: %q, %v; want duplicate", out, err)
	}
}

func texts(sent []telegramtest.Sent) []string {
	var out []string
	for _, m := range sent {
		out = append(out, m.Text)
	}
	return out
}
