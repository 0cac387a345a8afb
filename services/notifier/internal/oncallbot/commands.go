package oncallbot

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/groundcrew/groundcrew/services/notifier/internal/oncall"
)

// Schedules lists schedules (oncallstore.Store).
type Schedules interface {
	Schedules(ctx context.Context) ([]*oncall.Schedule, error)
}

// Roots finds the alert group a root message belongs to (oncallstore.Store).
type Roots interface {
	GroupByRoot(ctx context.Context, chat, messageID string) (string, error)
}

// Commands answers /oncall and /ack in a chat.
type Commands struct {
	Schedules Schedules
	Roots     Roots
	Acker     *Acker
	Now       func() time.Time
}

// Command is a chat message as a command sees it.
type Command struct {
	Text     string
	ChatID   int64
	UserID   int64
	Username string
	// ReplyTo is the message it replies to (0: none).
	ReplyTo int64
	// BotUsername is the bot's own @username, for "/oncall@bot".
	BotUsername string
}

// name returns the command ("/oncall") of text, "" when it is none, or
// addressed to another bot.
func name(text, bot string) string {
	f := strings.Fields(text)
	if len(f) == 0 || !strings.HasPrefix(f[0], "/") {
		return ""
	}
	cmd, to, addressed := strings.Cut(f[0], "@")
	if addressed && !strings.EqualFold(to, bot) {
		return ""
	}
	return strings.ToLower(cmd)
}

// Handles reports whether text is a command these answer.
func (c *Commands) Handles(text, bot string) bool {
	switch name(text, bot) {
	case "/oncall", "/ack":
		return true
	}
	return false
}

// Answer runs the command and returns the reply text (plain).
func (c *Commands) Answer(ctx context.Context, cmd Command) (string, error) {
	switch name(cmd.Text, cmd.BotUsername) {
	case "/oncall":
		return c.oncall(ctx)
	case "/ack":
		return c.ack(ctx, cmd)
	}
	return "", nil
}

func (c *Commands) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Commands) oncall(ctx context.Context) (string, error) {
	all, err := c.Schedules.Schedules(ctx)
	if err != nil {
		return "", err
	}
	if len(all) == 0 {
		return "No on-call schedules are configured (NOTIFIER_ONCALL_FILE or PUT /v1/oncall/schedules/{id}).", nil
	}
	now := c.now()
	var b strings.Builder
	b.WriteString("📟 On call now")
	for _, sc := range all {
		name := sc.Name
		if name == "" {
			name = sc.ID
		}
		cur, next, ok, hasNext := sc.OnCall(now)
		b.WriteString("\n• " + name + ": ")
		if ok {
			b.WriteString(cur.Participant.String())
		} else {
			b.WriteString("nobody")
		}
		if hasNext {
			fmt.Fprintf(&b, " — next %s at %s", next.Participant.String(), next.Start.In(sc.Location).Format("Mon 15:04 MST"))
		}
	}
	return b.String(), nil
}

func (c *Commands) ack(ctx context.Context, cmd Command) (string, error) {
	if cmd.ReplyTo == 0 {
		return "Reply /ack to an alert group's message to acknowledge it.", nil
	}
	id, err := c.Roots.GroupByRoot(ctx, strconv.FormatInt(cmd.ChatID, 10), strconv.FormatInt(cmd.ReplyTo, 10))
	if errors.Is(err, oncall.ErrNotFound) {
		return "That message is not an alert group's: reply /ack to the group's first message.", nil
	}
	if err != nil {
		return "", err
	}
	text, err := c.Acker.ack(ctx, id, cmd.UserID, cmd.Username)
	if errors.Is(err, ErrNotPaged) {
		return "Sorry, you are not allowed to act on alerts.", nil
	}
	return text, err
}
