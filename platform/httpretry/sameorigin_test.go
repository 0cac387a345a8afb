package httpretry_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/groundcrew/groundcrew/platform/httpretry"
)

// TestSameOrigin: a redirect within the origin is followed with the key;
// one to another host is not followed, and the other host never sees the
// key.
func TestSameOrigin(t *testing.T) {
	var elsewhere []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere = append(elsewhere, r.Header.Get("X-Goog-Api-Key"))
	}))
	t.Cleanup(other.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/here", http.StatusTemporaryRedirect)
		case "/away":
			http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
		case "/here":
			_, _ = w.Write([]byte("key " + r.Header.Get("X-Goog-Api-Key")))
		}
	}))
	t.Cleanup(srv.Close)
	hc := httpretry.SameOrigin(nil)
	get := func(path string) *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
		req.Header.Set("X-Goog-Api-Key", "secret-key-1")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = resp.Body.Close() })
		return resp
	}
	if resp := get("/moved"); resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/here" {
		t.Errorf("same-origin redirect: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	if resp := get("/away"); resp.StatusCode != http.StatusTemporaryRedirect || !strings.HasPrefix(resp.Header.Get("Location"), other.URL) {
		t.Errorf("cross-origin redirect: %d, want the 307 unfollowed", resp.StatusCode)
	}
	if len(elsewhere) != 0 {
		t.Errorf("the other host was asked %d times (keys %q)", len(elsewhere), elsewhere)
	}
	if http.DefaultClient.CheckRedirect != nil {
		t.Error("SameOrigin changed http.DefaultClient")
	}
}

func TestOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"https://Example.com/x": "https://example.com:443", "http://example.com:80/": "http://example.com:80",
		"http://[::1]:8080/a": "http://::1:8080", "HTTPS://api.example.com:8443": "https://api.example.com:8443",
	} {
		u, _ := url.Parse(in)
		if got := httpretry.Origin(u); got != want {
			t.Errorf("Origin(%s) = %s, want %s", in, got, want)
		}
	}
}
