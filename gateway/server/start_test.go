package server

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a log sink the gateway's goroutines can share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// take returns what was logged since the last take.
func (s *syncBuffer) take() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.b.String()
	s.b.Reset()
	return out
}

// A start polls /readyz until every backend serves: those 503s are
// expected and log nothing above debug. Readiness logs its changes once:
// ready, then a warning naming the backend that stopped serving.
func TestReadinessLogsChangesNotPolls(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	h := newLoggedHarness(t, testConfig(), logger, func(search *backendServer) {
		search.srv.SetServingStatus("", false) // still starting
	})
	logs.take() // start-up lines
	for range 3 {
		if got := do(t, "GET", h.url+"/readyz", ""); got.code != http.StatusServiceUnavailable {
			t.Fatalf("GET /readyz while search starts = %d %s, want 503", got.code, got.body)
		}
	}
	if out := logs.take(); out != "" {
		t.Errorf("polling /readyz during start logged:\n%s", out)
	}

	h.search.srv.SetServingStatus("", true)
	for range 2 {
		if got := do(t, "GET", h.url+"/readyz", ""); got.code != http.StatusOK {
			t.Fatalf("GET /readyz = %d %s, want 200", got.code, got.body)
		}
	}
	if out := logs.take(); strings.Count(out, "level=INFO") != 1 || !strings.Contains(out, "ready") {
		t.Errorf("becoming ready logged %q, want one info line", out)
	}

	h.search.srv.SetServingStatus("", false)
	for range 2 {
		do(t, "GET", h.url+"/readyz", "")
	}
	out := logs.take()
	if strings.Count(out, "level=WARN") != 1 || !strings.Contains(out, "search NOT_SERVING") || strings.Contains(out, "level=ERROR") {
		t.Errorf("a backend stopping logged %q, want one warning naming search, no error", out)
	}
}

// The root leads a person to the console.
func TestRootRedirectsToTheConsole(t *testing.T) {
	h := newHarness(t, testConfig())
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(h.url + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/console/" {
		t.Errorf("GET / = %d to %q, want 302 to /console/", resp.StatusCode, resp.Header.Get("Location"))
	}
	// Anything else unknown is still the API's 404.
	if got := do(t, "GET", h.url+"/nothing-here", ""); got.code != http.StatusNotFound {
		t.Errorf("GET /nothing-here = %d, want 404", got.code)
	}
}
