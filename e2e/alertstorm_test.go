package e2e_test

import (
	"bufio"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

// stormPayload is one Alertmanager webhook payload: alerts first..first+n-1
// of group g (alertname StormAlert<g>); without a groupKey when key is
// false, as a hand-made payload would be.
func stormPayload(g, first, n int, key bool) map[string]any {
	name := fmt.Sprintf("StormAlert%02d", g)
	common := map[string]string{"alertname": name, "severity": "warning", "namespace": "shop"}
	p := map[string]any{
		"version": "4", "status": "firing", "receiver": "groundcrew",
		"groupLabels": map[string]string{"alertname": name}, "commonLabels": common,
		"externalURL": "http://alertmanager.example.com:9093",
	}
	if key {
		p["groupKey"] = fmt.Sprintf(`{}:{alertname=%q}`, name)
	}
	var alerts []map[string]any
	for i := first; i < first+n; i++ {
		alerts = append(alerts, map[string]any{
			"status":      "firing",
			"labels":      map[string]string{"alertname": name, "severity": "warning", "namespace": "shop", "pod": fmt.Sprintf("web-%d", i)},
			"annotations": map[string]string{"summary": fmt.Sprintf("Pod shop/web-%d of %s is crash looping", i, name)},
			"fingerprint": fmt.Sprintf("%02d%014d", g, i),
		})
	}
	p["alerts"] = alerts
	return p
}

// metricValue sums a counter (or histogram _count) over its labels on an
// admin /metrics page.
func metricValue(t *testing.T, adminAddr, name string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + adminAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+" ") && !strings.HasPrefix(line, name+"{") {
			continue
		}
		if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
			sum += v
		}
	}
	return sum
}

// TestAlertStorm posts 1,000 alerts in 10 Alertmanager groups through the
// gateway within one second (100 payloads of 10 alerts, 10 per group) and
// reports messages sent, grounding calls, intake latency and the time until
// every alert is DELIVERED; then the same alerts without a groupKey, which
// take the one-message-per-alert path (storm digests off), for comparison.
// Figures are in BENCHMARKS.md.
func TestAlertStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole stack through a storm of 1,000 alerts")
	}
	for _, grouped := range []bool{true, false} {
		name := map[bool]string{true: "groups", false: "one_per_alert"}[grouped]
		t.Run(name, func(t *testing.T) {
			tg := telegramtest.NewServer(t.Cleanup)
			env := map[string]string{
				"TELEGRAM_BOT_TOKEN": "7100000001:AAE-e2e", "TELEGRAM_WEBHOOK_SECRET": "e2e-secret", "TELEGRAM_API_URL": tg.URL,
				"TELEGRAM_CHAT_ID": "-100123", "TELEGRAM_BOT_USERNAME": "groundcrew_bot",
				// The stand-in has no limits; each message counts anyway
				// (Telegram paces a chat to about one a second).
				"NOTIFIER_TELEGRAM_RATE_PER_CHAT": "1000", "NOTIFIER_TELEGRAM_RATE_OVERALL": "1000",
				"NOTIFIER_POLL_INTERVAL": "50ms", "NOTIFIER_DIGEST_THRESHOLD": "0",
				"LOG_LEVEL": "warn",
			}
			s := startStack(t, env, "")
			const groups, perPayload, payloadsPerGroup = 10, 10, 10
			total := groups * perPayload * payloadsPerGroup
			var (
				mu        sync.Mutex
				latencies []time.Duration
				wg        sync.WaitGroup
				errs      = make(chan error, groups*payloadsPerGroup)
			)
			start := time.Now()
			for k := range payloadsPerGroup {
				for g := range groups {
					i := k*groups + g
					wg.Add(1)
					go func() {
						defer wg.Done()
						// Spread over 990 ms: all posted within a second.
						time.Sleep(time.Until(start.Add(time.Duration(i) * 10 * time.Millisecond)))
						t0 := time.Now()
						_, err := call(t.Context(), http.MethodPost, s.GatewayURL+"/v1/alerts:alertmanager", stormPayload(g, k*perPayload, perPayload, grouped), nil)
						mu.Lock()
						latencies = append(latencies, time.Since(t0))
						mu.Unlock()
						errs <- err
					}()
				}
			}
			wg.Wait()
			posted := time.Since(start)
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			slices.Sort(latencies)
			p50, p99 := latencies[len(latencies)/2], latencies[len(latencies)*99/100]

			var firstTen time.Duration
			eventually(t, 5*time.Minute, "every alert to be DELIVERED", func() bool {
				if firstTen == 0 && len(tg.Delivered()) >= groups {
					firstTen = time.Since(start)
				}
				return metricValue(t, s.AdminAddrs["notifier"], "notifier_alerts_delivered_total") >= float64(total)
			})
			all := time.Since(start)
			sent := tg.Delivered()
			roots := 0
			for _, m := range sent {
				if m.ReplyParameters == nil {
					roots++
				}
			}
			calls := metricValue(t, s.AdminAddrs["notifier"], "notifier_enrichment_duration_seconds_count")
			saved := metricValue(t, s.AdminAddrs["notifier"], "notifier_enrichment_cache_hits_total")
			t.Logf("%s: %d alerts in %d payloads posted in %s; intake p50 %s p99 %s; %d messages (%d without a reply target), first %d within %s; grounding calls %.0f (cache hits %.0f); all DELIVERED after %s",
				name, total, len(latencies), posted.Round(time.Millisecond), p50.Round(100*time.Microsecond), p99.Round(100*time.Microsecond),
				len(sent), roots, groups, firstTen.Round(time.Millisecond), calls, saved, all.Round(time.Millisecond))
			if grouped {
				if roots != groups {
					t.Errorf("%d root messages for %d groups, want %d", roots, groups, groups)
				}
				if calls > groups {
					t.Errorf("%.0f grounding calls for %d groups, want at most %d", calls, groups, groups)
				}
				if firstTen > 10*time.Second {
					t.Errorf("the %d roots took %s, want within 10s", groups, firstTen)
				}
			} else if len(sent) != total {
				t.Errorf("%d messages on the one-per-alert path, want %d", len(sent), total)
			}
		})
	}
}
