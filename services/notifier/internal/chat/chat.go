// Package chat is the Telegram chat agent: each update is handled once (by
// bot, chat and update_id: update ids are not trusted to be increasing, nor
// unique across chats); its message is stored in the chat's conversation
// history, with media rendered to short text; the agent decides whether to
// answer (private chats always; groups when the bot is mentioned or replied
// to; never channels, edits or its own messages); and when it answers, it
// asks a Converser for a reply from the chronological history with the
// target message last and sends it as a reply to the target. Task blocks in
// the reply (package tasks) are taken out and handed to a Scheduler. The
// curated stickers (TELEGRAM_STICKERS) are offered with every request; a
// sticker the reply chooses is sent after the text, replying to the same
// message.
//
// The agent works only in allowed chats (TELEGRAM_ALLOWED_CHATS, or the
// configured alert chats): a message from any other chat is
// neither stored nor answered (answering would be the reply into an
// arbitrary chat that the limit exists to stop), and a button pressed there
// is answered with a refusal. Each allowed chat has a reply budget
// (NOTIFIER_CHAT_RATE) that bounds model spend. Refusals are logged and
// counted by reason.
package chat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/groundcrew/groundcrew/services/notifier/internal/message"
	"github.com/groundcrew/groundcrew/services/notifier/internal/tasks"
)

// Outcomes of Handle.
const (
	Replied   = "replied"   // the agent answered
	Stored    = "stored"    // stored in the history, no answer needed
	Duplicate = "duplicate" // the update was handled before
	Ignored   = "ignored"   // nothing to store (unknown callback queries, empty updates)
	Decided   = "decided"   // an approval button press was recorded
	Refused   = "refused"   // not allowed here, or over the chat's budget
)

// DefaultHistorySize is how many messages go to the model.
const DefaultHistorySize = 500

// ConverseRequest asks for the agent's reply to a target message.
type ConverseRequest struct {
	Persona, ModelNotes string
	Group               bool
	History             []Message // chronological, target included
	TargetID            int64
	ConversationID      string
	HistorySize         int
	Now                 time.Time
	// Stickers are the curated stickers the reply may choose one of.
	Stickers []Sticker
}

// Converser writes the agent's reply.
type Converser interface {
	Converse(ctx context.Context, req ConverseRequest) (string, error)
}

// Replier sends the agent's reply to a chat as a reply to a message and
// returns the sent message's id (0 when it made none, e.g. offline).
type Replier interface {
	Reply(ctx context.Context, chatID, replyTo int64, text string) (int64, error)
}

// UpdateKey identifies a handled update: update ids are the bot's own
// sequence, and a forged or replayed id must not burn the id of a real
// update in another chat.
type UpdateKey = message.UpdateKey

// Store keeps conversations and handled updates.
type Store interface {
	UpdateOutcome(ctx context.Context, key UpdateKey) (string, bool, error)
	RecordUpdate(ctx context.Context, key UpdateKey, outcome string, at time.Time) (bool, error)
	SaveChatMessage(ctx context.Context, m Message) error
	SaveChatMessageIfAbsent(ctx context.Context, m Message) error
	ChatHistory(ctx context.Context, chatID int64, limit int) ([]Message, error)
}

// Config describes the bot.
type Config struct {
	BotID       int64  // the bot's user id (the token's prefix)
	BotUsername string // without '@'; mentions are recognised by it
	Persona     string // the agent's persona for the system instruction
	HistorySize int    // messages sent to the model; 0 means DefaultHistorySize
	// AllowedChats are the chats the agent answers in and accepts buttons
	// from; none means none.
	AllowedChats []int64
	// ChatRate is each chat's reply budget; zero is unlimited.
	ChatRate Rate
	// Refusals counts refusals; nil counts nothing.
	Refusals Refusals
	// Stickers are the curated stickers offered to the model in every
	// ConverseRequest (TELEGRAM_STICKERS); none means none.
	Stickers []Sticker
	// Updates counts handled updates by kind and outcome; nil counts
	// nothing.
	Updates UpdateCounter
	// Migrations, when set, makes the supergroup an allowed group became
	// allowed too.
	Migrations Migrations
}

// TaskRequest is a task block of the agent's reply, to be scheduled as a
// durable job.
type TaskRequest struct {
	ChatID    int64      // the chat the reply went to
	MessageID int64      // the message the reply answers
	Index     int        // the block's place in the reply
	From      *User      // who asked (nil when unknown)
	Task      tasks.Task // what to do
}

// Scheduler schedules the tasks of a reply. Scheduling the same chat,
// message and index again must not schedule twice: a reply whose sending
// failed is written again when Telegram retries the update.
type Scheduler interface {
	Schedule(ctx context.Context, t TaskRequest) error
}

// CallbackAnswerer answers a button press (answerCallbackQuery), which
// shows the text to the person who pressed and nobody else.
type CallbackAnswerer interface {
	AnswerCallback(ctx context.Context, queryID, text string) error
}

// Service handles Telegram updates.
type Service struct {
	cfg       Config
	store     Store
	converser Converser
	replier   Replier
	callbacks CallbackHandler
	answerer  CallbackAnswerer
	scheduler Scheduler
	// direct handles presses that check their own presser, from any
	// private chat (the on-call pages' Ack); commands answers /oncall and
	// /ack before the agent sees the message.
	direct   CallbackHandler
	commands Commander
	allowed  map[int64]bool
	migrated migratedChats
	budgets  *budgets
	logger   *slog.Logger
	now      func() time.Time
}

// New returns a Service.
func New(cfg Config, store Store, converser Converser, replier Replier, logger *slog.Logger) *Service {
	if cfg.HistorySize <= 0 {
		cfg.HistorySize = DefaultHistorySize
	}
	cfg.BotUsername = strings.TrimPrefix(cfg.BotUsername, "@")
	if cfg.Refusals == nil {
		cfg.Refusals = NopRefusals{}
	}
	if cfg.Updates == nil {
		cfg.Updates = NopUpdateCounter{}
	}
	s := &Service{cfg: cfg, store: store, converser: converser, replier: replier, logger: logger, now: time.Now, allowed: map[int64]bool{}}
	for _, id := range cfg.AllowedChats {
		s.allowed[id] = true
	}
	s.budgets = &budgets{rate: cfg.ChatRate, now: func() time.Time { return s.now() }}
	return s
}

// User is a Telegram user.
type User struct {
	ID                            int64
	IsBot                         bool
	FirstName, LastName, Username string
}

// Chat is a Telegram chat.
type Chat struct {
	ID    int64
	Type  string // private, group, supergroup, channel
	Title string
}

// Entity is a Telegram message entity; offsets are UTF-16 code units.
type Entity struct {
	Type           string
	Offset, Length int
	User           *User // for text_mention
}

// Incoming is a Telegram message as an update carries it.
type Incoming struct {
	MessageID       int64
	From            *User
	SenderChat      *Chat
	Chat            Chat
	Date            time.Time
	Text            string
	Caption         string
	Entities        []Entity
	CaptionEntities []Entity
	Media           []Media
	ReplyTo         *Incoming
	// ThreadID is the forum topic (or reply thread) it belongs to, and
	// InTopic says it was sent in a forum topic.
	ThreadID int64
	InTopic  bool
	// Quote is the part of ReplyTo it quotes ("" for none).
	Quote string
	// Forward is where a forwarded message came from (nil: not forwarded).
	Forward *Origin
	// External is the replied-to message when it is in another chat or
	// topic (nil for none).
	External *ExternalReply
	// MigrateTo and MigrateFrom are set on the service messages of a
	// group upgraded to a supergroup: in the old group, the new id; in the
	// supergroup, the old one.
	MigrateTo, MigrateFrom int64
}

// Update is a Telegram update.
type Update struct {
	ID int64
	// Kind is the update's kind (KindMessage, …, KindUnknown).
	Kind     string
	Message  *Incoming
	Edited   bool      // Message is an edited_message or edited_channel_post
	Channel  bool      // Message is a channel_post or edited_channel_post
	Callback *Callback // a callback_query (an inline button press)
	// Membership is a change of the bot's own membership (my_chat_member).
	Membership *Membership
}

// Callback is an inline keyboard button press.
type Callback struct {
	ID      string    // for answerCallbackQuery
	From    *User     // who pressed
	Message *Incoming // the message with the button; nil for inline messages
	Data    string    // the button's callback_data
}

// CallbackHandler handles button presses and says what was done (Ignored
// for presses it does not know). An error leaves the update unrecorded so
// that Telegram's retry of the webhook tries again.
type CallbackHandler interface {
	HandleCallback(ctx context.Context, c Callback) (string, error)
}

// CallbackChain offers a press to each handler in turn until one does not
// answer Ignored (approval buttons, alert group buttons, …).
type CallbackChain []CallbackHandler

// HandleCallback implements CallbackHandler.
func (c CallbackChain) HandleCallback(ctx context.Context, cb Callback) (string, error) {
	for _, h := range c {
		if out, err := h.HandleCallback(ctx, cb); err != nil || out != Ignored {
			return out, err
		}
	}
	return Ignored, nil
}

// HandleCallbacks sets the handler of button presses, and what answers the
// presses refused before they reach it (a chat not allowed); without a
// handler presses are Ignored.
func (s *Service) HandleCallbacks(h CallbackHandler, a CallbackAnswerer) {
	s.callbacks, s.answerer = h, a
}

// Commander answers slash commands (/oncall, /ack) before the agent sees
// the message; handled is false for text it does not know.
type Commander interface {
	Command(ctx context.Context, in *Incoming, botUsername string) (reply string, handled bool, err error)
}

// HandleCommands sets what answers slash commands in allowed chats.
func (s *Service) HandleCommands(c Commander) { s.commands = c }

// HandleDirectCallbacks sets a handler offered every press first, from
// any chat, allowed or not: for buttons sent to a person's private chat
// with the bot (an on-call page), whose handler checks who pressed. It
// answers Ignored for presses it does not know.
func (s *Service) HandleDirectCallbacks(h CallbackHandler) { s.direct = h }

// ScheduleTasks sets what schedules the task blocks of replies; without one
// the blocks are still taken out of the reply, logged and dropped.
func (s *Service) ScheduleTasks(sc Scheduler) { s.scheduler = sc }

// ErrInvalid is returned for an update that cannot be handled as given.
var ErrInvalid = errors.New("invalid update")

// Handle handles one update and says what was done, and counts it by kind
// and outcome. Handling is idempotent by bot, chat and update id: an
// update handled before returns Duplicate. Kinds the agent does not act on
// are Ignored (and recorded, so a repeat is a Duplicate).
func (s *Service) Handle(ctx context.Context, u Update) (string, error) {
	outcome, err := s.handleOnce(ctx, u)
	kind := u.Kind
	if kind == "" {
		kind = KindUnknown
	}
	if err != nil {
		s.cfg.Updates.Count(kind, OutcomeError)
	} else {
		s.cfg.Updates.Count(kind, outcome)
	}
	return outcome, err
}

func (s *Service) handleOnce(ctx context.Context, u Update) (string, error) {
	if u.ID <= 0 {
		return "", fmt.Errorf("%w: update_id must be positive", ErrInvalid)
	}
	key := UpdateKey{BotID: s.cfg.BotID, ChatID: u.chatID(), UpdateID: u.ID}
	if outcome, ok, err := s.store.UpdateOutcome(ctx, key); err != nil {
		return "", err
	} else if ok {
		s.logger.DebugContext(ctx, "telegram update already handled", "update_id", u.ID, "chat_id", key.ChatID, "outcome", outcome)
		return Duplicate, nil
	}
	outcome, err := s.handle(ctx, u)
	if err != nil {
		// Not recorded: Telegram retries a failed webhook, and the retry
		// should do the work.
		return "", err
	}
	if first, err := s.store.RecordUpdate(ctx, key, outcome, s.now()); err != nil {
		return "", err
	} else if !first {
		return Duplicate, nil
	}
	return outcome, nil
}

// chatID is the chat an update belongs to: its message's, or the chat of
// the message a button was pressed under; 0 for neither.
func (u Update) chatID() int64 {
	switch {
	case u.Message != nil:
		return u.Message.Chat.ID
	case u.Callback != nil && u.Callback.Message != nil:
		return u.Callback.Message.Chat.ID
	case u.Membership != nil:
		return u.Membership.Chat.ID
	}
	return 0
}

// Texts of refusals.
const (
	textChatNotAllowed = "Sorry, these buttons do not work in this chat"
	textRateLimited    = "I have answered a lot in this chat lately, so I am pausing for a while. Alerts still arrive as usual."
)

func (s *Service) handle(ctx context.Context, u Update) (string, error) {
	if u.Membership != nil {
		return s.noteMembership(ctx, u.Membership), nil
	}
	if u.Callback != nil {
		if s.direct != nil {
			if out, err := s.direct.HandleCallback(ctx, *u.Callback); err != nil || out != Ignored {
				return out, err
			}
		}
		if s.callbacks == nil {
			return Ignored, nil
		}
		if chatID := u.chatID(); !s.isAllowed(ctx, chatID) {
			s.refused(ctx, ReasonChatNotAllowed, "chat_id", chatID, "update_id", u.ID)
			if s.answerer != nil && u.Callback.ID != "" {
				if err := s.answerer.AnswerCallback(ctx, u.Callback.ID, textChatNotAllowed); err != nil {
					s.logger.WarnContext(ctx, "could not answer the button press", "error", err)
				}
			}
			return Refused, nil
		}
		return s.callbacks.HandleCallback(ctx, *u.Callback)
	}
	in := u.Message
	if in == nil {
		return Ignored, nil
	}
	if in.Chat.ID == 0 || in.MessageID == 0 {
		return "", fmt.Errorf("%w: message without chat or message id", ErrInvalid)
	}
	if in.MigrateTo != 0 || in.MigrateFrom != 0 {
		return s.noteMigration(ctx, in)
	}
	if !s.isAllowed(ctx, in.Chat.ID) {
		// Not stored, not answered: see the package comment.
		s.refused(ctx, ReasonChatNotAllowed, "chat_id", in.Chat.ID, "update_id", u.ID)
		return Refused, nil
	}
	if in.ReplyTo != nil {
		// The replied-to message may predate what the bot has seen (privacy
		// mode); keep it as context without overwriting a stored copy.
		if err := s.store.SaveChatMessageIfAbsent(ctx, s.toMessage(in.ReplyTo, in.Chat)); err != nil {
			return "", err
		}
	}
	msg := s.toMessage(in, in.Chat)
	if err := s.store.SaveChatMessage(ctx, msg); err != nil {
		return "", err
	}
	if s.commands != nil && !u.Edited && !u.Channel && in.From != nil && !in.From.IsBot {
		reply, handled, err := s.commands.Command(ctx, in, s.cfg.BotUsername)
		if err != nil {
			return "", fmt.Errorf("answering a command in chat %d: %w", in.Chat.ID, err)
		}
		if handled {
			if _, err := s.reply(ctx, in, in.MessageID, reply); err != nil {
				return "", fmt.Errorf("answering a command in chat %d: %w", in.Chat.ID, err)
			}
			return Replied, nil
		}
	}
	if u.Edited || u.Channel || msg.IsAgent || (in.From != nil && in.From.IsBot) || !s.shouldAnswer(in) {
		return Stored, nil
	}

	target := in.MessageID
	if s.group(in.Chat) && in.ReplyTo != nil && !s.fromBot(in.ReplyTo) && s.onlyMention(in) {
		// "@bot" alone in reply to someone: the question is the earlier
		// message.
		target = in.ReplyTo.MessageID
	}
	if ok, tell := s.budgets.take(in.Chat.ID); !ok {
		s.refused(ctx, ReasonRateLimited, "chat_id", in.Chat.ID, "update_id", u.ID, "chat_rate", s.cfg.ChatRate.String())
		if tell {
			if _, err := s.reply(ctx, in, in.MessageID, textRateLimited); err != nil {
				s.logger.WarnContext(ctx, "could not tell the chat its reply budget is spent", "chat_id", in.Chat.ID, "error", err)
			}
		}
		return Refused, nil
	}
	history, err := s.store.ChatHistory(ctx, in.Chat.ID, s.cfg.HistorySize)
	if err != nil {
		return "", err
	}
	history = ensureTarget(history, target, msg)
	notes := ""
	if s.scheduler != nil {
		notes = tasks.ModelNotes
	}
	reply, err := s.converse(ctx, ConverseRequest{
		Persona:        s.cfg.Persona,
		ModelNotes:     notes,
		Group:          s.group(in.Chat),
		History:        history,
		TargetID:       target,
		ConversationID: "telegram:" + strconv.FormatInt(in.Chat.ID, 10),
		HistorySize:    s.cfg.HistorySize,
		Now:            s.now(),
		Stickers:       s.cfg.Stickers,
	})
	if err != nil {
		return "", fmt.Errorf("writing a reply in chat %d: %w", in.Chat.ID, err)
	}
	text, err := s.takeTasks(ctx, in, target, reply.Text)
	if err != nil {
		return "", err
	}
	sticker, hasSticker := Sticker{}, false
	if reply.Sticker != nil {
		if sticker, hasSticker = s.curated(reply.Sticker); !hasSticker {
			s.logger.WarnContext(ctx, "the agent chose a sticker that was not offered; not sent", "chat_id", in.Chat.ID, "file_id", reply.Sticker.FileID)
		}
	}
	if text == "" && !hasSticker {
		s.logger.WarnContext(ctx, "the agent wrote an empty reply; nothing sent", "chat_id", in.Chat.ID)
		return Stored, nil
	}
	if text != "" {
		// Text first, then the sticker.
		text = cutUTF16(text, 4096)
		id, err := s.reply(ctx, in, target, text)
		if permanent(err) {
			// Telegram refuses it for good (no right to post here, the bot
			// blocked or removed): failing the update would make Telegram
			// send it again and again and hold the chat's later updates
			// behind it.
			s.logger.WarnContext(ctx, "the agent's reply was refused by Telegram and will not be retried", "chat_id", in.Chat.ID, "error", err)
			return Unsent, nil
		}
		if err != nil {
			return "", fmt.Errorf("sending a reply in chat %d: %w", in.Chat.ID, err)
		}
		if err := s.saveOwn(ctx, in.Chat, id, 0, target, Part{Text: text}); err != nil {
			return "", err
		}
	}
	if hasSticker {
		if err := s.sendSticker(ctx, in, target, sticker); err != nil {
			if text == "" {
				return "", err
			}
			// The text went out; a retry of the update would send it twice
			// for a sticker's sake.
			s.logger.WarnContext(ctx, "the reply's sticker was not sent", "chat_id", in.Chat.ID, "error", err)
		}
	}
	return Replied, nil
}

// converse asks for the reply, with a sticker when the converser can
// choose one.
func (s *Service) converse(ctx context.Context, req ConverseRequest) (Reply, error) {
	if rc, ok := s.converser.(ReplyConverser); ok {
		return rc.ConverseReply(ctx, req)
	}
	text, err := s.converser.Converse(ctx, req)
	return Reply{Text: text}, err
}

// sendSticker sends the reply's sticker (sendSticker) and keeps it in the
// history.
func (s *Service) sendSticker(ctx context.Context, in *Incoming, target int64, st Sticker) error {
	c := in.Chat
	var (
		id  int64
		err error
	)
	if tr, ok := s.replier.(TopicReplier); ok && in.TopicID() != 0 {
		id, err = tr.SendStickerInTopic(ctx, c.ID, in.TopicID(), target, st.FileID)
	} else if ss, ok := s.replier.(StickerSender); ok {
		id, err = ss.SendSticker(ctx, c.ID, target, st.FileID)
	} else {
		s.logger.WarnContext(ctx, "the agent chose a sticker but this delivery cannot send stickers; dropped", "chat_id", c.ID, "file_id", st.FileID)
		return nil
	}
	if err != nil {
		return fmt.Errorf("sending a sticker in chat %d: %w", c.ID, err)
	}
	// Offline, one below the text's local id.
	return s.saveOwn(ctx, c, id, 1, target, Part{MediaKind: "sticker", Text: stickerText(st)})
}

// saveOwn keeps a message the agent sent in the history.
// An offline message (id 0) gets the local id -(now in µs + seq), seq
// telling apart the messages of one reply.
func (s *Service) saveOwn(ctx context.Context, c Chat, id, seq, target int64, p Part) error {
	if id == 0 {
		// Offline replies have no Telegram id; a negative local one keeps
		// them in the history without clashing with real ids.
		id = -s.now().UnixMicro() - seq
	}
	own := Message{
		ChatID: c.ID, ChatType: c.Type, MessageID: id, Speaker: s.botName(), SpeakerID: strconv.FormatInt(s.cfg.BotID, 10),
		IsAgent: true, ReplyToID: target, Parts: []Part{p}, SentAt: s.now().UTC(),
	}
	return s.store.SaveChatMessage(ctx, own)
}

// takeTasks takes the task blocks out of reply and schedules those it can
// read; the others are logged and dropped, never sent raw.
func (s *Service) takeTasks(ctx context.Context, in *Incoming, target int64, reply string) (string, error) {
	text, blocks, errs := tasks.Extract(reply)
	for _, err := range errs {
		s.logger.WarnContext(ctx, "task block dropped", "chat_id", in.Chat.ID, "error", err)
	}
	for i, b := range blocks {
		if i >= tasks.MaxBlocks {
			s.logger.WarnContext(ctx, "task blocks over the limit dropped", "chat_id", in.Chat.ID, "dropped", len(blocks)-i)
			break
		}
		t, err := tasks.Parse(b, s.now())
		if err != nil {
			s.logger.WarnContext(ctx, "task block dropped", "chat_id", in.Chat.ID, "kind", b.Kind(), "error", err)
			continue
		}
		if s.scheduler == nil {
			s.logger.WarnContext(ctx, "task block dropped: no scheduler", "chat_id", in.Chat.ID, "kind", b.Kind())
			continue
		}
		if err := s.scheduler.Schedule(ctx, TaskRequest{ChatID: in.Chat.ID, MessageID: target, Index: i, From: in.From, Task: t}); err != nil {
			return "", fmt.Errorf("scheduling a %s task in chat %d: %w", b.Kind(), in.Chat.ID, err)
		}
		s.logger.InfoContext(ctx, "task scheduled", "chat_id", in.Chat.ID, "kind", b.Kind())
	}
	return strings.TrimSpace(text), nil
}

// refused logs and counts a refusal.
func (s *Service) refused(ctx context.Context, reason string, attrs ...any) {
	s.cfg.Refusals.Refuse(reason)
	s.logger.WarnContext(ctx, "telegram update refused", append([]any{"reason", reason}, attrs...)...)
}

// ensureTarget keeps the target in the history even when the history holds
// more recent messages than the limit allows (a reply to an old message).
func ensureTarget(history []Message, target int64, msg Message) []Message {
	for _, m := range history {
		if m.MessageID == target {
			return history
		}
	}
	if target == msg.MessageID {
		return append(history, msg)
	}
	return history
}

func (s *Service) botName() string {
	if s.cfg.BotUsername != "" {
		return s.cfg.BotUsername
	}
	return "agent"
}

func (s *Service) group(c Chat) bool { return c.Type == "group" || c.Type == "supergroup" }

func (s *Service) fromBot(m *Incoming) bool {
	return m.From != nil && s.cfg.BotID != 0 && m.From.ID == s.cfg.BotID
}

// shouldAnswer: private chats always; groups when the bot is mentioned
// (by @username, a text mention or a /command@bot) or replied to.
func (s *Service) shouldAnswer(in *Incoming) bool {
	switch in.Chat.Type {
	case "private":
		return true
	case "group", "supergroup":
		if in.ReplyTo != nil && s.fromBot(in.ReplyTo) {
			return true
		}
		return s.mentioned(in.Text, in.Entities) || s.mentioned(in.Caption, in.CaptionEntities)
	}
	return false
}

func (s *Service) mentioned(text string, entities []Entity) bool {
	for _, e := range entities {
		switch e.Type {
		case "text_mention":
			if e.User != nil && s.cfg.BotID != 0 && e.User.ID == s.cfg.BotID {
				return true
			}
		case "mention":
			if s.cfg.BotUsername != "" && strings.EqualFold(sliceUTF16(text, e.Offset, e.Length), "@"+s.cfg.BotUsername) {
				return true
			}
		case "bot_command":
			cmd := sliceUTF16(text, e.Offset, e.Length)
			if _, bot, ok := strings.Cut(cmd, "@"); ok && s.cfg.BotUsername != "" && strings.EqualFold(bot, s.cfg.BotUsername) {
				return true
			}
		}
	}
	return false
}

// onlyMention reports whether the message is nothing but mentions of the
// bot.
func (s *Service) onlyMention(in *Incoming) bool {
	if len(in.Media) > 0 || s.cfg.BotUsername == "" {
		return false
	}
	rest := strings.ReplaceAll(strings.ToLower(in.Text), "@"+strings.ToLower(s.cfg.BotUsername), "")
	return strings.TrimSpace(rest) == ""
}

// toMessage turns an incoming Telegram message into a stored one: media
// parts first (rendered), then the text or caption.
func (s *Service) toMessage(in *Incoming, c Chat) Message {
	m := Message{
		ChatID: c.ID, ChatType: c.Type, MessageID: in.MessageID, SentAt: in.Date.UTC(),
	}
	switch {
	case in.From != nil:
		m.Speaker = displayName(in.From)
		m.SpeakerID = strconv.FormatInt(in.From.ID, 10)
		m.IsAgent = s.cfg.BotID != 0 && in.From.ID == s.cfg.BotID
	case in.SenderChat != nil:
		m.Speaker = in.SenderChat.Title
		m.SpeakerID = strconv.FormatInt(in.SenderChat.ID, 10)
	}
	if in.ReplyTo != nil {
		m.ReplyToID = in.ReplyTo.MessageID
	}
	// Where it came from and what it answers come before what it says.
	if in.Forward != nil {
		m.Parts = append(m.Parts, Part{MediaKind: "forward", Text: forwardText(in.Forward)})
	}
	if in.External != nil {
		m.Parts = append(m.Parts, Part{MediaKind: "external_reply", Text: externalText(in.External)})
	}
	if strings.TrimSpace(in.Quote) != "" {
		m.Parts = append(m.Parts, Part{MediaKind: "quote", Text: quoteText(in.Quote)})
	}
	for _, md := range in.Media {
		m.Parts = append(m.Parts, Part{MediaKind: md.kind(), Text: Render(md), UniqueID: md.UniqueID})
	}
	for _, t := range []string{in.Text, in.Caption} {
		if strings.TrimSpace(t) != "" {
			m.Parts = append(m.Parts, Part{Text: cutRunes(t, 20000)})
		}
	}
	if !hasContent(m.Parts) {
		// A kind of message this agent does not know (a service message,
		// a new media type): kept as a placeholder.
		m.Parts = append(m.Parts, Part{MediaKind: "unknown", Text: "[a message of a kind not shown here]"})
	}
	return m
}

func displayName(u *User) string {
	name := strings.TrimSpace(u.FirstName + " " + u.LastName)
	if name == "" && u.Username != "" {
		name = "@" + u.Username
	}
	if name == "" {
		name = "user " + strconv.FormatInt(u.ID, 10)
	}
	return name
}

func sliceUTF16(s string, off, n int) string {
	u := utf16.Encode([]rune(s))
	if off < 0 || n < 0 || off+n > len(u) {
		return ""
	}
	return string(utf16.Decode(u[off : off+n]))
}

func cutUTF16(s string, limit int) string {
	u := utf16.Encode([]rune(s))
	if len(u) <= limit {
		return s
	}
	u = u[:limit-1]
	if n := len(u); n > 0 && utf16.IsSurrogate(rune(u[n-1])) {
		u = u[:n-1]
	}
	return string(utf16.Decode(u)) + "…"
}

func cutRunes(s string, limit int) string {
	r := []rune(s)
	if len(r) <= limit {
		return s
	}
	return string(r[:limit-1]) + "…"
}
