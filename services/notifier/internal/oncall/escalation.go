package oncall

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// State is where an escalation stands.
type State string

// Escalation states.
const (
	Escalating   State = "ESCALATING"
	Acknowledged State = "ACKNOWLEDGED"
	Resolved     State = "RESOLVED"
	Exhausted    State = "EXHAUSTED"
	Cancelled    State = "CANCELLED"
)

// EventKind is what a timeline event records.
type EventKind string

// Timeline event kinds.
const (
	EventStarted      EventKind = "STARTED"
	EventNotified     EventKind = "NOTIFIED"
	EventNotifyFailed EventKind = "NOTIFY_FAILED"
	EventAcknowledged EventKind = "ACKNOWLEDGED"
	EventStopped      EventKind = "STOPPED"
)

// Channels a person is notified through.
const (
	ChannelChat   = "chat"   // a mention in the alert chat, replying to the root
	ChannelDirect = "direct" // a direct message with an Ack button
)

// Event is one line of an escalation's timeline.
type Event struct {
	At          time.Time
	Kind        EventKind
	Pos         Position
	Participant Participant
	Channel     string
	Detail      string
}

// Escalation is an alert group's escalation: which policy, where it is,
// when the next step is due, and what happened.
type Escalation struct {
	GroupID, PolicyID string
	State             State
	// Pos is the step due at NextAt (while escalating); a Step past the
	// policy's last means "exhausted when due".
	Pos       Position
	NextAt    time.Time
	StartedAt time.Time
	Timeline  []Event
}

// ErrNotFound is a schedule, policy or escalation that does not exist.
var ErrNotFound = errors.New("not found")

// Group is what escalation needs to know of an alert group.
type Group struct {
	ID, Title, Link string
	// Chat and RootMessageID are where the group's root went out.
	Chat, RootMessageID string
	Labels              map[string]string
	// AckedBy is set once someone acknowledged the group.
	AckedBy  string
	AckedAt  time.Time
	Resolved bool
}

// Store keeps schedules, policies and escalations. Advance moves an
// escalation from one position to the next only if it is still at from (so
// of two instances running the same step, one notifies).
type Store interface {
	Schedule(ctx context.Context, id string) (*Schedule, error)
	Policies(ctx context.Context) ([]Policy, error)
	Policy(ctx context.Context, id string) (Policy, error)
	CreateEscalation(ctx context.Context, e *Escalation) (created bool, err error)
	Escalation(ctx context.Context, groupID string) (*Escalation, error)
	Advance(ctx context.Context, groupID string, from, to Position, nextAt time.Time) (bool, error)
	Stop(ctx context.Context, groupID string, state State, ev Event) (bool, error)
	AppendEvents(ctx context.Context, groupID string, evs ...Event) error
}

// Groups reads alert groups.
type Groups interface {
	EscalationGroup(ctx context.Context, id string) (Group, error)
}

// Pager reaches people: Mention posts one message in the group's chat
// replying to its root and mentioning everyone; Direct messages one person
// with the group's title, link and an Ack button.
type Pager interface {
	Mention(ctx context.Context, g Group, people []Participant, text string) error
	Direct(ctx context.Context, g Group, p Participant, text string) error
}

// Timer runs a step of a group's escalation at a time, durably, once per
// (group, position) whatever the number of callers.
type Timer interface {
	ScheduleStep(ctx context.Context, groupID string, pos Position, at time.Time) error
}

// Observer records escalation figures (metrics).
type Observer interface {
	Acknowledged(policyID string, after time.Duration)
	Notified(policyID string, step int, channel string, ok bool)
}

// Escalator starts, runs and stops escalations.
type Escalator struct {
	Store    Store
	Groups   Groups
	Pager    Pager
	Timer    Timer
	Observer Observer
	Logger   *slog.Logger
	Now      func() time.Time
	// Changed, when set, is told that a group's escalation changed (a step
	// paged, it stopped), so the group's root can show it.
	Changed func(ctx context.Context, groupID string)
	// Minute is how long one minute of a step's wait lasts: a minute,
	// unless shortened for a drill or a test (NOTIFIER_ONCALL_WAIT_UNIT).
	Minute time.Duration
}

// wait is how long step s waits, in Minute units.
func (e *Escalator) wait(s Step) time.Duration {
	if e.Minute <= 0 || e.Minute == time.Minute {
		return s.Wait
	}
	return time.Duration(float64(s.Wait) / float64(time.Minute) * float64(e.Minute))
}

func (e *Escalator) now() time.Time {
	if e.Now != nil {
		return e.Now().UTC()
	}
	return time.Now().UTC()
}

// Start begins escalating a group whose root was delivered, under the
// policy its labels route to (none: nothing happens). Starting twice is
// harmless.
func (e *Escalator) Start(ctx context.Context, g Group) error {
	policies, err := e.Store.Policies(ctx)
	if err != nil {
		return fmt.Errorf("loading escalation policies: %w", err)
	}
	p, ok := Route(policies, g.Labels)
	if !ok || g.AckedBy != "" || g.Resolved {
		return nil
	}
	now := e.now()
	first := Position{Round: 1, Step: 1}
	created, err := e.Store.CreateEscalation(ctx, &Escalation{
		GroupID: g.ID, PolicyID: p.ID, State: Escalating, Pos: first, NextAt: now, StartedAt: now,
		Timeline: []Event{{At: now, Kind: EventStarted, Detail: "policy " + p.ID}},
	})
	if err != nil {
		return fmt.Errorf("starting the escalation of group %s: %w", g.ID, err)
	}
	if created {
		e.Logger.InfoContext(ctx, "escalation started", "group_id", g.ID, "policy", p.ID)
	}
	// Also when it existed: a crash between creating and scheduling must
	// not leave it without its first step (the timer inserts it once).
	return e.Timer.ScheduleStep(ctx, g.ID, first, now)
}

// RunStep runs the step due at pos of a group's escalation: a step that is
// stale (the escalation moved on or stopped) does nothing. The next step is
// scheduled before the position advances, and the position advances before
// anyone is notified, so a crash anywhere re-runs at most the scheduling
// and no person is paged twice for one step by two instances.
func (e *Escalator) RunStep(ctx context.Context, groupID string, pos Position) error {
	esc, err := e.Store.Escalation(ctx, groupID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if esc.State != Escalating || esc.Pos != pos {
		return nil
	}
	g, err := e.Groups.EscalationGroup(ctx, groupID)
	if errors.Is(err, ErrNotFound) {
		return e.stop(ctx, esc, Cancelled, "the alert group is gone")
	}
	if err != nil {
		return err
	}
	if g.AckedBy != "" {
		return e.acknowledged(ctx, esc, g.AckedBy, g.AckedAt)
	}
	if g.Resolved {
		return e.stop(ctx, esc, Resolved, "the alert group resolved")
	}
	p, err := e.Store.Policy(ctx, esc.PolicyID)
	if errors.Is(err, ErrNotFound) {
		return e.stop(ctx, esc, Cancelled, "policy "+esc.PolicyID+" was deleted")
	}
	if err != nil {
		return err
	}
	step, ok := p.StepAt(pos)
	if !ok {
		return e.stop(ctx, esc, Exhausted, fmt.Sprintf("no acknowledgement after %d round(s) of policy %s", p.Repeat+1, p.ID))
	}
	now := e.now()
	next, more := p.Next(pos)
	if !more {
		next = Position{Round: pos.Round, Step: pos.Step + 1} // exhausted when due
	}
	nextAt := now.Add(e.wait(step))
	if err := e.Timer.ScheduleStep(ctx, groupID, next, nextAt); err != nil {
		return fmt.Errorf("scheduling step %d of group %s: %w", next.Step, groupID, err)
	}
	moved, err := e.Store.Advance(ctx, groupID, pos, next, nextAt)
	if err != nil || !moved {
		return err
	}
	var schedule *Schedule
	if step.ScheduleID != "" {
		schedule, err = e.Store.Schedule(ctx, step.ScheduleID)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
	}
	people := step.Targets(schedule, now)
	e.notify(ctx, g, p, pos, people, now)
	e.changed(ctx, groupID)
	return nil
}

func (e *Escalator) changed(ctx context.Context, groupID string) {
	if e.Changed != nil {
		e.Changed(ctx, groupID)
	}
}

// notify pages people for one step: one mention in the chat, one direct
// message each. Failures are recorded, not retried: the next step is the
// safety net, and the chat mention still goes out when a person never
// started a chat with the bot.
func (e *Escalator) notify(ctx context.Context, g Group, p Policy, pos Position, people []Participant, now time.Time) {
	log := e.Logger.With("group_id", g.ID, "policy", p.ID, "round", pos.Round, "step", pos.Step)
	if len(people) == 0 {
		_ = e.Store.AppendEvents(ctx, g.ID, Event{At: now, Kind: EventNotifyFailed, Pos: pos, Detail: "nobody is on call for this step"})
		log.WarnContext(ctx, "escalation step has nobody to notify")
		return
	}
	text := fmt.Sprintf("🚨 %s needs an acknowledgement (step %d of %d)", g.Title, pos.Step, len(p.Steps))
	var evs []Event
	err := e.Pager.Mention(ctx, g, people, text)
	for _, person := range people {
		evs = append(evs, event(now, pos, person, ChannelChat, err))
		e.observe(p.ID, pos.Step, ChannelChat, err)
	}
	for _, person := range people {
		derr := e.Pager.Direct(ctx, g, person, text)
		evs = append(evs, event(now, pos, person, ChannelDirect, derr))
		e.observe(p.ID, pos.Step, ChannelDirect, derr)
		if derr != nil {
			log.InfoContext(ctx, "direct message failed", "to", person.String(), "error", derr)
		}
	}
	if err := e.Store.AppendEvents(ctx, g.ID, evs...); err != nil {
		log.WarnContext(ctx, "recording the escalation timeline failed", "error", err)
	}
	names := make([]string, len(people))
	for i, person := range people {
		names[i] = person.String()
	}
	log.InfoContext(ctx, "escalation step notified", "people", strings.Join(names, ", "))
}

func event(at time.Time, pos Position, p Participant, channel string, err error) Event {
	if err != nil {
		return Event{At: at, Kind: EventNotifyFailed, Pos: pos, Participant: p, Channel: channel, Detail: err.Error()}
	}
	return Event{At: at, Kind: EventNotified, Pos: pos, Participant: p, Channel: channel}
}

func (e *Escalator) observe(policy string, step int, channel string, err error) {
	if e.Observer != nil {
		e.Observer.Notified(policy, step, channel, err == nil)
	}
}

// Acknowledge stops a group's escalation because actor acknowledged it.
// A group without an escalation under way is left alone.
func (e *Escalator) Acknowledge(ctx context.Context, groupID, actor string, at time.Time) error {
	esc, err := e.Store.Escalation(ctx, groupID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil || esc.State != Escalating {
		return err
	}
	return e.acknowledged(ctx, esc, actor, at)
}

// Resolve stops a group's escalation because the group resolved.
func (e *Escalator) Resolve(ctx context.Context, groupID string) error {
	esc, err := e.Store.Escalation(ctx, groupID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil || esc.State != Escalating {
		return err
	}
	return e.stop(ctx, esc, Resolved, "the alert group resolved")
}

func (e *Escalator) acknowledged(ctx context.Context, esc *Escalation, actor string, at time.Time) error {
	if at.IsZero() {
		at = e.now()
	}
	ok, err := e.Store.Stop(ctx, esc.GroupID, Acknowledged, Event{At: at, Kind: EventAcknowledged, Pos: esc.Pos, Detail: actor})
	if err != nil || !ok {
		return err
	}
	if e.Observer != nil {
		e.Observer.Acknowledged(esc.PolicyID, at.Sub(esc.StartedAt))
	}
	e.Logger.InfoContext(ctx, "escalation acknowledged", "group_id", esc.GroupID, "by", actor, "after", at.Sub(esc.StartedAt).Round(time.Second).String())
	e.changed(ctx, esc.GroupID)
	return nil
}

func (e *Escalator) stop(ctx context.Context, esc *Escalation, state State, why string) error {
	ok, err := e.Store.Stop(ctx, esc.GroupID, state, Event{At: e.now(), Kind: EventStopped, Pos: esc.Pos, Detail: why})
	if err != nil || !ok {
		return err
	}
	e.Logger.InfoContext(ctx, "escalation stopped", "group_id", esc.GroupID, "state", string(state), "reason", why)
	e.changed(ctx, esc.GroupID)
	return nil
}

// Status is the one line a group's root shows about its escalation:
// "⏳ escalating: step 2 of 3, @ben notified 21:04" or "👀 acked by @ben
// after 6 min"; empty when there is nothing to say.
func Status(esc *Escalation, steps int, loc *time.Location) string {
	if esc == nil {
		return ""
	}
	switch esc.State {
	case Escalating:
		var last *Event
		for i := range esc.Timeline {
			if ev := &esc.Timeline[i]; ev.Kind == EventNotified && ev.Channel == ChannelChat {
				last = ev
			}
		}
		if last == nil {
			return "⏳ escalating"
		}
		of := ""
		if steps > 0 {
			of = fmt.Sprintf(" of %d", steps)
		}
		return fmt.Sprintf("⏳ escalating: step %d%s, %s notified %s", last.Pos.Step, of, last.Participant.String(), last.At.In(loc).Format("15:04 MST"))
	case Acknowledged:
		for _, ev := range esc.Timeline {
			if ev.Kind == EventAcknowledged {
				return fmt.Sprintf("👀 acked by %s after %s", ev.Detail, humanDuration(ev.At.Sub(esc.StartedAt)))
			}
		}
	case Exhausted:
		return "⚠️ escalation exhausted: nobody acknowledged"
	}
	return ""
}

func humanDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Minutes()))
	default:
		return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
	}
}
