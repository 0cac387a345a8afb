package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestConsoleIsMountedWithoutAKey: the console's pages and assets are
// public (the app asks for the key and sends it on /v1/ calls), while the
// API behind it still wants the key.
func TestConsoleIsMountedWithoutAKey(t *testing.T) {
	cfg := testConfig()
	cfg.APIKeys = []string{"ops:k1"}
	h := newHarness(t, cfg)
	for _, p := range []string{"/console/", "/console/alerts", "/console/approvals/x"} {
		got := do(t, "GET", h.url+p, "")
		if got.code != 200 || !strings.Contains(got.body, `<div id="app">`) {
			t.Errorf("GET %s = %d, want the console app", p, got.code)
		}
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(h.url + "/console")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "/console/" {
		t.Errorf("GET /console = %d to %q, want 301 to /console/", resp.StatusCode, resp.Header.Get("Location"))
	}
	if got := do(t, "GET", h.url+"/v1/alerts", ""); got.code != http.StatusUnauthorized {
		t.Errorf("GET /v1/alerts without a key = %d, want 401", got.code)
	}
}
