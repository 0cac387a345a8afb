package console

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// firstPageBudget is the most JS+CSS the console's first page may transfer
// (gzip), from issue 15.
const firstPageBudget = 150 << 10

// firstPageBytes loads /console/alerts in the signed-in tab and sums the
// bytes the browser received for its scripts and stylesheets (Resource
// Timing's encodedBodySize: as sent, gzip-compressed).
func firstPageBytes(t *testing.T, su *suite) int {
	t.Helper()
	var n int
	su.run(t, 20*time.Second,
		chromedp.Navigate(su.s.GatewayURL+"/console/alerts"),
		chromedp.WaitVisible("#h-alerts", chromedp.ByQuery),
		chromedp.Evaluate(`performance.getEntriesByType("resource")
			.filter(r => /\.(js|css)$/.test(new URL(r.name).pathname))
			.reduce((n, r) => n + r.encodedBodySize, 0)`, &n),
	)
	return n
}

// TestConsoleAlertsFirstRender stores 10,000 alerts and measures, in
// Chromium, how long the alerts page takes from navigation to its first
// rows; and the first page's JS+CSS transfer size. The figures go in
// BENCHMARKS.md; timing is reported, not asserted. Set
// GROUNDCREW_CONSOLE_BENCH=1 to run it (it takes a minute or two).
func TestConsoleAlertsFirstRender(t *testing.T) {
	if os.Getenv("GROUNDCREW_CONSOLE_BENCH") != "1" {
		t.Skip("GROUNDCREW_CONSOLE_BENCH is not 1")
	}
	su := startSuite(t)
	const total, batch = 10000, 1000
	start := time.Now()
	for b := 0; b < total/batch; b++ {
		alerts := make([]map[string]any, batch)
		for i := range alerts {
			n := b*batch + i
			alerts[i] = map[string]any{
				"status":      "firing",
				"labels":      map[string]string{"alertname": fmt.Sprintf("Bench%05d", n), "severity": "page", "instance": fmt.Sprintf("host-%d", n%97)},
				"annotations": map[string]string{"summary": fmt.Sprintf("Synthetic alert %d for the console benchmark", n)},
				"fingerprint": fmt.Sprintf("bench-%05d", n),
			}
		}
		su.api(t, "POST", "/v1/alerts:alertmanager", map[string]any{"version": "4", "status": "firing", "receiver": "bench", "alerts": alerts}, nil)
	}
	t.Logf("stored %d alerts in %s", total, time.Since(start).Round(time.Millisecond))

	su.run(t, 20*time.Second, chromedp.Navigate(su.s.GatewayURL+"/console/alerts"))
	su.signIn(t)
	su.run(t, 20*time.Second, chromedp.WaitVisible("#alert-list li", chromedp.ByQuery))

	size := firstPageBytes(t, su)
	t.Logf("first page JS+CSS transferred: %d bytes (%.1f KB), budget %d KB", size, float64(size)/1024, firstPageBudget>>10)

	var runs []time.Duration
	for range 5 {
		var rows int
		begin := time.Now()
		su.run(t, 30*time.Second,
			chromedp.Navigate(su.s.GatewayURL+"/console/alerts"),
			chromedp.WaitVisible("#alert-list li", chromedp.ByQuery),
		)
		runs = append(runs, time.Since(begin))
		su.run(t, 5*time.Second, chromedp.Evaluate(`document.querySelectorAll("#alert-list li").length`, &rows))
		if rows == 0 {
			t.Fatal("no alert rows rendered")
		}
	}
	t.Logf("alerts page, navigation to first rows with %d alerts stored (5 loads): %v", total, runs)
}
