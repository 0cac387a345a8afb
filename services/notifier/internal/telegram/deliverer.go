package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/outbound"
	"github.com/groundcrew/groundcrew/services/notifier/internal/pipeline"
	"github.com/groundcrew/groundcrew/services/notifier/internal/senderr"
)

// Deliverer delivers alerts to Telegram; it implements pipeline.Deliverer.
type Deliverer struct {
	Client *Client
	Router Router
	Logger *slog.Logger
	// Migrations keeps the groups that became supergroups, so that every
	// later message goes to the new chat id; nil keeps them in memory only.
	Migrations Migrations

	mu       sync.Mutex
	migrated map[string]string // without Migrations
}

var (
	_ pipeline.Deliverer = (*Deliverer)(nil)
	_ outbound.Transport = (*Deliverer)(nil)
)

// Migrations stores chat migrations: a group upgraded to a supergroup gets
// a new chat id, and Telegram refuses messages to the old one.
type Migrations interface {
	// MigratedChat is the chat id that chat moved to, if it moved.
	MigratedChat(ctx context.Context, chat string) (to string, ok bool, err error)
	// RecordChatMigration keeps that chat from moved to chat to.
	RecordChatMigration(ctx context.Context, from, to string, at time.Time) error
}

// errNoChat is returned for an alert no route or default chat covers.
var errNoChat = &Error{Description: "no chat configured for this alert (set TELEGRAM_CHAT_ID or a matching NOTIFIER_ROUTES entry)", Kind: ErrRefused, err: errors.New("no chat configured")}

// chat is where a message for chat goes: the supergroup it became, if it
// was migrated.
func (d *Deliverer) chat(ctx context.Context, chat string) string {
	if d.Migrations == nil {
		d.mu.Lock()
		defer d.mu.Unlock()
		if to, ok := d.migrated[chat]; ok {
			return to
		}
		return chat
	}
	to, ok, err := d.Migrations.MigratedChat(ctx, chat)
	if err != nil {
		d.Logger.WarnContext(ctx, "reading chat migrations failed; sending to the configured chat", "chat_id", chat, "error", err)
		return chat
	}
	if ok {
		return to
	}
	return chat
}

// migrate records that chat from became chat to and warns that the
// configuration still names the old id.
func (d *Deliverer) migrate(ctx context.Context, from, to string) {
	d.Logger.WarnContext(ctx, "telegram: the group became a supergroup with a new chat id; messages go to the new id from now on. Update the configuration (TELEGRAM_CHAT_ID, NOTIFIER_ROUTES, TELEGRAM_ALLOWED_CHATS), which names the old one",
		"old_chat_id", from, "new_chat_id", to)
	if d.Migrations == nil {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.migrated == nil {
			d.migrated = map[string]string{}
		}
		d.migrated[from] = to
		return
	}
	if err := d.Migrations.RecordChatMigration(ctx, from, to, time.Now().UTC()); err != nil {
		d.Logger.ErrorContext(ctx, "recording a chat migration failed; it is followed until the next restart only", "old_chat_id", from, "new_chat_id", to, "error", err)
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.migrated == nil {
			d.migrated = map[string]string{}
		}
		d.migrated[from] = to
	}
}

// WarnMigrated warns, at start, for each chat of the Router (the default
// chat and the routes' chats) that is known to have moved to a supergroup.
func (d *Deliverer) WarnMigrated(ctx context.Context) {
	chats := []string{d.Router.Default}
	for _, r := range d.Router.Routes {
		chats = append(chats, r.ChatID)
	}
	for _, c := range chats {
		if c == "" {
			continue
		}
		if to := d.chat(ctx, c); to != c {
			d.Logger.WarnContext(ctx, "telegram: the configuration names a group that became a supergroup; messages go to the new chat id. Replace the old id in the configuration",
				"old_chat_id", c, "new_chat_id", to)
		}
	}
}

// send sends m to its chat (or the supergroup the chat became) and returns
// the chat it went to and the message id. MarkdownV2 that Telegram cannot
// parse — a formatter bug, logged as such — is resent as plain text; a
// group that became a supergroup is followed once.
func (d *Deliverer) send(ctx context.Context, m Message, plain string) (string, int64, error) {
	m.ChatID = d.chat(ctx, m.ChatID)
	for hop := 0; ; hop++ {
		id, err := d.Client.Send(ctx, m)
		if IsCantParseEntities(err) {
			d.Logger.ErrorContext(ctx, "BUG: Telegram refused the formatter's MarkdownV2; resending as plain text", "chat_id", m.ChatID, "error", err)
			m.Text, m.ParseMode = plain, ""
			id, err = d.Client.Send(ctx, m)
		}
		if v := senderr.Classify(err); err != nil && v.Action == senderr.Migrate && hop == 0 {
			d.migrate(ctx, m.ChatID, v.MigrateTo)
			// A reply to a message of the old group cannot be kept; the
			// Bot API allows sending without it.
			m.ChatID = v.MigrateTo
			continue
		}
		return m.ChatID, id, err
	}
}

// Deliver sends the alert's MarkdownV2 message to its chat.
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
	to, id, err := d.send(ctx, Message{ChatID: chat, Text: a.Message.Text, ParseMode: a.Message.ParseMode, ReplyTo: reply}, a.Message.Plain)
	if err != nil {
		return pipeline.Receipt{}, err
	}
	return pipeline.Receipt{Destination: to, MessageIDs: []string{strconv.FormatInt(id, 10)}}, nil
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
	to, id, err := d.send(ctx, Message{ChatID: chat, Text: m.Text, ParseMode: "MarkdownV2", Buttons: toButtons(m.Buttons)}, m.Plain)
	if err != nil {
		return outbound.Receipt{}, err
	}
	return outbound.Receipt{Destination: to, MessageID: strconv.FormatInt(id, 10)}, nil
}

// Chat is the chat alerts with labels are routed to (the supergroup it
// became, if it was migrated, so that a group's messages and its buttons
// belong to the chat it now is); it makes Deliverer a
// pipeline.GroupTransport.
func (d *Deliverer) Chat(labels map[string]string) string {
	chat := d.Router.Route(labels)
	if chat == "" {
		return ""
	}
	return d.chat(context.Background(), chat)
}

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
			return "", &Error{Description: "the group's root message id is not a Telegram message id", Kind: ErrRefused, err: fmt.Errorf("root message id %q: %w", replyTo, err)}
		}
		reply = r
	}
	_, id, err := d.send(ctx, Message{ChatID: chat, Text: m.Text, ParseMode: m.ParseMode, ReplyTo: reply, Buttons: toButtons(buttons)}, m.Plain)
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(id, 10), nil
}

// EditGroupMessage replaces an alert group's message text and buttons. A
// message of a group that became a supergroup cannot be edited any more:
// the migration is recorded and the edit fails as one of a message that is
// gone, so that the caller sends a new one (to the new chat).
func (d *Deliverer) EditGroupMessage(ctx context.Context, chat, id string, m alert.Message, buttons []outbound.Button) error {
	mid, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return fmt.Errorf("message id %q is not a Telegram message id: %w", id, err)
	}
	chat = d.chat(ctx, chat)
	bs := toButtons(buttons)
	err = d.Client.Edit(ctx, chat, mid, m.Text, m.ParseMode, bs)
	if IsCantParseEntities(err) {
		d.Logger.ErrorContext(ctx, "BUG: Telegram refused the formatter's MarkdownV2 in an edit; editing as plain text", "chat_id", chat, "error", err)
		err = d.Client.Edit(ctx, chat, mid, m.Plain, "", bs)
	}
	if v := senderr.Classify(err); err != nil && v.Action == senderr.Migrate {
		d.migrate(ctx, chat, v.MigrateTo)
		return &Error{Kind: ErrMessageGone, ErrorCode: http.StatusBadRequest, Description: "the group became a supergroup; its old messages cannot be edited",
			err: fmt.Errorf("editing message %d: %w", mid, err)}
	}
	return err
}

// errNoDefaultChat is returned for a message without a chat when
// TELEGRAM_CHAT_ID is unset.
var errNoDefaultChat = &Error{Description: "no chat_id given and no default chat configured (set TELEGRAM_CHAT_ID)", Kind: ErrRefused, err: errors.New("no default chat")}

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
	return r.ReplyInTopic(ctx, chatID, 0, replyTo, text)
}

// ReplyInTopic sends text, as plain text, in forum topic threadID (0: none)
// in reply to message replyTo; it makes Replier a chat.TopicReplier.
func (r *Replier) ReplyInTopic(ctx context.Context, chatID, threadID, replyTo int64, text string) (int64, error) {
	return r.Client.Send(ctx, Message{ChatID: strconv.FormatInt(chatID, 10), Text: text, ReplyTo: replyTo, ThreadID: threadID})
}

// SendStickerInTopic sends the sticker fileID in forum topic threadID in
// reply to message replyTo.
func (r *Replier) SendStickerInTopic(ctx context.Context, chatID, threadID, replyTo int64, fileID string) (int64, error) {
	return r.Client.SendStickerInTopic(ctx, strconv.FormatInt(chatID, 10), threadID, replyTo, fileID)
}

// SendSticker sends the sticker fileID in reply to message replyTo; it
// implements chat.StickerSender.
func (r *Replier) SendSticker(ctx context.Context, chatID, replyTo int64, fileID string) (int64, error) {
	return r.Client.SendSticker(ctx, strconv.FormatInt(chatID, 10), replyTo, fileID)
}
