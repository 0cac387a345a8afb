// Package faultinject puts faults in front of an HTTP handler, the way a
// flaky provider behaves: a share of requests gets a server error, a rate
// limit with Retry-After, a slow answer, or a dropped connection, each in
// the provider's own error format. The whole-stack tests and the
// `make faults` run put one in front of every provider stand-in (Gemini,
// Groq, Telegram, search engines).
//
// Two kinds of dropped connection matter differently to callers: [Drop]
// closes the connection before the provider sees the request (a retry is
// always safe), [DropAfter] lets the provider act and then loses the
// answer (a retry of a non-idempotent call, such as sending a Telegram
// message, repeats it: the source of at-least-once duplicates).
package faultinject

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Fault is one kind of injected failure.
type Fault string

// The faults an Injector can inject.
const (
	// Error answers 500, 502 or 503 with the provider's error body.
	Error Fault = "error"
	// RateLimit answers 429 with a Retry-After header and the provider's
	// body.
	RateLimit Fault = "rate_limit"
	// Slow waits Config.Delay (or until the caller gives up) before the
	// real answer.
	Slow Fault = "slow"
	// Drop closes the connection without an answer before the provider
	// sees the request.
	Drop Fault = "drop"
	// DropAfter lets the provider handle the request, then closes the
	// connection instead of answering.
	DropAfter Fault = "drop_after"
)

// All is every fault, in a fixed order.
var All = []Fault{Error, RateLimit, Slow, Drop, DropAfter}

// Defaults for Config.
const (
	DefaultDelay      = 2 * time.Second
	DefaultRetryAfter = time.Second
)

// Config says which requests get which faults.
type Config struct {
	// Rate is the share of requests that get a fault, 0..1.
	Rate float64
	// Faults are chosen from uniformly; empty means All.
	Faults []Fault
	// Seed makes the sequence of choices repeatable; 0 picks one at random.
	Seed uint64
	// Delay is how long a Slow answer waits (DefaultDelay when 0).
	Delay time.Duration
	// RetryAfter is what a RateLimit answer asks for (DefaultRetryAfter
	// when 0; whole seconds on the wire, at least 1).
	RetryAfter time.Duration
	// Body writes the provider's error body for status; nil writes a
	// plain-text one. retryAfter is set for 429s.
	Body func(status int, retryAfter time.Duration) (contentType string, body []byte)
	// Exempt requests never get a fault (health checks, say).
	Exempt func(*http.Request) bool
}

// Injector is an http.Handler that injects faults in front of another. It
// is safe for concurrent use.
type Injector struct {
	next   http.Handler
	cfg    Config
	faults []Fault

	mu   sync.Mutex
	rng  *rand.Rand
	rate float64

	passed atomic.Int64
	counts sync.Map // Fault → *atomic.Int64
}

// New returns an Injector in front of next.
func New(next http.Handler, cfg Config) *Injector {
	if cfg.Delay <= 0 {
		cfg.Delay = DefaultDelay
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = DefaultRetryAfter
	}
	faults := cfg.Faults
	if len(faults) == 0 {
		faults = All
	}
	seed := cfg.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	return &Injector{
		next: next, cfg: cfg, faults: faults,
		rng:  rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		rate: min(max(cfg.Rate, 0), 1),
	}
}

// SetRate changes the share of faulty requests, e.g. to 0 to let a backlog
// drain at the end of a run.
func (i *Injector) SetRate(rate float64) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.rate = min(max(rate, 0), 1)
}

// Counts returns how many requests got each fault, and how many passed
// untouched.
func (i *Injector) Counts() (faults map[Fault]int64, passed int64) {
	faults = map[Fault]int64{}
	i.counts.Range(func(k, v any) bool {
		faults[k.(Fault)] = v.(*atomic.Int64).Load()
		return true
	})
	return faults, i.passed.Load()
}

// pick decides the fate of one request: a fault, or "" for none.
func (i *Injector) pick() (Fault, int) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.rate == 0 || i.rng.Float64() >= i.rate {
		return "", 0
	}
	f := i.faults[i.rng.IntN(len(i.faults))]
	return f, []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable}[i.rng.IntN(3)]
}

func (i *Injector) count(f Fault) {
	v, _ := i.counts.LoadOrStore(f, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// ServeHTTP implements http.Handler.
func (i *Injector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var f Fault
	var status int
	if i.cfg.Exempt == nil || !i.cfg.Exempt(r) {
		f, status = i.pick()
	}
	if f == "" {
		i.passed.Add(1)
		i.next.ServeHTTP(w, r)
		return
	}
	i.count(f)
	switch f {
	case Error:
		i.writeError(w, status, 0)
	case RateLimit:
		secs := max(int(i.cfg.RetryAfter.Round(time.Second)/time.Second), 1)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		i.writeError(w, http.StatusTooManyRequests, time.Duration(secs)*time.Second)
	case Slow:
		// Read the request first, as a real server would: net/http notices
		// a caller hanging up (and cancels r.Context()) only once the body
		// has been read.
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		t := time.NewTimer(i.cfg.Delay)
		defer t.Stop()
		select {
		case <-t.C:
			i.next.ServeHTTP(w, r)
		case <-r.Context().Done():
			// The caller gave up: like a real slow server, the work is
			// abandoned, and nobody reads an answer.
		}
	case Drop:
		hangUp(w)
	case DropAfter:
		// The provider acts on the request; its answer is lost.
		i.next.ServeHTTP(httptest.NewRecorder(), r)
		hangUp(w)
	default:
		panic(fmt.Sprintf("faultinject: unknown fault %q", f))
	}
}

func (i *Injector) writeError(w http.ResponseWriter, status int, retryAfter time.Duration) {
	ct, body := "text/plain; charset=utf-8", []byte(http.StatusText(status)+"\n")
	if i.cfg.Body != nil {
		ct, body = i.cfg.Body(status, retryAfter)
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = bytes.NewReader(body).WriteTo(w)
}

// hangUp closes the connection without writing a response. Servers that
// cannot hijack (HTTP/2) get their stream reset by the panic
// http.ErrAbortHandler, which net/http turns into an abort without a log
// line.
func hangUp(w http.ResponseWriter) {
	if h, ok := w.(http.Hijacker); ok {
		if conn, _, err := h.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}
