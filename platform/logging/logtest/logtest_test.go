package logtest_test

import (
	"log/slog"
	"sync"
	"testing"

	"github.com/groundcrew/groundcrew/platform/logging/logtest"
)

func TestBufferCollectsRecordsFromManyGoroutines(t *testing.T) {
	var buf logtest.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() { logger.Info("ping", "n", i) })
	}
	wg.Wait()
	logger.Info("done")

	if got := len(buf.Records(t)); got != 51 {
		t.Errorf("Records: %d records, want 51", got)
	}
	pings := buf.Named(t, "ping")
	seen := map[float64]bool{}
	for _, rec := range pings {
		seen[rec["n"].(float64)] = true
	}
	if len(pings) != 50 || len(seen) != 50 {
		t.Errorf("Named(ping): %d records, %d distinct, want 50 of each", len(pings), len(seen))
	}
	if done := buf.Named(t, "done"); len(done) != 1 {
		t.Errorf("Named(done): %d records, want 1", len(done))
	}
}
