package chat

import (
	"context"
	"log/slog"
)

// AnswerPress answers a button press with text. A failure only leaves the
// button's spinner running a little longer, so it is logged, not returned.
func AnswerPress(ctx context.Context, log *slog.Logger, a CallbackAnswerer, queryID, text string) {
	if queryID == "" {
		return
	}
	if err := a.AnswerCallback(ctx, queryID, text); err != nil {
		log.WarnContext(ctx, "could not answer the button press", "error", err)
	}
}

// RefusePress answers a refused press politely with text, logs it (what
// names the button: "approval", "alert group"), counts it under reason and
// returns Refused.
func RefusePress(ctx context.Context, log *slog.Logger, a CallbackAnswerer, r Refusals, c Callback, what, reason, text string) string {
	var chatID, messageID int64
	if c.Message != nil {
		chatID, messageID = c.Message.Chat.ID, c.Message.MessageID
	}
	log.WarnContext(ctx, what+" button press refused", "reason", reason, "chat_id", chatID, "message_id", messageID)
	r.Refuse(reason)
	AnswerPress(ctx, log, a, c.ID, text)
	return Refused
}
