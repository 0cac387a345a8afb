package server_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
)

// corpusUpdate reads an update of the notifier's Telegram corpus
// (internal/notifiergrpc/testdata/updates), replaces old with new in its
// text (to point it at this test's chat, message and button), and decodes
// it as the gateway decodes the webhook's body.
func corpusUpdate(t *testing.T, name string, replace ...string) *notifierv1.TelegramUpdate {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "internal", "notifiergrpc", "testdata", "updates", name))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.NewReplacer(replace...).Replace(string(data))
	var u notifierv1.TelegramUpdate
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal([]byte(text), &u); err != nil {
		t.Fatalf("decoding %s: %v", name, err)
	}
	return &u
}

// TestRealButtonPressActs: a press of an alert group's Ack button shaped
// as Telegram sends it (chat_instance, the message with its reply_markup,
// a premium user) acks the group and is answered with answerCallbackQuery;
// NOTIFIER_ACTION_USERS in the README's form works and warns about
// usernames.
func TestRealButtonPressActs(t *testing.T) {
	e := startSecured(t, map[string]string{"NOTIFIER_ACTION_USERS": "91532,@anasilva"})
	if recs := e.n.logs.Named(t, "NOTIFIER_ACTION_USERS names users by username; a username can be given up and claimed by another account, so prefer numeric Telegram user ids"); len(recs) != 1 {
		t.Errorf("%d username warnings at start, want 1", len(recs))
	}
	ctx := t.Context()
	res, err := e.c.IngestAlertmanager(ctx, crashLooping(`{}:{alertname="KubePodCrashLooping"}`, 2, "firing"))
	if err != nil {
		t.Fatal(err)
	}
	gid := res.GetAlerts()[0].GetGroupId()
	waitGroupDelivered(t, e.c, gid, 2)
	root := e.tg.Sent()[0]
	ack := buttonData(t, root.ReplyMarkup)["👀 Ack"]
	if ack == "" {
		t.Fatalf("root has no Ack button: %s", root.ReplyMarkup)
	}
	u := corpusUpdate(t, "callback_query.json",
		"-1001987654321", strconv.Itoa(alertsChat),
		`"message_id": 5119`, `"message_id": `+strconv.FormatInt(root.MessageID, 10),
		"ag:0193a5b2-7c1e-7d2f-9a8b-0123456789ab:ack", ack)
	if out, err := e.post(t, secSecret, u); err != nil || out != "decided" {
		t.Fatalf("press: %q, %v; want decided", out, err)
	}
	answers := e.tg.WaitCalls("answerCallbackQuery", 1, 10*time.Second)
	if len(answers) != 1 || answers[0].Form["callback_query_id"] != "4382bfdwdsb323b2d9" || answers[0].Form["text"] != "👀 Acked by @anasilva" {
		t.Errorf("answers = %+v; want the press answered as acked", answers)
	}
	got, err := e.c.GetAlertGroup(ctx, &notifierv1.GetAlertGroupRequest{Id: gid})
	if err != nil || got.GetAlertGroup().GetAck().GetActor() != "@anasilva" {
		t.Errorf("ack = %v, %v; want @anasilva", got.GetAlertGroup().GetAck(), err)
	}
	if edits := e.tg.WaitCalls("editMessageText", 1, 10*time.Second); len(edits) != 1 {
		t.Errorf("%d edits of the root, want 1", len(edits))
	}
}

// TestRealGroupUpdates: in a forum supergroup, a question in a topic is
// answered in that topic, the bot being added is logged, and every update
// is counted by kind and outcome.
func TestRealGroupUpdates(t *testing.T) {
	e := startSecured(t, map[string]string{"TELEGRAM_ALLOWED_CHATS": "-1001987654321"})
	if out, err := e.post(t, secSecret, corpusUpdate(t, "my_chat_member.json")); err != nil || out != "noted" {
		t.Fatalf("my_chat_member: %q, %v; want noted", out, err)
	}
	if recs := e.n.logs.Named(t, "telegram: the bot was added to a chat"); len(recs) != 1 || recs[0]["chat_title"] != "SRE on-call" {
		t.Errorf("added-to-chat log = %v", recs)
	}
	if out, err := e.post(t, secSecret, corpusUpdate(t, "scenario_forum_topic_question.json")); err != nil || out != "replied" {
		t.Fatalf("topic question: %q, %v; want replied", out, err)
	}
	sent := e.tg.Sent()
	if len(sent) != 1 || sent[0].MessageThreadID != "3481" || sent[0].ReplyParameters["message_id"] != float64(3502) || sent[0].ChatID != "-1001987654321" {
		t.Fatalf("sent %+v; want one reply in topic 3481 to message 3502", sent)
	}
	if out, err := e.post(t, secSecret, corpusUpdate(t, "poll_answer.json")); err != nil || out != "ignored" {
		t.Errorf("poll_answer: %q, %v; want ignored", out, err)
	}
	waitForMetrics(t, "http://"+e.n.adminAddr+"/metrics",
		`notifier_telegram_updates_total\{kind="my_chat_member",outcome="noted"\} 1`,
		`notifier_telegram_updates_total\{kind="message",outcome="replied"\} 1`,
		`notifier_telegram_updates_total\{kind="poll_answer",outcome="ignored"\} 1`)
}
