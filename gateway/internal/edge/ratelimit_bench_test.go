package edge

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"testing"
)

// junkRequests is how many distinct junk tokens (or addresses) each
// benchmark run sends: issue 13 asks for the limiter's memory at 1M.
const junkRequests = 1_000_000

// retained runs fn and returns the heap it left behind, after a GC.
func retained(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.GC()
	runtime.ReadMemStats(&after)
	if after.HeapAlloc < before.HeapAlloc {
		return 0
	}
	return after.HeapAlloc - before.HeapAlloc
}

// BenchmarkRateLimiterJunkTokens sends 1M requests, each with a new junk
// bearer token, from one address through Identify and the limiter, as the
// gateway chains them. Run with -benchtime=1x; figures in BENCHMARKS.md.
func BenchmarkRateLimiterJunkTokens(b *testing.B) {
	keys, err := ParseKeys([]string{"ops:k-ops-0123456789"})
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		l := NewRateLimiter(1e9, 1e9, DefaultRateClients)
		h := Identify(keys, nil, l.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
		req := httptest.NewRequest("POST", "/v1/alerts", nil)
		req.RemoteAddr = "203.0.113.7:40000"
		w := httptest.NewRecorder()
		heap := retained(func() {
			for i := range junkRequests {
				req.Header.Set("Authorization", "Bearer junk-"+strconv.Itoa(i))
				h.ServeHTTP(w, req)
			}
		})
		b.ReportMetric(float64(l.Len()), "clients")
		b.ReportMetric(float64(heap), "retained-B")
		runtime.KeepAlive(l)
	}
}

// BenchmarkRateLimiterDistinctClients is the worst case: 1M distinct
// buckets (an attacker with a large IPv6 range). The table holds at most
// DefaultRateClients of them.
func BenchmarkRateLimiterDistinctClients(b *testing.B) {
	for range b.N {
		l := NewRateLimiter(1e9, 1e9, DefaultRateClients)
		heap := retained(func() {
			for i := range junkRequests {
				l.allow("ip:2001:db8::" + strconv.FormatInt(int64(i), 16))
			}
		})
		b.ReportMetric(float64(l.Len()), "clients")
		b.ReportMetric(float64(heap), "retained-B")
		runtime.KeepAlive(l)
	}
}
