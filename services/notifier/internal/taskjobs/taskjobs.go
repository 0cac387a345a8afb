// Package taskjobs runs the chat agent's tasks (package tasks) as durable
// River jobs on the notifier's queue: a reminder is a job scheduled for its
// time that posts the text to the chat, as a reply to the message that
// asked; a research task is a job that starts a research run whose
// send_summary action posts the summary to the chat when the run finishes
// (gated by approval as the research service configures), and says so in
// the chat. Jobs survive restarts; scheduling the same block of the same
// reply twice (Telegram retrying an update) inserts one job.
package taskjobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/groundcrew/groundcrew/services/notifier/internal/chat"
	"github.com/groundcrew/groundcrew/services/notifier/internal/tasks"
)

// Inserter queues a job (the alert pipeline's queue).
type Inserter interface {
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error
}

// Researcher starts a research run on behalf of a chat user, with the
// summary to be posted to chatID; ErrRefused means the research service
// will not run it (the chat is not one it posts summaries to, say).
type Researcher interface {
	StartResearch(ctx context.Context, topic, userID, by string, chatID int64) (runID string, err error)
}

// ErrRefused is a research run the research service refused for good.
var ErrRefused = errors.New("research refused")

// remindArgs posts a reminder.
type remindArgs struct {
	ChatID  int64  `json:"chat_id" river:"unique"`
	ReplyTo int64  `json:"reply_to" river:"unique"`
	Index   int    `json:"index" river:"unique"`
	Text    string `json:"text"`
}

func (remindArgs) Kind() string { return "notifier_chat_remind" }

func (remindArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// researchArgs starts a research run.
type researchArgs struct {
	ChatID  int64  `json:"chat_id" river:"unique"`
	ReplyTo int64  `json:"reply_to" river:"unique"`
	Index   int    `json:"index" river:"unique"`
	Topic   string `json:"topic"`
	UserID  int64  `json:"user_id"`
}

func (researchArgs) Kind() string { return "notifier_chat_research" }

func (researchArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// Register adds the task workers to a queue's workers.
func Register(w *river.Workers, replier chat.Replier, researcher Researcher, logger *slog.Logger) {
	river.AddWorker(w, &remindWorker{replier: replier, logger: logger})
	river.AddWorker(w, &researchWorker{replier: replier, researcher: researcher, logger: logger})
}

// Scheduler turns task requests into jobs; it implements chat.Scheduler.
type Scheduler struct {
	jobs Inserter
}

var _ chat.Scheduler = (*Scheduler)(nil)

// NewScheduler returns a Scheduler inserting into jobs.
func NewScheduler(jobs Inserter) *Scheduler { return &Scheduler{jobs: jobs} }

// Schedule queues t: a reminder for its time, a research task at once.
func (s *Scheduler) Schedule(ctx context.Context, t chat.TaskRequest) error {
	switch task := t.Task.(type) {
	case tasks.Remind:
		return s.jobs.Insert(ctx, remindArgs{ChatID: t.ChatID, ReplyTo: t.MessageID, Index: t.Index, Text: task.Text},
			&river.InsertOpts{ScheduledAt: task.At, UniqueOpts: river.UniqueOpts{ByArgs: true}})
	case tasks.Research:
		var user int64
		if t.From != nil {
			user = t.From.ID
		}
		return s.jobs.Insert(ctx, researchArgs{ChatID: t.ChatID, ReplyTo: t.MessageID, Index: t.Index, Topic: task.Topic, UserID: user}, nil)
	}
	return fmt.Errorf("task of type %T has no job", t.Task)
}

// ReminderPrefix starts every reminder.
const ReminderPrefix = "⏰ Reminder: "

type remindWorker struct {
	river.WorkerDefaults[remindArgs]
	replier chat.Replier
	logger  *slog.Logger
}

// Work posts the reminder; a failure is retried by the queue.
func (w *remindWorker) Work(ctx context.Context, job *river.Job[remindArgs]) error {
	a := job.Args
	if _, err := w.replier.Reply(ctx, a.ChatID, a.ReplyTo, ReminderPrefix+a.Text); err != nil {
		return fmt.Errorf("posting a reminder in chat %d: %w", a.ChatID, err)
	}
	w.logger.InfoContext(ctx, "reminder posted", "chat_id", a.ChatID, "reply_to", a.ReplyTo)
	return nil
}

type researchWorker struct {
	river.WorkerDefaults[researchArgs]
	replier    chat.Replier
	researcher Researcher
	logger     *slog.Logger
}

// userNamespace derives a research user id (a UUID) from a Telegram user
// id, the same every time.
var userNamespace = uuid.MustParse("5b0f0c1e-8f0a-4c55-9a43-6d1c1b7e2a10")

// Timeout bounds starting a run.
func (w *researchWorker) Timeout(*river.Job[researchArgs]) time.Duration { return 30 * time.Second }

// Work starts the run and tells the chat. A refusal is told and not
// retried; other failures are retried by the queue (a retry after a start
// whose answer was lost may start a second run).
func (w *researchWorker) Work(ctx context.Context, job *river.Job[researchArgs]) error {
	a := job.Args
	user := uuid.NewSHA1(userNamespace, []byte("telegram:"+strconv.FormatInt(a.UserID, 10))).String()
	runID, err := w.researcher.StartResearch(ctx, a.Topic, user, "telegram:"+strconv.FormatInt(a.UserID, 10), a.ChatID)
	if errors.Is(err, ErrRefused) {
		w.logger.WarnContext(ctx, "research task refused", "chat_id", a.ChatID, "error", err)
		if _, rerr := w.replier.Reply(ctx, a.ChatID, a.ReplyTo, "I could not start research on "+quote(a.Topic)+": the research service refused it."); rerr != nil {
			return fmt.Errorf("telling chat %d the research was refused: %w", a.ChatID, rerr)
		}
		return river.JobCancel(err)
	}
	if err != nil {
		return fmt.Errorf("starting research for chat %d: %w", a.ChatID, err)
	}
	w.logger.InfoContext(ctx, "research started for the chat", "chat_id", a.ChatID, "run_id", runID)
	if _, err := w.replier.Reply(ctx, a.ChatID, a.ReplyTo, "Research started on "+quote(a.Topic)+"; its summary will be posted here when it finishes."); err != nil {
		// The run is started; telling is best effort, and a retry would
		// start another run.
		w.logger.WarnContext(ctx, "could not say research started", "chat_id", a.ChatID, "error", err)
	}
	return nil
}

func quote(s string) string { return "“" + s + "”" }
