package pipeline

import (
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"
)

func TestBackoffDelay(t *testing.T) {
	b := Backoff{Base: time.Second, Max: 10 * time.Minute}
	tests := []struct {
		n    int
		want time.Duration // before jitter into [want/2, want)
	}{
		{0, time.Second}, {1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second},
		{9, 256 * time.Second}, {10, 512 * time.Second}, {11, 10 * time.Minute}, {64, 10 * time.Minute}, {1000, 10 * time.Minute},
	}
	for _, tt := range tests {
		for range 50 {
			got := b.Delay(tt.n)
			if lo, hi := tt.want/2, tt.want; got < lo || got >= hi {
				t.Fatalf("Delay(%d) = %s, want in [%s, %s)", tt.n, got, lo, hi)
			}
		}
	}
}

func TestBackoffDefaultsAndJitter(t *testing.T) {
	var b Backoff
	if got := b.Delay(1); got < DefaultRetryBase/2 || got >= DefaultRetryBase {
		t.Errorf("zero Backoff: Delay(1) = %s, want about %s", got, DefaultRetryBase)
	}
	if got := b.Delay(100); got < DefaultRetryMax/2 || got >= DefaultRetryMax {
		t.Errorf("zero Backoff: Delay(100) = %s, want about %s", got, DefaultRetryMax)
	}
	seen := map[time.Duration]bool{}
	for range 20 {
		seen[b.Delay(5)] = true
	}
	if len(seen) < 2 {
		t.Errorf("Delay(5) returned the same value 20 times: no jitter")
	}
}

func TestBackoffNextRetryCountsErrors(t *testing.T) {
	b := Backoff{Base: time.Minute, Max: time.Hour}
	job := &rivertype.JobRow{Errors: make([]rivertype.AttemptError, 2)} // third attempt failing now
	got := time.Until(b.NextRetry(job))
	if want := 4 * time.Minute; got < want*45/100 || got > want {
		t.Errorf("NextRetry after 2 recorded errors is %s away, want about %s", got, want)
	}
}
