package apidocs

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, path string) (*http.Response, string) {
	t.Helper()
	w := httptest.NewRecorder()
	http.StripPrefix("/docs/", Handler()).ServeHTTP(w, httptest.NewRequest("GET", path, nil))
	resp := w.Result()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// The page and every asset carry a policy that runs no inline script or
// style and talks to the gateway alone.
func TestDocsContentSecurityPolicy(t *testing.T) {
	for _, path := range []string{"/docs/", "/docs/docs.js", "/docs/docs.css", "/docs/swagger-ui/swagger-ui-bundle.js", "/docs/swagger-ui/swagger-ui.css"} {
		resp, _ := get(t, path)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s = %d, want 200", path, resp.StatusCode)
			continue
		}
		csp := resp.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: Content-Security-Policy %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-") || strings.Contains(csp, "*") || strings.Contains(csp, "http") {
			t.Errorf("%s: Content-Security-Policy %q allows unsafe sources or other origins", path, csp)
		}
		if resp.Header.Get("X-Frame-Options") != "DENY" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: headers %v, want X-Frame-Options DENY and nosniff", path, resp.Header)
		}
	}
}

// Under that policy an inline script or style would not run: the page has
// none, and every file it loads is served.
func TestDocsPageHasNoInlineScriptOrStyle(t *testing.T) {
	_, page := get(t, "/docs/")
	for _, m := range regexp.MustCompile(`(?s)<script([^>]*)>(.*?)</script>`).FindAllStringSubmatch(page, -1) {
		if !strings.Contains(m[1], "src=") || strings.TrimSpace(m[2]) != "" {
			t.Errorf("inline script in the docs page: %q", m[0])
		}
	}
	if strings.Contains(page, "<style") || regexp.MustCompile(`\sstyle=`).MatchString(page) || regexp.MustCompile(`\son[a-z]+=`).MatchString(page) {
		t.Errorf("inline style or event handler in the docs page:\n%s", page)
	}
	refs := regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(refs) < 4 {
		t.Fatalf("the page loads %d files, want Swagger UI's two and its own two", len(refs))
	}
	for _, ref := range refs {
		if resp, _ := get(t, "/docs/"+ref[1]); resp.StatusCode != http.StatusOK {
			t.Errorf("the page loads %s: %d", ref[1], resp.StatusCode)
		}
	}
}

// A key typed into Authorize is not kept in localStorage, and no third
// party (the validator badge) is asked for anything.
func TestDocsDoNotPersistTheKey(t *testing.T) {
	_, js := get(t, "/docs/docs.js")
	if !regexp.MustCompile(`persistAuthorization:\s*false`).MatchString(js) {
		t.Errorf("docs.js does not turn persistAuthorization off:\n%s", js)
	}
	if !regexp.MustCompile(`validatorUrl:\s*"none"`).MatchString(js) {
		t.Errorf("docs.js leaves the validator badge on:\n%s", js)
	}
}
