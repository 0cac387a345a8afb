// Package groupaction handles presses of the buttons under an alert group's
// root message (🔕 Silence 1h, 🔕 Silence 24h, Expire silence, 👀 Ack):
// it acts through the pipeline in the name of the Telegram user who
// pressed and answers the press (answerCallbackQuery); the pipeline edits
// the root to show the new state in a durable job.
//
// A press counts only from a person allowed to act (NOTIFIER_ACTION_USERS;
// anyone in an allowed chat when unset — the chat agent refuses presses
// from other chats before they get here) and from the group's own root
// message, in its chat: callback data naming another group, copied into
// any other message, acts on nothing.
package groupaction

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/approval"
	"github.com/groundcrew/groundcrew/services/notifier/internal/chat"
	"github.com/groundcrew/groundcrew/services/notifier/internal/pipeline"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
)

// Actions is what a press does (the pipeline).
type Actions interface {
	GetGroup(ctx context.Context, id string) (*alert.Group, []*alert.Alert, error)
	Ack(ctx context.Context, id, actor, by string) (*alert.Group, error)
	Silence(ctx context.Context, id, actor, by string, d time.Duration) (*alert.Group, error)
	ExpireSilence(ctx context.Context, id, actor string) (*alert.Group, error)
}

var _ Actions = (*pipeline.Pipeline)(nil)

// Answerer answers a press.
type Answerer interface {
	AnswerCallback(ctx context.Context, queryID, text string) error
}

// Refusal reasons, labels of the refusals counter.
const (
	ReasonNotActionUser   = "not_action_user"
	ReasonForeignGroupMsg = "foreign_group_message"
)

// Texts shown to the person who pressed.
const (
	textNotAllowed  = "Sorry, you are not allowed to act on alerts"
	textForeign     = "Sorry, this button does not belong to this alert group's message"
	textNoSilencing = "Silencing is not available for this group (ALERTMANAGER_URL unset or not an Alertmanager group)"
	textNoSilence   = "There is no active silence to expire"
	textTryAgain    = "Could not do that; please try again"
)

// Handler handles alert group button presses; it implements
// chat.CallbackHandler.
type Handler struct {
	actions  Actions
	answerer Answerer
	users    approval.Approvers
	refusals chat.Refusals
	logger   *slog.Logger
	now      func() time.Time
}

var _ chat.CallbackHandler = (*Handler)(nil)

// New returns a Handler; users is NOTIFIER_ACTION_USERS (parsed like
// TELEGRAM_APPROVERS), refusals may be nil.
func New(actions Actions, answerer Answerer, users approval.Approvers, refusals chat.Refusals, logger *slog.Logger) *Handler {
	if refusals == nil {
		refusals = chat.NopRefusals{}
	}
	return &Handler{actions: actions, answerer: answerer, users: users, refusals: refusals, logger: logger, now: time.Now}
}

// Actor names the person who pressed as the silence's creator and the
// group's acker: "@username", else "telegram:<id>".
func Actor(u *chat.User) string {
	if u.Username != "" {
		return "@" + u.Username
	}
	return "telegram:" + strconv.FormatInt(u.ID, 10)
}

// HandleCallback acts on a group button press. Presses of other buttons
// are chat.Ignored; refused presses are answered and chat.Refused; a
// failure of Alertmanager is answered in words and records nothing.
func (h *Handler) HandleCallback(ctx context.Context, c chat.Callback) (string, error) {
	id, act, ok := alert.ParseGroupCallback(c.Data)
	if !ok || c.From == nil {
		return chat.Ignored, nil
	}
	log := h.logger.With("group_id", id, "action", string(act), "user_id", c.From.ID)
	if !h.users.Allows(c.From) {
		return h.refuse(ctx, log, c, ReasonNotActionUser, textNotAllowed), nil
	}
	g, _, err := h.actions.GetGroup(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return h.refuse(ctx, log, c, ReasonForeignGroupMsg, textForeign), nil
	}
	if err != nil {
		h.answer(ctx, log, c.ID, textTryAgain)
		return "", fmt.Errorf("loading alert group %s: %w", id, err)
	}
	if c.Message == nil || g.RootMessageID == "" || strconv.FormatInt(c.Message.Chat.ID, 10) != g.Destination ||
		strconv.FormatInt(c.Message.MessageID, 10) != g.RootMessageID {
		return h.refuse(ctx, log, c, ReasonForeignGroupMsg, textForeign), nil
	}
	who := Actor(c.From)
	var answer string
	switch act {
	case alert.ActionAck:
		g, err = h.actions.Ack(ctx, id, who, "")
		if err == nil {
			answer = "👀 Acked by " + g.Ack.Actor
		}
	case alert.ActionSilence1h, alert.ActionSilence1d:
		g, err = h.actions.Silence(ctx, id, who, "", act.Duration())
		if err == nil {
			answer = "🔕 Silenced by " + g.Silence.Actor + " until " + g.Silence.EndsAt.UTC().Format("15:04 MST")
		}
	case alert.ActionExpire:
		_, err = h.actions.ExpireSilence(ctx, id, who)
		if err == nil {
			answer = "Silence expired"
		}
	}
	var pub interface{ Public() string }
	switch {
	case err == nil:
	case errors.Is(err, pipeline.ErrSilenceUnavailable):
		answer = textNoSilencing
		if r, ok := errors.AsType[*pipeline.SilenceRefusal](err); ok {
			answer = "Cannot silence: " + r.Reason
		}
	case errors.Is(err, pipeline.ErrNoSilence):
		answer = textNoSilence
	case errors.As(err, &pub):
		// Alertmanager unreachable or refusing: nothing was recorded and
		// the button works again later.
		answer = "Could not silence: " + strings.TrimSuffix(pub.Public(), ".")
		log.WarnContext(ctx, "alert group action failed at Alertmanager", "error", err)
	default:
		h.answer(ctx, log, c.ID, textTryAgain)
		return "", fmt.Errorf("%s on alert group %s: %w", act, id, err)
	}
	log.InfoContext(ctx, "alert group button pressed", "actor", who, "answer", answer)
	h.answer(ctx, log, c.ID, answer)
	return chat.Decided, nil
}

func (h *Handler) refuse(ctx context.Context, log *slog.Logger, c chat.Callback, reason, text string) string {
	return chat.RefusePress(ctx, log, h.answerer, h.refusals, c, "alert group", reason, text)
}

func (h *Handler) answer(ctx context.Context, log *slog.Logger, queryID, text string) {
	chat.AnswerPress(ctx, log, h.answerer, queryID, text)
}
