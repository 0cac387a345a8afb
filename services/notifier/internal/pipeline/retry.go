package pipeline

import (
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/groundcrew/groundcrew/platform/httpretry"
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
