package taskjobs

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"go.uber.org/goleak"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/notifier/internal/chat"
	"github.com/groundcrew/groundcrew/services/notifier/internal/pipeline"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
	"github.com/groundcrew/groundcrew/services/notifier/internal/tasks"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type replies struct {
	mu   sync.Mutex
	sent []string
	ch   chan struct{}
}

func (r *replies) Reply(_ context.Context, _, _ int64, text string) (int64, error) {
	r.mu.Lock()
	r.sent = append(r.sent, text)
	r.mu.Unlock()
	r.ch <- struct{}{}
	return 1, nil
}

func (r *replies) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.sent...)
}

type researcher struct {
	mu     sync.Mutex
	starts int
}

func (r *researcher) StartResearch(context.Context, string, string, string, int64) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.starts++
	return "run-1", nil
}

// TestScheduledOnce: the same block of the same reply scheduled twice (an
// update Telegram delivered again after the reply failed) is one job, and
// runs once, on the real queue.
func TestScheduledOnce(t *testing.T) {
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := sqlstore.Open(ctx, sqlstoretest.URL(t, "taskjobs"), t.TempDir(), "notifier", logger)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	rep := &replies{ch: make(chan struct{}, 10)}
	res := &researcher{}
	p, err := pipeline.New(ctx, pipeline.Deps{
		Store: store.New(db), Logger: logger,
		Register: func(w *river.Workers) { Register(w, rep, res, logger) },
	}, pipeline.Config{PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.Stop(sctx); err != nil {
			t.Error(err)
		}
		_ = db.Close()
	})

	s := NewScheduler(p)
	remind := chat.TaskRequest{ChatID: 5, MessageID: 7, Index: 0, Task: tasks.Remind{At: time.Now().Add(100 * time.Millisecond), Text: "check the backup"}}
	research := chat.TaskRequest{ChatID: 5, MessageID: 7, Index: 1, From: &chat.User{ID: 84211}, Task: tasks.Research{Topic: "disk"}}
	for range 2 {
		for _, tr := range []chat.TaskRequest{remind, research} {
			if err := s.Schedule(ctx, tr); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The reminder and the "research started" note.
	for range 2 {
		select {
		case <-rep.ch:
		case <-time.After(15 * time.Second):
			t.Fatalf("replies so far: %q", rep.all())
		}
	}
	// One job per block, whatever the number of times it was scheduled.
	var jobs int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM river_job WHERE kind IN ($1, $2)`,
		remindArgs{}.Kind(), researchArgs{}.Kind()).Scan(&jobs); err != nil {
		t.Fatal(err)
	}
	if jobs != 2 {
		t.Errorf("%d jobs queued, want 2", jobs)
	}
	res.mu.Lock()
	defer res.mu.Unlock()
	if res.starts != 1 {
		t.Errorf("research started %d times, want 1", res.starts)
	}
}
