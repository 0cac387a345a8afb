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

	// Something to show on every page.
	var alert struct {
		Alert struct{ ID string }
	}
	for _, text := range []string{
		"Checkout API 5xx above 10% for 5 minutes",
		"Disk full on db-1: /var/lib/postgresql at 97%",
	} {
		su.api(t, "POST", "/v1/alerts", map[string]any{"text": text, "metadata": map[string]any{"labels": map[string]string{"severity": "page"}}}, &alert)
	}
	su.api(t, "POST", "/v1/alerts:alertmanager", map[string]any{
		"version": "4", "status": "firing", "receiver": "groundcrew", "groupKey": `{}:{alertname="PostgresTooManyConnections"}`,
		"groupLabels": map[string]string{"alertname": "PostgresTooManyConnections"},
		"alerts": []map[string]any{
			{"status": "firing", "labels": map[string]string{"alertname": "PostgresTooManyConnections", "instance": "db-1", "severity": "page"},
				"annotations": map[string]string{"summary": "Postgres on db-1 refuses connections: too many clients"}},
			{"status": "firing", "labels": map[string]string{"alertname": "PostgresTooManyConnections", "instance": "db-2", "severity": "page"},
				"annotations": map[string]string{"summary": "Postgres on db-2 refuses connections: too many clients"}},
		},
	}, nil)
	var run struct {
		Run struct{ ID string }
	}
	su.api(t, "POST", "/v1/research", map[string]any{
		"topic": "how to free disk space on a full database host", "userId": "6f1c2d8e-4b7a-4c1e-9a55-2f0d3b9e7c41", "maxIterations": 1,
	}, &run)
	var messageID string
	eventually(t, 90*time.Second, "the alert to be enriched and a research approval to wait", func() bool {
		var a struct {
			Alert struct{ Status, GroundingMessageID string }
		}
		su.api(t, "GET", "/v1/alerts/"+alert.Alert.ID, nil, &a)
		var ap struct{ Approvals []struct{ ID string } }
		su.api(t, "GET", "/v1/approvals?status=PENDING", nil, &ap)
		messageID = a.Alert.GroundingMessageID
		return a.Alert.Status == "DELIVERED" && len(ap.Approvals) > 0
	})

	type page struct {
		name, path, ready string
		act               []chromedp.Action
	}
	pages := []page{
		{"alerts", "/console/alerts", "#alert-list li", nil},
		{"alert", "/console/alerts/" + alert.Alert.ID, "#h-alert", nil},
		{"messages", "/console/messages", "#h-messages", nil},
		{"approvals", "/console/approvals", "#pending-approvals", nil},
		{"ask", "/console/ask", "#h-ask", []chromedp.Action{
			chromedp.WaitReady(`form[aria-label="Ask"] select option[value="runbooks"]`, chromedp.ByQuery),
			chromedp.SendKeys(`form[aria-label="Ask"] textarea`, "What should I check when the checkout API returns 5xx errors?", chromedp.ByQuery),
			chromedp.Click(`form[aria-label="Ask"] button[type="submit"]`, chromedp.ByQuery),
			chromedp.WaitVisible("#primary-source", chromedp.ByQuery),
		}},
		{"research", "/console/research", "#h-research", nil},
		{"research-run", "/console/research/" + run.Run.ID, "#run-status", nil},
		{"search", "/console/search", "#h-search", []chromedp.Action{
			chromedp.SendKeys(`form[aria-label="Search"] input[type="search"]`, "disk full", chromedp.ByQuery),
			chromedp.Click(`form[aria-label="Search"] button[type="submit"]`, chromedp.ByQuery),
			chromedp.WaitVisible("#search-results", chromedp.ByQuery),
		}},
	}
	if messageID != "" {
		pages = append(pages, page{"message", "/console/messages/" + messageID, "#cited-text", nil})
	}
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
		for _, p := range pages {
			su.run(t, 20*time.Second, chromedp.Navigate(su.s.GatewayURL+p.path), chromedp.WaitVisible(p.ready, chromedp.ByQuery))
			su.run(t, 60*time.Second, p.act...)
			shoot(fmt.Sprintf("%s-%s", p.name, width.name), width.w, width.h)
		}
		if width.name == "desktop" {
			// The dark colour scheme, for two pages.
			su.run(t, 5*time.Second, chromedp.ActionFunc(func(ctx context.Context) error { return emulateScheme(ctx, "dark") }))
			for _, p := range pages[:4] {
				if p.name != "alerts" && p.name != "approvals" {
					continue
				}
				su.run(t, 20*time.Second, chromedp.Navigate(su.s.GatewayURL+p.path), chromedp.WaitVisible(p.ready, chromedp.ByQuery))
				shoot(p.name+"-dark", width.w, width.h)
			}
			su.run(t, 5*time.Second, chromedp.ActionFunc(func(ctx context.Context) error { return emulateScheme(ctx, "light") }))
		}
		// A fresh tab state for the next width: sign in again.
		su.run(t, 5*time.Second, chromedp.Evaluate(`sessionStorage.clear()`, nil))
	}
}
