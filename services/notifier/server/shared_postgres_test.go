package server_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/notifier/internal/markdownv2"
	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

// TestTwoInstancesShareOnePostgres runs two notifiers on one Postgres
// database, sends alerts to both, and checks every alert reaches Telegram
// exactly once: the instances share the job queue, they do not each deliver.
func TestTwoInstancesShareOnePostgres(t *testing.T) {
	dbURL := sqlstoretest.PostgresURL(t, "notifier_shared")
	tg := telegramtest.NewServer(t.Cleanup)
	grounding := startGrounding(t, 5*time.Millisecond)

	startInstance := func() running {
		return runNotifier(t, map[string]string{
			"DATA_DIR":                        t.TempDir(),
			"DATABASE_URL":                    dbURL,
			"NOTIFIER_LISTEN_ADDR":            "127.0.0.1:0",
			"NOTIFIER_ADMIN_ADDR":             "127.0.0.1:0",
			"GROUNDING_ADDR":                  grounding,
			"TELEGRAM_BOT_TOKEN":              "7100000001:AAE-shared-test",
			"TELEGRAM_WEBHOOK_SECRET":         "shared-secret",
			"TELEGRAM_API_URL":                tg.URL,
			"TELEGRAM_CHAT_ID":                "-100123",
			"TELEGRAM_BOT_USERNAME":           "groundcrew_bot",
			"NOTIFIER_TELEGRAM_RATE_PER_CHAT": "1000",
			"NOTIFIER_TELEGRAM_RATE_OVERALL":  "1000",
			"NOTIFIER_POLL_INTERVAL":          "20ms",
			"NOTIFIER_WORKERS":                "4",
			"GRACE_PERIOD":                    "2s",
			// Each alert's own message is counted: no storm digest.
			"NOTIFIER_DIGEST_THRESHOLD": "0",
		})
	}
	a, b := startInstance(), startInstance()
	clients := []notifierv1.NotifierServiceClient{dial(t, a.grpcAddr), dial(t, b.grpcAddr)}

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
		if len(a.logs.Named(t, "alert delivered"))+len(b.logs.Named(t, "alert delivered")) >= n {
			break
		}
	}
	for name, instance := range map[string]running{"a": a, "b": b} {
		delivered := len(instance.logs.Named(t, "alert delivered"))
		if delivered == 0 {
			t.Errorf("instance %s delivered no alert; the queue was not shared", name)
		}
		t.Logf("instance %s delivered %d alerts", name, delivered)
	}
}

// TestTwoInstancesOpenOneRootPerGroup posts the notifications of one
// Alertmanager group to two notifiers on one PostgreSQL at once: the group
// gets one root message, and every other notification replies to it.
func TestTwoInstancesOpenOneRootPerGroup(t *testing.T) {
	dbURL := sqlstoretest.PostgresURL(t, "notifier_groups")
	tg := telegramtest.NewServer(t.Cleanup)
	grounding := startGrounding(t, 5*time.Millisecond)
	startInstance := func() running {
		return runNotifier(t, map[string]string{
			"DATA_DIR": t.TempDir(), "DATABASE_URL": dbURL,
			"NOTIFIER_LISTEN_ADDR": "127.0.0.1:0", "NOTIFIER_ADMIN_ADDR": "127.0.0.1:0",
			"GROUNDING_ADDR": grounding, "TELEGRAM_BOT_TOKEN": "7100000001:AAE-shared-test",
			"TELEGRAM_WEBHOOK_SECRET": "shared-secret", "TELEGRAM_API_URL": tg.URL,
			"TELEGRAM_CHAT_ID": "-100123", "TELEGRAM_BOT_USERNAME": "groundcrew_bot",
			"NOTIFIER_TELEGRAM_RATE_PER_CHAT": "1000", "NOTIFIER_TELEGRAM_RATE_OVERALL": "1000",
			"NOTIFIER_POLL_INTERVAL": "20ms", "GRACE_PERIOD": "2s",
		})
	}
	a, b := startInstance(), startInstance()
	clients := []notifierv1.NotifierServiceClient{dial(t, a.grpcAddr), dial(t, b.grpcAddr)}

	const key, posts = `{}:{alertname="KubePodCrashLooping"}`, 10
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range posts {
		req := crashLooping(key, 1, "firing")
		req.Alerts[0].Labels["pod"] = fmt.Sprintf("web-%d", i)
		req.Alerts[0].Fingerprint = fmt.Sprintf("%016x", 100+i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if _, err := clients[i%2].IngestAlertmanager(t.Context(), req); err != nil {
				t.Errorf("IngestAlertmanager #%d: %v", i, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	sent := tg.WaitDelivered(posts, 60*time.Second)
	roots := 0
	for _, m := range sent {
		if m.ReplyParameters == nil {
			roots++
		}
	}
	if roots != 1 || len(sent) != posts {
		t.Errorf("%d messages, %d of them roots; want %d messages and 1 root", len(sent), roots, posts)
	}
	list, err := clients[0].ListAlertGroups(t.Context(), &notifierv1.ListAlertGroupsRequest{})
	if err != nil || len(list.GetAlertGroups()) != 1 {
		t.Fatalf("ListAlertGroups = %v, %v; want one group", list, err)
	}
}
