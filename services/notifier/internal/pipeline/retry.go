package pipeline

import (
	"math/rand/v2"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Backoff is the delivery retry policy: the n-th failed attempt waits
// Base·2^(n-1), capped at Max, with ±10% jitter so alerts that failed
// together do not retry together.
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
	d := ceiling
	if n < 1 {
		n = 1
	}
	// Shift only while it cannot overflow or pass the ceiling.
	if shift := n - 1; shift < 40 && base<<shift > 0 && base<<shift < ceiling {
		d = base << shift
	}
	spread := int64(d) / 10
	return d - time.Duration(spread) + time.Duration(rand.Int64N(2*spread+1))
}
