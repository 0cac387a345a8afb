package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/logging/logtest"
	"github.com/groundcrew/groundcrew/services/notifier/internal/markdownv2"
	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

// alertmanagerBinaries finds Debian's prometheus-alertmanager (or an
// upstream alertmanager) and amtool, or skips the test.
func alertmanagerBinaries(t *testing.T) (alertmanager, amtool string) {
	t.Helper()
	for _, name := range []string{"prometheus-alertmanager", "alertmanager"} {
		if p, err := exec.LookPath(name); err == nil {
			alertmanager = p
			break
		}
	}
	amtool, err := exec.LookPath("amtool")
	if alertmanager == "" || err != nil {
		t.Skip("alertmanager and amtool are not on PATH; install them with " +
			"`apt-get install -y --no-install-recommends prometheus-alertmanager` (.ci/run does) to run this test")
	}
	return alertmanager, amtool
}

// webhookBridge is what the gateway does for POST /v1/alerts:alertmanager:
// the body, unchanged, decoded with protojson into IngestAlertmanager.
func webhookBridge(t *testing.T, c notifierv1.NotifierServiceClient) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "reading body", http.StatusBadRequest)
			return
		}
		var req notifierv1.IngestAlertmanagerRequest
		if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(body, &req); err != nil {
			t.Errorf("decoding Alertmanager's webhook body: %v\n%s", err, body)
			http.Error(w, "bad payload", http.StatusBadRequest)
			return
		}
		if _, err := c.IngestAlertmanager(r.Context(), &req); err != nil {
			t.Errorf("IngestAlertmanager: %v", err)
			http.Error(w, "ingest failed", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// startAlertmanager runs a real Alertmanager whose one receiver posts to
// webhookURL, and waits until it is ready; it returns its URL.
func startAlertmanager(t *testing.T, bin, webhookURL string) string {
	t.Helper()
	dir := t.TempDir()
	conf := fmt.Sprintf(`route:
  receiver: notifier
  group_by: [alertname]
  group_wait: 0s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: notifier
    webhook_configs:
      - url: %q
        send_resolved: true
`, webhookURL)
	confPath := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := closedAddr(t) // Alertmanager does not report the port it bound for ":0"
	out := &logtest.Buffer{}
	cmd := exec.Command(bin, "--config.file="+confPath, "--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--cluster.listen-address=", "--log.level=warn")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("alertmanager output:\n%s", out.String())
		}
	})
	url := "http://" + addr
	hc := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if res, err := hc.Get(url + "/-/ready"); err == nil {
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return url
			}
		}
		select {
		case <-exited:
			t.Fatalf("alertmanager exited:\n%s", out.String())
		case <-tick.C:
		}
	}
	t.Fatalf("alertmanager not ready at %s:\n%s", url, out.String())
	return ""
}

// TestAlertmanagerToTelegram fires an alert with amtool into a real
// Alertmanager, whose webhook reaches the notifier as the gateway would
// pass it, and checks that the enriched message reaches (fake) Telegram.
func TestAlertmanagerToTelegram(t *testing.T) {
	amBin, amtool := alertmanagerBinaries(t)
	tg := telegramtest.NewServer(t.Cleanup)
	n := runNotifier(t, map[string]string{
		"DATA_DIR":                t.TempDir(),
		"NOTIFIER_LISTEN_ADDR":    "127.0.0.1:0",
		"NOTIFIER_ADMIN_ADDR":     "127.0.0.1:0",
		"GROUNDING_ADDR":          startGrounding(t, 0),
		"TELEGRAM_BOT_TOKEN":      "7100000001:AAE-test",
		"TELEGRAM_WEBHOOK_SECRET": "test-secret",
		"TELEGRAM_API_URL":        tg.URL,
		"TELEGRAM_CHAT_ID":        "-100123",
		"TELEGRAM_BOT_USERNAME":   "groundcrew_bot",
		"NOTIFIER_POLL_INTERVAL":  "20ms",
		"GRACE_PERIOD":            "2s",
	})
	bridge := webhookBridge(t, dial(t, n.grpcAddr))
	amURL := startAlertmanager(t, amBin, bridge.URL+"/v1/alerts:alertmanager")

	const summary = "Disk almost full on db-1 (93% used)"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, amtool, "alert", "add", "--alertmanager.url="+amURL,
		"alertname=DiskFull", "severity=critical", "--annotation=summary="+summary).CombinedOutput()
	if err != nil {
		t.Fatalf("amtool alert add: %v\n%s", err, out)
	}

	sent := tg.WaitDelivered(1, 60*time.Second)
	if len(sent) == 0 {
		t.Fatal("no message reached Telegram within 60s")
	}
	m := sent[0]
	if m.ChatID != "-100123" || m.ParseMode != "MarkdownV2" {
		t.Errorf("sent to %q with parse mode %q, want -100123 and MarkdownV2", m.ChatID, m.ParseMode)
	}
	for _, want := range []string{markdownv2.Escape(summary), "DiskFull", "Free space on the data volume"} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("message lacks %q:\n%s", want, m.Text)
		}
	}
}
