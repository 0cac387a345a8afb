// Package httpretry retries HTTP requests that failed for reasons worth
// retrying: rate limiting (429), gateway and availability errors (502, 503,
// 504, and optionally 500) and transport errors. It backs off exponentially
// with jitter, honours Retry-After (delta-seconds or an HTTP date), and never
// waits past the request context's deadline: when the next wait would end
// after the deadline it gives up at once and hands back what it has.
//
// A Client is a drop-in for the Do method of *http.Client:
//
//	rc := &httpretry.Client{HTTP: httpClient, MaxAttempts: 3}
//	resp, err := rc.Do(req) // req built with http.NewRequestWithContext
//
// After the last attempt the final response is returned as it came, non-2xx
// status included, so the caller can read the provider's error body.
package httpretry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Defaults used when the corresponding Client field is zero.
const (
	DefaultMaxAttempts = 3
	DefaultBaseDelay   = 250 * time.Millisecond
	DefaultMaxDelay    = 5 * time.Second
	DefaultMaxWait     = 30 * time.Second
)

// Client retries requests according to its fields. The zero value is usable:
// it sends through http.DefaultClient with the defaults above. A Client is
// safe for concurrent use as long as its fields are not changed.
type Client struct {
	// HTTP sends each attempt; nil means http.DefaultClient.
	HTTP *http.Client
	// MaxAttempts is the total number of attempts including the first;
	// 0 means DefaultMaxAttempts, 1 disables retries.
	MaxAttempts int
	// BaseDelay is the backoff before the second attempt; it doubles on
	// each further attempt up to MaxDelay. Jitter spreads each wait over
	// [delay/2, delay).
	BaseDelay time.Duration
	// MaxDelay caps the exponential backoff.
	MaxDelay time.Duration
	// MaxWait caps a server-requested wait (Retry-After). A server that asks
	// for longer is not retried: its response is returned immediately.
	MaxWait time.Duration
	// Retry500 also retries 500 Internal Server Error. Off by default
	// because many APIs answer 500 for requests that will never succeed.
	Retry500 bool
	// RetryAfter extracts a server-requested wait from a response; nil means
	// ParseRetryAfter on the Retry-After header. APIs that signal the wait
	// in another header (e.g. X-RateLimit-Reset) supply their own.
	RetryAfter func(resp *http.Response, now time.Time) (time.Duration, bool)
	// Sleep waits for d or until ctx is done; nil means a timer. Tests
	// inject a recorder so that no test sleeps on the wall clock.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now returns the current time (for HTTP-date Retry-After values and
	// deadline checks); nil means time.Now.
	Now func() time.Time
	// OnRetry, if set, is called before each wait with the attempt that
	// just failed (1-based), the wait, and the response or error that
	// caused the retry. Useful for logs and metrics.
	OnRetry func(attempt int, wait time.Duration, resp *http.Response, err error)
}

// Do sends req, retrying as configured. The request context bounds the whole
// exchange, waits included. A request with a body is retried only if
// req.GetBody is set (http.NewRequest sets it for *bytes.Buffer,
// *bytes.Reader and *strings.Reader bodies).
//
// Do returns an error only when no response was obtained (transport error,
// context done); otherwise it returns the last response, whatever its status.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	attempts := c.MaxAttempts
	if attempts <= 0 {
		attempts = DefaultMaxAttempts
	}
	canResend := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil

	for attempt := 1; ; attempt++ {
		if attempt > 1 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, fmt.Errorf("httpretry: rewinding request body: %w", err)
			}
			req.Body = body
		}
		resp, err := c.httpClient().Do(req)

		if ctxErr := ctx.Err(); ctxErr != nil {
			// The caller's deadline or cancellation ends everything; report
			// it even if the transport error hides it behind its own text.
			if resp != nil {
				return resp, nil
			}
			return nil, fmt.Errorf("httpretry: attempt %d: %w", attempt, errors.Join(ctxErr, err))
		}
		if attempt >= attempts || !canResend || !c.shouldRetry(resp, err) {
			if err != nil && attempt > 1 {
				return nil, fmt.Errorf("httpretry: giving up after %d attempts: %w", attempt, err)
			}
			return resp, err
		}

		wait, ok := c.wait(attempt, resp)
		if !ok || !c.fitsDeadline(ctx, wait) {
			// Waiting is pointless (server asked for too long) or would run
			// past the deadline: fail early with what we have.
			return resp, err
		}
		if c.OnRetry != nil {
			c.OnRetry(attempt, wait, resp, err)
		}
		if resp != nil {
			drain(resp.Body)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("httpretry: waiting %s before attempt %d: %w", wait, attempt+1, err)
		}
	}
}

// RetryableStatus reports whether code is retried by a Client with the given
// Retry500 setting: 429, 502, 503 and 504, plus 500 when retry500 is true.
func RetryableStatus(code int, retry500 bool) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	case http.StatusInternalServerError:
		return retry500
	}
	return false
}

// ParseRetryAfter reads the Retry-After header of resp, either delta-seconds
// ("120") or an HTTP date, relative to now. It reports false when the header
// is absent or malformed; a date in the past yields a zero wait.
func ParseRetryAfter(resp *http.Response, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		const maxSecs = int64((1<<63 - 1) / int64(time.Second))
		return time.Duration(min(secs, maxSecs)) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

func (c *Client) shouldRetry(resp *http.Response, err error) bool {
	if err != nil {
		return true
	}
	return RetryableStatus(resp.StatusCode, c.Retry500)
}

// wait returns how long to wait after the given failed attempt, and false
// when the server asked for longer than MaxWait.
func (c *Client) wait(attempt int, resp *http.Response) (time.Duration, bool) {
	if resp != nil {
		parse := c.RetryAfter
		if parse == nil {
			parse = ParseRetryAfter
		}
		if d, ok := parse(resp, c.now()); ok {
			maxWait := c.MaxWait
			if maxWait <= 0 {
				maxWait = DefaultMaxWait
			}
			return d, d <= maxWait
		}
	}
	return c.backoff(attempt), true
}

// backoff is Backoff with the Client's delays or their defaults.
func (c *Client) backoff(attempt int) time.Duration {
	base, maxDelay := c.BaseDelay, c.MaxDelay
	if base <= 0 {
		base = DefaultBaseDelay
	}
	if maxDelay <= 0 {
		maxDelay = DefaultMaxDelay
	}
	return Backoff(attempt, base, maxDelay)
}

// Backoff is the wait after the given failed attempt (1-based):
// base·2^(attempt-1), capped at maxDelay, jittered into [d/2, d) so that
// clients failing together do not retry together. Other retry loops (job
// queues, stream reconnects) use it too, so that every backoff in the
// suite has one shape.
func Backoff(attempt int, base, maxDelay time.Duration) time.Duration {
	d := base
	for i := 1; i < attempt && d < maxDelay; i++ {
		d *= 2
	}
	d = min(d, maxDelay)
	half := d / 2
	if half <= 0 {
		return d
	}
	return half + rand.N(half)
}

func (c *Client) fitsDeadline(ctx context.Context, wait time.Duration) bool {
	deadline, ok := ctx.Deadline()
	return !ok || c.now().Add(wait).Before(deadline)
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if c.Sleep != nil {
		return c.Sleep(ctx, d)
	}
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// drain reads a little of a discarded body so the connection can be reused,
// then closes it.
func drain(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10))
	_ = body.Close()
}
