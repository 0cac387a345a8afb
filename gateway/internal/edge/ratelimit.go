package edge

import (
	"container/list"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"google.golang.org/grpc/codes"
)

// DefaultRateClients is how many clients' buckets a [RateLimiter] keeps
// when not told otherwise.
const DefaultRateClients = 10000

// RateLimiter is a token bucket per client ([Client.Bucket]: the key's name
// when the request proved one, else the address). Buckets live in a table
// bounded to a fixed number of clients, least recently seen evicted first,
// so no stream of junk tokens or addresses can grow it.
type RateLimiter struct {
	perSecond rate.Limit
	burst     int
	capacity  int
	now       func() time.Time

	mu      sync.Mutex
	order   *list.List // front = most recently seen; values are *bucket
	clients map[string]*list.Element
}

type bucket struct {
	client  string
	limiter *rate.Limiter
}

// NewRateLimiter allows perSecond requests per client with bursts of burst,
// remembering at most capacity clients (DefaultRateClients when < 1).
func NewRateLimiter(perSecond float64, burst, capacity int) *RateLimiter {
	if capacity < 1 {
		capacity = DefaultRateClients
	}
	return &RateLimiter{
		perSecond: rate.Limit(perSecond), burst: burst, capacity: capacity, now: time.Now,
		order: list.New(), clients: make(map[string]*list.Element, min(capacity, 1024)),
	}
}

// Len is how many clients the table holds.
func (l *RateLimiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.clients)
}

// Middleware rejects requests over the limit with 429 and Retry-After. It
// runs after [Identify].
func (l *RateLimiter) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wait, ok := l.allow(ClientFrom(r.Context()).Bucket())
		if !ok {
			secs := int(wait.Seconds() + 0.999)
			if secs < 1 {
				secs = 1
			}
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			WriteError(w, http.StatusTooManyRequests, codes.ResourceExhausted, "rate limit exceeded: retry after "+strconv.Itoa(secs)+"s")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (l *RateLimiter) allow(client string) (time.Duration, bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	var b *bucket
	if el, ok := l.clients[client]; ok {
		l.order.MoveToFront(el)
		b = el.Value.(*bucket)
	} else {
		if len(l.clients) >= l.capacity {
			// An evicted client starts again with a full bucket; with the
			// table sized above the number of real clients, only junk is
			// evicted.
			oldest := l.order.Back()
			l.order.Remove(oldest)
			delete(l.clients, oldest.Value.(*bucket).client)
		}
		b = &bucket{client: client, limiter: rate.NewLimiter(l.perSecond, l.burst)}
		l.clients[client] = l.order.PushFront(b)
	}
	res := b.limiter.ReserveN(now, 1)
	if !res.OK() {
		return time.Second, false
	}
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d, false
	}
	return 0, true
}

// StreamLimiter caps the server streams (Server-Sent Events, watches) one
// client ([Client.Bucket]) may hold open at once.
type StreamLimiter struct {
	max  int
	mu   sync.Mutex
	open map[string]int
}

// NewStreamLimiter allows max concurrent streams per client.
func NewStreamLimiter(max int) *StreamLimiter {
	return &StreamLimiter{max: max, open: map[string]int{}}
}

// Middleware answers 429 to a stream beyond the cap; isStream says which
// requests are streams (by route).
func (s *StreamLimiter) Middleware(isStream func(*http.Request) bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isStream(r) {
			next.ServeHTTP(w, r)
			return
		}
		client := ClientFrom(r.Context()).Bucket()
		if !s.acquire(client) {
			w.Header().Set("Retry-After", "1")
			WriteError(w, http.StatusTooManyRequests, codes.ResourceExhausted,
				"too many concurrent streams: at most "+strconv.Itoa(s.max)+" per client")
			return
		}
		defer s.release(client)
		next.ServeHTTP(w, r)
	})
}

func (s *StreamLimiter) acquire(client string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[client] >= s.max {
		return false
	}
	s.open[client]++
	return true
}

func (s *StreamLimiter) release(client string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Entries go when their last stream closes, so the map holds only
	// clients with open streams.
	if s.open[client]--; s.open[client] <= 0 {
		delete(s.open, client)
	}
}
