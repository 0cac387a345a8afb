// Package deliverylog is the notifier's offline delivery: without a
// Telegram bot token, rendered messages are written to the service log
// (and stored on the alert by the pipeline) instead of being sent, and the
// alert counts as delivered to "log".
package deliverylog

import (
	"context"
	"log/slog"

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
