package oncall

import (
	"testing"
	"time"
)

var (
	ann = Participant{UserID: 101, Username: "ann"}
	ben = Participant{UserID: 102, Username: "ben"}
	cat = Participant{UserID: 103, Name: "Cat"}
	dan = Participant{Username: "dan"}
)

func mustZone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func at(loc *time.Location, s string) time.Time {
	t, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
	if err != nil {
		panic(err)
	}
	return t
}

func TestWhoIsOnCall(t *testing.T) {
	berlin := mustZone(t, "Europe/Berlin")
	daily := &Schedule{ID: "d", Location: berlin, Layers: []Layer{{
		Name: "primary", Participants: []Participant{ann, ben, cat},
		Rotation: Rotation{Length: Daily, Start: at(berlin, "2026-03-27 09:00")},
	}}}
	weekly := &Schedule{ID: "w", Location: berlin, Layers: []Layer{{
		Name: "primary", Participants: []Participant{ann, ben},
		Rotation: Rotation{Length: Weekly, Start: at(berlin, "2026-10-19 10:00")}, // a Monday
	}}}
	hourly := &Schedule{ID: "h", Location: time.UTC, Layers: []Layer{{
		Name: "12h", Participants: []Participant{ann, ben},
		Rotation: Rotation{Length: Hours, Hours: 12, Start: at(time.UTC, "2026-01-01 08:00")},
	}}}
	// Business hours (Mon–Fri 09:00–17:00) over a 24/7 weekly layer, nights
	// (22:00–06:00, past midnight) over both, and overrides on top.
	layered := &Schedule{ID: "l", Location: berlin, Layers: []Layer{
		{Name: "follow-the-sun", Participants: []Participant{cat}, Rotation: Rotation{Length: Weekly, Start: at(berlin, "2026-11-02 00:00")}},
		{Name: "business", Participants: []Participant{ann, ben}, Rotation: Rotation{Length: Daily, Start: at(berlin, "2026-11-02 09:00")},
			Windows: []Window{{Days: []time.Weekday{1, 2, 3, 4, 5}, Start: 9 * 60, End: 17 * 60}}},
		{Name: "nights", Participants: []Participant{dan}, Rotation: Rotation{Length: Weekly, Start: at(berlin, "2026-11-02 00:00")},
			Windows: []Window{{Start: 22 * 60, End: 6 * 60}}},
	}, Overrides: []Override{
		{Participant: ben, Start: at(berlin, "2026-11-04 12:00"), End: at(berlin, "2026-11-04 14:00")},
		{Participant: cat, Start: at(berlin, "2026-11-04 13:00"), End: at(berlin, "2026-11-04 13:30")}, // later wins
	}}

	tests := []struct {
		name    string
		s       *Schedule
		t       time.Time
		want    Participant
		layer   string
		nobody  bool
		startAt time.Time
	}{
		{name: "before the first hand-off nobody", s: daily, t: at(berlin, "2026-03-27 08:59"), nobody: true},
		{name: "first shift", s: daily, t: at(berlin, "2026-03-27 09:00"), want: ann, layer: "primary", startAt: at(berlin, "2026-03-27 09:00")},
		{name: "just before hand-off", s: daily, t: at(berlin, "2026-03-28 08:59"), want: ann, layer: "primary"},
		{name: "second shift", s: daily, t: at(berlin, "2026-03-28 09:00"), want: ben, layer: "primary"},
		// Clocks go forward on 2026-03-29 at 02:00: the 28th's shift is 23 hours.
		{name: "spring forward keeps 09:00 local", s: daily, t: at(berlin, "2026-03-29 08:59"), want: ben, layer: "primary"},
		{name: "spring forward hand-off at 09:00 local", s: daily, t: at(berlin, "2026-03-29 09:00"), want: cat, layer: "primary", startAt: at(berlin, "2026-03-29 09:00")},
		{name: "wraps around", s: daily, t: at(berlin, "2026-03-30 09:00"), want: ann, layer: "primary"},
		{name: "long after", s: daily, t: at(berlin, "2026-12-25 12:00"), want: []Participant{ann, ben, cat}[(273)%3], layer: "primary"},
		// Clocks go back on 2026-10-25 at 03:00: that week is 169 hours.
		{name: "weekly before fall back", s: weekly, t: at(berlin, "2026-10-26 09:59"), want: ann, layer: "primary"},
		{name: "weekly hand-off at 10:00 local after fall back", s: weekly, t: at(berlin, "2026-10-26 10:00"), want: ben, layer: "primary", startAt: at(berlin, "2026-10-26 10:00")},
		{name: "hourly elapsed", s: hourly, t: at(time.UTC, "2026-01-01 20:00"), want: ben, layer: "12h"},
		{name: "hourly next day", s: hourly, t: at(time.UTC, "2026-01-02 08:00"), want: ann, layer: "12h"},
		{name: "base layer at the weekend", s: layered, t: at(berlin, "2026-11-07 12:00"), want: cat, layer: "follow-the-sun"},
		{name: "business hours win on a weekday", s: layered, t: at(berlin, "2026-11-03 10:00"), want: ben, layer: "business"},
		{name: "after business hours the base", s: layered, t: at(berlin, "2026-11-03 17:00"), want: cat, layer: "follow-the-sun"},
		{name: "nights past midnight", s: layered, t: at(berlin, "2026-11-04 02:00"), want: dan, layer: "nights"},
		{name: "nights end at 06:00", s: layered, t: at(berlin, "2026-11-04 06:00"), want: cat, layer: "follow-the-sun"},
		{name: "override", s: layered, t: at(berlin, "2026-11-04 12:30"), want: ben, startAt: at(berlin, "2026-11-04 12:00")},
		{name: "later override wins", s: layered, t: at(berlin, "2026-11-04 13:10"), want: cat, startAt: at(berlin, "2026-11-04 13:00")},
		{name: "earlier override resumes", s: layered, t: at(berlin, "2026-11-04 13:30"), want: ben, startAt: at(berlin, "2026-11-04 13:30")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.s.Validate(); err != nil {
				t.Fatal(err)
			}
			cur, _, ok, _ := tt.s.OnCall(tt.t)
			if tt.nobody {
				if ok {
					t.Fatalf("OnCall(%v) = %v, want nobody", tt.t, cur.Participant)
				}
				return
			}
			if !ok || cur.Participant != tt.want || cur.Layer != tt.layer {
				t.Fatalf("OnCall(%v) = %v (layer %q, ok %v), want %v (layer %q)", tt.t, cur.Participant, cur.Layer, ok, tt.want, tt.layer)
			}
			if !tt.startAt.IsZero() && !cur.Start.Equal(tt.startAt) {
				t.Errorf("shift starts %v, want %v", cur.Start, tt.startAt)
			}
		})
	}
}

func TestShiftLengthsAcrossDaylightSaving(t *testing.T) {
	berlin := mustZone(t, "Europe/Berlin")
	s := &Schedule{ID: "d", Location: berlin, Layers: []Layer{{
		Name: "p", Participants: []Participant{ann, ben},
		Rotation: Rotation{Length: Daily, Start: at(berlin, "2026-03-27 09:00")},
	}}}
	shifts := s.Shifts(at(berlin, "2026-03-27 09:00"), at(berlin, "2026-03-31 09:00"))
	var got []time.Duration
	for _, sh := range shifts {
		got = append(got, sh.End.Sub(sh.Start))
	}
	want := []time.Duration{24 * time.Hour, 23 * time.Hour, 24 * time.Hour, 24 * time.Hour}
	if len(got) != len(want) {
		t.Fatalf("%d shifts %v, want %v", len(got), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("shift %d lasts %v, want %v", i, got[i], want[i])
		}
	}
}

func TestNextHandOff(t *testing.T) {
	s := &Schedule{ID: "d", Location: time.UTC, Layers: []Layer{{
		Name: "p", Participants: []Participant{ann, ben},
		Rotation: Rotation{Length: Daily, Start: at(time.UTC, "2026-01-01 09:00")},
	}}}
	cur, next, ok, hasNext := s.OnCall(at(time.UTC, "2026-01-01 12:00"))
	if !ok || !hasNext || cur.Participant != ann || next.Participant != ben || !next.Start.Equal(at(time.UTC, "2026-01-02 09:00")) {
		t.Fatalf("OnCall = %+v next %+v (%v, %v)", cur, next, ok, hasNext)
	}
	// One person: the hand-off is to themselves, so the shifts merge.
	solo := &Schedule{ID: "s", Location: time.UTC, Layers: []Layer{{
		Name: "p", Participants: []Participant{ann},
		Rotation: Rotation{Length: Daily, Start: at(time.UTC, "2026-01-01 09:00")},
	}}}
	if sh := solo.Shifts(at(time.UTC, "2026-01-02 00:00"), at(time.UTC, "2026-01-05 00:00")); len(sh) != 1 {
		t.Errorf("one person's days are %d shifts, want 1", len(sh))
	}
}

func TestValidate(t *testing.T) {
	good := Layer{Name: "p", Participants: []Participant{ann}, Rotation: Rotation{Length: Daily, Start: time.Unix(0, 0)}}
	tests := map[string]*Schedule{
		"no zone":      {ID: "x", Layers: []Layer{good}},
		"no layers":    {ID: "x", Location: time.UTC},
		"nobody":       {ID: "x", Location: time.UTC, Layers: []Layer{{Name: "p", Rotation: good.Rotation}}},
		"no length":    {ID: "x", Location: time.UTC, Layers: []Layer{{Name: "p", Participants: good.Participants, Rotation: Rotation{Start: time.Unix(0, 0)}}}},
		"zero hours":   {ID: "x", Location: time.UTC, Layers: []Layer{{Name: "p", Participants: good.Participants, Rotation: Rotation{Length: Hours, Start: time.Unix(0, 0)}}}},
		"bad override": {ID: "x", Location: time.UTC, Layers: []Layer{good}, Overrides: []Override{{Participant: ann, Start: time.Unix(10, 0), End: time.Unix(10, 0)}}},
	}
	for name, s := range tests {
		if err := s.Validate(); err == nil {
			t.Errorf("%s: Validate() = nil, want an error", name)
		}
	}
}

// FuzzShifts checks the two ways of asking agree: for any schedule and
// time, the shift Shifts reports around t has the person at(t) names, the
// shifts tile the window without gaps where someone is on call, and none
// is empty.
func FuzzShifts(f *testing.F) {
	f.Add(uint8(0), uint8(9), uint8(0), uint16(30), uint8(3), int64(1774600000), uint8(9), uint8(17), uint16(500))
	f.Add(uint8(1), uint8(10), uint8(30), uint16(300), uint8(2), int64(1792900000), uint8(22), uint8(6), uint16(10))
	f.Add(uint8(2), uint8(0), uint8(0), uint16(7), uint8(5), int64(1767225600), uint8(0), uint8(0), uint16(0))
	zones := []string{"Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "UTC", "Asia/Kolkata"}
	f.Fuzz(func(t *testing.T, kind, hh, mm uint8, hours uint16, n uint8, unix int64, ws, we uint8, offsetHours uint16) {
		loc := mustZone(t, zones[int(kind)%len(zones)])
		start := time.Unix(1767225600+(unix%(3*365*86400)+3*365*86400)%(3*365*86400), 0).In(loc)
		start = time.Date(start.Year(), start.Month(), start.Day(), int(hh%24), int(mm%60), 0, 0, loc)
		people := []Participant{ann, ben, cat, dan}[:1+int(n)%4]
		layers := []Layer{{Name: "base", Participants: people, Rotation: Rotation{Length: Length(1 + int(kind)%3), Hours: 1 + int(hours)%744, Start: start}}}
		if ws != we {
			layers = append(layers, Layer{Name: "window", Participants: []Participant{dan, ann}, Rotation: Rotation{Length: Daily, Start: start},
				Windows: []Window{{Start: int(ws%24) * 60, End: int(we%24) * 60}}})
		}
		s := &Schedule{ID: "f", Location: loc, Layers: layers, Overrides: []Override{
			{Participant: cat, Start: start.Add(time.Duration(offsetHours) * time.Hour), End: start.Add(time.Duration(offsetHours)*time.Hour + 90*time.Minute)},
		}}
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		from := start.Add(time.Duration(offsetHours%200) * time.Hour).Add(-13 * time.Hour)
		to := from.Add(9 * 24 * time.Hour)
		shifts := s.Shifts(from, to)
		for i, sh := range shifts {
			if !sh.End.After(sh.Start) {
				t.Fatalf("shift %d is empty: %+v", i, sh)
			}
			if i > 0 && sh.Start.Before(shifts[i-1].End) {
				t.Fatalf("shift %d overlaps the one before: %+v, %+v", i, shifts[i-1], sh)
			}
			for _, probe := range []time.Time{sh.Start, sh.Start.Add(sh.End.Sub(sh.Start) / 2), sh.End.Add(-time.Second)} {
				got, ok := s.at(probe)
				if !ok || got.Participant != sh.Participant || got.Layer != sh.Layer || got.Override != sh.Override {
					t.Fatalf("at(%v) = %+v (%v), but the shift there is %+v", probe, got, ok, sh)
				}
			}
			if i > 0 && sh.Start.Equal(shifts[i-1].End) && sh.Participant == shifts[i-1].Participant && sh.Layer == shifts[i-1].Layer && sh.Override == shifts[i-1].Override {
				t.Fatalf("shifts %d and %d should have merged", i-1, i)
			}
		}
	})
}
