// Package enginehttp is the HTTP plumbing shared by the web search engine
// adapters (searxng, exa, tavily, brave): a per-call timeout, retries via
// platform/httpretry, bounded reads, JSON decoding, and errors that name the
// engine and carry the provider's own error message.
package enginehttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/groundcrew/groundcrew/platform/httpretry"
	"github.com/groundcrew/groundcrew/platform/redact"
	"github.com/groundcrew/groundcrew/services/search/internal/htmltext"
)

// Defaults for adapters.
const (
	// DefaultTimeout bounds one search call, retries included.
	DefaultTimeout = 10 * time.Second
	// MaxResponseBytes bounds a response body read.
	MaxResponseBytes = 8 << 20
	// UserAgent identifies this service to providers.
	UserAgent = "groundcrew-search/1.0"
)

// NewRetryClient returns the retry policy the adapters use unless given
// one: three attempts, 500 retried too (search APIs answer 500 for
// transient failures), and Retry-After honoured up to 20 seconds.
func NewRetryClient(hc *http.Client) *httpretry.Client {
	return &httpretry.Client{HTTP: hc, MaxAttempts: 3, Retry500: true, MaxWait: 20 * time.Second}
}

// Error classes a *StatusError matches with errors.Is, so callers can
// tell a configuration problem from a passing one without reading
// provider texts.
var (
	// ErrAuth: the provider refused the credentials (401, 403, or a
	// provider's own code for a bad key); retrying will not help, the
	// key must change.
	ErrAuth = errors.New("provider refused the credentials")
	// ErrRateLimited: too many requests (429); StatusError.RetryAfter
	// says how long the provider asked to wait, when it did.
	ErrRateLimited = errors.New("provider rate limit reached")
	// ErrQuota: the plan's credits or usage limit are spent (402, Tavily's
	// 432 and 433); it lasts until the plan changes or renews.
	ErrQuota = errors.New("provider quota exhausted")
	// ErrUnavailable: the provider failed (5xx) after the retries.
	ErrUnavailable = errors.New("provider unavailable")
	// ErrBadRequest: the provider rejected the request itself (other 4xx).
	ErrBadRequest = errors.New("provider rejected the request")
)

// StatusError is a non-2xx answer from a provider.
type StatusError struct {
	Engine     string
	StatusCode int
	// Message is the provider's error text (from its error body), or the
	// start of the body when it has no recognised shape.
	Message string
	// Hint, if set, says what to do (e.g. which variable to check).
	Hint string
	// Class is one of the Err* classes above (nil for redirects).
	Class error
	// RetryAfter is the wait the provider asked for (Retry-After or its
	// own rate-limit headers), zero when it named none.
	RetryAfter time.Duration
}

// Is matches the error's class.
func (e *StatusError) Is(target error) bool { return e.Class != nil && target == e.Class }

// ClassOf is the default class of an HTTP status.
func ClassOf(status int) error {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return ErrAuth
	case status == http.StatusTooManyRequests:
		return ErrRateLimited
	case status == http.StatusPaymentRequired:
		return ErrQuota
	case status >= 500:
		return ErrUnavailable
	case status >= 400:
		return ErrBadRequest
	}
	return nil
}

// Error reports the engine, status and provider message.
func (e *StatusError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: HTTP %d", e.Engine, e.StatusCode)
	if text := http.StatusText(e.StatusCode); text != "" {
		b.WriteString(" " + text)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Hint != "" {
		fmt.Fprintf(&b, " (%s)", e.Hint)
	}
	return b.String()
}

// Caller sends requests for one engine.
type Caller struct {
	// Engine names the engine in errors.
	Engine string
	// Retry sends requests; nil means NewRetryClient(http.DefaultClient).
	Retry *httpretry.Client
	// Timeout bounds each call, retries included; 0 means DefaultTimeout.
	Timeout time.Duration
	// Describe extracts the provider's message from an error body; nil or
	// an empty result falls back to the body's first 200 characters.
	Describe func(status int, body []byte) string
	// Hint, if set, adds advice to errors with the given status.
	Hint func(status int, message string) string
	// Secrets are the credentials this caller sends (the API key, a
	// password in the base URL): every error Do returns is scrubbed of
	// them (see platform/redact), whatever the provider echoed back.
	Secrets []string
	// Classify, if set, overrides ClassOf for providers that signal a
	// class their own way (Brave's 422 for a bad token, say); returning
	// nil keeps ClassOf's answer.
	Classify func(status int, message string) error
}

// Request describes one call.
type Request struct {
	Method string
	// URL is absolute.
	URL string
	// Header is added to the request.
	Header http.Header
	// Body, if not nil, is sent as JSON.
	Body any
}

// Do sends r and decodes a 2xx JSON answer into out (unless out is nil,
// when any 2xx answer will do). Other answers become
// a *StatusError; transport failures and timeouts are wrapped with the
// engine's name (errors.Is(err, context.DeadlineExceeded) still works).
func (c *Caller) Do(ctx context.Context, r Request, out any) error {
	return redact.Error(c.do(ctx, r, out), c.Secrets...)
}

func (c *Caller) do(ctx context.Context, r Request, out any) error {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var body io.Reader
	if r.Body != nil {
		b, err := json.Marshal(r.Body)
		if err != nil {
			return fmt.Errorf("%s: encoding request: %w", c.Engine, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, body)
	if err != nil {
		return fmt.Errorf("%s: building request: %w", c.Engine, err)
	}
	for k, vs := range r.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	if r.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}

	rc := c.Retry
	if rc == nil {
		rc = NewRetryClient(http.DefaultClient)
	}
	resp, err := sameOrigin(rc).Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			err = errors.Join(ctxErr, err)
		}
		return fmt.Errorf("%s: %w", c.Engine, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes))
	if err != nil {
		return fmt.Errorf("%s: reading response: %w", c.Engine, err)
	}
	if isRedirect(resp.StatusCode) {
		// sameOrigin stopped here: the provider (or something posing as
		// it) sent us to another origin, and our request carries the key.
		return &StatusError{Engine: c.Engine, StatusCode: resp.StatusCode,
			Message: "redirect to another host not followed (" + redirectHost(req, resp) + "); the API key stays with the configured host",
			Hint:    "check the engine's base URL"}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := c.statusError(resp.StatusCode, data)
		wait := rc.RetryAfter
		if wait == nil {
			wait = httpretry.ParseRetryAfter
		}
		if d, ok := wait(resp, time.Now()); ok && d > 0 {
			e.RetryAfter = d
		}
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s: decoding response (HTTP %d, %s): %w", c.Engine, resp.StatusCode, resp.Header.Get("Content-Type"), err)
	}
	return nil
}

// sameOrigin returns a copy of rc whose HTTP client follows redirects only
// within the request's origin (scheme, host and port). Requests carry API
// keys in headers (X-Api-Key, X-Subscription-Token, Authorization) or in
// the body, and net/http forwards custom headers and, on 307/308, the body
// to any host a redirect names; a redirect elsewhere is returned to Do
// unfollowed instead. The caller's client is not modified.
func sameOrigin(rc *httpretry.Client) *httpretry.Client {
	out := *rc
	out.HTTP = httpretry.SameOrigin(rc.HTTP)
	return &out
}

func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// redirectHost names where a redirect pointed, host only: the rest of the
// location can carry tokens.
func redirectHost(req *http.Request, resp *http.Response) string {
	loc, err := resp.Location()
	if err != nil {
		return "no valid Location"
	}
	if loc.Host == "" {
		loc = req.URL.ResolveReference(loc)
	}
	return "to " + loc.Host
}

func (c *Caller) statusError(status int, body []byte) *StatusError {
	var msg string
	if c.Describe != nil {
		msg = c.Describe(status, body)
	}
	if msg == "" {
		msg = bodyExcerpt(body)
	}
	// The message is kept on the error (callers may read it through
	// errors.As), so it is scrubbed here, not only in Error().
	msg = redact.String(msg, c.Secrets...)
	e := &StatusError{Engine: c.Engine, StatusCode: status, Message: msg, Class: ClassOf(status)}
	if c.Classify != nil {
		if class := c.Classify(status, msg); class != nil {
			e.Class = class
		}
	}
	if c.Hint != nil {
		e.Hint = c.Hint(status, msg)
	}
	return e
}

// bodyExcerpt returns the start of a body as one line of text; an HTML
// error page reads as its text.
func bodyExcerpt(body []byte) string {
	s := htmltext.Inline(string(body[:min(len(body), 4096)]))
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

// ParseTime parses the timestamps providers use: RFC 3339 with or without
// zone or fraction, RFC 1123 (news feeds), or a bare date. Times without a zone are taken as UTC.
// It returns the zero time for anything else.
func ParseTime(s string) time.Time {
	s = strings.TrimSpace(s)
	for _, layout := range []string{
		time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05", "2006-01-02",
		time.RFC1123, time.RFC1123Z,
	} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// JoinURL joins a base URL (with or without a trailing slash, possibly with
// a path prefix) and a path starting with "/".
func JoinURL(base, path string) string {
	return strings.TrimRight(base, "/") + path
}

// TimeRange returns the smallest of the time ranges Tavily and SearXNG
// accept that covers maxAge: "day", "week", "month" or "year"; "" for no
// limit or more than a year.
func TimeRange(maxAge time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case maxAge <= 0:
		return ""
	case maxAge <= day:
		return "day"
	case maxAge <= 7*day:
		return "week"
	case maxAge <= 31*day:
		return "month"
	case maxAge <= 366*day:
		return "year"
	}
	return ""
}
