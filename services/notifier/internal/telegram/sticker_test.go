package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

// TestSendSticker: sendSticker goes out as the Bot API receives it (a
// multipart form with chat_id, the file id as sticker, and
// reply_parameters), returns the new message's id, and a refusal is
// classified like any other.
func TestSendSticker(t *testing.T) {
	srv := telegramtest.NewServer(t.Cleanup)
	r := &Replier{Client: newClient(t, srv, 1000)}
	id, err := r.SendSticker(context.Background(), -100123, 7, "CAACAgIAAxkBAAEOk1")
	if err != nil {
		t.Fatal(err)
	}
	calls := srv.Calls("sendSticker")
	if len(calls) != 1 {
		t.Fatalf("%d sendSticker calls, want 1", len(calls))
	}
	c := calls[0]
	var reply map[string]any
	if err := json.Unmarshal([]byte(c.Form["reply_parameters"]), &reply); err != nil {
		t.Fatalf("reply_parameters %q: %v", c.Form["reply_parameters"], err)
	}
	if c.Form["chat_id"] != "-100123" || c.Form["sticker"] != "CAACAgIAAxkBAAEOk1" || reply["message_id"] != float64(7) || reply["allow_sending_without_reply"] != true {
		t.Errorf("sendSticker form %v; want chat -100123, the file id, a reply to 7", c.Form)
	}
	if id == 0 || id != c.MessageID {
		t.Errorf("id %d, want the sent message's %d", id, c.MessageID)
	}

	// Telegram refuses a request without a sticker.
	_, err = r.SendSticker(context.Background(), -100123, 7, "")
	var e *Error
	if !errors.As(err, &e) || e.ErrorCode != 400 || !e.Permanent() {
		t.Errorf("empty file id: %v; want a permanent 400", err)
	}
}
