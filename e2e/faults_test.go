package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/e2e/faultinject"
	"github.com/groundcrew/groundcrew/e2e/providerfake"
	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

// faultRate is the share of provider requests that fail, as the
// production-readiness issue asks: 500s, 429s with retry-after, slow
// answers and dropped connections.
const faultRate = 0.3

// flakyProviders starts Gemini, Exa, Groq and Telegram stand-ins behind
// fault injectors and returns the environment pointing the stack at them.
type flakyProviders struct {
	gemini   *providerfake.Gemini
	telegram *telegramtest.Server
	inj      map[string]*faultinject.Injector
	env      map[string]string
}

func startFlakyProviders(t *testing.T, slow time.Duration) *flakyProviders {
	t.Helper()
	web := loadWeb(t)
	p := &flakyProviders{
		gemini:   &providerfake.Gemini{Web: web, APIKey: "gemini-key"},
		telegram: telegramtest.NewServer(t.Cleanup),
		inj:      map[string]*faultinject.Injector{},
	}
	cfg := func(seed uint64, body func(int, time.Duration) (string, []byte)) faultinject.Config {
		return faultinject.Config{Rate: faultRate, Seed: seed, Delay: slow, RetryAfter: time.Second, Body: body}
	}
	var gemini, exa, groq, telegram string
	p.inj["gemini"], gemini = faulty(t, p.gemini, cfg(1, providerfake.GeminiErrorBody))
	p.inj["exa"], exa = faulty(t, &providerfake.Exa{Web: web, APIKey: "exa-key"}, cfg(2, providerfake.ExaErrorBody))
	p.inj["groq"], groq = faulty(t, &providerfake.Groq{APIKey: "groq-key"}, cfg(3, providerfake.GroqErrorBody))
	p.inj["telegram"], telegram = faulty(t, p.telegram.Handler(), cfg(4, providerfake.TelegramErrorBody))
	p.env = map[string]string{
		"GEMINI_API_KEY": "gemini-key", "GEMINI_MODEL": "gemini-test", "GOOGLE_GEMINI_BASE_URL": gemini,
		"EXA_API_KEY": "exa-key", "EXA_BASE_URL": exa,
		"GROQ_API_KEY": "groq-key", "GROQ_BASE_URL": groq + "/openai/v1",
		"TELEGRAM_BOT_TOKEN": "7100000001:AAE-e2e", "TELEGRAM_WEBHOOK_SECRET": "e2e-secret", "TELEGRAM_API_URL": telegram,
		"TELEGRAM_CHAT_ID": "-100123", "TELEGRAM_BOT_USERNAME": "groundcrew_bot",
		// The stand-in has no rate limits of its own to respect.
		"NOTIFIER_TELEGRAM_RATE_PER_CHAT": "1000", "NOTIFIER_TELEGRAM_RATE_OVERALL": "1000",
		"NOTIFIER_POLL_INTERVAL": "50ms", "RESEARCH_POLL_INTERVAL": "50ms",
		// Retries in tenths of seconds, not seconds, to keep the test short.
		"NOTIFIER_RETRY_BASE_DELAY": "100ms", "NOTIFIER_RETRY_MAX_DELAY": "1s",
		// Each alert's own message is what the test follows, not a storm
		// digest of the backlog the faults build up.
		"NOTIFIER_DIGEST_THRESHOLD": "0",
	}
	return p
}

func (p *flakyProviders) report(t *testing.T) {
	t.Helper()
	for name, inj := range p.inj {
		faults, passed := inj.Counts()
		t.Logf("%s: %d requests passed, faults %v", name, passed, faults)
	}
}

type alertView struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Text    string `json:"text"`
	Error   string `json:"error"`
	Message struct {
		Text string `json:"text"`
	} `json:"message"`
	Attempts int `json:"attempts"`
}

// TestAlertsSurviveProviderFaults sends alerts through the gateway while
// Gemini (query and grounded summary) and Telegram (delivery) fail 30% of
// their requests in every way the issue lists. Every alert must reach
// Telegram, enriched or with the "Enrichment unavailable" note, and at
// most as many times more than once as there were answers lost after
// Telegram had acted on them (the documented at-least-once window).
func TestAlertsSurviveProviderFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole stack against flaky providers")
	}
	onEachDatabase(t, func(t *testing.T, databaseURL string) {
		p := startFlakyProviders(t, 2*time.Second)
		// An enrichment held up by slow or failing Gemini answers gives up
		// after 3 s and the alert goes out with the note.
		p.env["NOTIFIER_ENRICH_TIMEOUT"] = "3s"
		s := startStack(t, p.env, databaseURL)
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
		defer cancel()

		topics := []string{
			"Checkout api 5xx error rate above 10 percent",
			"Disk almost full on the database volume",
			"Postgres refuses connections, too many clients already",
			"Kafka consumer lag growing on the orders topic",
			"Pod in CrashLoopBackOff after deploy",
			"TLS certificate expires in 3 days",
		}
		const n = 30
		ids := map[string]string{} // token → alert id
		for i := range n {
			token := fmt.Sprintf("e2e%04d", i)
			var resp struct{ Alert alertView }
			if _, err := call(ctx, "POST", s.GatewayURL+"/v1/alerts", map[string]any{
				"text": fmt.Sprintf("%s, alert %s", topics[i%len(topics)], token),
			}, &resp); err != nil {
				t.Fatalf("alert %d: %v", i, err)
			}
			if resp.Alert.ID == "" {
				t.Fatalf("alert %d: no id in the answer", i)
			}
			ids[token] = resp.Alert.ID
		}

		final := map[string]alertView{}
		eventually(t, 2*time.Minute, "every alert to be DELIVERED", func() bool {
			for token, id := range ids {
				if a, ok := final[token]; ok && a.Status == "DELIVERED" {
					continue
				}
				var resp struct{ Alert alertView }
				if _, err := call(ctx, "GET", s.GatewayURL+"/v1/alerts/"+id, nil, &resp); err != nil {
					return false
				}
				final[token] = resp.Alert
				if resp.Alert.Status == "FAILED" {
					t.Fatalf("alert %s FAILED: %s", id, resp.Alert.Error)
				}
				if resp.Alert.Status != "DELIVERED" {
					return false
				}
			}
			return true
		})
		p.report(t)

		// What Telegram received, per alert.
		got := map[string]int{}
		enriched, noted := 0, 0
		for _, m := range p.telegram.Delivered() {
			for token := range ids {
				if !strings.Contains(m.Text, token) {
					continue
				}
				got[token]++
				switch {
				case strings.Contains(m.Text, "Enriched Context"):
					enriched++
				case strings.Contains(m.Text, "Enrichment unavailable"):
					noted++
				default:
					t.Errorf("message for %s is neither enriched nor noted:\n%s", token, m.Text)
				}
			}
		}
		dupes := 0
		for token := range ids {
			switch c := got[token]; {
			case c == 0:
				t.Errorf("alert %s (%s) is DELIVERED but never reached Telegram", token, ids[token])
			case c > 1:
				dupes += c - 1
			}
		}
		tgFaults, _ := p.inj["telegram"].Counts()
		if lost := int(tgFaults[faultinject.DropAfter]); dupes > lost {
			t.Errorf("%d repeated deliveries, but only %d Telegram answers were lost after sending", dupes, lost)
		}
		t.Logf("%d alerts: %d messages enriched, %d with the enrichment note, %d repeats (%d answers lost after sending)",
			n, enriched, noted, dupes, tgFaults[faultinject.DropAfter])
		if enriched == 0 {
			t.Errorf("no alert was enriched: with 30%% faults and retries most should be")
		}
		if p.gemini.Calls() == 0 {
			t.Errorf("Gemini was never called: the stack did not use the stand-in")
		}
	})
}
