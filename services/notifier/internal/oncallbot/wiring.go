package oncallbot

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/groundcrew/groundcrew/services/notifier/internal/chat"
	"github.com/groundcrew/groundcrew/services/notifier/internal/oncall"
)

// Hook tells the escalator about the pipeline's alert groups and gives
// their roots the escalation's line; it implements pipeline.Escalation.
type Hook struct {
	Escalator *oncall.Escalator
	Groups    oncall.Groups
	Logger    *slog.Logger
}

// StatusLine is oncall.Status for the group's escalation, in UTC as the
// root's other times are; "" when the group has none.
func (h Hook) StatusLine(ctx context.Context, groupID string) string {
	esc, err := h.Escalator.Store.Escalation(ctx, groupID)
	if err != nil {
		if !errors.Is(err, oncall.ErrNotFound) {
			h.Logger.WarnContext(ctx, "reading the escalation for the root failed", "group_id", groupID, "error", err)
		}
		return ""
	}
	steps := 0
	if p, err := h.Escalator.Store.Policy(ctx, esc.PolicyID); err == nil {
		steps = len(p.Steps)
	}
	return oncall.Status(esc, steps, time.UTC)
}

// RootDelivered starts the group's escalation, if a policy takes it.
func (h Hook) RootDelivered(ctx context.Context, groupID string) {
	g, err := h.Groups.EscalationGroup(ctx, groupID)
	if err == nil {
		err = h.Escalator.Start(ctx, g)
	}
	if err != nil {
		h.Logger.ErrorContext(ctx, "starting the escalation failed", "group_id", groupID, "error", err)
	}
}

// Acknowledged stops the group's escalation.
func (h Hook) Acknowledged(ctx context.Context, groupID, actor string, at time.Time) {
	if err := h.Escalator.Acknowledge(ctx, groupID, actor, at); err != nil {
		h.Logger.ErrorContext(ctx, "stopping the escalation failed", "group_id", groupID, "error", err)
	}
}

// Command answers /oncall and /ack for the chat agent (chat.Commander).
func (c *Commands) Command(ctx context.Context, in *chat.Incoming, bot string) (string, bool, error) {
	if in == nil || in.From == nil || !c.Handles(in.Text, bot) {
		return "", false, nil
	}
	cmd := Command{Text: in.Text, ChatID: in.Chat.ID, UserID: in.From.ID, Username: in.From.Username, BotUsername: bot}
	if in.ReplyTo != nil {
		cmd.ReplyTo = in.ReplyTo.MessageID
	}
	reply, err := c.Answer(ctx, cmd)
	return reply, true, err
}

var _ chat.Commander = (*Commands)(nil)

// DirectCallbacks takes the Ack of a direct page (chat.CallbackHandler):
// other presses are chat.Ignored.
type DirectCallbacks struct {
	Acker    *Acker
	Answerer chat.CallbackAnswerer
	Refusals chat.Refusals
	Logger   *slog.Logger
}

var _ chat.CallbackHandler = DirectCallbacks{}

// ReasonNotPaged labels refused direct Acks.
const ReasonNotPaged = "not_paged"

// HandleCallback acknowledges for the person who pressed in their own chat.
func (d DirectCallbacks) HandleCallback(ctx context.Context, c chat.Callback) (string, error) {
	if c.From == nil {
		return chat.Ignored, nil
	}
	var chatID int64
	if c.Message != nil {
		chatID = c.Message.Chat.ID
	}
	log := d.Logger.With("user_id", c.From.ID)
	text, err := d.Acker.Press(ctx, c.Data, c.From.ID, c.From.Username, chatID)
	switch {
	case errors.Is(err, ErrNotMine):
		return chat.Ignored, nil
	case errors.Is(err, ErrNotPaged), errors.Is(err, ErrNotDirect):
		refusals := d.Refusals
		if refusals == nil {
			refusals = chat.NopRefusals{}
		}
		return chat.RefusePress(ctx, log, d.Answerer, refusals, c, "on-call page", ReasonNotPaged, "Sorry, "+err.Error()), nil
	case err != nil:
		chat.AnswerPress(ctx, log, d.Answerer, c.ID, "Could not do that; please try again")
		return "", err
	}
	log.InfoContext(ctx, "on-call page acknowledged", "answer", text)
	chat.AnswerPress(ctx, log, d.Answerer, c.ID, text)
	return chat.Decided, nil
}

// Metrics are the escalation figures: time to acknowledge by policy, and
// notifications by step, channel and outcome (oncall.Observer).
type Metrics struct {
	ack      *prometheus.HistogramVec
	notified *prometheus.CounterVec
}

var _ oncall.Observer = (*Metrics)(nil)

// NewMetrics registers the escalation metrics with reg (nil: not
// registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		ack: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "notifier_escalation_time_to_ack_seconds",
			Help:    "Time from an alert group's escalation start to its acknowledgement, by escalation policy.",
			Buckets: []float64{30, 60, 120, 300, 600, 900, 1800, 3600, 7200},
		}, []string{"policy"}),
		notified: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "notifier_escalation_notifications_total",
			Help: "People notified by escalation steps, by policy, step, channel (chat or direct) and outcome (sent or failed).",
		}, []string{"policy", "step", "channel", "outcome"}),
	}
	if reg != nil {
		reg.MustRegister(m.ack, m.notified)
	}
	return m
}

// Acknowledged observes a time to acknowledge.
func (m *Metrics) Acknowledged(policy string, after time.Duration) {
	m.ack.WithLabelValues(policy).Observe(after.Seconds())
}

// Notified counts a notification.
func (m *Metrics) Notified(policy string, step int, channel string, ok bool) {
	outcome := "sent"
	if !ok {
		outcome = "failed"
	}
	m.notified.WithLabelValues(policy, strconv.Itoa(step), channel, outcome).Inc()
}
