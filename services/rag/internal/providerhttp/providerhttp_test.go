package providerhttp

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
)

// TestDescribe: an *openai.Error (whose own text is only the status)
// gains the provider's code, type, message and the request's path; the
// key is scrubbed wherever it was echoed; errors.As still finds it.
func TestDescribe(t *testing.T) {
	const key = "gsk_describeKEY0123456789abcdef"
	req, _ := http.NewRequest(http.MethodPost, "https://api.groq.com/openai/v1/chat/completions?key="+key, nil)
	apiErr := &openai.Error{StatusCode: 429, Code: "rate_limit_exceeded", Type: "tokens",
		Message: "Rate limit reached for key " + key, Request: req}
	err := Describe("groq chat completion", apiErr, key)
	for _, want := range []string{"groq chat completion: HTTP 429 rate_limit_exceeded (tokens): Rate limit reached for key [REDACTED]", "[POST /openai/v1/chat/completions]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Describe = %q, lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "describeKEY") {
		t.Errorf("the key survived: %v", err)
	}
	var got *openai.Error
	if !errors.As(err, &got) || got.StatusCode != 429 {
		t.Errorf("errors.As lost the provider error: %v", err)
	}
	if err := Describe("x", errors.New("dial tcp: refused "+key), key); strings.Contains(err.Error(), "describeKEY") || !strings.HasPrefix(err.Error(), "x: dial tcp") {
		t.Errorf("a transport error: %v", err)
	}
	if Describe("x", nil) != nil {
		t.Error("Describe(nil) is not nil")
	}
}
