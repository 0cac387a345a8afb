package alertwatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
)

// instances opens two stores on one fresh database, as two notifier
// instances would: SQLite, and PostgreSQL when TEST_DATABASE_URL is set.
func instances(t *testing.T) map[string]func(t *testing.T) (*store.Store, *store.Store) {
	t.Helper()
	open := func(dbURL func(t *testing.T) string) func(t *testing.T) (*store.Store, *store.Store) {
		return func(t *testing.T) (*store.Store, *store.Store) {
			t.Helper()
			ctx, url, dir := context.Background(), dbURL(t), t.TempDir()
			logger := slog.New(slog.NewTextHandler(io.Discard, nil))
			var out [2]*store.Store
			for i := range out {
				db, err := sqlstore.Open(ctx, url, dir, "notifier", logger)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = db.Close() })
				if err := store.Migrate(ctx, db); err != nil {
					t.Fatal(err)
				}
				out[i] = store.New(db)
			}
			return out[0], out[1]
		}
	}
	name := "sqlite"
	if sqlstoretest.OnPostgres() {
		name = "database_url"
	}
	out := map[string]func(t *testing.T) (*store.Store, *store.Store){
		name: open(func(t *testing.T) string { return sqlstoretest.URL(t, "notifier_watch") }),
	}
	if os.Getenv(sqlstoretest.EnvVar) != "" {
		out["postgres"] = open(func(t *testing.T) string { return sqlstoretest.PostgresURL(t, "notifier_watch") })
	}
	return out
}

var t0 = time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)

func newAlert(t *testing.T, id string, at time.Time) *alert.Alert {
	t.Helper()
	a, err := alert.Generic("disk full on "+id, map[string]any{"severity": "critical"})
	if err != nil {
		t.Fatal(err)
	}
	a.ID, a.Status, a.ReceivedAt, a.UpdatedAt = id, alert.StatusReceived, at, at
	return &a
}

// change is what a test compares of a sent alert.
type change struct {
	ID     string
	Status alert.Status
}

// watch runs w.Watch in the background and returns its changes and its
// end; the watch is cancelled when the test ends.
func watch(t *testing.T, w *Watcher, q Query) (<-chan change, <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	changes, done, finished := make(chan change, 1000), make(chan error, 1), make(chan struct{})
	go func() {
		defer close(finished)
		done <- w.Watch(ctx, q, func(a *alert.Alert) error {
			changes <- change{a.ID, a.Status}
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-finished
	})
	return changes, done
}

// next returns the next n changes, failing the test when they do not come.
func next(t *testing.T, changes <-chan change, n int) []change {
	t.Helper()
	var got []change
	timeout := time.After(10 * time.Second)
	for len(got) < n {
		select {
		case c := <-changes:
			got = append(got, c)
		case <-timeout:
			t.Fatalf("got %d of %d changes before the deadline: %v", len(got), n, got)
		}
	}
	return got
}

// nothing fails the test when a change arrives within a few polls.
func nothing(t *testing.T, changes <-chan change, polls time.Duration) {
	t.Helper()
	select {
	case c := <-changes:
		t.Fatalf("unexpected change %v", c)
	case <-time.After(polls):
	}
}

func TestWatchSendsEachChangeOnceInOrder(t *testing.T) {
	for name, open := range instances(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			local, _ := open(t)
			old := newAlert(t, "a0", t0.Add(-time.Hour))
			if err := local.InsertAlert(ctx, local.DB(), old); err != nil {
				t.Fatal(err)
			}
			// A long poll: only the local write's wake-up can deliver the
			// first change in time.
			w := New(local, Config{Poll: time.Hour, Now: func() time.Time { return t0 }})
			changes, _ := watch(t, w, Query{})

			a1 := newAlert(t, "a1", t0.Add(time.Second))
			if err := local.InsertAlert(ctx, local.DB(), a1); err != nil {
				t.Fatal(err)
			}
			a1.Status, a1.UpdatedAt = alert.StatusDelivered, t0.Add(2*time.Second)
			if err := local.SaveProgress(ctx, a1); err != nil {
				t.Fatal(err)
			}
			got := next(t, changes, 1)
			// The watch may read between the two writes (RECEIVED, then
			// DELIVERED) or after both (DELIVERED only); it ends on the
			// newest state, never repeats one, and never sends a0, which
			// changed before the watch started.
			if got[0].Status == alert.StatusReceived {
				got = append(got, next(t, changes, 1)...)
			}
			if diff := cmp.Diff(change{"a1", alert.StatusDelivered}, got[len(got)-1]); diff != "" {
				t.Errorf("last change (-want +got):\n%s", diff)
			}
			nothing(t, changes, 100*time.Millisecond)
		})
	}
}

func TestWatchSeesOtherInstancesAndLateCommits(t *testing.T) {
	for name, open := range instances(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			local, other := open(t)
			w := New(local, Config{Poll: 10 * time.Millisecond, Lookback: time.Minute, Now: func() time.Time { return t0 }})
			changes, _ := watch(t, w, Query{})

			// Written by the other instance: no wake-up here, the poll sees it.
			if err := other.InsertAlert(ctx, other.DB(), newAlert(t, "b2", t0.Add(2*time.Second))); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]change{{"b2", alert.StatusReceived}}, next(t, changes, 1)); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			// Stamped before b2 but committed after the watch passed b2 (a
			// slow transaction, or an instance whose clock lags): the
			// lookback still finds it.
			if err := other.InsertAlert(ctx, other.DB(), newAlert(t, "b1", t0.Add(time.Second))); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]change{{"b1", alert.StatusReceived}}, next(t, changes, 1)); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			nothing(t, changes, 100*time.Millisecond)
		})
	}
}

func TestWatchFilters(t *testing.T) {
	tests := []struct {
		name  string
		query Query
		want  []change
	}{
		{
			name:  "everything after the start",
			query: Query{},
			want:  []change{{"c2", alert.StatusReceived}, {"c3", alert.StatusDelivered}},
		},
		{
			name:  "one status",
			query: Query{Status: alert.StatusDelivered},
			want:  []change{{"c3", alert.StatusDelivered}},
		},
		{
			name:  "updated after an earlier time",
			query: Query{UpdatedAfter: t0.Add(-90 * time.Second)},
			want:  []change{{"c1", alert.StatusReceived}, {"c2", alert.StatusReceived}, {"c3", alert.StatusDelivered}},
		},
	}
	for name, open := range instances(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			local, _ := open(t)
			for i, at := range []time.Time{t0.Add(-2 * time.Hour), t0.Add(-time.Minute), t0.Add(time.Second), t0.Add(2 * time.Second)} {
				a := newAlert(t, fmt.Sprintf("c%d", i), at)
				if i == 3 {
					a.Status = alert.StatusDelivered
				}
				if err := local.InsertAlert(ctx, local.DB(), a); err != nil {
					t.Fatal(err)
				}
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					w := New(local, Config{Poll: 10 * time.Millisecond, Now: func() time.Time { return t0 }})
					changes, _ := watch(t, w, tt.query)
					if diff := cmp.Diff(tt.want, next(t, changes, len(tt.want))); diff != "" {
						t.Errorf("changes (-want +got):\n%s", diff)
					}
					nothing(t, changes, 50*time.Millisecond)
				})
			}
		})
	}
}

func TestWatchPagesThroughABurst(t *testing.T) {
	for name, open := range instances(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			local, _ := open(t)
			var want []change
			for i := range 25 {
				// Several alerts share each timestamp, so pages split ties.
				a := newAlert(t, fmt.Sprintf("d%02d", i), t0.Add(time.Duration(1+i/4)*time.Millisecond))
				if err := local.InsertAlert(ctx, local.DB(), a); err != nil {
					t.Fatal(err)
				}
				want = append(want, change{a.ID, alert.StatusReceived})
			}
			w := New(local, Config{Poll: 10 * time.Millisecond, PageSize: 3, Now: func() time.Time { return t0 }})
			changes, _ := watch(t, w, Query{})
			if diff := cmp.Diff(want, next(t, changes, len(want))); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			nothing(t, changes, 50*time.Millisecond)
		})
	}
}

func TestWatchEnds(t *testing.T) {
	for name, open := range instances(t) {
		t.Run(name, func(t *testing.T) {
			local, _ := open(t)
			stop := make(chan struct{})
			w := New(local, Config{Poll: time.Hour, Stop: stop})

			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- w.Watch(ctx, Query{}, func(*alert.Alert) error { return nil }) }()
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("after cancel: Watch = %v, want context.Canceled", err)
			}

			_, ended := watch(t, w, Query{})
			close(stop)
			select {
			case err := <-ended:
				if !errors.Is(err, ErrStopping) {
					t.Errorf("after stop: Watch = %v, want ErrStopping", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Watch did not end when the watcher stopped")
			}
		})
	}
}

func TestWatchReturnsTheSendError(t *testing.T) {
	for name, open := range instances(t) {
		t.Run(name, func(t *testing.T) {
			local, _ := open(t)
			if err := local.InsertAlert(context.Background(), local.DB(), newAlert(t, "e1", t0.Add(time.Second))); err != nil {
				t.Fatal(err)
			}
			w := New(local, Config{Poll: time.Hour, Now: func() time.Time { return t0 }})
			errSend := errors.New("client gone")
			if err := w.Watch(context.Background(), Query{}, func(*alert.Alert) error { return errSend }); !errors.Is(err, errSend) {
				t.Errorf("Watch = %v, want the send error", err)
			}
		})
	}
}

func TestWatchKeepsAliveWhileNothingChanges(t *testing.T) {
	for name, open := range instances(t) {
		t.Run(name, func(t *testing.T) {
			local, _ := open(t)
			w := New(local, Config{Poll: 5 * time.Millisecond, Heartbeat: 20 * time.Millisecond})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			beats, done := make(chan string, 100), make(chan error, 1)
			q := Query{
				Started:   func() error { beats <- "started"; return nil },
				Heartbeat: func() error { beats <- "beat"; return nil },
			}
			go func() { done <- w.Watch(ctx, q, func(*alert.Alert) error { return nil }) }()
			var got []string
			for len(got) < 3 {
				select {
				case b := <-beats:
					got = append(got, b)
				case <-time.After(10 * time.Second):
					t.Fatalf("got %v before the deadline", got)
				}
			}
			cancel()
			<-done
			if diff := cmp.Diff([]string{"started", "beat", "beat"}, got); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}
