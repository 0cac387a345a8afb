package oncallstore

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/notifier/internal/oncall"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
)

// backends: SQLite (or DATABASE_URL's database) always, PostgreSQL too
// when TEST_DATABASE_URL is set.
func backends(t *testing.T) map[string]func(t *testing.T) *Store {
	t.Helper()
	open := func(dbURL func(t *testing.T) string) func(t *testing.T) *Store {
		return func(t *testing.T) *Store {
			ctx := context.Background()
			db, err := sqlstore.Open(ctx, dbURL(t), t.TempDir(), "notifier", slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			if err := store.Migrate(ctx, db); err != nil {
				t.Fatal(err)
			}
			return New(db)
		}
	}
	out := map[string]func(t *testing.T) *Store{"default": open(func(t *testing.T) string { return sqlstoretest.URL(t, "notifier_oncall") })}
	if os.Getenv(sqlstoretest.EnvVar) != "" {
		out["postgres"] = open(func(t *testing.T) string { return sqlstoretest.PostgresURL(t, "notifier_oncall") })
	}
	return out
}

func TestDocumentsRoundTrip(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, berlin)
	sched := &oncall.Schedule{ID: "db-primary", Name: "DB primary", Location: berlin,
		Layers: []oncall.Layer{{Name: "weekly", Participants: []oncall.Participant{{UserID: 1, Username: "ann"}, {Name: "Ben", UserID: 2}},
			Rotation: oncall.Rotation{Length: oncall.Weekly, Start: start},
			Windows:  []oncall.Window{{Days: []time.Weekday{time.Monday, time.Friday}, Start: 540, End: 1020}}}},
		Overrides: []oncall.Override{{Participant: oncall.Participant{Username: "cat"}, Start: start.Add(time.Hour), End: start.Add(2 * time.Hour)}}}
	pol := oncall.Policy{ID: "db", Match: map[string]string{"team": "db"}, Repeat: 2,
		Steps: []oncall.Step{{ScheduleID: "db-primary", Wait: 5 * time.Minute}, {Users: []oncall.Participant{{UserID: 9}}, Wait: time.Hour}}}
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t)
			if err := s.PutSchedule(ctx, sched, "test"); err != nil {
				t.Fatal(err)
			}
			if err := s.PutPolicy(ctx, pol, "test"); err != nil {
				t.Fatal(err)
			}
			got, err := s.Schedule(ctx, "db-primary")
			if err != nil {
				t.Fatal(err)
			}
			if got.Location.String() != "Europe/Berlin" {
				t.Errorf("zone %s", got.Location)
			}
			opt := cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })
			got.Location = berlin
			if d := cmp.Diff(sched, got, opt, cmp.Comparer(func(a, b *time.Location) bool { return a.String() == b.String() })); d != "" {
				t.Errorf("schedule round trip (-want +got):\n%s", d)
			}
			gp, err := s.Policy(ctx, "db")
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(pol, gp); d != "" {
				t.Errorf("policy round trip (-want +got):\n%s", d)
			}
			all, _ := s.Policies(ctx)
			scheds, _ := s.Schedules(ctx)
			if len(all) != 1 || len(scheds) != 1 {
				t.Errorf("listed %d policies and %d schedules, want 1 each", len(all), len(scheds))
			}
			if err := s.DeletePolicy(ctx, "db"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Policy(ctx, "db"); !errors.Is(err, oncall.ErrNotFound) {
				t.Errorf("deleted policy: %v, want ErrNotFound", err)
			}
			if err := s.DeleteSchedule(ctx, "nope"); !errors.Is(err, oncall.ErrNotFound) {
				t.Errorf("deleting a missing schedule: %v", err)
			}
		})
	}
}

func TestEscalationCompareAndSet(t *testing.T) {
	t0 := time.Date(2026, 11, 2, 21, 0, 0, 0, time.UTC)
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t)
			e := &oncall.Escalation{GroupID: "g1", PolicyID: "db", State: oncall.Escalating, Pos: oncall.Position{Round: 1, Step: 1}, NextAt: t0, StartedAt: t0,
				Timeline: []oncall.Event{{At: t0, Kind: oncall.EventStarted, Detail: "policy db"}}}
			if ok, err := s.CreateEscalation(ctx, e); !ok || err != nil {
				t.Fatalf("CreateEscalation = %v, %v", ok, err)
			}
			if ok, err := s.CreateEscalation(ctx, e); ok || err != nil {
				t.Fatalf("second CreateEscalation = %v, %v; want false", ok, err)
			}
			// Eight racers advance one step: one wins.
			var wins atomic.Int32
			var wg sync.WaitGroup
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ok, err := s.Advance(ctx, "g1", oncall.Position{Round: 1, Step: 1}, oncall.Position{Round: 1, Step: 2}, t0.Add(5*time.Minute))
					if err != nil {
						t.Error(err)
					}
					if ok {
						wins.Add(1)
					}
				}()
			}
			wg.Wait()
			if wins.Load() != 1 {
				t.Fatalf("%d racers advanced, want 1", wins.Load())
			}
			p := oncall.Participant{UserID: 7, Username: "ben"}
			if err := s.AppendEvents(ctx, "g1",
				oncall.Event{At: t0.Add(time.Minute), Kind: oncall.EventNotified, Pos: oncall.Position{Round: 1, Step: 1}, Participant: p, Channel: oncall.ChannelChat},
				oncall.Event{At: t0.Add(time.Minute), Kind: oncall.EventNotifyFailed, Pos: oncall.Position{Round: 1, Step: 1}, Participant: p, Channel: oncall.ChannelDirect, Detail: "Forbidden"}); err != nil {
				t.Fatal(err)
			}
			if ok, err := s.Stop(ctx, "g1", oncall.Acknowledged, oncall.Event{At: t0.Add(6 * time.Minute), Kind: oncall.EventAcknowledged, Detail: "@ben"}); !ok || err != nil {
				t.Fatalf("Stop = %v, %v", ok, err)
			}
			if ok, _ := s.Stop(ctx, "g1", oncall.Resolved, oncall.Event{At: t0.Add(7 * time.Minute), Kind: oncall.EventStopped}); ok {
				t.Error("stopped a stopped escalation")
			}
			got, err := s.Escalation(ctx, "g1")
			if err != nil {
				t.Fatal(err)
			}
			if got.State != oncall.Acknowledged || got.Pos != (oncall.Position{Round: 1, Step: 2}) || len(got.Timeline) != 4 {
				t.Fatalf("escalation %+v", got)
			}
			kinds := []oncall.EventKind{got.Timeline[0].Kind, got.Timeline[1].Kind, got.Timeline[2].Kind, got.Timeline[3].Kind}
			want := []oncall.EventKind{oncall.EventStarted, oncall.EventNotified, oncall.EventNotifyFailed, oncall.EventAcknowledged}
			if d := cmp.Diff(want, kinds); d != "" {
				t.Errorf("timeline order (-want +got):\n%s", d)
			}
			if got.Timeline[1].Participant != p || got.Timeline[2].Channel != oncall.ChannelDirect {
				t.Errorf("events %+v", got.Timeline)
			}
		})
	}
}
