package httpretry

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// maxRedirects is net/http's own bound, kept for same-origin redirects.
const maxRedirects = 10

// SameOrigin returns a copy of hc (http.DefaultClient when nil) that
// follows redirects only within the origin (scheme, host and port) of the
// request that started them. Provider clients send an API key with every
// request; net/http forwards Authorization only within the same domain but
// custom key headers (x-goog-api-key, x-api-key) to any host, and on
// 307/308 the body too. A redirect to another origin is returned
// unfollowed instead: the caller sees the 3xx answer and reports it as an
// error. hc itself is not modified, and its own CheckRedirect still
// applies to the redirects that pass.
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
