package pipeline

import (
	"context"

	"github.com/riverqueue/river"
)

// The job kinds below are the previous release's: it queued a kind per
// delivery (an alert, a group notification, a root edit, a digest) where
// this one queues a message job (messageArgs) for every delivery. A job is
// stored in River's tables with its kind, so a deployment upgraded with
// jobs in flight still holds jobs of these kinds: they stay registered, each
// a thin adapter that turns its args into the message job's and runs the
// same delivery, so that each is delivered once. Nothing queues them any
// more: once this release has worked off what it found at the upgrade, no
// job of theirs is left, and the next release can drop them
// (services/notifier/README.md, "Upgrading").

// legacyArgs are the args of a job kind the previous release queued.
type legacyArgs interface {
	river.JobArgs
	// message is the message job the same delivery is today.
	message() messageArgs
}

// legacyWorker runs jobs of a kind the previous release queued as the
// message jobs they are.
type legacyWorker[A legacyArgs] struct {
	river.WorkerDefaults[A]
	p *Pipeline
}

// Work delivers the job's message as a message job would.
func (w *legacyWorker[A]) Work(ctx context.Context, job *river.Job[A]) error {
	return w.p.work(ctx, job.Args.message(), job.Attempt, job.MaxAttempts)
}

// addLegacyWorkers registers the previous release's job kinds.
func addLegacyWorkers(workers *river.Workers, p *Pipeline) {
	river.AddWorker(workers, &legacyWorker[deliverArgs]{p: p})
	river.AddWorker(workers, &legacyWorker[groupArgs]{p: p})
	river.AddWorker(workers, &legacyWorker[editArgs]{p: p})
	river.AddWorker(workers, &legacyWorker[digestArgs]{p: p})
}

// deliverArgs is the previous release's job for one alert.
type deliverArgs struct {
	AlertID string `json:"alert_id"`
}

// Kind names the job in River's tables.
func (deliverArgs) Kind() string { return "notifier_deliver_alert" }

func (a deliverArgs) message() messageArgs {
	return messageArgs{Type: messageAlert, AlertID: a.AlertID}
}

// groupArgs is the previous release's job for one notification of an
// alert group.
type groupArgs struct {
	NotificationID string `json:"notification_id"`
}

// Kind names the job in River's tables.
func (groupArgs) Kind() string { return "notifier_deliver_group_notification" }

func (a groupArgs) message() messageArgs {
	return messageArgs{Type: messageNotification, NotificationID: a.NotificationID}
}

// editArgs is the previous release's job that edits a group's root
// message to show its current state.
type editArgs struct {
	GroupID string `json:"group_id"`
}

// Kind names the job in River's tables.
func (editArgs) Kind() string { return "notifier_edit_group_root" }

func (a editArgs) message() messageArgs {
	return messageArgs{Type: messageRootEdit, GroupID: a.GroupID}
}

// digestArgs is the previous release's job for one storm digest.
type digestArgs struct {
	DigestID string `json:"digest_id"`
}

// Kind names the job in River's tables.
func (digestArgs) Kind() string { return "notifier_deliver_digest" }

func (a digestArgs) message() messageArgs {
	return messageArgs{Type: messageDigest, DigestID: a.DigestID}
}
