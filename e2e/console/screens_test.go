package console

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestConsoleScreenshots writes PNGs of every console page at desktop and
// phone width into $GROUNDCREW_SCREENSHOTS (`make screenshots` sets it to
// docs/console). Without it the test has nothing to do and skips.
func TestConsoleScreenshots(t *testing.T) {
	dir := os.Getenv("GROUNDCREW_SCREENSHOTS")
	if dir == "" {
		t.Skip("GROUNDCREW_SCREENSHOTS is not set; `make screenshots` sets it")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	su := startSuite(t)
	// The same scenario the browser test checks: real content on every page.
	sc := seed(t, su)
	pages := consolePages(sc)
	shoot := func(name string, w, h int64) {
		var png []byte
		su.run(t, 20*time.Second, chromedp.EmulateViewport(w, h), chromedp.FullScreenshot(&png, 100))
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, width := range []struct {
		name string
		w, h int64
	}{{"desktop", 1280, 800}, {"phone", 390, 844}} {
		su.run(t, 10*time.Second, chromedp.EmulateViewport(width.w, width.h))
		su.run(t, 20*time.Second, chromedp.Navigate(su.s.GatewayURL+"/console/alerts"), chromedp.WaitVisible("#api-key", chromedp.ByQuery))
		shoot("signin-"+width.name, width.w, width.h)
		su.signIn(t)
		su.run(t, 20*time.Second, chromedp.WaitVisible("#h-alerts", chromedp.ByQuery))
		ce := watchErrors(t, su)
		for _, p := range pages {
			// A picture of an error is no documentation: each page must
			// load clean and show the scenario's content first.
			visitClean(t, su, ce, p)
			shoot(fmt.Sprintf("%s-%s", p.name, width.name), width.w, width.h)
		}
		if width.name == "desktop" {
			// The dark colour scheme, for two pages.
			su.run(t, 5*time.Second, chromedp.ActionFunc(func(ctx context.Context) error { return emulateScheme(ctx, "dark") }))
			for _, p := range pages {
				if p.name != "alerts" && p.name != "approvals" {
					continue
				}
				visitClean(t, su, ce, p)
				shoot(p.name+"-dark", width.w, width.h)
			}
			su.run(t, 5*time.Second, chromedp.ActionFunc(func(ctx context.Context) error { return emulateScheme(ctx, "light") }))
		}
		// A fresh tab state for the next width: sign in again.
		su.run(t, 5*time.Second, chromedp.Evaluate(`sessionStorage.clear()`, nil))
	}
}
