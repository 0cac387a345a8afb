// Package telegram delivers the notifier's messages through the Telegram Bot
// API (github.com/go-telegram/bot): alerts to the chat their labels route
// them to, and the chat agent's replies. Sends are paced (about one message
// a second per chat and thirty a second overall, Telegram's published
// limits) so bursts do not run into 429s. Every failed call is an *Error of
// one ErrorKind, read once from Telegram's error_code, description and
// parameters (retry_after, migrate_to_chat_id); senderr.Classify turns it
// into what a delivery does (wait, retry, give up, send a new message,
// follow a migrated group). A group that became a supergroup is followed:
// the Deliverer sends to the new chat id and keeps using it (Migrations).
// The bot token never appears in an error's text or description.
package telegram

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"golang.org/x/time/rate"

	"github.com/groundcrew/groundcrew/platform/redact"
	"github.com/groundcrew/groundcrew/services/notifier/internal/senderr"
)

// Pacing defaults: Telegram allows about one message a second in a chat and
// thirty a second overall.
const (
	DefaultPerChat = rate.Limit(1)
	DefaultOverall = rate.Limit(30)
)

// Options configures a Client.
type Options struct {
	// APIURL is the Bot API server, e.g. https://api.telegram.org or a local
	// Bot API server; empty means Telegram's.
	APIURL string
	// SkipGetMe skips the token check at start (tests; or a start that must
	// not depend on Telegram being reachable).
	SkipGetMe bool
	// HTTPClient sends the requests; nil means one with DefaultTimeout.
	HTTPClient *http.Client
	// PerChat and Overall are the pacing rates; zero means the defaults.
	PerChat, Overall rate.Limit
}

// DefaultTimeout bounds one Bot API request when Options.HTTPClient does
// not say otherwise.
const DefaultTimeout = 30 * time.Second

// Client sends messages to Telegram.
type Client struct {
	bot   *bot.Bot
	pacer *pacer
	token string // only to remove it from error texts
}

// New returns a Client for the bot token. Unless SkipGetMe is set, it
// checks the token with getMe.
func New(token string, o Options) (*Client, error) {
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: DefaultTimeout}
	}
	opts := []bot.Option{
		bot.WithHTTPClient(hc.Timeout, hc),
		// Errors inside the library (e.g. closing a body) are not ours to
		// print on stderr.
		bot.WithErrorsHandler(func(error) {}),
	}
	if o.APIURL != "" {
		opts = append(opts, bot.WithServerURL(strings.TrimRight(o.APIURL, "/")))
	}
	if o.SkipGetMe {
		opts = append(opts, bot.WithSkipGetMe())
	}
	b, err := bot.New(token, opts...)
	if err != nil {
		return nil, fmt.Errorf("telegram: connecting the bot: %w", redact.Error(err, token))
	}
	return &Client{bot: b, pacer: newPacer(o.PerChat, o.Overall), token: token}, nil
}

// Message is what to send.
type Message struct {
	ChatID    string // numeric id or @channelusername
	Text      string
	ParseMode string // "MarkdownV2" or "" for plain text
	// ReplyTo is the message id to reply to; 0 for none.
	ReplyTo int64
	// ThreadID is the forum topic to send in; 0 for none (a chat's General
	// topic, or a chat without topics).
	ThreadID int64
	// Buttons are shown in one row of an inline keyboard under the message.
	Buttons []Button
}

// Button is an inline keyboard button that sends CallbackData back through
// the webhook when pressed.
type Button struct {
	Text         string
	CallbackData string
}

// inlineKeyboardMarkup is the Bot API's InlineKeyboardMarkup with callback
// buttons only. The library's models.InlineKeyboardButton always writes
// "copy_text":{"text":""}, a second button kind on every button, where
// Telegram wants exactly one.
type inlineKeyboardMarkup struct {
	InlineKeyboard [][]callbackButton `json:"inline_keyboard"`
}

type callbackButton struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data"`
}

// inlineKeyboard is the reply_markup for one row of buttons; nil for none.
func inlineKeyboard(buttons []Button) models.ReplyMarkup {
	if len(buttons) == 0 {
		return nil
	}
	row := make([]callbackButton, 0, len(buttons))
	for _, b := range buttons {
		row = append(row, callbackButton{Text: b.Text, CallbackData: b.CallbackData})
	}
	return inlineKeyboardMarkup{InlineKeyboard: [][]callbackButton{row}}
}

// Send waits for its turn in the chat and sends m with link previews off,
// returning the new message's id.
func (c *Client) Send(ctx context.Context, m Message) (int64, error) {
	if err := c.pacer.wait(ctx, m.ChatID); err != nil {
		// The pacer refuses at once when the wait would pass the deadline.
		return 0, &Error{Description: "the chat's send rate allows no message before the deadline", err: fmt.Errorf("waiting to send to chat %s: %w", m.ChatID, err)}
	}
	params := &bot.SendMessageParams{
		ChatID:             m.ChatID,
		Text:               m.Text,
		ParseMode:          models.ParseMode(m.ParseMode),
		LinkPreviewOptions: &models.LinkPreviewOptions{IsDisabled: bot.True()},
	}
	if kb := inlineKeyboard(m.Buttons); kb != nil {
		params.ReplyMarkup = kb
	}
	if m.ReplyTo != 0 {
		params.ReplyParameters = &models.ReplyParameters{MessageID: int(m.ReplyTo), AllowSendingWithoutReply: true}
	}
	params.MessageThreadID = int(m.ThreadID)
	sent, err := c.bot.SendMessage(ctx, params)
	if err != nil {
		return 0, c.classify(err)
	}
	return int64(sent.ID), nil
}

// SendSticker waits for its turn in the chat and sends the sticker with
// Telegram file id fileID (sendSticker), replying to message replyTo
// unless it is 0, and returns the new message's id.
func (c *Client) SendSticker(ctx context.Context, chatID string, replyTo int64, fileID string) (int64, error) {
	return c.SendStickerInTopic(ctx, chatID, 0, replyTo, fileID)
}

// SendStickerInTopic is SendSticker in forum topic threadID (0: none).
func (c *Client) SendStickerInTopic(ctx context.Context, chatID string, threadID, replyTo int64, fileID string) (int64, error) {
	if err := c.pacer.wait(ctx, chatID); err != nil {
		return 0, &Error{Description: "the chat's send rate allows no message before the deadline", err: fmt.Errorf("waiting to send to chat %s: %w", chatID, err)}
	}
	params := &bot.SendStickerParams{ChatID: chatID, MessageThreadID: int(threadID), Sticker: &models.InputFileString{Data: fileID}}
	if replyTo != 0 {
		params.ReplyParameters = &models.ReplyParameters{MessageID: int(replyTo), AllowSendingWithoutReply: true}
	}
	sent, err := c.bot.SendSticker(ctx, params)
	if err != nil {
		return 0, c.classify(err)
	}
	return int64(sent.ID), nil
}

// AnswerCallback answers an inline button press (answerCallbackQuery),
// showing text briefly to the user who pressed.
func (c *Client) AnswerCallback(ctx context.Context, queryID, text string) error {
	if _, err := c.bot.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: queryID, Text: text}); err != nil {
		return c.classify(err)
	}
	return nil
}

// EditText replaces a message's text with plain text (editMessageText);
// the inline keyboard goes with the old text. When the message is gone or
// can no longer be edited, the text is sent as a new message instead, so
// that the outcome is still shown; an edit that changes nothing is no
// error.
func (c *Client) EditText(ctx context.Context, chatID, messageID int64, text string) error {
	if err := c.pacer.wait(ctx, strconv.FormatInt(chatID, 10)); err != nil {
		return &Error{Description: "the chat's send rate allows no edit before the deadline", err: fmt.Errorf("waiting to edit in chat %d: %w", chatID, err)}
	}
	_, err := c.bot.EditMessageText(ctx, &bot.EditMessageTextParams{
		ChatID: chatID, MessageID: int(messageID), Text: text,
		LinkPreviewOptions: &models.LinkPreviewOptions{IsDisabled: bot.True()},
	})
	if err == nil {
		return nil
	}
	err = c.classify(err)
	switch {
	case kindOf(err) == ErrNotModified:
		return nil
	case senderr.Classify(err).Action == senderr.SendNew:
		_, serr := c.Send(ctx, Message{ChatID: strconv.FormatInt(chatID, 10), Text: text})
		return serr
	default:
		return err
	}
}

// Edit replaces a message's text (editMessageText) in parse mode
// parseMode ("" for plain text) and its inline keyboard with buttons (none
// removes it). An edit that changes nothing is no error.
func (c *Client) Edit(ctx context.Context, chatID string, messageID int64, text, parseMode string, buttons []Button) error {
	if err := c.pacer.wait(ctx, chatID); err != nil {
		return &Error{Description: "the chat's send rate allows no edit before the deadline", err: fmt.Errorf("waiting to edit in chat %s: %w", chatID, err)}
	}
	var markup models.ReplyMarkup = inlineKeyboardMarkup{InlineKeyboard: [][]callbackButton{}}
	if kb := inlineKeyboard(buttons); kb != nil {
		markup = kb
	}
	_, err := c.bot.EditMessageText(ctx, &bot.EditMessageTextParams{
		ChatID: chatID, MessageID: int(messageID), Text: text, ParseMode: models.ParseMode(parseMode),
		LinkPreviewOptions: &models.LinkPreviewOptions{IsDisabled: bot.True()},
		ReplyMarkup:        markup,
	})
	if err != nil {
		if err := c.classify(err); kindOf(err) != ErrNotModified {
			return err
		}
	}
	return nil
}

// ErrorKind is what a failed Bot API call means for the notifier. The
// Bot API tells failures apart only by error_code and the words of its
// description; they are read here, once, so that nothing else matches on
// Telegram's words.
type ErrorKind int

// Kinds of Bot API failures.
const (
	// ErrTransient is a failure a retry may get past: a network error, a
	// timeout, 401 (a token fixed by a restart), 404, 409, 5xx.
	ErrTransient ErrorKind = iota
	// ErrRateLimited is 429 Too Many Requests; Error.Wait is its
	// parameters.retry_after.
	ErrRateLimited
	// ErrChatGone is a chat the bot cannot post to and never will without
	// someone acting: 403 "bot was blocked by the user", "bot was kicked
	// from the group chat", "bot is not a member of the channel chat",
	// "user is deactivated", 400 "chat not found".
	ErrChatGone
	// ErrRefused is any other 400 or 403: the request itself is refused,
	// and sending it again would be refused again.
	ErrRefused
	// ErrMessageGone is an edit of a message that can no longer be edited:
	// 400 "message to edit not found" or "message can't be edited".
	ErrMessageGone
	// ErrNotModified is 400 "message is not modified": the edit changes
	// nothing (no failure for the caller).
	ErrNotModified
	// ErrCantParse is 400 "can't parse entities": the MarkdownV2 is
	// malformed (a formatter bug; the caller resends as plain text).
	ErrCantParse
	// ErrMigrated is 400 "group chat was upgraded to a supergroup chat";
	// Error.MigrateTo is parameters.migrate_to_chat_id.
	ErrMigrated
)

var kindNames = map[ErrorKind]string{
	ErrTransient: "transient", ErrRateLimited: "rate_limited", ErrChatGone: "chat_gone", ErrRefused: "refused",
	ErrMessageGone: "message_gone", ErrNotModified: "not_modified", ErrCantParse: "cant_parse", ErrMigrated: "migrated",
}

// String names the kind.
func (k ErrorKind) String() string { return kindNames[k] }

// Error is a failed Bot API call. Neither its text nor its description
// carries the bot token, even when the Bot API or a proxy in front of it
// echoes the request path.
type Error struct {
	// Kind is what the failure means.
	Kind ErrorKind
	// ErrorCode is Telegram's error code (400, 403, 429, …), or 0 for a
	// network or other failure.
	ErrorCode int
	// Description is Telegram's description, or a short summary.
	Description string
	// Wait is Telegram's retry_after on a 429.
	Wait time.Duration
	// MigrateTo is the supergroup a group became (ErrMigrated).
	MigrateTo int64

	err error
}

// Error is the library's error text with the token removed, for logs.
func (e *Error) Error() string { return "telegram: " + e.err.Error() }

// Unwrap returns the library's error (with the token removed).
func (e *Error) Unwrap() error { return e.err }

// Public is the description stored on an alert: Telegram's code and words,
// e.g. "telegram: 403 Forbidden: bot was blocked by the user".
func (e *Error) Public() string {
	if e.ErrorCode == 0 {
		return "telegram: " + e.Description
	}
	return fmt.Sprintf("telegram: %d %s", e.ErrorCode, e.Description)
}

// Permanent reports whether retrying the same request cannot help.
func (e *Error) Permanent() bool {
	switch e.Kind {
	case ErrChatGone, ErrRefused, ErrMessageGone, ErrCantParse, ErrMigrated:
		return true
	}
	return false
}

// MessageGone reports whether the message to edit is gone or can no
// longer be edited: a new message stands in for it.
func (e *Error) MessageGone() bool { return e.Kind == ErrMessageGone }

// MigratedTo is the chat id a group moved to ("" unless ErrMigrated).
func (e *Error) MigratedTo() string {
	if e.Kind != ErrMigrated || e.MigrateTo == 0 {
		return ""
	}
	return strconv.FormatInt(e.MigrateTo, 10)
}

// Code labels metrics: Telegram's error code, or "network".
func (e *Error) Code() string {
	if e.ErrorCode == 0 {
		return "network"
	}
	return strconv.Itoa(e.ErrorCode)
}

// RateLimit wraps the Error of a 429; it tells the pipeline how long to
// wait.
type RateLimit struct{ err *Error }

// Error is the wrapped Error's text.
func (r RateLimit) Error() string { return r.err.Error() }

// Unwrap returns the Error.
func (r RateLimit) Unwrap() error { return r.err }

// RetryAfter is how long Telegram asked to wait.
func (r RateLimit) RetryAfter() time.Duration { return r.err.Wait }

// IsCantParseEntities reports whether err is Telegram refusing a message's
// MarkdownV2 — always a formatter bug.
func IsCantParseEntities(err error) bool { return kindOf(err) == ErrCantParse }

// kindOf is err's kind; ErrTransient for errors that are not an *Error.
func kindOf(err error) ErrorKind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ErrTransient
}

// chatGone are the descriptions (lower case) of a chat the bot cannot
// reach: blocked by the user, kicked, not a member, deleted.
var chatGone = []string{
	"chat not found",
	"bot was blocked by the user",
	"bot was kicked from",
	"bot is not a member of",
	"user is deactivated",
	"bot can't initiate conversation with a user",
	"group chat was deleted",
	"peer_id_invalid",
}

// classify turns the library's error into an *Error (a RateLimit for a
// 429), with the token removed from every text.
func (c *Client) classify(err error) error {
	err = redact.Error(err, c.token)
	if tm, ok := errors.AsType[*bot.TooManyRequestsError](err); ok {
		wait := time.Duration(max(tm.RetryAfter, 1)) * time.Second
		return RateLimit{&Error{Kind: ErrRateLimited, ErrorCode: http.StatusTooManyRequests, Description: c.scrub(tooManyRequests(tm.Message)), Wait: wait, err: err}}
	}
	if me, ok := errors.AsType[*bot.MigrateError](err); ok {
		desc := strings.TrimPrefix(me.Message, bot.ErrorBadRequest.Error()+": ")
		return &Error{Kind: ErrMigrated, ErrorCode: http.StatusBadRequest, Description: c.scrub(desc), MigrateTo: int64(me.MigrateToChatID), err: err}
	}
	e := &Error{err: err}
	switch {
	case errors.Is(err, bot.ErrorBadRequest):
		e.ErrorCode, e.Description, e.Kind = http.StatusBadRequest, description(err, bot.ErrorBadRequest), ErrRefused
	case errors.Is(err, bot.ErrorForbidden):
		e.ErrorCode, e.Description, e.Kind = http.StatusForbidden, description(err, bot.ErrorForbidden), ErrRefused
	case errors.Is(err, bot.ErrorUnauthorized):
		// A wrong token is a configuration error that a restart fixes:
		// retry rather than fail the alert.
		e.ErrorCode, e.Description = http.StatusUnauthorized, description(err, bot.ErrorUnauthorized)
	case errors.Is(err, bot.ErrorNotFound):
		e.ErrorCode, e.Description = http.StatusNotFound, description(err, bot.ErrorNotFound)
	case errors.Is(err, bot.ErrorConflict):
		e.ErrorCode, e.Description = http.StatusConflict, description(err, bot.ErrorConflict)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		e.Description = "request timed out or was cancelled"
	default:
		e.Description = "request failed"
		// The library reports other API errors as
		// "error response from telegram for method M, CODE DESC".
		if _, after, ok := strings.Cut(err.Error(), "error response from telegram for method "); ok {
			if _, rest, ok := strings.Cut(after, ", "); ok {
				code, desc, _ := strings.Cut(rest, " ")
				if n, err := strconv.Atoi(code); err == nil {
					e.ErrorCode, e.Description = n, desc
				}
			}
		}
	}
	e.Description = c.scrub(e.Description)
	if e.Kind == ErrRefused {
		d := strings.ToLower(e.Description)
		switch {
		case strings.Contains(d, "message is not modified"):
			e.Kind = ErrNotModified
		case strings.Contains(d, "can't parse entities"):
			e.Kind = ErrCantParse
		case strings.Contains(d, "message to edit not found"), strings.Contains(d, "message can't be edited"):
			e.Kind = ErrMessageGone
		default:
			for _, g := range chatGone {
				if strings.Contains(d, g) {
					e.Kind = ErrChatGone
					break
				}
			}
		}
	}
	return e
}

// scrub removes the token from a text taken from a response.
func (c *Client) scrub(s string) string { return redact.String(s, c.token) }

// tooManyRequests is Telegram's description from the library's
// "too many requests, <description>".
func tooManyRequests(msg string) string {
	if _, d, ok := strings.Cut(msg, bot.ErrorTooManyRequests.Error()+", "); ok && d != "" {
		return d
	}
	return "Too Many Requests"
}

// description is Telegram's description from the library's
// "<sentinel>, <description>" error text.
func description(err, sentinel error) string {
	_, d, ok := strings.Cut(err.Error(), sentinel.Error()+", ")
	if !ok || d == "" {
		return sentinel.Error()
	}
	return d
}

// pacer spaces sends per chat and overall.
type pacer struct {
	perChat rate.Limit
	overall *rate.Limiter

	mu    sync.Mutex
	chats map[string]*rate.Limiter
}

func newPacer(perChat, overall rate.Limit) *pacer {
	if perChat <= 0 {
		perChat = DefaultPerChat
	}
	if overall <= 0 {
		overall = DefaultOverall
	}
	return &pacer{
		perChat: perChat,
		overall: rate.NewLimiter(overall, max(1, int(overall))),
		chats:   make(map[string]*rate.Limiter),
	}
}

func (p *pacer) wait(ctx context.Context, chat string) error {
	p.mu.Lock()
	l, ok := p.chats[chat]
	if !ok {
		// A burst of 3 lets a short flurry through at once, as Telegram
		// does; sustained, a chat gets perChat messages a second.
		l = rate.NewLimiter(p.perChat, 3)
		p.chats[chat] = l
	}
	p.mu.Unlock()
	if err := l.Wait(ctx); err != nil {
		return err
	}
	return p.overall.Wait(ctx)
}

// Username asks Telegram for the bot's @username (getMe).
func (c *Client) Username(ctx context.Context) (string, error) {
	me, err := c.bot.GetMe(ctx)
	if err != nil {
		return "", c.classify(err)
	}
	return me.Username, nil
}

// BotID is the bot's user id, the numeric prefix of its token (0 if the
// token has none).
func BotID(token string) int64 {
	id, _, _ := strings.Cut(token, ":")
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return 0
	}
	return n
}
