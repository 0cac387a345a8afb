// Package wiretest replays recorded provider responses for tests: each
// corpus file under an adapter's testdata/ is one HTTP response as it
// travels on the wire (status line, headers, blank line, body), written
// from the provider's published documentation.
package wiretest

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
)

// Server answers every request with the responses of files, in order,
// the last one repeating, and records what it received.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []Request
}

// Request is what the server received.
type Request struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Replay starts a server answering with the files' responses.
func Replay(t *testing.T, files ...string) *Server {
	t.Helper()
	type response struct {
		status int
		header http.Header
		body   []byte
	}
	var resps []response
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
		if err != nil {
			t.Fatalf("%s is not an HTTP response: %v", f, err)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("reading the body of %s: %v", f, err)
		}
		resps = append(resps, response{resp.StatusCode, resp.Header, body})
	}
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.requests)
		s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
		s.mu.Unlock()
		rp := resps[min(n, len(resps)-1)]
		for k, vs := range rp.header {
			if k == "Content-Length" || k == "Transfer-Encoding" {
				continue // the body is written whole below
			}
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		w.WriteHeader(rp.status)
		_, _ = w.Write(rp.body)
	}))
	t.Cleanup(s.Close)
	return s
}
