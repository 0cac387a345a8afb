package gemini_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/groundcrew/groundcrew/services/grounding/internal/gemini"
	"github.com/groundcrew/groundcrew/services/grounding/internal/grounding"
)

// echoServer answers every request with an error that echoes the request
// line and every header, as misconfigured proxies and some providers do;
// status decides which error.
func echoServer(t *testing.T, status int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var echo strings.Builder
		fmt.Fprintf(&echo, "%s %s?%s", r.Method, r.URL.Path, r.URL.RawQuery)
		for k, vs := range r.Header {
			fmt.Fprintf(&echo, "\n%s: %s", k, strings.Join(vs, ","))
		}
		msg, _ := jsonString(echo.String())
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(status)
		// The key in the status too: nothing the peer sends is trusted.
		fmt.Fprintf(w, `{"error":{"code":%d,"message":%s,"status":"INVALID_ARGUMENT %s"}}`, status, msg, r.Header.Get("X-Goog-Api-Key"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func jsonString(s string) (string, error) {
	var b bytes.Buffer
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String(), nil
}

// TestKeyNeverLeaves: with a provider that echoes the request's path and
// headers in its errors, neither the log, the stored message, its
// artifact nor any error in the chain holds the API key.
func TestKeyNeverLeaves(t *testing.T) {
	for _, status := range []int{http.StatusBadRequest, http.StatusServiceUnavailable} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			srv := echoServer(t, status)
			var logs bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			c, err := gemini.New(t.Context(), gemini.Config{
				APIKey: testKey, Model: testModel, BaseURL: srv.URL, Sleep: (&waits{}).sleep, Logger: logger,
			})
			if err != nil {
				t.Fatal(err)
			}
			svc, arts := serviceWithArtifacts(t, c, evidence)
			m, err := svc.Ground(t.Context(), grounding.GroundRequest{Text: "max_connections reached", Round: grounding.RoundConfig{Engine: grounding.EngineLocal}})
			if err != nil {
				t.Fatal(err)
			}
			if m.Status != grounding.StatusFailed {
				t.Fatalf("status %v, want failed", m.Status)
			}
			raw, err := arts.Read(m.ArtifactPath)
			if err != nil || !bytes.Contains(raw, []byte("X-Goog-Api-Key")) {
				t.Fatalf("artifact %q, %v; want the echoed error body", raw, err)
			}
			stored, err := svc.Get(t.Context(), m.ID)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Generate(t.Context(), grounding.Prompt{Turns: []grounding.Turn{{Role: grounding.RoleUser, Parts: []string{"x"}}}})
			var chain []string
			for e := err; e != nil; e = errors.Unwrap(e) {
				chain = append(chain, e.Error(), fmt.Sprintf("%+v", e))
			}
			pe, _ := errors.AsType[*grounding.ProviderError](err)
			if pe == nil {
				t.Fatalf("err = %v, want a *ProviderError", err)
			}
			_, qerr := c.DeriveQuery(t.Context(), "disk full")
			for what, s := range map[string]string{
				"log": logs.String(), "message error": m.Error, "stored error": stored.Error, "artifact": string(raw),
				"error chain": strings.Join(chain, "\n"), "raw": string(pe.Raw), "status": pe.Status, "query error": fmt.Sprint(qerr),
			} {
				if strings.Contains(s, testKey) {
					t.Errorf("%s holds the API key:\n%s", what, s)
				}
			}
			if !strings.Contains(strings.Join(chain, "\n"), "X-Goog-Api-Key") {
				t.Errorf("the test did not echo the headers:\n%s", chain)
			}
		})
	}
}

// TestRedirectToAnotherHostRefused: a redirect to another host is not
// followed, so the key never reaches it; the round fails.
func TestRedirectToAnotherHostRefused(t *testing.T) {
	var stolen atomic.Int64
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Goog-Api-Key") != "" {
			stolen.Add(1)
		}
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	t.Cleanup(thief.Close)
	// Same port, other host name: another origin all the same.
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, thief.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	c, err := gemini.New(t.Context(), gemini.Config{APIKey: testKey, Model: testModel, BaseURL: redirector.URL, Sleep: (&waits{}).sleep, Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Generate(t.Context(), grounding.Prompt{Turns: []grounding.Turn{{Role: grounding.RoleUser, Parts: []string{"x"}}}})
	pe, ok := errors.AsType[*grounding.ProviderError](err)
	if !ok || pe.Code != http.StatusTemporaryRedirect || pe.Attempts != 1 {
		t.Errorf("err = %v, want the 307 unfollowed, once", err)
	}
	if n := stolen.Load(); n != 0 {
		t.Errorf("the other host received the key %d times", n)
	}
}
