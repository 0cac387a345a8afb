package edge

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// held is a handler that holds each request until released, so a test
// can fill an [Admission] and look at what it refuses.
type held struct {
	entered chan struct{}
	release chan struct{}
}

func newHeld() *held { return &held{entered: make(chan struct{}, 64), release: make(chan struct{})} }

func (h *held) ServeHTTP(http.ResponseWriter, *http.Request) {
	h.entered <- struct{}{}
	<-h.release
}

// request is a POST from ip with a body of n bytes (declared, or chunked
// when chunked is set) and, when key is set, a valid API key.
func admissionRequest(ip string, n int, chunked, key bool) *http.Request {
	r := httptest.NewRequest("POST", "/v1/alerts", strings.NewReader(strings.Repeat("x", n)))
	if n == 0 {
		r = httptest.NewRequest("POST", "/v1/alerts", nil)
	}
	if chunked {
		r.ContentLength = -1
	}
	c := Client{IP: ip}
	if key {
		c.Key = &Key{Name: "ci"}
	}
	return r.WithContext(context.WithValue(r.Context(), clientKey{}, c))
}

func TestAdmissionBounds(t *testing.T) {
	const limit = 1000
	notStream := func(*http.Request) bool { return false }
	limitOf := func(*http.Request) int64 { return limit }
	type step struct {
		name     string
		req      *http.Request
		want     int // 0: admitted and held
		wantUsed Usage
	}
	tests := []struct {
		name             string
		total, perClient int
		maxBytes         int64
		steps            []step
	}{
		{"one address over its share is 429", 10, 2, 10 * limit, []step{
			{"first", admissionRequest("192.0.2.1", 10, false, false), 0, Usage{1, 1, 10}},
			{"second", admissionRequest("192.0.2.1", 10, false, false), 0, Usage{2, 1, 20}},
			{"third from the same address", admissionRequest("192.0.2.1", 10, false, false), http.StatusTooManyRequests, Usage{2, 1, 20}},
			{"another address still gets in", admissionRequest("192.0.2.2", 10, false, false), 0, Usage{3, 2, 30}},
			{"a valid key is not counted", admissionRequest("192.0.2.1", 10, false, true), 0, Usage{3, 2, 30}},
		}},
		{"the total over every address is 503", 2, 5, 10 * limit, []step{
			{"a", admissionRequest("192.0.2.1", 0, false, false), 0, Usage{1, 1, 0}},
			{"b", admissionRequest("192.0.2.2", 0, false, false), 0, Usage{2, 2, 0}},
			{"c", admissionRequest("192.0.2.3", 0, false, false), http.StatusServiceUnavailable, Usage{2, 2, 0}},
		}},
		{"buffered bytes: a chunked body reserves the route's limit", 10, 10, 2 * limit, []step{
			{"chunked", admissionRequest("192.0.2.1", 10, true, false), 0, Usage{1, 1, limit}},
			{"declared 900", admissionRequest("192.0.2.2", 900, false, false), 0, Usage{2, 2, limit + 900}},
			{"declared 200 does not fit", admissionRequest("192.0.2.3", 200, false, false), http.StatusServiceUnavailable, Usage{2, 2, limit + 900}},
			{"over the route's limit reserves nothing (413 unread follows)", admissionRequest("192.0.2.3", limit+1, false, false), 0, Usage{3, 3, limit + 900}},
		}},
		{"IPv6 counts by /64", 10, 1, 10 * limit, []step{
			{"first", admissionRequest("2001:db8:1:2::1", 0, false, false), 0, Usage{1, 1, 0}},
			{"same /64", admissionRequest("2001:db8:1:2::ffff", 0, false, false), http.StatusTooManyRequests, Usage{1, 1, 0}},
			{"another /64", admissionRequest("2001:db8:1:3::1", 0, false, false), 0, Usage{2, 2, 0}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAdmission(tt.total, tt.perClient, tt.maxBytes)
			refusals := map[int]int{}
			a.Refused = func(reason string) {
				refusals[map[string]int{"unauthenticated_per_client": http.StatusTooManyRequests, "unauthenticated_total": http.StatusServiceUnavailable}[reason]]++
			}
			h := newHeld()
			mw := a.Middleware(notStream, limitOf, h)
			var wg sync.WaitGroup
			for _, s := range tt.steps {
				w := httptest.NewRecorder()
				if s.want == 0 {
					wg.Add(1)
					go func() { defer wg.Done(); mw.ServeHTTP(w, s.req) }()
					<-h.entered
				} else {
					mw.ServeHTTP(w, s.req)
					if w.Code != s.want {
						t.Errorf("%s: %d %s, want %d", s.name, w.Code, w.Body.String(), s.want)
					}
					if w.Header().Get("Retry-After") == "" || (s.req.ContentLength > 0 && w.Header().Get("Connection") != "close") {
						t.Errorf("%s: headers %v, want Retry-After and, with a body, Connection: close", s.name, w.Header())
					}
				}
				if got := a.Usage(); got != s.wantUsed {
					t.Errorf("%s: usage %+v, want %+v", s.name, got, s.wantUsed)
				}
			}
			close(h.release)
			wg.Wait()
			for _, s := range tt.steps {
				if s.want != 0 {
					refusals[s.want]--
				}
			}
			for code, n := range refusals {
				if n != 0 {
					t.Errorf("refusals counted for %d off by %d", code, n)
				}
			}
			if got := a.Usage(); got != (Usage{}) {
				t.Errorf("after every request ended: usage %+v, want nothing held", got)
			}
		})
	}
}

// Server streams hold no slot (StreamLimiter caps them), but their bodies
// count while they run.
func TestAdmissionStreams(t *testing.T) {
	a := NewAdmission(1, 1, 1000)
	h := newHeld()
	mw := a.Middleware(func(*http.Request) bool { return true }, func(*http.Request) int64 { return 1000 }, h)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mw.ServeHTTP(httptest.NewRecorder(), admissionRequest("192.0.2.1", 400, false, false))
		}()
		<-h.entered
	}
	if got, want := a.Usage(), (Usage{0, 0, 800}); got != want {
		t.Errorf("two streams: usage %+v, want %+v", got, want)
	}
	w := httptest.NewRecorder()
	mw.ServeHTTP(w, admissionRequest("192.0.2.1", 400, false, false))
	if w.Code != http.StatusServiceUnavailable {
		t.Errorf("a third stream body past the byte bound = %d, want 503", w.Code)
	}
	close(h.release)
	wg.Wait()
}
