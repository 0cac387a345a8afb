package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/outbound"
	"github.com/groundcrew/groundcrew/services/notifier/internal/pipeline"
)

// Deliverer delivers alerts to Telegram; it implements pipeline.Deliverer.
type Deliverer struct {
	Client *Client
	Router Router
	Logger *slog.Logger
}

var (
	_ pipeline.Deliverer = (*Deliverer)(nil)
	_ outbound.Transport = (*Deliverer)(nil)
)

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

// SendMessage sends a SendMessage message to its chat, or the default chat
// when it names none, with its buttons; like Deliver it falls back to plain
// text when Telegram cannot parse the MarkdownV2.
func (d *Deliverer) SendMessage(ctx context.Context, m outbound.Message) (outbound.Receipt, error) {
	chat := m.ChatID
	if chat == "" {
		chat = d.Router.Default
	}
	if chat == "" {
		return outbound.Receipt{}, errNoDefaultChat
	}
	buttons := toButtons(m.Buttons)
	id, err := d.Client.Send(ctx, Message{ChatID: chat, Text: m.Text, ParseMode: "MarkdownV2", Buttons: buttons})
	if IsCantParseEntities(err) {
		d.Logger.ErrorContext(ctx, "BUG: Telegram refused escaped MarkdownV2; resending as plain text",
			"message_id", m.ID, "chat_id", chat, "error", err)
		id, err = d.Client.Send(ctx, Message{ChatID: chat, Text: m.Plain, Buttons: buttons})
	}
	if err != nil {
		return outbound.Receipt{}, err
	}
	return outbound.Receipt{Destination: chat, MessageID: strconv.FormatInt(id, 10)}, nil
}

// errNoDefaultChat is returned for a message without a chat when
// TELEGRAM_CHAT_ID is unset.
var errNoDefaultChat = &Error{Description: "no chat_id given and no default chat configured (set TELEGRAM_CHAT_ID)", permanent: true, err: errors.New("no default chat")}

func toButtons(bs []outbound.Button) []Button {
	out := make([]Button, 0, len(bs))
	for _, b := range bs {
		out = append(out, Button{Text: b.Text, CallbackData: b.CallbackData})
	}
	return out
}

// Replier sends the chat agent's replies; it implements chat.Replier.
type Replier struct {
	Client *Client
}

// Reply sends text, as plain text, in reply to message replyTo.
func (r *Replier) Reply(ctx context.Context, chatID, replyTo int64, text string) (int64, error) {
	return r.Client.Send(ctx, Message{ChatID: strconv.FormatInt(chatID, 10), Text: text, ReplyTo: replyTo})
}
