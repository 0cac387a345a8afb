// Package enginetest provides what the adapter tests share: an httptest
// server that replays canned provider answers (fixtures under testdata/)
// and records the requests it got, and a sleep recorder so retry waits are
// asserted without waiting.
package enginetest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/platform/httpretry"
	"github.com/groundcrew/groundcrew/platform/redact"
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
	// Echo, if set, makes the body Echo(what the server received): the
	// method, path with query, and every header, as misbehaving providers
	// and proxies do in their error messages. Echo puts that text in the
	// provider's error shape.
	Echo func(received string) string
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
			replayed.Store(r.Fixture, true)
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
		out := s.bodies[i]
		if reply.Echo != nil {
			out = []byte(reply.Echo(dump(r)))
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
		_, _ = w.Write(out)
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

// replayed records the fixtures servers were given, for RunCorpus.
var replayed sync.Map

// RunCorpus runs the package's tests (call it from TestMain) and then,
// when every test ran and passed, fails unless each file under testdata/
// was replayed by some test: a corpus file nobody replays checks nothing.
func RunCorpus(m *testing.M) int {
	code := m.Run()
	if code != 0 {
		return code
	}
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() != "" {
		return code // a subset ran
	}
	entries, err := os.ReadDir("testdata")
	if err != nil {
		fmt.Fprintln(os.Stderr, "reading testdata:", err)
		return 1
	}
	var missing []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		if _, ok := replayed.Load(e.Name()); !ok {
			missing = append(missing, e.Name())
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: corpus files no test replays: %s\n", strings.Join(missing, ", "))
		return 1
	}
	return code
}

// ErrorCase is one error answer of a provider, replayed through an
// adapter: what the adapter must make of it.
type ErrorCase struct {
	// Fixture (under testdata/) or Body is the answer, with Status and Header.
	Fixture string
	Body    string
	Status  int
	Header  map[string]string
	// Class is the enginehttp error class the error must match.
	Class error
	// RetryAfter is the wait the error must report (zero: none).
	RetryAfter time.Duration
	// Calls is how many requests the adapter must send (retries included).
	Calls int
	// Message must be in the error text.
	Message string
}

// RunErrorCases replays each case through call, which searches with an
// adapter built over the given server and sleep recorder, and checks the
// error's class, wait, text and the number of requests. secret (the API
// key the adapter sends) must not appear in the error text.
func RunErrorCases(t *testing.T, secret string, cases []ErrorCase, call func(srv *Server, sl *Sleeps) error) {
	t.Helper()
	for _, tc := range cases {
		name := tc.Fixture
		if name == "" {
			name = fmt.Sprintf("%d body", tc.Status)
		}
		t.Run(name, func(t *testing.T) {
			srv := NewServer(t, Reply{Status: tc.Status, Header: tc.Header, Fixture: tc.Fixture, Body: tc.Body})
			err := call(srv, &Sleeps{})
			if err == nil {
				t.Fatal("no error")
			}
			matched := 0
			for _, c := range classes {
				if errors.Is(err, c) {
					matched++
				}
			}
			if !errors.Is(err, tc.Class) || matched != 1 {
				t.Errorf("error %q: want class %q alone, it matches %d classes", err, tc.Class, matched)
			}
			var se *enginehttp.StatusError
			if !errors.As(err, &se) {
				t.Fatalf("error %q is not a *enginehttp.StatusError", err)
			}
			if se.StatusCode != tc.Status || se.RetryAfter != tc.RetryAfter {
				t.Errorf("status %d, retry after %v; want %d, %v", se.StatusCode, se.RetryAfter, tc.Status, tc.RetryAfter)
			}
			if !strings.Contains(err.Error(), tc.Message) {
				t.Errorf("error %q does not contain %q", err, tc.Message)
			}
			if secret != "" && strings.Contains(err.Error(), secret) {
				t.Errorf("error %q carries the API key", err)
			}
			if got := srv.Calls(); got != tc.Calls {
				t.Errorf("requests = %d, want %d", got, tc.Calls)
			}
		})
	}
}

// classes lists the error classes: an error matches exactly one.
var classes = []error{enginehttp.ErrAuth, enginehttp.ErrRateLimited, enginehttp.ErrQuota, enginehttp.ErrUnavailable, enginehttp.ErrBadRequest}

// dump writes a request as a provider echoing it would: request line,
// then each header, sorted.
func dump(r *http.Request) string {
	var b strings.Builder
	b.WriteString(r.Method + " " + r.URL.RequestURI())
	names := make([]string, 0, len(r.Header))
	for k := range r.Header {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		for _, v := range r.Header[k] {
			b.WriteString("; " + k + ": " + v)
		}
	}
	return b.String()
}

// RunEchoCases checks that no error carries secret when the provider
// echoes the request (path, query, headers) in its error body, for an
// auth failure, a rate limit and a server error; echo puts the echoed
// text in the provider's error shape. The errors must show the mask where
// the secret was, so the check is not vacuous.
func RunEchoCases(t *testing.T, secret string, echo func(string) string, call func(srv *Server, sl *Sleeps) error) {
	t.Helper()
	for _, status := range []int{http.StatusUnauthorized, http.StatusTooManyRequests, http.StatusInternalServerError} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			srv := NewServer(t, Reply{Status: status, Echo: echo})
			err := call(srv, &Sleeps{})
			if err == nil {
				t.Fatal("no error")
			}
			var se *enginehttp.StatusError
			if !errors.As(err, &se) {
				t.Fatalf("error %q is not a *enginehttp.StatusError", err)
			}
			for what, text := range map[string]string{"error": err.Error(), "message": se.Message, "hint": se.Hint} {
				if strings.Contains(text, secret) {
					t.Errorf("%s carries the secret: %q", what, text)
				}
			}
			if !strings.Contains(err.Error(), redact.Mask) {
				t.Errorf("error %q shows no mask: the echo did not reach it", err)
			}
		})
	}
}
