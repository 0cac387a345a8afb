package waitfor

import (
	"sync/atomic"
	"testing"
	"time"
)

// fakeT records a failure instead of ending the test.
type fakeT struct {
	testing.TB
	failed atomic.Bool
	msg    string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed.Store(true)
	f.msg = format
}

func TestCondHoldsOnceTheBackgroundWorkDoes(t *testing.T) {
	var done atomic.Bool
	go func() { done.Store(true) }()
	Cond(t, "the background work", done.Load)
}

func TestSignalledRechecksOnEachSignal(t *testing.T) {
	changed := make(chan struct{})
	var n atomic.Int32
	go func() {
		for range 3 {
			n.Add(1)
			changed <- struct{}{}
		}
	}()
	Signalled(t, "three changes", changed, func() bool { return n.Load() == 3 })
}

func TestWithinFailsNamingWhat(t *testing.T) {
	f := &fakeT{TB: t}
	Within(f, 30*time.Millisecond, "a condition that never holds", nil, func() bool { return false })
	if !f.failed.Load() {
		t.Fatal("a condition that never held did not fail the test")
	}
}
