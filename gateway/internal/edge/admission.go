package edge

import (
	"net/http"
	"net/netip"
	"strconv"
	"sync"

	"google.golang.org/grpc/codes"
)

// Admission bounds what the gateway holds for requests that prove no
// credential ([Client.Authenticated] is false): how many are in flight
// at once from one client address and overall, and how many body bytes
// they may have buffered between them. Past a bound a request is refused
// at once, before its body is read: 429 when its address holds its share,
// 503 when the gateway's total is reached; nothing waits in a queue. So a
// flood of large bodies held open from one address or many costs the
// gateway a bounded amount of memory, whatever the rate limiter lets
// through.
type Admission struct {
	// Refused, when set, is told of each refusal: "unauthenticated_per_client"
	// or "unauthenticated_total" (for a metric).
	Refused func(reason string)

	total, perClient int
	maxBytes         int64

	mu       sync.Mutex
	inflight int
	byClient map[string]int
	buffered int64
}

// NewAdmission admits at most total requests without a credential at
// once, perClient of them from one address (IPv6 addresses count by /64,
// which one host usually holds whole), and at most maxBytes of their
// bodies.
func NewAdmission(total, perClient int, maxBytes int64) *Admission {
	return &Admission{total: total, perClient: perClient, maxBytes: maxBytes, byClient: map[string]int{}}
}

// Usage is what an [Admission] holds at a moment.
type Usage struct {
	// InFlight is how many admitted requests hold a slot.
	InFlight int
	// Clients is how many addresses hold at least one.
	Clients int
	// Buffered is the body bytes reserved for admitted requests.
	Buffered int64
}

// Usage returns what a holds now.
func (a *Admission) Usage() Usage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return Usage{InFlight: a.inflight, Clients: len(a.byClient), Buffered: a.buffered}
}

// Middleware admits or refuses each request without a credential. It runs
// after [Identify], [Require] and [WebhookSecret] and before [BodyLimit];
// limit is the route's body limit (what BodyLimit will read at most).
// Server streams (isStream) hold no slot, since [StreamLimiter] caps them
// per client and they last as long as the client likes, but their bodies
// count against the byte bound while they run.
func (a *Admission) Middleware(isStream func(*http.Request) bool, limit func(*http.Request) int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := ClientFrom(r.Context())
		if c.Authenticated() || r.Method == http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		client := admissionBucket(c.IP)
		slot := !isStream(r)
		n := reservation(r, limit(r))
		switch a.acquire(client, slot, n) {
		case refusedClient:
			a.refused("unauthenticated_per_client")
			refuseUnread(w, r)
			w.Header().Set("Retry-After", "1")
			WriteError(w, http.StatusTooManyRequests, codes.ResourceExhausted,
				"too many requests in flight from this address without an API key: at most "+strconv.Itoa(a.perClient))
			return
		case refusedTotal:
			a.refused("unauthenticated_total")
			refuseUnread(w, r)
			w.Header().Set("Retry-After", "1")
			WriteError(w, http.StatusServiceUnavailable, codes.Unavailable,
				"too many requests in flight without an API key: try again shortly")
			return
		}
		defer a.release(client, slot, n)
		next.ServeHTTP(w, r)
	})
}

func (a *Admission) refused(reason string) {
	if a.Refused != nil {
		a.Refused(reason)
	}
}

type admission int

const (
	admitted admission = iota
	refusedClient
	refusedTotal
)

func (a *Admission) acquire(client string, slot bool, n int64) admission {
	a.mu.Lock()
	defer a.mu.Unlock()
	if slot && a.byClient[client] >= a.perClient {
		return refusedClient
	}
	if (slot && a.inflight >= a.total) || a.buffered+n > a.maxBytes {
		return refusedTotal
	}
	if slot {
		a.inflight++
		a.byClient[client]++
	}
	a.buffered += n
	return admitted
}

func (a *Admission) release(client string, slot bool, n int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.buffered -= n
	if !slot {
		return
	}
	a.inflight--
	// Entries go with their last request, so the map holds only the
	// addresses with requests in flight (at most total).
	if a.byClient[client]--; a.byClient[client] <= 0 {
		delete(a.byClient, client)
	}
}

// reservation is the body bytes r may make [BodyLimit] buffer: what it
// declares, or the route's whole limit when it declares nothing (a
// chunked body). A declared length over the limit reserves nothing:
// BodyLimit refuses it unread.
func reservation(r *http.Request, limit int64) int64 {
	switch {
	case r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0:
		return 0
	case r.ContentLength > limit:
		return 0
	case r.ContentLength > 0:
		return r.ContentLength
	}
	return limit
}

// admissionBucket is the address a request counts under: itself, or its
// /64 for IPv6, since one host commonly holds a whole /64.
func admissionBucket(ip string) string {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	addr = addr.Unmap()
	if addr.Is4() {
		return addr.String()
	}
	p, err := addr.Prefix(64)
	if err != nil {
		return ip
	}
	return p.String()
}
