// Package redact scrubs secrets (bot tokens, API keys) out of text and
// errors before they are logged, stored or returned. Providers and proxies
// echo what they were sent: the request path (Telegram's
// /bot<token>/sendMessage), the query (?key=...), headers
// (Authorization, x-goog-api-key). Every adapter that holds a secret passes
// its errors through [Error] with that secret, and the patterns below catch
// the well-known shapes even when the secret itself is not at hand.
package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// Mask replaces whatever was redacted.
const Mask = "[REDACTED]"

// minSecret is the shortest value treated as a secret: shorter ones would
// mask ordinary words ("a", "ok") wherever they appear.
const minSecret = 6

var patterns = []struct {
	re   *regexp.Regexp
	repl string
}{
	// Telegram bot tokens: <bot id>:<35 characters>, in paths (/bot<token>/)
	// and anywhere else.
	{regexp.MustCompile(`\d{5,}:[A-Za-z0-9_-]{30,}`), Mask},
	// Credentials in query strings.
	{regexp.MustCompile(`(?i)([?&](?:key|api_key|apikey|access_token|token|secret)=)[^&\s"']+`), "${1}" + Mask},
	// Authorization headers and their echoes.
	{regexp.MustCompile(`(?i)(authorization["']?\s*[:=]\s*["']?(?:bearer|basic|token)\s+)[^\s"',;]+`), "${1}" + Mask},
	{regexp.MustCompile(`(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}`), "${1}" + Mask},
	// API-key headers as Gemini, Exa, Brave and Qdrant name them.
	{regexp.MustCompile(`(?i)((?:x-goog-api-key|x-api-key|api-key|x-subscription-token)["']?\s*[:=]\s*["']?)[^\s"',;]+`), "${1}" + Mask},
}

// String returns s with every given secret (as written, URL-escaped and
// path-escaped) and every well-known credential shape replaced by [Mask].
// Empty and very short secrets are ignored.
func String(s string, secrets ...string) string {
	for _, secret := range secrets {
		if len(secret) < minSecret {
			continue
		}
		for _, form := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret)} {
			s = strings.ReplaceAll(s, form, Mask)
		}
	}
	for _, p := range patterns {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	return s
}

// Error returns err with its message scrubbed by [String]; errors.Is and
// errors.As still see the original chain. It returns nil for nil, and err
// itself when there was nothing to scrub.
func Error(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := String(msg, secrets...)
	if clean == msg {
		return err
	}
	return &scrubbed{msg: clean, err: err}
}

type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }

// Unwrap keeps the chain below e visible, so sentinel checks (errors.Is)
// and typed errors (errors.As) work through a scrubbed error; what such a
// caller prints from the original is its own to scrub.
func (e *scrubbed) Unwrap() error { return e.err }
