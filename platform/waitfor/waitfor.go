// Package waitfor is the suite's one way for a test to wait for something
// that happens in the background: until a condition holds, re-checked each
// time the code under test signals a change (event-driven, where it offers
// a channel) and on a short tick otherwise, failing the test after a
// deadline that names what it waited for. Tests use it instead of their own
// sleep-and-poll loops.
package waitfor

import (
	"testing"
	"time"
)

// Timeout is how long Cond and Signalled wait: long enough for a loaded CI
// machine, reached only when the test fails anyway.
const Timeout = 30 * time.Second

// tick is how often a condition is re-checked without a signal.
const tick = 10 * time.Millisecond

// Cond waits until cond holds, checking it every few milliseconds, and
// fails t after Timeout.
func Cond(t testing.TB, what string, cond func() bool) {
	t.Helper()
	Within(t, Timeout, what, nil, cond)
}

// Signalled waits until cond holds, checking it each time changed delivers
// (a short tick stays as the backstop, for changes made before the wait or
// signals another waiter took), and fails t after Timeout.
func Signalled(t testing.TB, what string, changed <-chan struct{}, cond func() bool) {
	t.Helper()
	Within(t, Timeout, what, changed, cond)
}

// Within is Signalled with its own deadline; changed may be nil.
func Within(t testing.TB, d time.Duration, what string, changed <-chan struct{}, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	for !cond() {
		select {
		case <-changed:
		case <-ticker.C:
		case <-deadline.C:
			if cond() {
				return
			}
			t.Fatalf("timed out after %s waiting for %s", d, what)
			return
		}
	}
}
