// Package deliverylog is the notifier's offline delivery: without a
// Telegram bot token, rendered messages are written to the service log
// (and stored on the alert by the pipeline) instead of being sent, and the
// alert counts as delivered to "log".
package deliverylog

import (
	"context"
	"log/slog"

	"github.com/google/uuid"

	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/outbound"
	"github.com/groundcrew/groundcrew/services/notifier/internal/pipeline"
)

// Destination is the destination recorded for log deliveries.
const Destination = "log"

// Deliverer writes alerts to the log; it implements pipeline.Deliverer.
type Deliverer struct {
	Logger *slog.Logger
}

var (
	_ pipeline.Deliverer = (*Deliverer)(nil)
	_ outbound.Transport = (*Deliverer)(nil)
)

// Deliver logs the alert's message as the reader would see it.
func (d *Deliverer) Deliver(ctx context.Context, a *alert.Alert) (pipeline.Receipt, error) {
	text := ""
	if a.Message != nil {
		text = a.Message.Plain
	}
	d.Logger.InfoContext(ctx, "delivery log", "alert_id", a.ID, "labels", a.Labels, "message", text)
	return pipeline.Receipt{Destination: Destination, MessageIDs: []string{"log:" + a.ID}}, nil
}

var _ pipeline.GroupTransport = (*Deliverer)(nil)

// Chat is Destination for every alert: offline, all groups go to the log.
func (d *Deliverer) Chat(map[string]string) string { return Destination }

// SendGroupMessage logs an alert group's message, its reply target and its
// buttons, and names it "log:<uuid>".
func (d *Deliverer) SendGroupMessage(ctx context.Context, chat string, m alert.Message, replyTo string, buttons []outbound.Button) (string, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return "", err
	}
	mid := "log:" + id.String()
	d.Logger.InfoContext(ctx, "delivery log: alert group message", "message_id", mid, "reply_to", replyTo, "message", m.Plain, "buttons", buttons)
	return mid, nil
}

// EditGroupMessage logs an edit of an alert group's message.
func (d *Deliverer) EditGroupMessage(ctx context.Context, chat, id string, m alert.Message, buttons []outbound.Button) error {
	d.Logger.InfoContext(ctx, "delivery log: alert group message edited", "message_id", id, "message", m.Plain, "buttons", buttons)
	return nil
}

// SendMessage logs a SendMessage message with its buttons.
func (d *Deliverer) SendMessage(ctx context.Context, m outbound.Message) (outbound.Receipt, error) {
	d.Logger.InfoContext(ctx, "delivery log: message", "message_id", m.ID, "chat_id", m.ChatID, "message", m.Plain, "buttons", m.Buttons)
	return outbound.Receipt{Destination: Destination, MessageID: "log:" + m.ID}, nil
}

// Replier writes the chat agent's replies to the log.
type Replier struct {
	Logger *slog.Logger
}

// Reply logs the reply and returns 0: no Telegram message was made.
func (r *Replier) Reply(ctx context.Context, chatID, replyTo int64, text string) (int64, error) {
	r.Logger.InfoContext(ctx, "delivery log: chat reply", "chat_id", chatID, "reply_to", replyTo, "text", text)
	return 0, nil
}

// SendSticker logs the sticker and returns 0: no Telegram message was
// made.
func (r *Replier) SendSticker(ctx context.Context, chatID, replyTo int64, fileID string) (int64, error) {
	r.Logger.InfoContext(ctx, "delivery log: chat sticker", "chat_id", chatID, "reply_to", replyTo, "file_id", fileID)
	return 0, nil
}

// Responder writes answers to button presses and message edits to the log.
type Responder struct {
	Logger *slog.Logger
}

// AnswerCallback logs the answer.
func (r *Responder) AnswerCallback(ctx context.Context, queryID, text string) error {
	r.Logger.InfoContext(ctx, "delivery log: button press answered", "callback_query_id", queryID, "text", text)
	return nil
}

// EditText logs the edit.
func (r *Responder) EditText(ctx context.Context, chatID, messageID int64, text string) error {
	r.Logger.InfoContext(ctx, "delivery log: message edited", "chat_id", chatID, "message_id", messageID, "text", text)
	return nil
}
