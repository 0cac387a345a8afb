// Package senderr decides what a delivery does about a failed send: wait
// as asked, retry with backoff, send anew, follow a migrated chat, or give
// up. It is the one place the decision is made, for alerts, group messages
// and their edits, digests, the outbound send API and the chat agent's
// replies; transports' errors say what they are through small methods, so
// nothing here (or anywhere else) matches on a receiver's words.
package senderr

import (
	"errors"
	"time"
)

// Action is what a delivery does about a failed send.
type Action int

// Actions, from the most hopeful.
const (
	// Retry tries again after the retry policy's backoff, using up an
	// attempt: network errors, timeouts, 5xx, anything not known to be
	// final.
	Retry Action = iota
	// RetryAfter waits as long as the receiver asked (Telegram's 429
	// parameters.retry_after) and tries again without using up an attempt.
	RetryAfter
	// SendNew sends a new message where an edit was asked: the message to
	// edit is gone or can no longer be edited.
	SendNew
	// Migrate sends to the chat the destination moved to (a group upgraded
	// to a supergroup) and keeps using it.
	Migrate
	// GiveUp fails the delivery at once with the receiver's reason: the
	// bot was blocked or kicked, the chat does not exist, the request is
	// refused as such.
	GiveUp
)

var actionNames = [...]string{Retry: "retry", RetryAfter: "retry_after", SendNew: "send_new", Migrate: "migrate", GiveUp: "give_up"}

// String names the action (the way logs and metrics say it).
func (a Action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return "unknown"
}

// Verdict is what to do about one send error.
type Verdict struct {
	Action Action
	// Wait is how long to wait before RetryAfter.
	Wait time.Duration
	// MigrateTo is the destination to use instead, for Migrate.
	MigrateTo string
}

// Classify decides what a delivery does about err. It is the one place the
// decision is made, for single alerts, group messages, their edits and
// digests alike; the transports' errors say what they are through these
// methods (the Telegram adapter's *telegram.Error has them all):
//
//	RetryAfter() time.Duration // the receiver asked to wait (429)
//	MigratedTo() string        // the chat moved; non-empty: its new id
//	MessageGone() bool         // the message to edit is gone or frozen
//	Permanent() bool           // retrying the same request cannot help
//
// Anything else is retried with backoff. Whether a retry is still allowed
// (attempts left) is the caller's to add.
func Classify(err error) Verdict {
	if err == nil {
		return Verdict{Action: Retry}
	}
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) && ra.RetryAfter() > 0 {
		return Verdict{Action: RetryAfter, Wait: ra.RetryAfter()}
	}
	var mig interface{ MigratedTo() string }
	if errors.As(err, &mig) && mig.MigratedTo() != "" {
		return Verdict{Action: Migrate, MigrateTo: mig.MigratedTo()}
	}
	var gone interface{ MessageGone() bool }
	if errors.As(err, &gone) && gone.MessageGone() {
		return Verdict{Action: SendNew}
	}
	var perm interface{ Permanent() bool }
	if errors.As(err, &perm) && perm.Permanent() {
		return Verdict{Action: GiveUp}
	}
	return Verdict{Action: Retry}
}
