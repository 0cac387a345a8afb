package gemini_test

import (
	"slices"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/services/grounding/internal/grounding"
)

// BenchmarkGround measures the service's own overhead per Ground call: the
// model is a local server answering at once in Gemini's wire format, search
// is an in-memory fake, and the store is the real SQLite store with its
// artifact files. Run with
//
//	go test ./internal/gemini -run '^$' -bench Ground -benchtime 2000x
//
// p50 and p99 are the per-call latency percentiles.
func BenchmarkGround(b *testing.B) {
	cases := []struct {
		name  string
		model bool
	}{{"gemini", true}, {"offline", false}}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			var model grounding.Model
			if bc.model {
				f := newFakeGemini(b, ok("Postgres caps concurrent connections with max_connections [1]. PgBouncer pools them [2].", ""))
				model = newClient(b, f, &waits{}, nil)
			}
			svc := service(b, model, evidence)
			req := grounding.GroundRequest{Text: "FATAL: sorry, too many clients already", Round: grounding.RoundConfig{Engine: grounding.EngineLocal}}
			lat := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				m, err := svc.Ground(b.Context(), req)
				lat = append(lat, time.Since(start))
				if err != nil || m.Status == grounding.StatusFailed {
					b.Fatalf("Ground: %v %+v", err, m)
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds()), "p99-µs")
		})
	}
}
