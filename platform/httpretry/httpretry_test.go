package httpretry_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/platform/httpretry"
)

// script answers each request with the next canned reply and records the
// bodies it received.
type script struct {
	mu      sync.Mutex
	replies []func(w http.ResponseWriter)
	bodies  []string
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.bodies)
	s.bodies = append(s.bodies, string(b))
	s.mu.Unlock()
	if n >= len(s.replies) {
		http.Error(w, "unexpected extra request", http.StatusTeapot)
		return
	}
	s.replies[n](w)
}

func (s *script) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

func status(code int, header ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, http.StatusText(code))
	}
}

// sleeps records requested waits without waiting.
type sleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeps) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

var epoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func newClient(srv *httptest.Server, sl *sleeps) *httpretry.Client {
	return &httpretry.Client{
		HTTP:  srv.Client(),
		Sleep: sl.Sleep,
		Now:   func() time.Time { return epoch },
	}
}

func get(t *testing.T, ctx context.Context, c *httpretry.Client, url string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c.Do(req)
}

func TestDoHonoursRetryAfter(t *testing.T) {
	tests := []struct {
		name       string
		retryAfter string
		wantWait   time.Duration
	}{
		{"delta seconds", "7", 7 * time.Second},
		{"http date", epoch.Add(3 * time.Second).Format(http.TimeFormat), 3 * time.Second},
		{"date in the past", epoch.Add(-time.Hour).Format(http.TimeFormat), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &script{replies: []func(http.ResponseWriter){
				status(http.StatusTooManyRequests, "Retry-After", tt.retryAfter),
				status(http.StatusOK),
			}}
			srv := httptest.NewServer(s)
			defer srv.Close()
			sl := &sleeps{}

			resp, err := get(t, t.Context(), newClient(srv, sl), srv.URL)
			if err != nil {
				t.Fatalf("Do() error = %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("status = %d, want 200", resp.StatusCode)
			}
			if got := s.calls(); got != 2 {
				t.Errorf("server calls = %d, want 2", got)
			}
			if len(sl.waits) != 1 || sl.waits[0] != tt.wantWait {
				t.Errorf("waits = %v, want [%v]", sl.waits, tt.wantWait)
			}
		})
	}
}

func TestDoBacksOffExponentiallyAndReturnsLastResponse(t *testing.T) {
	s := &script{replies: []func(http.ResponseWriter){
		status(http.StatusServiceUnavailable),
		status(http.StatusBadGateway),
		status(http.StatusGatewayTimeout),
		status(http.StatusServiceUnavailable),
	}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	sl := &sleeps{}
	c := newClient(srv, sl)
	c.MaxAttempts = 4
	c.BaseDelay = 100 * time.Millisecond
	c.MaxDelay = 300 * time.Millisecond

	resp, err := get(t, t.Context(), c, srv.URL)
	if err != nil {
		t.Fatalf("Do() error = %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || string(body) != "Service Unavailable" {
		t.Errorf("last response = %d %q, want 503 with its body readable", resp.StatusCode, body)
	}
	if got := s.calls(); got != 4 {
		t.Errorf("server calls = %d, want 4", got)
	}
	caps := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond}
	if len(sl.waits) != len(caps) {
		t.Fatalf("waits = %v, want %d of them", sl.waits, len(caps))
	}
	for i, w := range sl.waits {
		if w < caps[i]/2 || w >= caps[i] {
			t.Errorf("wait %d = %v, want in [%v, %v)", i, w, caps[i]/2, caps[i])
		}
	}
}

func TestDoRetryableStatuses(t *testing.T) {
	tests := []struct {
		code      int
		retry500  bool
		wantCalls int
	}{
		{http.StatusTooManyRequests, false, 2},
		{http.StatusBadGateway, false, 2},
		{http.StatusServiceUnavailable, false, 2},
		{http.StatusGatewayTimeout, false, 2},
		{http.StatusInternalServerError, false, 1},
		{http.StatusInternalServerError, true, 2},
		{http.StatusUnauthorized, false, 1},
		{http.StatusBadRequest, true, 1},
		{http.StatusNotFound, false, 1},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.code), func(t *testing.T) {
			s := &script{replies: []func(http.ResponseWriter){status(tt.code), status(http.StatusOK)}}
			srv := httptest.NewServer(s)
			defer srv.Close()
			c := newClient(srv, &sleeps{})
			c.Retry500 = tt.retry500

			resp, err := get(t, t.Context(), c, srv.URL)
			if err != nil {
				t.Fatalf("Do() error = %v", err)
			}
			resp.Body.Close()
			if got := s.calls(); got != tt.wantCalls {
				t.Errorf("server calls = %d, want %d", got, tt.wantCalls)
			}
		})
	}
}

func TestDoFailsEarly(t *testing.T) {
	tests := []struct {
		name       string
		retryAfter string
		deadline   time.Duration // from epoch; 0 = none
		maxWait    time.Duration
	}{
		{"retry-after beyond max wait", "120", 0, time.Minute},
		{"retry-after beyond deadline", "5", 2 * time.Second, 0},
		{"backoff beyond deadline", "", time.Millisecond, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var header []string
			if tt.retryAfter != "" {
				header = []string{"Retry-After", tt.retryAfter}
			}
			s := &script{replies: []func(http.ResponseWriter){
				status(http.StatusTooManyRequests, header...),
				status(http.StatusOK),
			}}
			srv := httptest.NewServer(s)
			defer srv.Close()
			sl := &sleeps{}
			c := newClient(srv, sl)
			c.MaxWait = tt.maxWait
			c.BaseDelay = time.Second
			ctx := t.Context()
			if tt.deadline > 0 {
				// The deadline is judged against the injected clock, so it
				// must be expressed in that clock's terms; the real context
				// deadline stays far away so the request itself is unhurried.
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, time.Now().Add(time.Hour))
				defer cancel()
				c.Now = func() time.Time { return time.Now().Add(time.Hour - tt.deadline) }
			}

			resp, err := get(t, ctx, c, srv.URL)
			if err != nil {
				t.Fatalf("Do() error = %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusTooManyRequests {
				t.Errorf("status = %d, want the 429 handed back", resp.StatusCode)
			}
			if got := s.calls(); got != 1 {
				t.Errorf("server calls = %d, want 1", got)
			}
			if len(sl.waits) != 0 {
				t.Errorf("waits = %v, want none", sl.waits)
			}
		})
	}
}

func TestDoResendsBody(t *testing.T) {
	s := &script{replies: []func(http.ResponseWriter){status(http.StatusBadGateway), status(http.StatusOK)}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c := newClient(srv, &sleeps{})

	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, strings.NewReader(`{"query":"q"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("Do() error = %v", err)
	}
	resp.Body.Close()
	want := []string{`{"query":"q"}`, `{"query":"q"}`}
	if len(s.bodies) != 2 || s.bodies[0] != want[0] || s.bodies[1] != want[1] {
		t.Errorf("bodies = %q, want %q", s.bodies, want)
	}
}

func TestDoDoesNotRetryUnrewindableBody(t *testing.T) {
	s := &script{replies: []func(http.ResponseWriter){status(http.StatusBadGateway), status(http.StatusOK)}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c := newClient(srv, &sleeps{})

	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, io.NopCloser(strings.NewReader("x")))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("Do() error = %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || s.calls() != 1 {
		t.Errorf("got status %d after %d calls, want 502 after 1", resp.StatusCode, s.calls())
	}
}

func TestDoRetriesTransportErrors(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 1 {
			// Drop the connection without a response.
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	sl := &sleeps{}

	resp, err := get(t, t.Context(), newClient(srv, sl), srv.URL)
	if err != nil {
		t.Fatalf("Do() error = %v", err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if calls != 2 || len(sl.waits) != 1 {
		t.Errorf("calls = %d, waits = %v; want 2 calls and 1 wait", calls, sl.waits)
	}
}

func TestDoStopsWhenContextEndsDuringWait(t *testing.T) {
	s := &script{replies: []func(http.ResponseWriter){status(http.StatusServiceUnavailable), status(http.StatusOK)}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	c := newClient(srv, nil)
	c.Sleep = func(ctx context.Context, d time.Duration) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}

	_, err := get(t, ctx, c, srv.URL)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Do() error = %v, want context.Canceled", err)
	}
	if got := s.calls(); got != 1 {
		t.Errorf("server calls = %d, want 1", got)
	}
}

func TestDoCustomRetryAfter(t *testing.T) {
	s := &script{replies: []func(http.ResponseWriter){
		status(http.StatusTooManyRequests, "X-RateLimit-Reset", "2, 1000"),
		status(http.StatusOK),
	}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	sl := &sleeps{}
	c := newClient(srv, sl)
	c.RetryAfter = func(resp *http.Response, _ time.Time) (time.Duration, bool) {
		if resp.Header.Get("X-RateLimit-Reset") == "2, 1000" {
			return 2 * time.Second, true
		}
		return 0, false
	}
	var retried []int
	c.OnRetry = func(attempt int, wait time.Duration, resp *http.Response, err error) {
		retried = append(retried, resp.StatusCode)
	}

	resp, err := get(t, t.Context(), c, srv.URL)
	if err != nil {
		t.Fatalf("Do() error = %v", err)
	}
	resp.Body.Close()
	if len(sl.waits) != 1 || sl.waits[0] != 2*time.Second {
		t.Errorf("waits = %v, want [2s]", sl.waits)
	}
	if len(retried) != 1 || retried[0] != http.StatusTooManyRequests {
		t.Errorf("OnRetry saw %v, want [429]", retried)
	}
}

func TestParseRetryAfter(t *testing.T) {
	tests := []struct {
		header string
		want   time.Duration
		wantOK bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{" 30 ", 30 * time.Second, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{"1.5", 0, false},
		{epoch.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{"Sun, 06 Nov 1994 08:49:37 GMT", 0, true},
		{"99999999999999999999", 0, false},
	}
	for _, tt := range tests {
		resp := &http.Response{Header: http.Header{}}
		if tt.header != "" {
			resp.Header.Set("Retry-After", tt.header)
		}
		got, ok := httpretry.ParseRetryAfter(resp, epoch)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.header, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestBackoffDoublesToTheCeilingWithJitter(t *testing.T) {
	tests := []struct {
		attempt int
		want    time.Duration // before jitter into [want/2, want)
	}{
		{0, time.Second}, {1, time.Second}, {2, 2 * time.Second}, {4, 8 * time.Second},
		{10, time.Minute}, {1000, time.Minute},
	}
	for _, tt := range tests {
		for range 50 {
			if got := httpretry.Backoff(tt.attempt, time.Second, time.Minute); got < tt.want/2 || got >= tt.want {
				t.Fatalf("Backoff(%d) = %s, want in [%s, %s)", tt.attempt, got, tt.want/2, tt.want)
			}
		}
	}
}
