package pipeline

import (
	"context"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/groundcrew/groundcrew/services/notifier/internal/outbound"
	"github.com/groundcrew/groundcrew/services/notifier/internal/senderr"
)

// messageArgs is the one delivery job: a message that carries alerts to a
// chat, whichever it is. Type says which; the id beside it names what the
// message is made from.
type messageArgs struct {
	Type messageType `json:"type"`
	// AlertID is a single alert's (messageAlert).
	AlertID string `json:"alert_id,omitempty"`
	// NotificationID is an alert group's notification (messageNotification):
	// its root, or a reply to the root.
	NotificationID string `json:"notification_id,omitempty"`
	// GroupID is the group whose root is edited (messageRootEdit).
	GroupID string `json:"group_id,omitempty"`
	// DigestID is a storm digest's (messageDigest).
	DigestID string `json:"digest_id,omitempty"`
}

// Kind names the job in River's tables.
func (messageArgs) Kind() string { return "notifier_deliver_message" }

// messageType is what a message job sends.
type messageType string

// The messages a job sends.
const (
	// messageAlert is one alert by itself.
	messageAlert messageType = "alert"
	// messageNotification is a notification of an alert group: the
	// group's root (enriched once) or a reply to the root.
	messageNotification messageType = "notification"
	// messageRootEdit is a group's root edited to show the group as it
	// stands (after an ack or a silence).
	messageRootEdit messageType = "root_edit"
	// messageDigest is a chat's storm backlog, as pages.
	messageDigest messageType = "digest"
)

// A delivery is what one message job sends, and what it records for the
// alerts it carries. The worker takes every delivery through the same
// steps: load, then render → send → delivered for each message it has to
// send, or failed when a send fails. Each step saves what a run after a
// crash needs to resume.
type delivery interface {
	// load reads from the store what the delivery sends; an error ends
	// the run (river.JobSnooze included, to wait for something else).
	load(ctx context.Context) error
	// render makes the next message to send; false when none is left
	// (delivered before a crash, taken by a digest, nothing to edit).
	render(ctx context.Context) (bool, error)
	// send sends the rendered message through the pipeline's transport.
	send(ctx context.Context) (Receipt, error)
	// delivered records that the message went out.
	delivered(ctx context.Context, r Receipt) error
	// failed records a failed send, as settle judged it.
	failed(ctx context.Context, f failure) error
}

// failure is a failed send and settle's judgement of it.
type failure struct {
	err     error
	verdict senderr.Verdict
	// final: the job ends here (the alerts it carries are FAILED); not
	// final: it runs again, after the wait asked or River's backoff.
	final                bool
	attempt, maxAttempts int
}

// reason is the failure in words safe to show on the alerts.
func (f failure) reason() string { return outbound.PublicError(f.err) }

// messageWorker runs message jobs.
type messageWorker struct {
	river.WorkerDefaults[messageArgs]
	p *Pipeline
}

// Work delivers the job's message.
func (w *messageWorker) Work(ctx context.Context, job *river.Job[messageArgs]) error {
	return w.p.work(ctx, job.Args, job.Attempt, job.MaxAttempts)
}

// work is one run of a message job: the delivery its args name, taken
// through its steps, a failed send ending in settle.
func (p *Pipeline) work(ctx context.Context, args messageArgs, attempt, maxAttempts int) error {
	d, err := p.delivery(args)
	if err != nil {
		return river.JobCancel(err) // no run can deliver it
	}
	return p.run(ctx, d, func(err error) error {
		return settle(err, attempt, maxAttempts, func(v senderr.Verdict, final bool) error {
			return d.failed(ctx, failure{err: err, verdict: v, final: final, attempt: attempt, maxAttempts: maxAttempts})
		})
	})
}

// delivery builds the delivery a message job's args name.
func (p *Pipeline) delivery(args messageArgs) (delivery, error) {
	switch args.Type {
	case messageAlert:
		return &alertDelivery{p: p, id: args.AlertID}, nil
	case messageNotification:
		return &groupDelivery{p: p, notificationID: args.NotificationID}, nil
	case messageRootEdit:
		return &groupDelivery{p: p, groupID: args.GroupID}, nil
	case messageDigest:
		return &digestDelivery{p: p, id: args.DigestID}, nil
	}
	return nil, fmt.Errorf("a message job of unknown type %q", args.Type)
}

// run takes d through its steps. A failed send is counted and handed to
// fail, whose answer run returns.
func (p *Pipeline) run(ctx context.Context, d delivery, fail func(error) error) error {
	if err := d.load(ctx); err != nil {
		return err
	}
	for {
		more, err := d.render(ctx)
		if err != nil || !more {
			return err
		}
		r, err := d.send(ctx)
		if err != nil {
			p.metrics.deliveryErrors.WithLabelValues(errorCode(err)).Inc()
			return fail(err)
		}
		if err := d.delivered(ctx, r); err != nil {
			return err
		}
	}
}

var (
	_ delivery = (*alertDelivery)(nil)
	_ delivery = (*groupDelivery)(nil)
	_ delivery = (*digestDelivery)(nil)
)
