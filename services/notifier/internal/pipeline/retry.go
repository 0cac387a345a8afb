package pipeline

import (
	"errors"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/groundcrew/groundcrew/platform/httpretry"
	"github.com/groundcrew/groundcrew/services/notifier/internal/senderr"
)

// Backoff is the delivery retry policy: the n-th failed attempt waits
// Base·2^(n-1), capped at Max, jittered into [d/2, d) so that alerts that
// failed together do not retry together (platform/httpretry's backoff, the
// one shape every retry in the suite has).
//
// River's default (attempt⁴ seconds: 1 s, 16 s, 81 s, 256 s, …) suits batch
// work, not alerts: a single dropped connection to Telegram would hold an
// alert back 16 s the second time and 81 s the third. Doubling from 1 s
// gets transient faults through in a second or two, and the cap keeps
// retrying a long outage every Max until the attempts run out.
type Backoff struct {
	Base, Max time.Duration
}

var _ river.ClientRetryPolicy = Backoff{}

// Defaults for Backoff.
const (
	DefaultRetryBase = time.Second
	DefaultRetryMax  = 10 * time.Minute
)

// NextRetry implements river.ClientRetryPolicy. Errors are counted as
// River's own policy counts them (a snooze for a rate limit is not one).
func (b Backoff) NextRetry(job *rivertype.JobRow) time.Time {
	return time.Now().Add(b.Delay(len(job.Errors) + 1))
}

// Delay is the wait after the n-th failed attempt (n ≥ 1).
func (b Backoff) Delay(n int) time.Duration {
	base, ceiling := b.Base, b.Max
	if base <= 0 {
		base = DefaultRetryBase
	}
	if ceiling <= 0 {
		ceiling = DefaultRetryMax
	}
	return httpretry.Backoff(max(n, 1), base, ceiling)
}

// settle turns a failed send into what River does with the job next; it is
// the one wait/retry/give-up decision every delivery job (an alert, a group
// message, a root edit, a digest page) makes, on senderr.Classify's
// verdict. A rate limit snoozes for the wait asked, without using up an
// attempt; a plain retry goes back to River's backoff while attempts are
// left; anything else, or the last attempt, is final and cancels the job.
// record (nil: nothing to record) stores the outcome for the alerts the job
// carries before River is told; a failure to record is returned with err,
// so that the job runs again.
func settle(err error, attempt, maxAttempts int, record func(v senderr.Verdict, final bool) error) error {
	v := senderr.Classify(err)
	final := v.Action != senderr.RetryAfter && (v.Action != senderr.Retry || attempt >= maxAttempts)
	if record != nil {
		if rerr := record(v, final); rerr != nil {
			return errors.Join(err, rerr)
		}
	}
	switch {
	case v.Action == senderr.RetryAfter:
		return river.JobSnooze(v.Wait)
	case final:
		return river.JobCancel(err)
	}
	return err
}
