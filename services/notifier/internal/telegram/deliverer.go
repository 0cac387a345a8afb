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
	var reply int64
	if a.ReplyTo != "" {
		// A log id or another chat's message cannot be replied to: the
		// resolution then goes out on its own.
		reply, _ = strconv.ParseInt(a.ReplyTo, 10, 64)
	}
	id, err := d.Client.Send(ctx, Message{ChatID: chat, Text: a.Message.Text, ParseMode: a.Message.ParseMode, ReplyTo: reply})
	if IsCantParseEntities(err) {
		d.Logger.ErrorContext(ctx, "BUG: Telegram refused the formatter's MarkdownV2; resending as plain text",
			"alert_id", a.ID, "chat_id", chat, "error", err)
		id, err = d.Client.Send(ctx, Message{ChatID: chat, Text: a.Message.Plain, ReplyTo: reply})
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

// Chat is the chat alerts with labels are routed to; it makes Deliverer a
// pipeline.GroupTransport.
func (d *Deliverer) Chat(labels map[string]string) string { return d.Router.Route(labels) }

var _ pipeline.GroupTransport = (*Deliverer)(nil)

// SendGroupMessage sends an alert group's message to chat, in reply to
// replyTo when set, with buttons; like Deliver it falls back to plain text
// when Telegram cannot parse the MarkdownV2.
func (d *Deliverer) SendGroupMessage(ctx context.Context, chat string, m alert.Message, replyTo string, buttons []outbound.Button) (string, error) {
	if chat == "" {
		return "", errNoChat
	}
	var reply int64
	if replyTo != "" {
		r, err := strconv.ParseInt(replyTo, 10, 64)
		if err != nil {
			return "", &Error{Description: "the group's root message id is not a Telegram message id", permanent: true, err: fmt.Errorf("root message id %q: %w", replyTo, err)}
		}
		reply = r
	}
	bs := toButtons(buttons)
	id, err := d.Client.Send(ctx, Message{ChatID: chat, Text: m.Text, ParseMode: m.ParseMode, ReplyTo: reply, Buttons: bs})
	if IsCantParseEntities(err) {
		d.Logger.ErrorContext(ctx, "BUG: Telegram refused the formatter's MarkdownV2; resending as plain text", "chat_id", chat, "error", err)
		id, err = d.Client.Send(ctx, Message{ChatID: chat, Text: m.Plain, ReplyTo: reply, Buttons: bs})
	}
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(id, 10), nil
}

// EditGroupMessage replaces an alert group's message text and buttons.
func (d *Deliverer) EditGroupMessage(ctx context.Context, chat, id string, m alert.Message, buttons []outbound.Button) error {
	mid, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return fmt.Errorf("message id %q is not a Telegram message id: %w", id, err)
	}
	bs := toButtons(buttons)
	err = d.Client.Edit(ctx, chat, mid, m.Text, m.ParseMode, bs)
	if IsCantParseEntities(err) {
		d.Logger.ErrorContext(ctx, "BUG: Telegram refused the formatter's MarkdownV2 in an edit; editing as plain text", "chat_id", chat, "error", err)
		err = d.Client.Edit(ctx, chat, mid, m.Plain, "", bs)
	}
	return err
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

// SendSticker sends the sticker fileID in reply to message replyTo; it
// implements chat.StickerSender.
func (r *Replier) SendSticker(ctx context.Context, chatID, replyTo int64, fileID string) (int64, error) {
	return r.Client.SendSticker(ctx, strconv.FormatInt(chatID, 10), replyTo, fileID)
}
