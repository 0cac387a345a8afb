// Package enginetest provides what the adapter tests share: an httptest
// server that replays canned provider answers (fixtures under testdata/)
// and records the requests it got, and a sleep recorder so retry waits are
// asserted without waiting.
package enginetest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/platform/httpretry"
	"github.com/groundcrew/groundcrew/services/search/internal/enginehttp"
)

// Reply is one canned answer.
type Reply struct {
	// Status defaults to 200.
	Status int
	// Header is set on the answer; Content-Type defaults to
	// application/json.
	Header map[string]string
	// Fixture names a file under testdata/ to send as the body; Body is
	// used when Fixture is empty.
	Fixture string
	Body    string
	// Hang makes the server hold the request until the client gives up.
	Hang bool
}

// Recorded is a request the server received.
type Recorded struct {
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte
}

// Server replays its replies in order, repeating the last one.
type Server struct {
	*httptest.Server
	replies []Reply
	bodies  [][]byte

	mu       sync.Mutex
	requests []Recorded
}

// NewServer starts a server with the given replies, closed at test end.
// Fixtures are read up front so a missing file fails the test at once.
func NewServer(t testing.TB, replies ...Reply) *Server {
	t.Helper()
	s := &Server{replies: replies}
	for _, r := range replies {
		body := []byte(r.Body)
		if r.Fixture != "" {
			b, err := os.ReadFile(filepath.Join("testdata", r.Fixture))
			if err != nil {
				t.Fatalf("reading fixture: %v", err)
			}
			body = b
		}
		s.bodies = append(s.bodies, body)
	}
	done := make(chan struct{})
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.requests)
		s.requests = append(s.requests, Recorded{
			Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: body,
		})
		s.mu.Unlock()
		i := min(n, len(s.replies)-1)
		reply := s.replies[i]
		if reply.Hang {
			select {
			case <-r.Context().Done():
			case <-done:
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		for k, v := range reply.Header {
			w.Header().Set(k, v)
		}
		status := reply.Status
		if status == 0 {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		_, _ = w.Write(s.bodies[i])
	}))
	t.Cleanup(func() {
		close(done)
		s.Close()
	})
	return s
}

// Calls returns how many requests the server received.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// Request returns the i-th request received.
func (s *Server) Request(i int) Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[i]
}

// Sleeps records requested waits and returns at once.
type Sleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

// Sleep records d and returns ctx.Err().
func (s *Sleeps) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

// Waits returns the recorded waits.
func (s *Sleeps) Waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// RetryClient returns the adapters' default retry policy sending to srv and
// sleeping through sl.
func RetryClient(srv *Server, sl *Sleeps) *httpretry.Client {
	rc := enginehttp.NewRetryClient(srv.Client())
	rc.Sleep = sl.Sleep
	return rc
}
