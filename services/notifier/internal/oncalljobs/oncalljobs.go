// Package oncalljobs runs escalation steps as durable River jobs on the
// notifier's queue: a step is a job scheduled for its due time, unique by
// (group, round, step), so a step survives a kill -9 of the notifier (River
// runs it after the restart) and instances sharing one database insert and
// run it once.
package oncalljobs

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/groundcrew/groundcrew/services/notifier/internal/oncall"
)

// Inserter queues a job (the alert pipeline's queue).
type Inserter interface {
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error
}

// stepArgs is one escalation step of one alert group.
type stepArgs struct {
	GroupID string `json:"group_id" river:"unique"`
	Round   int    `json:"round" river:"unique"`
	Step    int    `json:"step" river:"unique"`
}

func (stepArgs) Kind() string { return "notifier_escalation_step" }

// Timer schedules escalation steps as jobs; it implements oncall.Timer.
type Timer struct{ Jobs Inserter }

var _ oncall.Timer = Timer{}

// ScheduleStep inserts the step's job for at, once per (group, position).
func (t Timer) ScheduleStep(ctx context.Context, groupID string, pos oncall.Position, at time.Time) error {
	opts := &river.InsertOpts{
		// Unique for as long as River keeps the job: a step is paged once,
		// whoever schedules it again (a restart, another instance).
		UniqueOpts: river.UniqueOpts{ByArgs: true},
	}
	if at.After(time.Now()) {
		// A step due now is available at once rather than waiting for the
		// next pass that makes scheduled jobs available.
		opts.ScheduledAt = at
	}
	return t.Jobs.Insert(ctx, stepArgs{GroupID: groupID, Round: pos.Round, Step: pos.Step}, opts)
}

// Register adds the step worker to a queue's workers.
func Register(w *river.Workers, esc *oncall.Escalator) {
	river.AddWorker(w, &stepWorker{esc: esc})
}

type stepWorker struct {
	river.WorkerDefaults[stepArgs]
	esc *oncall.Escalator
}

// Timeout bounds one step: a mention and a few direct messages.
func (w *stepWorker) Timeout(*river.Job[stepArgs]) time.Duration { return time.Minute }

// Work runs the step; a failure before anyone was paged is retried by the
// queue.
func (w *stepWorker) Work(ctx context.Context, job *river.Job[stepArgs]) error {
	a := job.Args
	if err := w.esc.RunStep(ctx, a.GroupID, oncall.Position{Round: a.Round, Step: a.Step}); err != nil {
		return fmt.Errorf("escalation step %d (round %d) of group %s: %w", a.Step, a.Round, a.GroupID, err)
	}
	return nil
}
