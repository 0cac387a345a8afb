package oncall

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Step notifies people, then waits for an acknowledgement.
type Step struct {
	// ScheduleID names a schedule whose on-call the step notifies.
	ScheduleID string
	// Users are notified too.
	Users []Participant
	// Wait is how long to wait for an acknowledgement before the next step.
	Wait time.Duration
}

// Policy is the steps an unacknowledged alert group walks, Repeat more
// times after the first round.
type Policy struct {
	ID, Name string
	// Match holds label matchers (NOTIFIER_ROUTES syntax); all must hold.
	Match map[string]string
	// Default takes groups no other policy matches.
	Default bool
	Steps   []Step
	Repeat  int
}

// ParseMatch reads a policy's matchers in NOTIFIER_ROUTES syntax:
// "label=value[&label=value…]"; empty means none.
func ParseMatch(spec string) (map[string]string, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, nil
	}
	out := map[string]string{}
	for _, m := range strings.Split(spec, "&") {
		k, v, ok := strings.Cut(m, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" || strings.Contains(v, "=") {
			return nil, fmt.Errorf("matcher %q: want label=value", m)
		}
		out[k] = v
	}
	return out, nil
}

// FormatMatch writes matchers back in NOTIFIER_ROUTES syntax, sorted.
func FormatMatch(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for k, v := range m {
		parts = append(parts, k+"="+v)
	}
	slices.Sort(parts)
	return strings.Join(parts, "&")
}

// Route picks the policy for an alert group's labels: the first policy,
// in id order, whose matchers all hold; else the first default policy;
// else none.
func Route(policies []Policy, labels map[string]string) (Policy, bool) {
	sorted := slices.Clone(policies)
	slices.SortFunc(sorted, func(a, b Policy) int { return strings.Compare(a.ID, b.ID) })
	for _, p := range sorted {
		if len(p.Match) > 0 && matches(p.Match, labels) {
			return p, true
		}
	}
	for _, p := range sorted {
		if p.Default {
			return p, true
		}
	}
	return Policy{}, false
}

func matches(match, labels map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// Position is where an escalation is: round and step count from 1.
type Position struct {
	Round, Step int
}

// Next returns the position after pos in p, and false when pos was the
// last step of the last round.
func (p Policy) Next(pos Position) (Position, bool) {
	if pos.Step < len(p.Steps) {
		return Position{Round: pos.Round, Step: pos.Step + 1}, true
	}
	if pos.Round <= p.Repeat {
		return Position{Round: pos.Round + 1, Step: 1}, true
	}
	return Position{}, false
}

// StepAt returns the step at pos.
func (p Policy) StepAt(pos Position) (Step, bool) {
	if pos.Step < 1 || pos.Step > len(p.Steps) {
		return Step{}, false
	}
	return p.Steps[pos.Step-1], true
}

// Validate reports what makes p unusable, schedules naming the schedules
// that exist.
func (p Policy) Validate(schedules map[string]bool) error {
	if len(p.Steps) == 0 {
		return fmt.Errorf("policy %q: no steps", p.ID)
	}
	for i, s := range p.Steps {
		if s.ScheduleID == "" && len(s.Users) == 0 {
			return fmt.Errorf("policy %q step %d: notifies nobody (set schedule_id or users)", p.ID, i+1)
		}
		if s.ScheduleID != "" && !schedules[s.ScheduleID] {
			return fmt.Errorf("policy %q step %d: no schedule %q", p.ID, i+1, s.ScheduleID)
		}
		if s.Wait <= 0 {
			return fmt.Errorf("policy %q step %d: wait must be positive", p.ID, i+1)
		}
	}
	if p.Repeat < 0 {
		return fmt.Errorf("policy %q: repeat must not be negative", p.ID)
	}
	return nil
}

// Targets returns the people step notifies at t: the schedule's on-call (if
// anyone is) and the step's users, each once.
func (s Step) Targets(schedule *Schedule, t time.Time) []Participant {
	var out []Participant
	add := func(p Participant) {
		for _, q := range out {
			if q.Same(p) {
				return
			}
		}
		out = append(out, p)
	}
	if schedule != nil {
		if cur, _, ok, _ := schedule.OnCall(t); ok {
			add(cur.Participant)
		}
	}
	for _, u := range s.Users {
		add(u)
	}
	return out
}
