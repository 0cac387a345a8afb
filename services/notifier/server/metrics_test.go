package server_test

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

// TestRunReportsTelegramAndQueueMetrics delivers one alert to a fake Bot
// API and reads the admin server's /metrics: Telegram requests are counted
// without any trace of the token-bearing URL, and the pipeline queue's
// depth is reported.
func TestRunReportsTelegramAndQueueMetrics(t *testing.T) {
	const token = "7100000001:AAE-metrics-test"
	tg := telegramtest.NewServer(t.Cleanup)
	n := runNotifier(t, map[string]string{
		"DATA_DIR":                t.TempDir(),
		"NOTIFIER_LISTEN_ADDR":    "127.0.0.1:0",
		"NOTIFIER_ADMIN_ADDR":     "127.0.0.1:0",
		"GROUNDING_ADDR":          closedAddr(t),
		"TELEGRAM_BOT_TOKEN":      token,
		"TELEGRAM_WEBHOOK_SECRET": "metrics-secret",
		"TELEGRAM_API_URL":        tg.URL,
		"TELEGRAM_CHAT_ID":        "-100123",
		"TELEGRAM_BOT_USERNAME":   "groundcrew_bot",
		"NOTIFIER_POLL_INTERVAL":  "20ms",
		"GRACE_PERIOD":            "2s",
	})
	ctx := t.Context()

	c := dial(t, n.grpcAddr)
	if _, err := c.IngestAlert(ctx, &notifierv1.IngestAlertRequest{Text: "Disk almost full on db-1"}); err != nil {
		t.Fatal(err)
	}
	if got := tg.WaitDelivered(1, 30*time.Second); len(got) != 1 {
		t.Fatalf("delivered %d messages to Telegram, want 1", len(got))
	}

	// The fake Bot API sees the message before our client has read the
	// reply and counted it, so the scrape waits for the lines to appear.
	metrics := waitForMetrics(t, "http://"+n.adminAddr+"/metrics",
		`provider_requests_total\{code="200",provider="telegram"\} [1-9][0-9]*`,
		`provider_request_duration_seconds_count\{provider="telegram"\} [1-9][0-9]*`,
		// The job may still be finishing, so only the series are checked.
		`jobqueue_jobs\{queue="default",state="available"\} \d+`,
		`jobqueue_jobs\{queue="default",state="scheduled"\} \d+`,
		`jobqueue_jobs\{queue="default",state="retryable"\} \d+`,
		`jobqueue_jobs\{queue="default",state="running"\} \d+`,
		`jobqueue_collect_errors_total\{queue="default"\} 0`,
	)
	for _, secret := range []string{token, "AAE-metrics-test", "sendMessage"} {
		if strings.Contains(metrics, secret) {
			t.Errorf("/metrics contains %q", secret)
		}
	}
}

// waitForMetrics scrapes url until it has a line matching each of the
// patterns (regular expressions for whole lines), for up to ten seconds;
// it reports the lines still missing then and returns the last scrape.
// Metrics are counted after the event a test waits for (a reply read, a row
// committed), so a single scrape right after it can come too early.
func waitForMetrics(t *testing.T, url string, patterns ...string) string {
	t.Helper()
	res := make([]*regexp.Regexp, len(patterns))
	for i, p := range patterns {
		res[i] = regexp.MustCompile(`(?m)^` + p + `$`)
	}
	var metrics string
	var missing []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		metrics, missing = scrape(t, url), nil
		for i, re := range res {
			if !re.MatchString(metrics) {
				missing = append(missing, patterns[i])
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, p := range missing {
		t.Errorf("%s lacks a line matching %s", url, p)
	}
	return metrics
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}
