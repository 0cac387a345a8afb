package providerhttp

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"https://API.groq.com/openai/v1": "https://api.groq.com:443",
		"http://localhost:11434/v1":      "http://localhost:11434",
		"http://example.com/x":           "http://example.com:80",
	} {
		u, _ := url.Parse(in)
		if got := Origin(u); got != want {
			t.Errorf("Origin(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestSameOrigin: redirects within the origin are followed (and the
// caller's own CheckRedirect still applies), a redirect to another host
// or port is returned unfollowed, and the caller's client is unchanged.
func TestSameOrigin(t *testing.T) {
	var hits []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits = append(hits, r.Header.Get("X-Goog-Api-Key"))
	}))
	t.Cleanup(other.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/", http.StatusTemporaryRedirect)
		case "/move":
			http.Redirect(w, r, "/final", http.StatusMovedPermanently)
		case "/final":
			_, _ = w.Write([]byte("ok"))
		}
	}))
	t.Cleanup(srv.Close)
	vetoed := errors.New("vetoed by the caller")
	base := &http.Client{}
	guarded := SameOrigin(base)
	if base.CheckRedirect != nil {
		t.Error("SameOrigin modified the caller's client")
	}
	get := func(c *http.Client, path string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Header.Set("X-Goog-Api-Key", "secret-key-123")
		return c.Do(req)
	}
	resp, err := get(guarded, "/away")
	if err != nil || resp.StatusCode != http.StatusTemporaryRedirect {
		t.Errorf("redirect to another host: %v, %v; want the 307 unfollowed", resp, err)
	}
	resp, err = get(guarded, "/move")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("redirect within the origin: %v, %v; want it followed", resp, err)
	}
	strict := SameOrigin(&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return vetoed }})
	if _, err := get(strict, "/move"); err == nil || !strings.Contains(err.Error(), vetoed.Error()) {
		t.Errorf("the caller's CheckRedirect was not applied: %v", err)
	}
	if len(hits) > 0 {
		t.Errorf("the other host received the key: %q", hits)
	}
}
