// Package oncallgrpc serves OnCallService: it converts between the proto
// messages and the oncall domain (named toX/fromX functions), maps errors
// to codes, renders the calendar feed, and loads NOTIFIER_ONCALL_FILE (the
// same messages, as YAML) at start.
package oncallgrpc

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/services/notifier/internal/oncall"
)

// violations collects what is wrong with a request, by field path.
type violations []grpcserver.FieldViolation

func (v *violations) add(field, format string, args ...any) {
	*v = append(*v, grpcserver.FieldViolation{Field: field, Description: fmt.Sprintf(format, args...)})
}

func (v violations) err() error { return grpcserver.FieldViolations(v...) }

func fromParticipant(p *notifierv1.Participant) oncall.Participant {
	return oncall.Participant{UserID: p.GetUserId(), Username: strings.TrimPrefix(p.GetUsername(), "@"), Name: p.GetName()}
}

func toParticipant(p oncall.Participant) *notifierv1.Participant {
	return &notifierv1.Participant{UserId: p.UserID, Username: p.Username, Name: p.Name}
}

// clock parses "HH:MM" into minutes after midnight ("" is 0).
func clock(s string) (int, bool) {
	if s == "" {
		return 0, true
	}
	h, m, ok := strings.Cut(s, ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || hh < 0 || hh > 23 || mm < 0 || mm > 59 {
		return 0, false
	}
	return hh*60 + mm, true
}

func formatClock(minutes int) string { return fmt.Sprintf("%02d:%02d", minutes/60, minutes%60) }

// fromSchedule converts a schedule, with field violations for what the
// proto's rules cannot say (an unknown zone, a date that does not exist,
// an hourly rotation without hours).
func fromSchedule(path string, s *notifierv1.Schedule) (*oncall.Schedule, error) {
	var vs violations
	loc := time.UTC
	if tz := s.GetTimeZone(); tz != "" {
		l, err := time.LoadLocation(tz)
		if err != nil || tz == "Local" {
			vs.add(path+"time_zone", "%q is not an IANA time zone (e.g. Europe/Berlin)", tz)
		} else {
			loc = l
		}
	}
	out := &oncall.Schedule{ID: s.GetId(), Name: s.GetName(), Location: loc}
	for i, l := range s.GetLayers() {
		lp := fmt.Sprintf("%slayers[%d].", path, i)
		layer := oncall.Layer{Name: l.GetName()}
		for _, p := range l.GetParticipants() {
			layer.Participants = append(layer.Participants, fromParticipant(p))
		}
		r := l.GetRotation()
		switch r.GetLength() {
		case notifierv1.Rotation_DAILY:
			layer.Rotation.Length = oncall.Daily
		case notifierv1.Rotation_WEEKLY:
			layer.Rotation.Length = oncall.Weekly
		case notifierv1.Rotation_HOURS:
			layer.Rotation.Length = oncall.Hours
			if r.GetHours() <= 0 {
				vs.add(lp+"rotation.hours", "an HOURS rotation needs hours between 1 and 744")
			}
		}
		layer.Rotation.Hours = int(r.GetHours())
		day, err := time.ParseInLocation("2006-01-02", r.GetStartDate(), loc)
		if err != nil {
			vs.add(lp+"rotation.start_date", "want a date as YYYY-MM-DD")
		}
		handoff, ok := clock(r.GetHandoffTime())
		if !ok {
			vs.add(lp+"rotation.handoff_time", "want a time as HH:MM")
		}
		layer.Rotation.Start = time.Date(day.Year(), day.Month(), day.Day(), 0, handoff, 0, 0, loc)
		for j, w := range l.GetWindows() {
			wp := fmt.Sprintf("%swindows[%d].", lp, j)
			start, ok1 := clock(w.GetStart())
			end, ok2 := clock(w.GetEnd())
			if !ok1 || !ok2 {
				vs.add(wp+"start", "want start and end as HH:MM")
			}
			win := oncall.Window{Start: start, End: end}
			for _, d := range w.GetDays() {
				win.Days = append(win.Days, time.Weekday(d))
			}
			layer.Windows = append(layer.Windows, win)
		}
		out.Layers = append(out.Layers, layer)
	}
	for _, o := range s.GetOverrides() {
		out.Overrides = append(out.Overrides, oncall.Override{
			Participant: fromParticipant(o.GetParticipant()), Start: o.GetStartTime().AsTime(), End: o.GetEndTime().AsTime(),
		})
	}
	if err := vs.err(); err != nil {
		return nil, err
	}
	if err := out.Validate(); err != nil {
		return nil, grpcserver.FieldViolations(grpcserver.FieldViolation{Field: strings.TrimSuffix(path, "."), Description: err.Error()})
	}
	return out, nil
}

func toSchedule(s *oncall.Schedule) *notifierv1.Schedule {
	out := &notifierv1.Schedule{Id: s.ID, Name: s.Name, TimeZone: s.Location.String()}
	for _, l := range s.Layers {
		start := l.Rotation.Start.In(s.Location)
		r := &notifierv1.Rotation{
			Hours:       int32(l.Rotation.Hours),
			StartDate:   start.Format("2006-01-02"),
			HandoffTime: start.Format("15:04"),
		}
		switch l.Rotation.Length {
		case oncall.Daily:
			r.Length = notifierv1.Rotation_DAILY
		case oncall.Weekly:
			r.Length = notifierv1.Rotation_WEEKLY
		case oncall.Hours:
			r.Length = notifierv1.Rotation_HOURS
		}
		layer := &notifierv1.Layer{Name: l.Name, Rotation: r}
		for _, p := range l.Participants {
			layer.Participants = append(layer.Participants, toParticipant(p))
		}
		for _, w := range l.Windows {
			win := &notifierv1.Window{Start: formatClock(w.Start), End: formatClock(w.End)}
			for _, d := range w.Days {
				win.Days = append(win.Days, int32(d))
			}
			layer.Windows = append(layer.Windows, win)
		}
		out.Layers = append(out.Layers, layer)
	}
	for _, o := range s.Overrides {
		out.Overrides = append(out.Overrides, &notifierv1.Override{
			Participant: toParticipant(o.Participant), StartTime: timestamppb.New(o.Start), EndTime: timestamppb.New(o.End),
		})
	}
	return out
}

// fromPolicy converts a policy; schedules names the schedules that exist.
func fromPolicy(path string, p *notifierv1.EscalationPolicy, schedules map[string]bool) (oncall.Policy, error) {
	match, err := oncall.ParseMatch(p.GetMatch())
	if err != nil {
		return oncall.Policy{}, grpcserver.FieldViolations(grpcserver.FieldViolation{Field: path + "match", Description: err.Error() + " (syntax: label=value&label=value)"})
	}
	out := oncall.Policy{ID: p.GetId(), Name: p.GetName(), Match: match, Default: p.GetDefault(), Repeat: int(p.GetRepeat())}
	var vs violations
	for i, s := range p.GetSteps() {
		step := oncall.Step{ScheduleID: s.GetScheduleId(), Wait: time.Duration(s.GetWaitMinutes()) * time.Minute}
		if id := s.GetScheduleId(); id != "" && !schedules[id] {
			vs.add(fmt.Sprintf("%ssteps[%d].schedule_id", path, i), "no schedule %q", id)
		}
		for _, u := range s.GetUsers() {
			step.Users = append(step.Users, fromParticipant(u))
		}
		out.Steps = append(out.Steps, step)
	}
	if err := vs.err(); err != nil {
		return oncall.Policy{}, err
	}
	if err := out.Validate(schedules); err != nil {
		return oncall.Policy{}, grpcserver.FieldViolations(grpcserver.FieldViolation{Field: strings.TrimSuffix(path, "."), Description: err.Error()})
	}
	return out, nil
}

func toPolicy(p oncall.Policy) *notifierv1.EscalationPolicy {
	out := &notifierv1.EscalationPolicy{Id: p.ID, Name: p.Name, Match: oncall.FormatMatch(p.Match), Default: p.Default, Repeat: int32(p.Repeat)}
	for _, s := range p.Steps {
		step := &notifierv1.EscalationStep{ScheduleId: s.ScheduleID, WaitMinutes: int32(s.Wait / time.Minute)}
		for _, u := range s.Users {
			step.Users = append(step.Users, toParticipant(u))
		}
		out.Steps = append(out.Steps, step)
	}
	return out
}

func toShift(s oncall.Shift) *notifierv1.Shift {
	return &notifierv1.Shift{
		Participant: toParticipant(s.Participant), StartTime: timestamppb.New(s.Start), EndTime: timestamppb.New(s.End),
		Layer: s.Layer, Override: s.Override,
	}
}

var eventKinds = map[oncall.EventKind]notifierv1.EscalationEvent_Kind{
	oncall.EventStarted:      notifierv1.EscalationEvent_STARTED,
	oncall.EventNotified:     notifierv1.EscalationEvent_NOTIFIED,
	oncall.EventNotifyFailed: notifierv1.EscalationEvent_NOTIFY_FAILED,
	oncall.EventAcknowledged: notifierv1.EscalationEvent_ACKNOWLEDGED,
	oncall.EventStopped:      notifierv1.EscalationEvent_STOPPED,
}

var states = map[oncall.State]notifierv1.Escalation_State{
	oncall.Escalating:   notifierv1.Escalation_ESCALATING,
	oncall.Acknowledged: notifierv1.Escalation_ACKNOWLEDGED,
	oncall.Resolved:     notifierv1.Escalation_RESOLVED,
	oncall.Exhausted:    notifierv1.Escalation_EXHAUSTED,
	oncall.Cancelled:    notifierv1.Escalation_CANCELLED,
}

func toEscalation(e *oncall.Escalation) *notifierv1.Escalation {
	out := &notifierv1.Escalation{GroupId: e.GroupID, PolicyId: e.PolicyID, State: states[e.State], Step: int32(e.Pos.Step), Round: int32(e.Pos.Round)}
	if e.State == oncall.Escalating {
		out.NextStepTime = timestamppb.New(e.NextAt)
	}
	for _, ev := range e.Timeline {
		pe := &notifierv1.EscalationEvent{Time: timestamppb.New(ev.At), Kind: eventKinds[ev.Kind], Step: int32(ev.Pos.Step), Round: int32(ev.Pos.Round),
			Channel: ev.Channel, Detail: ev.Detail}
		if ev.Participant != (oncall.Participant{}) {
			pe.Participant = toParticipant(ev.Participant)
		}
		out.Timeline = append(out.Timeline, pe)
	}
	return out
}
