// Package providerhttp holds what rag's provider clients (Groq, the
// embeddings endpoints) share about HTTP: they send an API key with every
// request, so a redirect must never carry it to another host.
package providerhttp

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/openai/openai-go/v3"

	"github.com/groundcrew/groundcrew/platform/redact"
)

// maxRedirects is net/http's own bound, kept for same-origin redirects.
const maxRedirects = 10

// SameOrigin returns a copy of hc (http.DefaultClient when nil) that
// follows redirects only within the origin (scheme, host and port) of the
// request that started them. net/http forwards the Authorization header
// only to the same domain, but keys in custom headers (x-goog-api-key)
// to any host, and on 307/308 the body too; a redirect elsewhere is
// returned unfollowed instead, and the provider's client reports the
// 3xx as an error. hc itself is not modified, and its own CheckRedirect
// still applies to the redirects that pass.
func SameOrigin(hc *http.Client) *http.Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	guarded := *hc
	guarded.CheckRedirect = func(next *http.Request, via []*http.Request) error {
		if Origin(next.URL) != Origin(via[0].URL) {
			return http.ErrUseLastResponse
		}
		if len(via) >= maxRedirects {
			return errors.New("stopped after 10 redirects")
		}
		if hc.CheckRedirect != nil {
			return hc.CheckRedirect(next, via)
		}
		return nil
	}
	return &guarded
}

// Origin is scheme://host:port, lower-cased, with the default port made
// explicit.
func Origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// Describe wraps a failed request's error with what the provider said:
// openai-go prints only the HTTP status of an *openai.Error, so its code,
// type, message and the request's path are added, and a log can tell a
// rate limit from a prompt that is too long. The result is scrubbed of
// the secrets (platform/redact), which a provider or a proxy may echo.
func Describe(doing string, err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		detail := fmt.Sprintf("HTTP %d", apiErr.StatusCode)
		if apiErr.Code != "" {
			detail += " " + apiErr.Code
		}
		if apiErr.Type != "" {
			detail += " (" + apiErr.Type + ")"
		}
		if apiErr.Message != "" {
			detail += ": " + apiErr.Message
		}
		if apiErr.Request != nil {
			detail += " [" + apiErr.Request.Method + " " + apiErr.Request.URL.Path + "]"
		}
		err = fmt.Errorf("%s: %s: %w", doing, detail, err)
	} else {
		err = fmt.Errorf("%s: %w", doing, err)
	}
	return redact.Error(err, secrets...)
}
