// Package approval handles presses of the approval buttons the research
// workflow sends through SendMessage (callback_data
// "approval:<uuid>:approve" or "approval:<uuid>:reject"): it records the
// decision through a Decider (grounding's ResearchService.DecideApproval)
// in the name of the person who pressed, answers the press
// (answerCallbackQuery) and edits the message to show the outcome, which
// also removes the buttons.
package approval

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/groundcrew/groundcrew/services/notifier/internal/chat"
)

// Decision is a person's answer to an approval request.
type Decision int

// Decisions.
const (
	Approve Decision = iota + 1
	Reject
)

// Errors a Decider returns.
var (
	// ErrAlreadyDecided: the request was decided before or timed out.
	ErrAlreadyDecided = errors.New("approval already decided or timed out")
	// ErrNotFound: no such approval request.
	ErrNotFound = errors.New("approval request not found")
)

// Decider records a decision.
type Decider interface {
	Decide(ctx context.Context, id string, d Decision, decidedBy string) error
}

// Responder answers a press and edits the message it came from.
type Responder interface {
	AnswerCallback(ctx context.Context, queryID, text string) error
	EditText(ctx context.Context, chatID, messageID int64, text string) error
}

// Handler handles approval button presses; it implements
// chat.CallbackHandler.
type Handler struct {
	decider   Decider
	responder Responder
	logger    *slog.Logger
}

var _ chat.CallbackHandler = (*Handler)(nil)

// New returns a Handler.
func New(decider Decider, responder Responder, logger *slog.Logger) *Handler {
	return &Handler{decider: decider, responder: responder, logger: logger}
}

// Parse reads callback data "approval:<uuid>:approve|reject".
func Parse(data string) (id string, d Decision, ok bool) {
	rest, ok := strings.CutPrefix(data, "approval:")
	if !ok {
		return "", 0, false
	}
	id, verb, ok := strings.Cut(rest, ":")
	if !ok {
		return "", 0, false
	}
	if _, err := uuid.Parse(id); err != nil {
		return "", 0, false
	}
	switch verb {
	case "approve":
		return id, Approve, true
	case "reject":
		return id, Reject, true
	}
	return "", 0, false
}

// DecidedBy names the person who pressed: "telegram:<user id>", plus
// " @username" when they have one.
func DecidedBy(u *chat.User) string {
	s := "telegram:" + strconv.FormatInt(u.ID, 10)
	if u.Username != "" {
		s += " @" + u.Username
	}
	return s
}

// displayName is how the outcome line names the person.
func displayName(u *chat.User) string {
	if u.Username != "" {
		return "@" + u.Username
	}
	if name := strings.TrimSpace(u.FirstName + " " + u.LastName); name != "" {
		return name
	}
	return "user " + strconv.FormatInt(u.ID, 10)
}

// Texts shown to the person who pressed and in the edited message.
const (
	textAlreadyDecided = "Already decided or timed out"
	textNotFound       = "This approval request no longer exists"
	textTryAgain       = "Could not record the decision; please try again"
)

// HandleCallback records the decision a press carries. Presses that are
// not approval buttons (or come from no user) are chat.Ignored. A decision
// that could not be recorded (grounding unavailable) is answered with a
// request to try again and returned as an error.
func (h *Handler) HandleCallback(ctx context.Context, c chat.Callback) (string, error) {
	id, d, ok := Parse(c.Data)
	if !ok || c.From == nil {
		return chat.Ignored, nil
	}
	log := h.logger.With("approval_id", id, "user_id", c.From.ID)
	var outcome string
	err := h.decider.Decide(ctx, id, d, DecidedBy(c.From))
	switch {
	case err == nil && d == Approve:
		outcome = "Approved by " + displayName(c.From)
	case err == nil:
		outcome = "Rejected by " + displayName(c.From)
	case errors.Is(err, ErrAlreadyDecided):
		outcome = textAlreadyDecided
	case errors.Is(err, ErrNotFound):
		outcome = textNotFound
	default:
		h.answer(ctx, log, c.ID, textTryAgain)
		return "", fmt.Errorf("deciding approval %s: %w", id, err)
	}
	log.InfoContext(ctx, "approval button pressed", "outcome", outcome)
	h.answer(ctx, log, c.ID, outcome)
	if m := c.Message; m != nil && m.Chat.ID != 0 && m.MessageID != 0 {
		text := outcome
		if strings.TrimSpace(m.Text) != "" {
			text = m.Text + "\n\n" + outcome
		}
		if err := h.responder.EditText(ctx, m.Chat.ID, m.MessageID, text); err != nil {
			// The decision stands; only its display failed.
			log.WarnContext(ctx, "could not edit the approval message", "error", err)
		}
	}
	return chat.Decided, nil
}

// answer answers the press; a failure only leaves the button's spinner
// running a little longer, so it is logged, not returned.
func (h *Handler) answer(ctx context.Context, log *slog.Logger, queryID, text string) {
	if queryID == "" {
		return
	}
	if err := h.responder.AnswerCallback(ctx, queryID, text); err != nil {
		log.WarnContext(ctx, "could not answer the button press", "error", err)
	}
}
