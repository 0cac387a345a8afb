package redact

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const (
	botToken = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
	apiKey   = "sk-live-9f8e7d6c5b4a39281706f5e4"
)

func TestString(t *testing.T) {
	tests := []struct {
		name, in string
		secrets  []string
		want     string
	}{
		{"token in a Bot API path", `Post "https://api.telegram.org/bot` + botToken + `/sendMessage": dial tcp: i/o timeout`, nil,
			`Post "https://api.telegram.org/bot[REDACTED]/sendMessage": dial tcp: i/o timeout`},
		{"given secret anywhere", "upstream said: bad key " + apiKey + " (check it)", []string{apiKey},
			"upstream said: bad key [REDACTED] (check it)"},
		{"escaped secret", "GET /v1/x?k=" + "a%2Fb%2Bc%3Dsecret9", []string{"a/b+c=secret9"}, "GET /v1/x?k=[REDACTED]"},
		{"key in a query", `GET https://generativelanguage.googleapis.com/v1beta/models/x:generateContent?key=AIzaSyA-1234567890abcdef&alt=sse`, nil,
			`GET https://generativelanguage.googleapis.com/v1beta/models/x:generateContent?key=[REDACTED]&alt=sse`},
		{"authorization header echoed", `headers: {"Authorization": "Bearer gsk_abcdefghijklmnop"}`, nil, `headers: {"Authorization": "Bearer [REDACTED]"}`},
		{"api key headers", `x-goog-api-key: AIzaSyA-zzzz x-api-key=exa-1234 X-Subscription-Token: BSAxyz`, nil,
			`x-goog-api-key: [REDACTED] x-api-key=[REDACTED] X-Subscription-Token: [REDACTED]`},
		{"short secrets ignored", "a ok value", []string{"a", "ok", ""}, "a ok value"},
		{"nothing to scrub", "chat not found", []string{apiKey}, "chat not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := String(tt.in, tt.secrets...); got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

var errSentinel = errors.New("sentinel")

func TestErrorKeepsTheChain(t *testing.T) {
	if Error(nil, apiKey) != nil {
		t.Fatal("Error(nil) is not nil")
	}
	plain := errors.New("chat not found")
	if got := Error(plain, apiKey); got != plain {
		t.Errorf("Error without a secret in it = %v, want the same error", got)
	}
	err := fmt.Errorf("calling with %s: %w", apiKey, errSentinel)
	got := Error(err, apiKey)
	if strings.Contains(got.Error(), apiKey) {
		t.Errorf("Error(...) = %q still holds the key", got)
	}
	if !errors.Is(got, errSentinel) {
		t.Error("errors.Is lost the sentinel")
	}
}

// TestEchoingProvider is what the adapters face: a server that echoes the
// request's path, query and headers in its error, reached by a client that
// put the secrets in all three.
func TestEchoingProvider(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprintf(w, `{"error":"upstream failed for %s; headers: %v"}`, r.URL.String(), r.Header)
	}))
	defer srv.Close()
	req, _ := http.NewRequestWithContext(context.Background(), "POST", srv.URL+"/bot"+botToken+"/sendMessage?key="+apiKey, nil)
	req.Header.Set("Authorization", "Bearer "+apiKey)
	req.Header.Set("X-Goog-Api-Key", apiKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = fmt.Fprint(&b, resp.Status, " ")
	buf := make([]byte, 4096)
	n, _ := resp.Body.Read(buf)
	b.Write(buf[:n])
	got := Error(errors.New(b.String()), botToken, apiKey).Error()
	for _, secret := range []string{botToken, apiKey} {
		if strings.Contains(got, secret) {
			t.Errorf("scrubbed error %q still holds %q", got, secret)
		}
	}
	if !strings.Contains(got, Mask) {
		t.Errorf("scrubbed error %q shows no mask", got)
	}
}
