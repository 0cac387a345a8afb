// Package deliverylog is the notifier's offline delivery: without a
// Telegram bot token, rendered messages are written to the service log
// (and stored on the alert by the pipeline) instead of being sent, and the
// alert counts as delivered to "log".
package deliverylog

import (
	"context"
	"log/slog"

	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/pipeline"
)

// Destination is the destination recorded for log deliveries.
const Destination = "log"

// Deliverer writes alerts to the log; it implements pipeline.Deliverer.
type Deliverer struct {
	Logger *slog.Logger
}

var _ pipeline.Deliverer = (*Deliverer)(nil)

// Deliver logs the alert's message as the reader would see it.
func (d *Deliverer) Deliver(ctx context.Context, a *alert.Alert) (pipeline.Receipt, error) {
	text := ""
	if a.Message != nil {
		text = a.Message.Plain
	}
	d.Logger.InfoContext(ctx, "delivery log", "alert_id", a.ID, "labels", a.Labels, "message", text)
	return pipeline.Receipt{Destination: Destination, MessageIDs: []string{"log:" + a.ID}}, nil
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
