package chat

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/groundcrew/groundcrew/services/notifier/internal/senderr"
)

// Update kinds: the Bot API's names of an Update's optional fields (Bot API
// 9.6), and the kind label of notifier_telegram_updates_total. The agent
// acts on messages, channel posts (stored), button presses and its own
// membership; every other kind is answered, counted and dropped.
const (
	KindMessage                 = "message"
	KindEditedMessage           = "edited_message"
	KindChannelPost             = "channel_post"
	KindEditedChannelPost       = "edited_channel_post"
	KindBusinessConnection      = "business_connection"
	KindBusinessMessage         = "business_message"
	KindEditedBusinessMessage   = "edited_business_message"
	KindDeletedBusinessMessages = "deleted_business_messages"
	KindMessageReaction         = "message_reaction"
	KindMessageReactionCount    = "message_reaction_count"
	KindInlineQuery             = "inline_query"
	KindChosenInlineResult      = "chosen_inline_result"
	KindCallbackQuery           = "callback_query"
	KindShippingQuery           = "shipping_query"
	KindPreCheckoutQuery        = "pre_checkout_query"
	KindPurchasedPaidMedia      = "purchased_paid_media"
	KindPoll                    = "poll"
	KindPollAnswer              = "poll_answer"
	KindMyChatMember            = "my_chat_member"
	KindChatMember              = "chat_member"
	KindChatJoinRequest         = "chat_join_request"
	KindChatBoost               = "chat_boost"
	KindRemovedChatBoost        = "removed_chat_boost"
	KindManagedBot              = "managed_bot"
	// KindUnknown is an update carrying none of the kinds above: one from a
	// Bot API newer than this code, whose field the gateway dropped.
	KindUnknown = "unknown"
)

// UpdateKinds are all the kinds, in the Bot API's order.
var UpdateKinds = []string{
	KindMessage, KindEditedMessage, KindChannelPost, KindEditedChannelPost,
	KindBusinessConnection, KindBusinessMessage, KindEditedBusinessMessage, KindDeletedBusinessMessages,
	KindMessageReaction, KindMessageReactionCount, KindInlineQuery, KindChosenInlineResult,
	KindCallbackQuery, KindShippingQuery, KindPreCheckoutQuery, KindPurchasedPaidMedia,
	KindPoll, KindPollAnswer, KindMyChatMember, KindChatMember, KindChatJoinRequest,
	KindChatBoost, KindRemovedChatBoost, KindManagedBot, KindUnknown,
}

// Noted is the outcome of a change of the bot's own membership: logged,
// nothing stored or sent.
const Noted = "noted"

// OutcomeError labels an update whose handling failed (Telegram sends it
// again).
const OutcomeError = "error"

// Unsent is the outcome of a message the agent answered but whose reply
// Telegram refused for good (see permanent): recorded, not retried.
const Unsent = "unsent"

// permanent reports whether err says that sending the same reply again
// cannot help: senderr.Classify neither retries nor waits.
func permanent(err error) bool {
	if err == nil {
		return false
	}
	a := senderr.Classify(err).Action
	return a != senderr.Retry && a != senderr.RetryAfter
}

// UpdateCounter counts handled updates by kind and outcome.
type UpdateCounter interface {
	Count(kind, outcome string)
}

// NopUpdateCounter counts nothing.
type NopUpdateCounter struct{}

// Count does nothing.
func (NopUpdateCounter) Count(string, string) {}

// UpdateMetrics counts updates as the Prometheus counter
// notifier_telegram_updates_total{kind,outcome}.
type UpdateMetrics struct {
	c *prometheus.CounterVec
}

var _ UpdateCounter = (*UpdateMetrics)(nil)

// NewUpdateMetrics registers the counter with reg (nil: not registered)
// and starts every kind at zero as ignored, so that dashboards see the
// series.
func NewUpdateMetrics(reg prometheus.Registerer) *UpdateMetrics {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "notifier_telegram_updates_total",
		Help: "Telegram updates the webhook took, by update kind and what was done (replied, stored, ignored, noted, refused, decided, unsent, duplicate, error).",
	}, []string{"kind", "outcome"})
	if reg != nil {
		reg.MustRegister(c)
	}
	for _, k := range UpdateKinds {
		c.WithLabelValues(k, Ignored)
	}
	return &UpdateMetrics{c: c}
}

// Count counts one update.
func (m *UpdateMetrics) Count(kind, outcome string) { m.c.WithLabelValues(kind, outcome).Inc() }

// Membership is a change of a chat member's status (my_chat_member for the
// bot itself).
type Membership struct {
	Chat     Chat
	From     *User // who made the change
	Member   *User // whose status changed
	Old, New string
	Date     time.Time
}

// member reports whether a status is one of a chat's members.
func member(status string) bool {
	switch status {
	case "creator", "administrator", "member", "restricted":
		return true
	}
	return false
}

// noteMembership logs the bot being added to or removed from a chat (or its
// rights changing), and warns when it was added to a chat it will not work
// in.
func (s *Service) noteMembership(ctx context.Context, m *Membership) string {
	attrs := []any{"chat_id", m.Chat.ID, "chat_type", m.Chat.Type, "chat_title", m.Chat.Title,
		"old_status", m.Old, "new_status", m.New}
	if m.From != nil {
		attrs = append(attrs, "by_user_id", m.From.ID, "by", displayName(m.From))
	}
	switch was, is := member(m.Old), member(m.New); {
	case !was && is:
		s.logger.InfoContext(ctx, "telegram: the bot was added to a chat", attrs...)
		if !s.isAllowed(ctx, m.Chat.ID) {
			s.logger.WarnContext(ctx, "telegram: the bot was added to a chat it does not answer in; add its id to TELEGRAM_ALLOWED_CHATS (or route alerts to it) to use it",
				"chat_id", m.Chat.ID, "chat_title", m.Chat.Title)
		}
	case was && !is:
		s.logger.WarnContext(ctx, "telegram: the bot was removed from a chat", attrs...)
	default:
		s.logger.InfoContext(ctx, "telegram: the bot's status in a chat changed", attrs...)
	}
	return Noted
}

// Origin is where a forwarded message came from (a Bot API MessageOrigin).
type Origin struct {
	Type string // user, hidden_user, chat or channel
	Name string // the sender's or chat's display name
	Date time.Time
}

// ExternalReply is a replied-to message in another chat or forum topic.
type ExternalReply struct {
	Origin    *Origin
	ChatTitle string
	Media     []Media
}

// forwardText describes where a forwarded message came from, for the
// model: "[forwarded from Jonas Berg, sent 2026-11-25 21:05 UTC]".
func forwardText(o *Origin) string {
	var b strings.Builder
	b.WriteString("[forwarded from ")
	switch o.Type {
	case "channel":
		b.WriteString("channel ")
	case "chat":
		b.WriteString("chat ")
	}
	if o.Name == "" {
		b.WriteString("someone")
	} else {
		b.WriteString(o.Name)
	}
	if !o.Date.IsZero() {
		b.WriteString(", sent " + o.Date.UTC().Format("2006-01-02 15:04 MST"))
	}
	return b.String() + "]"
}

// quoteText shows the quoted part of the replied-to message.
func quoteText(q string) string {
	return "[quoting the replied message: «" + cutRunes(q, 1000) + "»]"
}

// externalText describes a replied-to message from another chat or topic.
func externalText(e *ExternalReply) string {
	s := "[replying to a message"
	switch {
	case e.ChatTitle != "":
		s += " in " + e.ChatTitle
	case e.Origin != nil && e.Origin.Name != "":
		s += " from " + e.Origin.Name
	}
	for _, m := range e.Media {
		s += " " + Render(m)
	}
	return s + "]"
}

// TopicReplier is a Replier that can reply inside a forum topic; with one,
// the agent answers in the topic it was asked in.
type TopicReplier interface {
	ReplyInTopic(ctx context.Context, chatID, threadID, replyTo int64, text string) (int64, error)
	SendStickerInTopic(ctx context.Context, chatID, threadID, replyTo int64, fileID string) (int64, error)
}

// reply sends text in reply to message target of in's chat, in in's forum
// topic when it was sent in one.
func (s *Service) reply(ctx context.Context, in *Incoming, target int64, text string) (int64, error) {
	if tr, ok := s.replier.(TopicReplier); ok && in.TopicID() != 0 {
		return tr.ReplyInTopic(ctx, in.Chat.ID, in.TopicID(), target, text)
	}
	return s.replier.Reply(ctx, in.Chat.ID, target, text)
}

// TopicID is the forum topic the message was sent in; 0 outside topics
// (including a forum's General topic, which takes no thread id).
func (in *Incoming) TopicID() int64 {
	if !in.InTopic {
		return 0
	}
	return in.ThreadID
}

// hasContent reports whether parts hold more than the context parts
// (forward, external reply, quote) that toMessage puts first.
func hasContent(parts []Part) bool {
	for _, p := range parts {
		switch p.MediaKind {
		case "forward", "external_reply", "quote":
		default:
			return true
		}
	}
	return false
}

// Migrations keeps which chat a group moved to when it became a
// supergroup (the store; the Telegram adapter records what it learns from
// refused sends, the agent what the upgrade's service messages say).
type Migrations interface {
	MigratedChat(ctx context.Context, chat string) (to string, ok bool, err error)
	RecordChatMigration(ctx context.Context, from, to string, at time.Time) error
}

// noteMigration records a group's upgrade to a supergroup from its service
// messages (migrate_to_chat_id in the old group, migrate_from_chat_id in
// the new one), so that alerts go to the new chat id before a send is
// refused; only for a group the agent works in, and it warns that the
// configuration names the old id.
func (s *Service) noteMigration(ctx context.Context, in *Incoming) (string, error) {
	from, to := in.Chat.ID, in.MigrateTo
	if in.MigrateFrom != 0 {
		from, to = in.MigrateFrom, in.Chat.ID
	}
	if !s.isAllowed(ctx, from) {
		s.refused(ctx, ReasonChatNotAllowed, "chat_id", in.Chat.ID, "migrated_from", from, "migrated_to", to)
		return Refused, nil
	}
	s.logger.WarnContext(ctx, "telegram: the group became a supergroup with a new chat id; messages go to the new id from now on. Update the configuration (TELEGRAM_CHAT_ID, NOTIFIER_ROUTES, TELEGRAM_ALLOWED_CHATS), which names the old one",
		"old_chat_id", from, "new_chat_id", to, "chat_title", in.Chat.Title)
	if s.cfg.Migrations == nil {
		return Noted, nil
	}
	if err := s.cfg.Migrations.RecordChatMigration(ctx, strconv.FormatInt(from, 10), strconv.FormatInt(to, 10), s.now().UTC()); err != nil {
		return "", err
	}
	return Noted, nil
}

// migratedChats remembers the supergroups found to be allowed groups that
// moved.
type migratedChats struct {
	mu  sync.Mutex
	ids map[int64]bool
}

// isAllowed reports whether the agent works in chat: an allowed chat, or
// the supergroup an allowed group became (Telegram gives it a new id, and
// the configuration still names the old one).
func (s *Service) isAllowed(ctx context.Context, chat int64) bool {
	if s.allowed[chat] {
		return true
	}
	if s.cfg.Migrations == nil || chat == 0 {
		return false
	}
	s.migrated.mu.Lock()
	known := s.migrated.ids[chat]
	s.migrated.mu.Unlock()
	if known {
		return true
	}
	want := strconv.FormatInt(chat, 10)
	for id := range s.allowed {
		to, ok, err := s.cfg.Migrations.MigratedChat(ctx, strconv.FormatInt(id, 10))
		if err != nil {
			s.logger.WarnContext(ctx, "reading chat migrations failed", "chat_id", id, "error", err)
			continue
		}
		if ok && to == want {
			s.migrated.mu.Lock()
			if s.migrated.ids == nil {
				s.migrated.ids = map[int64]bool{}
			}
			s.migrated.ids[chat] = true
			s.migrated.mu.Unlock()
			return true
		}
	}
	return false
}
