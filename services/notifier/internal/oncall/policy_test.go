package oncall

import (
	"testing"
	"time"
)

func TestRoute(t *testing.T) {
	db := Policy{ID: "db", Match: map[string]string{"team": "db"}, Steps: []Step{{Users: []Participant{ann}, Wait: time.Minute}}}
	dbProd := Policy{ID: "a-db-prod", Match: map[string]string{"team": "db", "env": "prod"}, Steps: db.Steps}
	fallback := Policy{ID: "z", Default: true, Steps: db.Steps}
	noMatch := Policy{ID: "b", Steps: db.Steps} // no matchers, not default: never routed to
	all := []Policy{fallback, db, dbProd, noMatch}
	tests := []struct {
		labels map[string]string
		want   string
	}{
		{map[string]string{"team": "db", "env": "prod"}, "a-db-prod"},
		{map[string]string{"team": "db", "env": "dev"}, "db"},
		{map[string]string{"team": "web"}, "z"},
		{nil, "z"},
	}
	for _, tt := range tests {
		got, ok := Route(all, tt.labels)
		if !ok || got.ID != tt.want {
			t.Errorf("Route(%v) = %q (%v), want %q", tt.labels, got.ID, ok, tt.want)
		}
	}
	if _, ok := Route([]Policy{db, noMatch}, map[string]string{"team": "web"}); ok {
		t.Error("routed with no matching and no default policy")
	}
}

func TestParseMatch(t *testing.T) {
	m, err := ParseMatch(" team=db & env = prod ")
	if err != nil || len(m) != 2 || m["team"] != "db" || m["env"] != "prod" {
		t.Fatalf("ParseMatch = %v, %v", m, err)
	}
	if FormatMatch(m) != "env=prod&team=db" {
		t.Errorf("FormatMatch = %q", FormatMatch(m))
	}
	for _, bad := range []string{"team", "=db", "team=", "a=b=c"} {
		if _, err := ParseMatch(bad); err == nil {
			t.Errorf("ParseMatch(%q) accepted", bad)
		}
	}
}

func TestNextWalksStepsAndRounds(t *testing.T) {
	p := Policy{Steps: []Step{{Wait: time.Minute}, {Wait: time.Minute}, {Wait: time.Minute}}, Repeat: 1}
	var got []Position
	for pos, ok := (Position{Round: 1, Step: 1}), true; ok; pos, ok = p.Next(pos) {
		got = append(got, pos)
	}
	if len(got) != 6 || got[3] != (Position{Round: 2, Step: 1}) || got[5] != (Position{Round: 2, Step: 3}) {
		t.Errorf("walk = %v, want 2 rounds of 3 steps", got)
	}
}

func TestTargets(t *testing.T) {
	s := &Schedule{ID: "s", Location: time.UTC, Layers: []Layer{{Name: "p", Participants: []Participant{ann, ben},
		Rotation: Rotation{Length: Daily, Start: at(time.UTC, "2026-01-01 09:00")}}}}
	step := Step{ScheduleID: "s", Users: []Participant{{UserID: 101}, cat}}
	got := step.Targets(s, at(time.UTC, "2026-01-01 10:00"))
	if len(got) != 2 || got[0] != ann || got[1] != cat {
		t.Errorf("Targets = %v, want ann once (on call and named by id) and Cat", got)
	}
	if got := step.Targets(s, at(time.UTC, "2025-12-31 10:00")); len(got) != 2 {
		t.Errorf("before the schedule starts, Targets = %v, want the named users", got)
	}
}

func TestPolicyValidate(t *testing.T) {
	ok := map[string]bool{"s": true}
	bad := []Policy{
		{ID: "x"},
		{ID: "x", Steps: []Step{{Wait: time.Minute}}},
		{ID: "x", Steps: []Step{{ScheduleID: "missing", Wait: time.Minute}}},
		{ID: "x", Steps: []Step{{ScheduleID: "s"}}},
	}
	for _, p := range bad {
		if err := p.Validate(ok); err == nil {
			t.Errorf("Validate(%+v) = nil", p)
		}
	}
	if err := (Policy{ID: "x", Steps: []Step{{ScheduleID: "s", Wait: time.Minute}}}).Validate(ok); err != nil {
		t.Error(err)
	}
}
