// Package oncallbot is on call in Telegram: it pages people for the
// escalator (a mention in the alert chat replying to the group's root, and
// a direct message with an Ack button), takes that Ack back (only from
// someone the escalation notified or a NOTIFIER_ACTION_USERS member), and
// answers /oncall and /ack in the chat.
package oncallbot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/markdownv2"
	"github.com/groundcrew/groundcrew/services/notifier/internal/oncall"
	"github.com/groundcrew/groundcrew/services/notifier/internal/outbound"
)

// Sender sends a message to a chat, in reply to a message when replyTo is
// set, with buttons (the alert groups' transport).
type Sender interface {
	SendGroupMessage(ctx context.Context, chat string, m alert.Message, replyTo string, buttons []outbound.Button) (string, error)
}

// Groups reads and acknowledges alert groups (the pipeline).
type Groups interface {
	GetGroup(ctx context.Context, id string) (*alert.Group, []*alert.Alert, error)
	Ack(ctx context.Context, id, actor, by string) (*alert.Group, error)
}

// ButtonAck is the direct message's button.
const ButtonAck = "👀 Ack"

// callbackPrefix marks a direct message's Ack button: "esc:<group id>".
const callbackPrefix = "esc:"

// CallbackData is the Ack button's data in a direct page.
func CallbackData(groupID string) string { return callbackPrefix + groupID }

// Pager implements oncall.Pager and oncall.Groups over the alert groups'
// transport and the pipeline.
type Pager struct {
	Sender Sender
	Groups Groups
	// ErrNotFound is the groups' not-found error.
	ErrNotFound error
}

var (
	_ oncall.Pager  = (*Pager)(nil)
	_ oncall.Groups = (*Pager)(nil)
)

// Title is how a page names a group: its alertname and the group labels
// that tell it apart.
func Title(g *alert.Group) string {
	name := g.GroupLabels["alertname"]
	if name == "" {
		name = g.CommonLabels["alertname"]
	}
	if name == "" {
		name = "Alert group " + g.ID
	}
	var extra []string
	for k, v := range g.GroupLabels {
		if k != "alertname" {
			extra = append(extra, k+"="+v)
		}
	}
	slices.Sort(extra)
	if len(extra) > 0 {
		name += " (" + strings.Join(extra, ", ") + ")"
	}
	return name
}

// EscalationGroup reads a group for the escalator.
func (p *Pager) EscalationGroup(ctx context.Context, id string) (oncall.Group, error) {
	g, _, err := p.Groups.GetGroup(ctx, id)
	if p.ErrNotFound != nil && errors.Is(err, p.ErrNotFound) {
		return oncall.Group{}, oncall.ErrNotFound
	}
	if err != nil {
		return oncall.Group{}, err
	}
	return GroupOf(g), nil
}

// GroupOf is what escalation needs of a stored group.
func GroupOf(g *alert.Group) oncall.Group {
	labels := map[string]string{}
	for k, v := range g.CommonLabels {
		labels[k] = v
	}
	for k, v := range g.GroupLabels {
		labels[k] = v
	}
	out := oncall.Group{ID: g.ID, Title: Title(g), Link: g.ExternalURL, Chat: g.Destination, RootMessageID: g.RootMessageID,
		Labels: labels, Resolved: g.Status == alert.GroupResolved}
	if g.Ack != nil {
		out.AckedBy, out.AckedAt = g.Ack.Actor, g.Ack.At
	}
	return out
}

// mention writes a person as Telegram makes them notice: @username, or an
// inline mention by id (a text_mention entity) for people without one.
func mention(p oncall.Participant) string {
	if p.Username != "" {
		return markdownv2.Escape("@" + p.Username)
	}
	name := p.Name
	if name == "" {
		name = "user " + strconv.FormatInt(p.UserID, 10)
	}
	return "[" + markdownv2.Escape(name) + "](" + markdownv2.EscapeLinkURL("tg://user?id="+strconv.FormatInt(p.UserID, 10)) + ")"
}

// Mention posts one message in the group's chat, replying to its root and
// mentioning everyone paged.
func (p *Pager) Mention(ctx context.Context, g oncall.Group, people []oncall.Participant, text string) error {
	if g.Chat == "" {
		return errors.New("the group has no chat")
	}
	names := make([]string, len(people))
	plain := make([]string, len(people))
	for i, person := range people {
		names[i], plain[i] = mention(person), person.String()
	}
	msg := alert.Message{
		Text:      markdownv2.Escape(text) + "\n" + strings.Join(names, " "),
		Plain:     text + "\n" + strings.Join(plain, " "),
		ParseMode: "MarkdownV2", DisableWebPagePreview: true,
	}
	_, err := p.Sender.SendGroupMessage(ctx, g.Chat, msg, g.RootMessageID, nil)
	return err
}

// Direct messages one person with the group's title, link and an Ack
// button. A person without a user id cannot be messaged directly (the Bot
// API addresses private chats by id); one who never started the bot gets
// Telegram's 403, which the escalator records.
func (p *Pager) Direct(ctx context.Context, g oncall.Group, person oncall.Participant, text string) error {
	if person.UserID == 0 {
		return fmt.Errorf("%s has no Telegram user id: only mentioned in the chat", person.String())
	}
	body := markdownv2.Escape(text)
	plain := text
	if g.Link != "" {
		body += "\n" + markdownv2.Escape(g.Link)
		plain += "\n" + g.Link
	}
	msg := alert.Message{Text: body, Plain: plain, ParseMode: "MarkdownV2", DisableWebPagePreview: true}
	_, err := p.Sender.SendGroupMessage(ctx, strconv.FormatInt(person.UserID, 10), msg, "",
		[]outbound.Button{{Text: ButtonAck, CallbackData: CallbackData(g.ID)}})
	return err
}

// Escalations reads escalations (oncallstore.Store).
type Escalations interface {
	Escalation(ctx context.Context, groupID string) (*oncall.Escalation, error)
}

// Acker acknowledges alert groups for the people an escalation paged:
// from a direct page's button or /ack.
type Acker struct {
	Groups      Groups
	Escalations Escalations
	// ActionUser reports whether a Telegram user may act on any alert
	// (NOTIFIER_ACTION_USERS; how an unset list counts is the caller's).
	ActionUser func(id int64, username string) bool
}

// Press outcomes.
var (
	ErrNotMine   = errors.New("not an escalation button")
	ErrNotPaged  = errors.New("you were not paged for this alert group")
	ErrNotDirect = errors.New("the button was not pressed in a direct chat with the bot")
)

// Press acknowledges the group a direct page's button names, for the user
// who pressed it in their private chat with the bot. It returns the text to
// answer the press with.
func (a *Acker) Press(ctx context.Context, data string, userID int64, username string, chatID int64) (string, error) {
	groupID, ok := strings.CutPrefix(data, callbackPrefix)
	if !ok || groupID == "" {
		return "", ErrNotMine
	}
	if chatID != userID {
		return "", ErrNotDirect
	}
	return a.ack(ctx, groupID, userID, username)
}

// ack acknowledges a group for a Telegram user the escalation paged, or an
// action user, and returns the text that says so; ErrNotPaged for anyone
// else. The pipeline's acknowledgement stops the escalation.
func (a *Acker) ack(ctx context.Context, groupID string, userID int64, username string) (string, error) {
	esc, err := a.Escalations.Escalation(ctx, groupID)
	if err != nil && !errors.Is(err, oncall.ErrNotFound) {
		return "", err
	}
	if !a.paged(esc, userID, username) && (a.ActionUser == nil || !a.ActionUser(userID, username)) {
		return "", ErrNotPaged
	}
	actor := "telegram:" + strconv.FormatInt(userID, 10)
	if username != "" {
		actor = "@" + username
	}
	g, err := a.Groups.Ack(ctx, groupID, actor, "")
	if err != nil {
		return "", err
	}
	return "👀 Acked by " + g.Ack.Actor, nil
}

func (a *Acker) paged(esc *oncall.Escalation, userID int64, username string) bool {
	if esc == nil {
		return false
	}
	me := oncall.Participant{UserID: userID, Username: username}
	for _, ev := range esc.Timeline {
		if (ev.Kind == oncall.EventNotified || ev.Kind == oncall.EventNotifyFailed) && ev.Participant.Same(me) {
			return true
		}
	}
	return false
}
