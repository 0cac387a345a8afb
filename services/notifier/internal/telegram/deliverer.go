package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/pipeline"
)

// Deliverer delivers alerts to Telegram; it implements pipeline.Deliverer.
type Deliverer struct {
	Client *Client
	Router Router
	Logger *slog.Logger
}

var _ pipeline.Deliverer = (*Deliverer)(nil)

// errNoChat is returned for an alert no route or default chat covers.
var errNoChat = &Error{Description: "no chat configured for this alert (set TELEGRAM_CHAT_ID or a matching NOTIFIER_ROUTES entry)", permanent: true, err: errors.New("no chat configured")}

// Deliver sends the alert's MarkdownV2 message to its chat. If Telegram
// cannot parse the entities — a formatter bug, logged as such — the plain
// text is sent instead.
func (d *Deliverer) Deliver(ctx context.Context, a *alert.Alert) (pipeline.Receipt, error) {
	if a.Message == nil {
		return pipeline.Receipt{}, fmt.Errorf("alert %s has no rendered message", a.ID)
	}
	chat := d.Router.Route(a.Labels)
	if chat == "" {
		return pipeline.Receipt{}, errNoChat
	}
	id, err := d.Client.Send(ctx, Message{ChatID: chat, Text: a.Message.Text, ParseMode: a.Message.ParseMode})
	if IsCantParseEntities(err) {
		d.Logger.ErrorContext(ctx, "BUG: Telegram refused the formatter's MarkdownV2; resending as plain text",
			"alert_id", a.ID, "chat_id", chat, "error", err)
		id, err = d.Client.Send(ctx, Message{ChatID: chat, Text: a.Message.Plain})
	}
	if err != nil {
		return pipeline.Receipt{}, err
	}
	return pipeline.Receipt{Destination: chat, MessageIDs: []string{strconv.FormatInt(id, 10)}}, nil
}

// Replier sends the chat agent's replies; it implements chat.Replier.
type Replier struct {
	Client *Client
}

// Reply sends text, as plain text, in reply to message replyTo.
func (r *Replier) Reply(ctx context.Context, chatID, replyTo int64, text string) (int64, error) {
	return r.Client.Send(ctx, Message{ChatID: strconv.FormatInt(chatID, 10), Text: text, ReplyTo: replyTo})
}
