// Package approval handles presses of the approval buttons the research
// workflow sends through SendMessage: it records the decision through a
// Decider (grounding's ResearchService.DecideApproval) in the name of the
// person who pressed, answers the press (answerCallbackQuery) and, once the
// decision succeeded, edits the message to show the outcome, which also
// removes the buttons.
//
// The button contract is written here once: CallbackData formats
// "approval:<uuid>:approve" or "approval:<uuid>:reject" and Parse reads it
// (notifier.proto documents it on InlineButton.callback_data).
//
// A press counts only when it comes from a person allowed to decide
// (TELEGRAM_APPROVERS; anyone in an allowed chat when unset) and from the
// very message that was sent with that approval's buttons, in its chat: a
// forged or copied callback naming any approval id and any message decides
// and edits nothing.
package approval

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/groundcrew/groundcrew/services/notifier/internal/chat"
	"github.com/groundcrew/groundcrew/services/notifier/internal/message"
)

// CallbackData is the data of an approval button: "approval:<id>:approve"
// or "approval:<id>:reject" (52 or 53 bytes with a UUID, within Telegram's
// 64).
func CallbackData(id string, d Decision) string {
	if d == Approve {
		return "approval:" + id + ":approve"
	}
	return "approval:" + id + ":reject"
}

// ID returns the approval id an approval button's data names ("" for
// other data).
func ID(data string) string {
	id, _, ok := Parse(data)
	if !ok {
		return ""
	}
	return id
}

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

// Sent is the message that carried an approval's buttons, as stored when it
// was sent.
type Sent = message.ApprovalSent

// Messages finds the message sent with an approval's buttons; found is
// false when none was delivered to Telegram.
type Messages interface {
	ApprovalMessage(ctx context.Context, approvalID string) (m Sent, found bool, err error)
}

// Approvers is who may decide approvals: Telegram user ids and usernames.
// The zero value allows anyone (in a chat the chat agent accepts buttons
// from).
type Approvers struct {
	ids       map[int64]bool
	usernames map[string]bool // lower case, without '@'
}

// ParseApprovers reads TELEGRAM_APPROVERS (and NOTIFIER_ACTION_USERS, the
// same shape): comma-separated Telegram user ids and usernames, with or
// without '@', e.g. "84211,@ana". Empty means anyone. A username is
// matched case-insensitively; it can be given up and claimed by someone
// else, so ids are the safer choice (Usernames lists them for a warning).
func ParseApprovers(spec string) (Approvers, error) {
	var a Approvers
	for _, f := range strings.Split(spec, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if id, err := strconv.ParseInt(f, 10, 64); err == nil {
			if id <= 0 {
				return Approvers{}, fmt.Errorf("%q: a user id is a positive number", f)
			}
			if a.ids == nil {
				a.ids = map[int64]bool{}
			}
			a.ids[id] = true
			continue
		}
		name := strings.TrimPrefix(f, "@")
		if !validUsername(name) {
			return Approvers{}, fmt.Errorf("%q: want a user id (84211) or a username (@ana: a letter, then letters, digits or _, at most 32)", f)
		}
		if a.usernames == nil {
			a.usernames = map[string]bool{}
		}
		a.usernames[strings.ToLower(name)] = true
	}
	return a, nil
}

// validUsername reports whether s can be a Telegram username: a letter,
// then letters, digits or underscores, at most 32 in all. Telegram asks
// for at least 5 when one is chosen (4 for collectible ones), but shorter
// examples are common in documentation and match nobody by accident, so
// the length is not checked below 32.
func validUsername(s string) bool {
	if len(s) < 1 || len(s) > 32 {
		return false
	}
	for i, r := range s {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if i == 0 && !letter {
			return false
		}
		if !(letter || r == '_' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// Usernames are the usernames in the list (lower case, without '@'),
// sorted: each can be given up and re-claimed by another account.
func (a Approvers) Usernames() []string {
	out := make([]string, 0, len(a.usernames))
	for n := range a.usernames {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Restricted reports whether a list was given.
func (a Approvers) Restricted() bool { return len(a.ids)+len(a.usernames) > 0 }

// Allows reports whether u may decide.
func (a Approvers) Allows(u *chat.User) bool {
	if !a.Restricted() {
		return true
	}
	return u != nil && (a.ids[u.ID] || (u.Username != "" && a.usernames[strings.ToLower(u.Username)]))
}

// Config tunes a Handler.
type Config struct {
	Approvers Approvers
	// Refusals counts refused presses by reason; nil counts nothing.
	Refusals chat.Refusals
}

// Handler handles approval button presses; it implements
// chat.CallbackHandler.
type Handler struct {
	decider   Decider
	responder Responder
	messages  Messages
	cfg       Config
	logger    *slog.Logger
}

var _ chat.CallbackHandler = (*Handler)(nil)

// New returns a Handler.
func New(decider Decider, responder Responder, messages Messages, cfg Config, logger *slog.Logger) *Handler {
	if cfg.Refusals == nil {
		cfg.Refusals = chat.NopRefusals{}
	}
	return &Handler{decider: decider, responder: responder, messages: messages, cfg: cfg, logger: logger}
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
	textNotApprover    = "Sorry, you are not allowed to decide approvals"
	textForeign        = "Sorry, this button does not belong to this approval's message"
)

// Refusal reasons, the label of the refusals counter.
const (
	ReasonNotApprover    = "not_approver"
	ReasonForeignMessage = "foreign_message"
)

// HandleCallback records the decision a press carries. Presses that are
// not approval buttons (or come from no user) are chat.Ignored. A press by
// someone who may not decide, or from any message but the one sent with
// the approval, is answered politely and chat.Refused. A decision that
// could not be recorded (grounding unavailable) is answered with a request
// to try again and returned as an error. The message is edited only after
// the decision succeeded, and only the stored one, in its chat.
func (h *Handler) HandleCallback(ctx context.Context, c chat.Callback) (string, error) {
	id, d, ok := Parse(c.Data)
	if !ok || c.From == nil {
		return chat.Ignored, nil
	}
	log := h.logger.With("approval_id", id, "user_id", c.From.ID)
	if !h.cfg.Approvers.Allows(c.From) {
		return h.refuse(ctx, log, c, ReasonNotApprover, textNotApprover), nil
	}
	sent, found, err := h.messages.ApprovalMessage(ctx, id)
	if err != nil {
		h.answer(ctx, log, c.ID, textTryAgain)
		return "", fmt.Errorf("finding the message of approval %s: %w", id, err)
	}
	if !found || c.Message == nil || c.Message.Chat.ID != sent.ChatID || c.Message.MessageID != sent.MessageID {
		return h.refuse(ctx, log, c, ReasonForeignMessage, textForeign), nil
	}
	var outcome string
	err = h.decider.Decide(ctx, id, d, DecidedBy(c.From))
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
	if err != nil {
		// Nothing was decided by this press: the message stays as it is.
		return chat.Decided, nil
	}
	text := outcome
	if strings.TrimSpace(sent.Text) != "" {
		text = sent.Text + "\n\n" + outcome
	}
	if err := h.responder.EditText(ctx, sent.ChatID, sent.MessageID, text); err != nil {
		// The decision stands; only its display failed.
		log.WarnContext(ctx, "could not edit the approval message", "error", err)
	}
	return chat.Decided, nil
}

// refuse answers a refused press politely, logs and counts it.
func (h *Handler) refuse(ctx context.Context, log *slog.Logger, c chat.Callback, reason, text string) string {
	return chat.RefusePress(ctx, log, h.responder, h.cfg.Refusals, c, "approval", reason, text)
}

// answer answers the press (see chat.AnswerPress).
func (h *Handler) answer(ctx context.Context, log *slog.Logger, queryID, text string) {
	chat.AnswerPress(ctx, log, h.responder, queryID, text)
}
