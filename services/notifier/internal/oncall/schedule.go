// Package oncall computes who is on call and walks escalation policies.
//
// A [Schedule] is layers of rotations plus overrides; who is on call at a
// time is computed from them, never stored per slot, so a schedule edited
// today answers for any time, and daylight-saving changes in the
// schedule's zone move hand-offs with the wall clock (a daily hand-off at
// 09:00 stays at 09:00 local across the change). The package imports no
// gRPC and no generated code: the adapters convert.
package oncall

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Participant is a person who can be on call: a Telegram user by id, by
// @username (without the @), or both.
type Participant struct {
	UserID   int64
	Username string
	Name     string
}

// Same reports whether p and q are the same person: same id when both
// have one, else same username (case-insensitive).
func (p Participant) Same(q Participant) bool {
	if p.UserID != 0 && q.UserID != 0 {
		return p.UserID == q.UserID
	}
	return p.Username != "" && strings.EqualFold(p.Username, q.Username)
}

// String is how people read it: @username, else the name, else the id.
func (p Participant) String() string {
	switch {
	case p.Username != "":
		return "@" + p.Username
	case p.Name != "":
		return p.Name
	default:
		return fmt.Sprintf("user %d", p.UserID)
	}
}

// Length is how long one shift of a rotation lasts.
type Length int

// Rotation lengths.
const (
	Daily Length = iota + 1
	Weekly
	Hours
)

// Rotation hands a layer over from one participant to the next. Daily and
// weekly shifts start at the hand-off's wall-clock time in the schedule's
// zone; Hours shifts last that much elapsed time from the first hand-off.
type Rotation struct {
	Length Length
	// Hours is the shift length for [Hours].
	Hours int
	// Start is the first hand-off: its date and wall-clock time are read in
	// the schedule's zone.
	Start time.Time
}

// Window is a weekly time window in the schedule's zone: it starts on each
// of Days (every day when empty) at Start and ends at End (minutes after
// midnight); an End not after Start runs past midnight into the next day.
type Window struct {
	Days       []time.Weekday
	Start, End int
}

// Layer is a rotation of participants, active in its windows (always when
// there are none).
type Layer struct {
	Name         string
	Participants []Participant
	Rotation     Rotation
	Windows      []Window
}

// Override puts a participant on call over every layer for [Start, End).
type Override struct {
	Participant Participant
	Start, End  time.Time
}

// Schedule is who is on call when: layers (a later layer wins where it is
// active) and overrides (a later override wins over an earlier one, and
// every override over the layers).
type Schedule struct {
	ID, Name  string
	Location  *time.Location
	Layers    []Layer
	Overrides []Override
}

// Shift is a span with one person on call.
type Shift struct {
	Participant Participant
	Start, End  time.Time
	// Layer names the layer; empty for an override.
	Layer    string
	Override bool
}

// Validate reports what makes s unusable: it is called on every schedule
// before it is stored or loaded, so the computations below can rely on it.
func (s *Schedule) Validate() error {
	if s.Location == nil {
		return fmt.Errorf("schedule %q: no time zone", s.ID)
	}
	if len(s.Layers) == 0 {
		return fmt.Errorf("schedule %q: no layers", s.ID)
	}
	for i, l := range s.Layers {
		if len(l.Participants) == 0 {
			return fmt.Errorf("schedule %q layer %d (%s): no participants", s.ID, i+1, l.Name)
		}
		switch l.Rotation.Length {
		case Daily, Weekly:
		case Hours:
			if l.Rotation.Hours <= 0 {
				return fmt.Errorf("schedule %q layer %d (%s): an hourly rotation needs hours > 0", s.ID, i+1, l.Name)
			}
		default:
			return fmt.Errorf("schedule %q layer %d (%s): rotation length not set", s.ID, i+1, l.Name)
		}
		if l.Rotation.Start.IsZero() {
			return fmt.Errorf("schedule %q layer %d (%s): rotation has no start", s.ID, i+1, l.Name)
		}
		for _, w := range l.Windows {
			if w.Start < 0 || w.Start >= 24*60 || w.End < 0 || w.End >= 24*60 {
				return fmt.Errorf("schedule %q layer %d (%s): window times must be within a day", s.ID, i+1, l.Name)
			}
		}
	}
	for i, o := range s.Overrides {
		if !o.End.After(o.Start) {
			return fmt.Errorf("schedule %q override %d: must end after it starts", s.ID, i+1)
		}
	}
	return nil
}

// boundary returns the start of the layer's k-th shift (k may be negative).
func (l *Layer) boundary(k int, loc *time.Location) time.Time {
	r := l.Rotation
	switch r.Length {
	case Hours:
		return r.Start.Add(time.Duration(k*r.Hours) * time.Hour)
	default:
		days := 1
		if r.Length == Weekly {
			days = 7
		}
		st := r.Start.In(loc)
		return time.Date(st.Year(), st.Month(), st.Day()+k*days, st.Hour(), st.Minute(), 0, 0, loc)
	}
}

// shiftIndex returns k with boundary(k) <= t < boundary(k+1).
func (l *Layer) shiftIndex(t time.Time, loc *time.Location) int {
	b0 := l.boundary(0, loc)
	var step time.Duration
	switch l.Rotation.Length {
	case Hours:
		step = time.Duration(l.Rotation.Hours) * time.Hour
	case Weekly:
		step = 7 * 24 * time.Hour
	default:
		step = 24 * time.Hour
	}
	d := t.Sub(b0)
	k := int(d / step)
	if d < 0 && d%step != 0 {
		k-- // floor, not truncation
	}
	// Daylight-saving changes make a wall-clock day 23 or 25 hours: the
	// estimate is off by at most one either way.
	for !l.boundary(k+1, loc).After(t) {
		k++
	}
	for l.boundary(k, loc).After(t) {
		k--
	}
	return k
}

// active reports whether t falls in one of the layer's windows.
func (l *Layer) active(t time.Time, loc *time.Location) bool {
	if len(l.Windows) == 0 {
		return true
	}
	lt := t.In(loc)
	day, minute := lt.Weekday(), lt.Hour()*60+lt.Minute()
	prev := (day + 6) % 7
	for _, w := range l.Windows {
		on := func(d time.Weekday) bool { return len(w.Days) == 0 || slices.Contains(w.Days, d) }
		if w.End > w.Start {
			if on(day) && minute >= w.Start && minute < w.End {
				return true
			}
			continue
		}
		// Past midnight: from Start to the end of the day, and on the next
		// day until End.
		if on(day) && minute >= w.Start || on(prev) && minute < w.End {
			return true
		}
	}
	return false
}

// at returns who is on call at t and where it comes from.
func (s *Schedule) at(t time.Time) (Shift, bool) {
	for i := len(s.Overrides) - 1; i >= 0; i-- {
		o := s.Overrides[i]
		if !t.Before(o.Start) && t.Before(o.End) {
			return Shift{Participant: o.Participant, Override: true}, true
		}
	}
	for i := len(s.Layers) - 1; i >= 0; i-- {
		l := &s.Layers[i]
		if t.Before(l.boundary(0, s.Location)) || !l.active(t, s.Location) {
			continue
		}
		k := l.shiftIndex(t, s.Location)
		n := len(l.Participants)
		return Shift{Participant: l.Participants[((k%n)+n)%n], Layer: l.Name}, true
	}
	return Shift{}, false
}

// Shifts returns the shifts overlapping [from, to), in order and cut to
// the window; spans with nobody on call are left out. Adjacent spans of the
// same person from the same source are one shift.
func (s *Schedule) Shifts(from, to time.Time) []Shift {
	if !to.After(from) {
		return nil
	}
	bounds := []time.Time{from}
	add := func(t time.Time) {
		if t.After(from) && t.Before(to) {
			bounds = append(bounds, t)
		}
	}
	for _, o := range s.Overrides {
		add(o.Start)
		add(o.End)
	}
	for i := range s.Layers {
		l := &s.Layers[i]
		for k := l.shiftIndex(from, s.Location); ; k++ {
			b := l.boundary(k, s.Location)
			if !b.Before(to) {
				break
			}
			add(b)
		}
		if len(l.Windows) == 0 {
			continue
		}
		// Window edges: every day the range touches, in the zone's wall
		// clock (time.Date normalises a gap or a repeated hour).
		lf := from.In(s.Location)
		for d := time.Date(lf.Year(), lf.Month(), lf.Day()-1, 0, 0, 0, 0, s.Location); d.Before(to); d = time.Date(d.Year(), d.Month(), d.Day()+1, 0, 0, 0, 0, s.Location) {
			for _, w := range l.Windows {
				add(time.Date(d.Year(), d.Month(), d.Day(), 0, w.Start, 0, 0, s.Location))
				add(time.Date(d.Year(), d.Month(), d.Day(), 0, w.End, 0, 0, s.Location))
			}
		}
	}
	slices.SortFunc(bounds, func(a, b time.Time) int { return a.Compare(b) })
	bounds = slices.CompactFunc(bounds, func(a, b time.Time) bool { return a.Equal(b) })

	var out []Shift
	for i, b := range bounds {
		end := to
		if i+1 < len(bounds) {
			end = bounds[i+1]
		}
		sh, ok := s.at(b)
		if !ok {
			continue
		}
		sh.Start, sh.End = b, end
		if n := len(out); n > 0 {
			last := &out[n-1]
			if last.End.Equal(b) && last.Participant == sh.Participant && last.Layer == sh.Layer && last.Override == sh.Override {
				last.End = end
				continue
			}
		}
		out = append(out, sh)
	}
	return out
}

// lookaround is how far [Schedule.OnCall] looks for the shift's edges: the
// longest rotation a schedule takes (744 hours) fits.
const lookaround = 32 * 24 * time.Hour

// OnCall returns the shift under way at t, if anyone is on call, and the
// next one after it within the look-ahead.
func (s *Schedule) OnCall(t time.Time) (current Shift, next Shift, ok bool, hasNext bool) {
	shifts := s.Shifts(t.Add(-lookaround), t.Add(lookaround))
	for i, sh := range shifts {
		if !t.Before(sh.Start) && t.Before(sh.End) {
			current, ok = sh, true
			if i+1 < len(shifts) {
				next, hasNext = shifts[i+1], true
			}
			return current, next, ok, hasNext
		}
		if sh.Start.After(t) {
			return Shift{}, sh, false, true
		}
	}
	return Shift{}, Shift{}, false, false
}
