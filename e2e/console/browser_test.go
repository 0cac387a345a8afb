package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/groundcrew/groundcrew/e2e/providerfake"
	"github.com/groundcrew/groundcrew/e2e/stack"
	"github.com/groundcrew/groundcrew/platform/logging/logtest"
)

// apiKey is the key the stack's gateway requires (GATEWAY_API_KEYS).
const apiKey = "console-test-key"

// findChromium returns the browser to drive: $CHROME_PATH, or the first
// Chromium or Chrome on PATH. Without one the test skips locally and fails
// in CI.
func findChromium(t *testing.T) string {
	t.Helper()
	candidates := []string{os.Getenv("CHROME_PATH"), "chromium", "chromium-browser", "google-chrome", "headless-shell"}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	msg := "no Chromium found (install Debian's chromium package, or set CHROME_PATH): the console's browser tests did not run"
	if os.Getenv("GROUNDCREW_CI") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// newBrowser starts a headless Chromium with a fresh profile for the test
// and returns a context for its first tab.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	path := findChromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		// Cancel waits for the browser to exit, so its profile directory
		// (a TempDir, removed after this) is no longer being written.
		if err := chromedp.Cancel(ctx); err != nil {
			t.Logf("closing the browser: %v", err)
		}
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

// suite is the stack and a browser, shared by a test's scenarios.
type suite struct {
	s       *stack.Stack
	browser context.Context
}

// startSuite runs the services with GATEWAY_API_KEYS set, waits for
// readiness and loads the example runbooks into search and a rag
// collection named "runbooks".
func startSuite(t *testing.T) *suite {
	t.Helper()
	browser := newBrowser(t)
	logs := &logtest.Buffer{}
	web, err := providerfake.LoadWeb("../../examples/runbooks")
	if err != nil {
		t.Fatal(err)
	}
	s, err := stack.Start(t.Context(), stack.Options{
		DataDir: t.TempDir(),
		Logs:    logs,
		Env: map[string]string{
			"GATEWAY_API_KEYS":      "ops:" + apiKey,
			"DATABASE_URL":          "",
			"RESEARCH_SUMMARY_RISK": "irreversible",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stopping the stack: %v", err)
		}
		if t.Failed() && testing.Verbose() {
			t.Logf("service logs:\n%s", logs)
		}
	})
	su := &suite{s: s, browser: browser}
	eventually(t, 60*time.Second, "the gateway's /readyz", func() bool {
		if err := s.Err(); err != nil {
			t.Fatalf("a service stopped during start-up: %v", err)
		}
		resp, err := http.Get(s.GatewayURL + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	var docs []map[string]string
	for _, d := range web.Docs() {
		docs = append(docs, map[string]string{"url": d.URL, "title": d.Title, "text": d.Text})
	}
	su.api(t, "POST", "/v1/search/documents", map[string]any{"documents": docs}, nil)
	su.api(t, "POST", "/v1/collections/runbooks/documents", map[string]any{"documents": docs}, nil)
	return su
}

// api calls the gateway with the key and decodes a JSON answer; any
// status but 2xx fails the test.
func (su *suite) api(t *testing.T, method, path string, in, out any) {
	t.Helper()
	if code, body := su.apiStatus(t, method, path, in, out); code/100 != 2 {
		t.Fatalf("%s %s = %d %s", method, path, code, body)
	}
}

func (su *suite) apiStatus(t *testing.T, method, path string, in, out any) (int, string) {
	t.Helper()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, su.s.GatewayURL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+apiKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil && resp.StatusCode/100 == 2 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("decoding %s %s: %v", method, path, err)
		}
	}
	return resp.StatusCode, string(b)
}

// run performs browser actions, each bounded by within.
func (su *suite) run(t *testing.T, within time.Duration, actions ...chromedp.Action) {
	t.Helper()
	ctx, cancel := context.WithTimeout(su.browser, within)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		var loc string
		_ = chromedp.Run(su.browser, chromedp.Location(&loc))
		var text string
		_ = chromedp.Run(su.browser, chromedp.Text("main", &text, chromedp.ByQuery, chromedp.AtLeast(0)))
		t.Fatalf("in the browser at %s: %v\npage text:\n%s", loc, err, text)
	}
}

// open loads a console page and waits for its heading, signing in first
// when the page asks for the key (so a scenario also runs on its own).
func (su *suite) open(t *testing.T, path, heading string) {
	t.Helper()
	var signIn bool
	su.run(t, 20*time.Second,
		chromedp.Navigate(su.s.GatewayURL+path),
		chromedp.WaitVisible(heading+", #api-key", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#api-key") !== null`, &signIn),
	)
	if signIn {
		su.signIn(t)
	}
	su.run(t, 20*time.Second, chromedp.WaitVisible(heading, chromedp.ByQuery))
}

// signIn answers the sign-in screen with the key.
func (su *suite) signIn(t *testing.T) {
	t.Helper()
	su.run(t, 20*time.Second,
		chromedp.WaitVisible("#api-key", chromedp.ByQuery),
		chromedp.SendKeys("#api-key", apiKey, chromedp.ByQuery),
		chromedp.Click(`form[aria-label="Sign in"] button[type="submit"]`, chromedp.ByQuery),
	)
}

// eventually polls cond until it holds or the time is up.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		<-tick.C
	}
}

func sel(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
