// Package providerhttp holds what rag's provider clients (Groq, the
// embeddings endpoints) share about HTTP errors: what the provider said,
// without the API key. Their redirect policy is platform/httpretry's
// SameOrigin: the key never travels to another host.
package providerhttp

import (
	"errors"
	"fmt"

	"github.com/openai/openai-go/v3"

	"github.com/groundcrew/groundcrew/platform/redact"
)

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
