package faultinject

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// provider counts the requests that reach it and answers "ok".
type provider struct{ seen atomic.Int64 }

func (p *provider) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	p.seen.Add(1)
	_, _ = io.WriteString(w, "ok")
}

func serve(t *testing.T, inj *Injector) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(inj)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, srv *httptest.Server, timeout time.Duration) (*http.Response, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// A POST with a body, as provider calls are: the server must still
	// notice when the caller gives up.
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{"query":"x"}`))
	// A fresh connection each time, so a hung-up connection is not reused.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

func TestEachFault(t *testing.T) {
	body := func(status int, retryAfter time.Duration) (string, []byte) {
		return "application/json", []byte(`{"error":{"code":` + http.StatusText(status) + `","retry":"` + retryAfter.String() + `"}}`)
	}
	tests := []struct {
		fault        Fault
		wantStatus   []int // any of; nil when the connection must fail
		wantReached  int64 // requests that reached the provider
		wantBody     string
		wantRetryHdr string
		timeout      time.Duration
	}{
		{fault: Error, wantStatus: []int{500, 502, 503}, wantReached: 0},
		{fault: RateLimit, wantStatus: []int{429}, wantReached: 0, wantBody: `{"error":{"code":Too Many Requests","retry":"2s"}}`, wantRetryHdr: "2"},
		{fault: Slow, wantStatus: []int{200}, wantReached: 1, wantBody: "ok", timeout: 10 * time.Second},
		{fault: Slow, wantStatus: nil, wantReached: 0, timeout: 50 * time.Millisecond}, // the caller gives up first
		{fault: Drop, wantStatus: nil, wantReached: 0},
		{fault: DropAfter, wantStatus: nil, wantReached: 1},
	}
	for _, tt := range tests {
		t.Run(string(tt.fault), func(t *testing.T) {
			p := &provider{}
			delay := 100 * time.Millisecond
			if tt.timeout != 0 && tt.timeout < delay {
				delay = 5 * time.Second
			}
			inj := New(p, Config{Rate: 1, Faults: []Fault{tt.fault}, Delay: delay, RetryAfter: 2 * time.Second, Body: body})
			srv := serve(t, inj)
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			resp, got, err := get(t, srv, timeout)
			if tt.wantStatus == nil {
				if err == nil {
					t.Fatalf("got %d %q, want a failed connection", resp.StatusCode, got)
				}
			} else {
				if err != nil {
					t.Fatalf("request: %v", err)
				}
				ok := false
				for _, s := range tt.wantStatus {
					ok = ok || resp.StatusCode == s
				}
				if !ok {
					t.Errorf("status %d, want one of %v", resp.StatusCode, tt.wantStatus)
				}
				if tt.wantBody != "" && got != tt.wantBody {
					t.Errorf("body %q, want %q", got, tt.wantBody)
				}
				if h := resp.Header.Get("Retry-After"); h != tt.wantRetryHdr {
					t.Errorf("Retry-After %q, want %q", h, tt.wantRetryHdr)
				}
			}
			// Close waits for the handlers: a slow fault whose caller gave
			// up must have noticed and returned, not sat out its delay.
			closed := make(chan struct{})
			go func() { srv.Close(); close(closed) }()
			select {
			case <-closed:
			case <-time.After(3 * time.Second):
				t.Fatal("the server's handlers are still running after the caller left")
			}
			if got := p.seen.Load(); got != tt.wantReached {
				t.Errorf("provider saw %d requests, want %d", got, tt.wantReached)
			}
			if faults, _ := inj.Counts(); faults[tt.fault] != 1 {
				t.Errorf("Counts()[%s] = %d, want 1", tt.fault, faults[tt.fault])
			}
		})
	}
}

func TestRateIsAShareAndSeedRepeats(t *testing.T) {
	run := func(seed uint64) (map[Fault]int64, int64) {
		inj := New(&provider{}, Config{Rate: 0.3, Seed: seed, Faults: []Fault{Error, RateLimit}})
		for range 2000 {
			inj.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
		}
		return inj.Counts()
	}
	faults, passed := run(42)
	total := faults[Error] + faults[RateLimit]
	if total+passed != 2000 {
		t.Fatalf("faults %v + passed %d != 2000", faults, passed)
	}
	// 30% of 2000 is 600; a binomial's sd here is ~20.
	if total < 500 || total > 700 {
		t.Errorf("%d of 2000 requests faulted at rate 0.3", total)
	}
	if faults[Error] == 0 || faults[RateLimit] == 0 {
		t.Errorf("faults %v: both kinds should occur", faults)
	}
	again, _ := run(42)
	if again[Error] != faults[Error] || again[RateLimit] != faults[RateLimit] {
		t.Errorf("same seed gave %v then %v", faults, again)
	}
}

func TestSetRateAndExempt(t *testing.T) {
	p := &provider{}
	inj := New(p, Config{Rate: 1, Faults: []Fault{Error}, Exempt: func(r *http.Request) bool { return r.URL.Path == "/healthz" }})
	rec := httptest.NewRecorder()
	inj.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != 200 {
		t.Errorf("exempt request got %d", rec.Code)
	}
	inj.SetRate(0)
	rec = httptest.NewRecorder()
	inj.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/work", nil))
	if rec.Code != 200 || p.seen.Load() != 2 {
		t.Errorf("after SetRate(0): status %d, provider saw %d; want 200 and 2", rec.Code, p.seen.Load())
	}
}

// TestDropIsATransportError checks what callers see: an error, not an HTTP
// status, so their transport-error handling is what gets exercised.
func TestDropIsATransportError(t *testing.T) {
	srv := serve(t, New(&provider{}, Config{Rate: 1, Faults: []Fault{Drop}}))
	_, _, err := get(t, srv, 5*time.Second)
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a connection error", err)
	}
}
