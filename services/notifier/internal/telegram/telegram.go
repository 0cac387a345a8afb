// Package telegram delivers the notifier's messages through the Telegram Bot
// API (github.com/go-telegram/bot): alerts to the chat their labels route
// them to, and the chat agent's replies. Sends are paced (about one message
// a second per chat and thirty a second overall, Telegram's published
// limits) so bursts do not run into 429s, and errors are classified for the
// pipeline: 429 carries retry_after, 400 "can't parse entities" is
// recognised so the caller can resend as plain text, and errors that
// retrying cannot fix are marked permanent.
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
		return nil, fmt.Errorf("telegram: connecting the bot: %w", err)
	}
	return &Client{bot: b, pacer: newPacer(o.PerChat, o.Overall)}, nil
}

// Message is what to send.
type Message struct {
	ChatID    string // numeric id or @channelusername
	Text      string
	ParseMode string // "MarkdownV2" or "" for plain text
	// ReplyTo is the message id to reply to; 0 for none.
	ReplyTo int64
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
	sent, err := c.bot.SendMessage(ctx, params)
	if err != nil {
		return 0, classify(err)
	}
	return int64(sent.ID), nil
}

// SendSticker waits for its turn in the chat and sends the sticker with
// Telegram file id fileID (sendSticker), replying to message replyTo
// unless it is 0, and returns the new message's id.
func (c *Client) SendSticker(ctx context.Context, chatID string, replyTo int64, fileID string) (int64, error) {
	if err := c.pacer.wait(ctx, chatID); err != nil {
		return 0, &Error{Description: "the chat's send rate allows no message before the deadline", err: fmt.Errorf("waiting to send to chat %s: %w", chatID, err)}
	}
	params := &bot.SendStickerParams{ChatID: chatID, Sticker: &models.InputFileString{Data: fileID}}
	if replyTo != 0 {
		params.ReplyParameters = &models.ReplyParameters{MessageID: int(replyTo), AllowSendingWithoutReply: true}
	}
	sent, err := c.bot.SendSticker(ctx, params)
	if err != nil {
		return 0, classify(err)
	}
	return int64(sent.ID), nil
}

// AnswerCallback answers an inline button press (answerCallbackQuery),
// showing text briefly to the user who pressed.
func (c *Client) AnswerCallback(ctx context.Context, queryID, text string) error {
	if _, err := c.bot.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: queryID, Text: text}); err != nil {
		return classify(err)
	}
	return nil
}

// EditText replaces a message's text with plain text (editMessageText);
// the inline keyboard goes with the old text.
func (c *Client) EditText(ctx context.Context, chatID, messageID int64, text string) error {
	if err := c.pacer.wait(ctx, strconv.FormatInt(chatID, 10)); err != nil {
		return &Error{Description: "the chat's send rate allows no edit before the deadline", err: fmt.Errorf("waiting to edit in chat %d: %w", chatID, err)}
	}
	_, err := c.bot.EditMessageText(ctx, &bot.EditMessageTextParams{
		ChatID: chatID, MessageID: int(messageID), Text: text,
		LinkPreviewOptions: &models.LinkPreviewOptions{IsDisabled: bot.True()},
	})
	if err != nil {
		return classify(err)
	}
	return nil
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
	if err != nil && strings.Contains(err.Error(), "message is not modified") {
		return nil
	}
	if err != nil {
		return classify(err)
	}
	return nil
}

// Error is a failed Bot API call.
type Error struct {
	// ErrorCode is Telegram's error code (400, 403, 429, …), or 0 for a
	// network or other failure.
	ErrorCode int
	// Description is Telegram's description, or a short summary.
	Description string
	// Wait is Telegram's retry_after on a 429.
	Wait time.Duration

	permanent bool
	err       error
}

// Error is the library's error text (the token is never in it), for logs.
func (e *Error) Error() string { return "telegram: " + e.err.Error() }

// Unwrap returns the library's error.
func (e *Error) Unwrap() error { return e.err }

// Public is the description stored on an alert.
func (e *Error) Public() string {
	if e.ErrorCode == 0 {
		return "telegram: " + e.Description
	}
	return fmt.Sprintf("telegram: %d %s", e.ErrorCode, e.Description)
}

// Permanent reports whether retrying cannot help.
func (e *Error) Permanent() bool { return e.permanent }

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
func IsCantParseEntities(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.ErrorCode == http.StatusBadRequest && strings.Contains(strings.ToLower(e.Description), "can't parse entities")
}

func classify(err error) error {
	if tm, ok := errors.AsType[*bot.TooManyRequestsError](err); ok {
		wait := time.Duration(max(tm.RetryAfter, 1)) * time.Second
		return RateLimit{&Error{ErrorCode: http.StatusTooManyRequests, Description: "Too Many Requests", Wait: wait, err: err}}
	}
	if me, ok := errors.AsType[*bot.MigrateError](err); ok {
		return &Error{ErrorCode: http.StatusBadRequest, Description: fmt.Sprintf("group migrated to supergroup %d; update the chat id", me.MigrateToChatID), permanent: true, err: err}
	}
	e := &Error{err: err}
	switch {
	case errors.Is(err, bot.ErrorBadRequest):
		e.ErrorCode, e.Description, e.permanent = http.StatusBadRequest, description(err, bot.ErrorBadRequest), true
	case errors.Is(err, bot.ErrorForbidden):
		e.ErrorCode, e.Description, e.permanent = http.StatusForbidden, description(err, bot.ErrorForbidden), true
	case errors.Is(err, bot.ErrorUnauthorized):
		// A wrong token is a configuration error that a restart fixes:
		// retry rather than fail the alert.
		e.ErrorCode, e.Description = http.StatusUnauthorized, description(err, bot.ErrorUnauthorized)
	case errors.Is(err, bot.ErrorNotFound):
		e.ErrorCode, e.Description = http.StatusNotFound, description(err, bot.ErrorNotFound)
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
	return e
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
		return "", classify(err)
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
