package edge

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRateLimiterRefills(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewRateLimiter(1, 2, 10)
	l.now = func() time.Time { return now }
	for i, want := range []bool{true, true, false} {
		if _, ok := l.allow("c"); ok != want {
			t.Fatalf("request %d allowed = %v, want %v", i, ok, want)
		}
	}
	wait, _ := l.allow("c")
	if wait <= 0 || wait > time.Second {
		t.Errorf("wait = %v, want (0, 1s]", wait)
	}
	now = now.Add(time.Second)
	if _, ok := l.allow("c"); !ok {
		t.Error("after 1s at 1 rps: not allowed, want allowed")
	}
}

func TestRateLimiterTableIsBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewRateLimiter(1, 1, 50)
	l.now = func() time.Time { return now }
	if _, ok := l.allow("regular"); !ok {
		t.Fatal("first request refused")
	}
	for i := range 49 {
		l.allow("junk-" + strconv.Itoa(i))
	}
	// Seen again, "regular" is the most recent: the next junk evicts the
	// oldest junk, not it.
	if _, ok := l.allow("regular"); ok {
		t.Fatal("regular's second request in the same instant allowed, want refused (burst 1)")
	}
	for i := range 1000 {
		l.allow("more-junk-" + strconv.Itoa(i))
	}
	if got := l.Len(); got != 50 {
		t.Errorf("table holds %d clients, want the capacity 50", got)
	}
	if _, ok := l.allow("junk-0"); !ok {
		t.Error("an evicted client was not forgotten (refused, want a fresh bucket)")
	}
}

func TestBearer(t *testing.T) {
	tests := []struct {
		header string
		want   string
		ok     bool
	}{
		{"Bearer abc", "abc", true},
		{"bearer  abc ", "abc", true},
		{"Basic abc", "", false},
		{"Bearer", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Authorization", tt.header)
		got, ok := bearer(r)
		if got != tt.want || ok != tt.ok {
			t.Errorf("bearer(%q) = %q, %v; want %q, %v", tt.header, got, ok, tt.want, tt.ok)
		}
	}
}

func TestRequestIDRejectsJunk(t *testing.T) {
	var seen string
	h := RequestID(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { seen = r.Header.Get(RequestIDHeader) }))
	for _, in := range []string{"", "has space", strings.Repeat("a", 200), "bad\x01"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set(RequestIDHeader, in)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if seen == in || len(seen) != 32 || w.Header().Get(RequestIDHeader) != seen {
			t.Errorf("request id %q: forwarded %q, echoed %q; want a fresh 32-hex id", in, seen, w.Header().Get(RequestIDHeader))
		}
	}
}

func TestRecoverHidesPanic(t *testing.T) {
	h := Recover(discardLogger(), http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("db password hunter2") }))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if w.Code != 500 || strings.Contains(w.Body.String(), "hunter2") {
		t.Errorf("got %d %q, want 500 without the panic text", w.Code, w.Body.String())
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// failingBody fails every read with err.
type failingBody struct{ err error }

func (b failingBody) Read([]byte) (int, error) { return 0, b.err }

func TestBodyLimitReadErrors(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		wantCode int
		wantBody string
	}{
		{
			name:     "read timeout",
			err:      &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded},
			wantCode: http.StatusRequestTimeout,
			wantBody: `{"code":4,"message":"request body not received in time","details":[]}`,
		},
		{
			name:     "client went away",
			err:      io.ErrUnexpectedEOF,
			wantCode: http.StatusBadRequest,
			wantBody: `{"code":3,"message":"could not read the request body","details":[]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reached := false
			h := BodyLimit(func(*http.Request) int64 { return 1024 }, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true }))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("POST", "/", failingBody{tt.err}))
			if reached {
				t.Error("the route ran without a body")
			}
			if got := strings.TrimSpace(w.Body.String()); w.Code != tt.wantCode || got != tt.wantBody {
				t.Errorf("got %d %s, want %d %s", w.Code, got, tt.wantCode, tt.wantBody)
			}
		})
	}
}

// Bodies of every size around the pooled blocks' come through whole, and
// one byte over the limit is 413, chunked or declared.
func TestBodyLimitSizes(t *testing.T) {
	const limit = 3*blockSize + 10
	for _, n := range []int{1, blockSize - 1, blockSize, blockSize + 1, 2*blockSize + 7, limit, limit + 1, 5 * blockSize} {
		for _, chunked := range []bool{false, true} {
			body := bytes.Repeat([]byte("abcdefg"), n/7+1)[:n]
			var got []byte
			h := BodyLimit(func(*http.Request) int64 { return limit }, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				got, _ = io.ReadAll(r.Body)
			}))
			r := httptest.NewRequest("POST", "/", bytes.NewReader(body))
			if chunked {
				// A reader of unknown length, as a chunked body is.
				r = httptest.NewRequest("POST", "/", io.MultiReader(bytes.NewReader(body)))
				r.ContentLength = -1
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			want := http.StatusOK
			if n > limit {
				want = http.StatusRequestEntityTooLarge
			}
			if w.Code != want {
				t.Errorf("%d bytes (chunked %v) = %d, want %d", n, chunked, w.Code, want)
				continue
			}
			if want == http.StatusOK && !bytes.Equal(got, body) {
				t.Errorf("%d bytes (chunked %v): the route got %d bytes, not the body", n, chunked, len(got))
			}
		}
	}
}
