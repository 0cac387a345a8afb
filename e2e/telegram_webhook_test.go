package e2e_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

// TestTelegramUpdateCorpusThroughGateway posts every update of the
// notifier's Telegram corpus (one file per Bot API update kind, and the
// real-group scenarios) to the gateway's webhook route as Telegram does:
// the raw body, the secret header, no API key. Every one must be answered
// 2xx (Telegram re-sends anything else and holds later updates behind it),
// and a question asked in a forum topic is answered in that topic.
func TestTelegramUpdateCorpusThroughGateway(t *testing.T) {
	tg := telegramtest.NewServer(t.Cleanup)
	const secret = "e2e-webhook-secret"
	s := startStack(t, map[string]string{
		"TELEGRAM_BOT_TOKEN": "7100000001:AAE-e2e", "TELEGRAM_WEBHOOK_SECRET": secret, "TELEGRAM_API_URL": tg.URL,
		"TELEGRAM_CHAT_ID": "-1001987654321", "TELEGRAM_ALLOWED_CHATS": "-1001987654321,84211",
		"TELEGRAM_BOT_USERNAME":           "groundcrew_bot",
		"NOTIFIER_TELEGRAM_RATE_PER_CHAT": "1000", "NOTIFIER_TELEGRAM_RATE_OVERALL": "1000",
	}, "")
	dir := filepath.Join("..", "services", "notifier", "internal", "notifiergrpc", "testdata", "updates")
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 24 {
		t.Fatalf("%d corpus files, want at least one per update kind (24)", len(files))
	}
	outcomes := map[string]string{}
	for _, f := range files {
		body, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.GatewayURL+"/v1/telegram/webhook", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Errorf("%s: %d %s; every update must be answered 2xx", f.Name(), resp.StatusCode, answer)
			continue
		}
		var out struct {
			Outcome string `json:"outcome"`
		}
		if err := json.Unmarshal(answer, &out); err != nil {
			t.Errorf("%s: answer %s: %v", f.Name(), answer, err)
		}
		outcomes[f.Name()] = out.Outcome
	}
	for name, want := range map[string]string{
		"message.json": "replied", "my_chat_member.json": "noted", "poll_answer.json": "ignored",
		"scenario_forum_topic_question.json": "replied", "scenario_reply_with_quote.json": "replied",
		"managed_bot.json": "ignored", "business_message.json": "ignored",
	} {
		if outcomes[name] != want {
			t.Errorf("%s: outcome %q, want %q", name, outcomes[name], want)
		}
	}
	var inTopic bool
	for _, m := range tg.WaitDelivered(3, 10*time.Second) {
		inTopic = inTopic || (m.ChatID == "-1001987654321" && m.MessageThreadID == "3481" && m.ReplyParameters["message_id"] == float64(3502))
	}
	if !inTopic {
		t.Errorf("no reply in forum topic 3481 among %+v", tg.Delivered())
	}
}
