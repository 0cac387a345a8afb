package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/logging/logtest"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/notifier/internal/markdownv2"
	"github.com/groundcrew/groundcrew/services/notifier/server"
	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

// TestTwoInstancesShareOnePostgres runs two notifiers on one Postgres
// database, sends alerts to both, and checks every alert reaches Telegram
// exactly once: the instances share the job queue, they do not each deliver.
func TestTwoInstancesShareOnePostgres(t *testing.T) {
	dbURL := sqlstoretest.PostgresURL(t, "notifier_shared")
	tg := telegramtest.NewServer(t.Cleanup)
	grounding := startGrounding(t, 5*time.Millisecond)

	startInstance := func(name string) (notifierv1.NotifierServiceClient, *logtest.Buffer) {
		cfg, err := config.Load[server.Config](config.MapLookup(map[string]string{
			"DATA_DIR":                        t.TempDir(),
			"DATABASE_URL":                    dbURL,
			"NOTIFIER_LISTEN_ADDR":            "127.0.0.1:0",
			"NOTIFIER_ADMIN_ADDR":             "127.0.0.1:0",
			"GROUNDING_ADDR":                  grounding,
			"TELEGRAM_BOT_TOKEN":              "7100000001:AAE-shared-test",
			"TELEGRAM_API_URL":                tg.URL,
			"TELEGRAM_CHAT_ID":                "-100123",
			"TELEGRAM_BOT_USERNAME":           "groundcrew_bot",
			"NOTIFIER_TELEGRAM_RATE_PER_CHAT": "1000",
			"NOTIFIER_TELEGRAM_RATE_OVERALL":  "1000",
			"NOTIFIER_POLL_INTERVAL":          "20ms",
			"NOTIFIER_WORKERS":                "4",
			"GRACE_PERIOD":                    "2s",
		}))
		if err != nil {
			t.Fatal(err)
		}
		logs := &logtest.Buffer{}
		logger := slog.New(slog.NewJSONHandler(logs, nil)).With("instance", name)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- server.Run(ctx, cfg, logger) }()
		t.Cleanup(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Errorf("%s did not stop", name)
			}
		})
		deadline := time.Now().Add(30 * time.Second)
		for {
			if recs := logs.Named(t, "serving"); len(recs) > 0 {
				return dial(t, recs[0]["grpc_addr"].(string)), logs
			}
			select {
			case err := <-done:
				t.Fatalf("%s stopped: %v\n%s", name, err, logs.String())
			case <-time.After(10 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not serving:\n%s", name, logs.String())
			}
		}
	}
	clientA, logsA := startInstance("a")
	clientB, logsB := startInstance("b")
	clients := []notifierv1.NotifierServiceClient{clientA, clientB}

	const n = 40
	texts := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		texts[i] = fmt.Sprintf("shared queue alert #%02d: disk full on db-%d", i, i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := clients[i%2].IngestAlert(context.Background(), &notifierv1.IngestAlertRequest{Text: texts[i]}); err != nil {
				t.Errorf("IngestAlert #%d: %v", i, err)
			}
		}()
	}
	wg.Wait()

	got := tg.WaitDelivered(n, 60*time.Second)
	counts := map[string]int{}
	for _, m := range got {
		for _, text := range texts {
			if strings.HasPrefix(m.Text, markdownv2.Escape(text)+"\n") {
				counts[text]++
			}
		}
	}
	for _, text := range texts {
		if c := counts[text]; c != 1 {
			t.Errorf("%q delivered %d times, want exactly once", text, c)
		}
	}
	if len(got) != n {
		t.Errorf("Telegram received %d messages, want %d", len(got), n)
	}
	// Both instances took jobs from the shared queue. An instance logs a
	// delivery after Telegram's reply, so wait for the last of the logs.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if len(logsA.Named(t, "alert delivered"))+len(logsB.Named(t, "alert delivered")) >= n {
			break
		}
	}
	for name, logs := range map[string]*logtest.Buffer{"a": logsA, "b": logsB} {
		delivered := len(logs.Named(t, "alert delivered"))
		if delivered == 0 {
			t.Errorf("instance %s delivered no alert; the queue was not shared", name)
		}
		t.Logf("instance %s delivered %d alerts", name, delivered)
	}
}
