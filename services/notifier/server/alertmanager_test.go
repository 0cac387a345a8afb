package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/logging/logtest"
	"github.com/groundcrew/groundcrew/platform/waitfor"
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
		if os.Getenv("GROUNDCREW_CI") == "1" {
			// CI installs them (.ci/run): a missing binary there is a
			// broken install, not a reason to pass without the test.
			t.Fatal("alertmanager and amtool are not on PATH, and GROUNDCREW_CI=1 requires them")
		}
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
	return startAlertmanagerAt(t, bin, webhookURL, closedAddr(t), 0)
}

// startAlertmanagerAt is startAlertmanager listening on addr, with
// group_wait groupWait (alerts arriving within it go out together).
func startAlertmanagerAt(t *testing.T, bin, webhookURL, addr string, groupWait time.Duration) string {
	t.Helper()
	dir := t.TempDir()
	conf := fmt.Sprintf(`route:
  receiver: notifier
  group_by: [alertname]
  group_wait: %s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: notifier
    webhook_configs:
      - url: %q
        send_resolved: true
`, model(groupWait), webhookURL)
	confPath := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	// addr comes from closedAddr: Alertmanager does not report the port
	// it bound for ":0".
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

// model writes d as a Prometheus duration ("0s", "2s").
func model(d time.Duration) string { return fmt.Sprintf("%ds", int(d.Seconds())) }

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

// amSilence is a silence as `amtool silence query -o json` prints it.
type amSilence struct {
	ID        string `json:"id"`
	CreatedBy string `json:"createdBy"`
	Comment   string `json:"comment"`
	Matchers  []struct {
		Name    string `json:"name"`
		Value   string `json:"value"`
		IsRegex bool   `json:"isRegex"`
		IsEqual *bool  `json:"isEqual"`
	} `json:"matchers"`
}

func querySilences(t *testing.T, amtool, amURL string) []amSilence {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, amtool, "silence", "query", "-o", "json", "--alertmanager.url="+amURL).Output()
	if err != nil {
		t.Fatalf("amtool silence query: %v\n%s", err, out)
	}
	var ss []amSilence
	if err := json.Unmarshal(out, &ss); err != nil {
		t.Fatalf("amtool silence query output: %v\n%s", err, out)
	}
	return ss
}

// TestAlertmanagerGroupSilence: 30 alerts added with amtool into one
// Alertmanager group reach Telegram as one root message; pressing its
// Silence button (a callback update posted to the webhook) creates a
// silence in that Alertmanager that amtool lists with the group's
// matchers and the presser as creator; Expire silence removes it.
func TestAlertmanagerGroupSilence(t *testing.T) {
	amBin, amtool := alertmanagerBinaries(t)
	amAddr := closedAddr(t)
	amURL := "http://" + amAddr
	e := startWith(t, &groundingStandIn{}, map[string]string{
		"ALERTMANAGER_URL":       amURL,
		"NOTIFIER_ACTION_USERS":  "ann_oncall",
		"NOTIFIER_POLL_INTERVAL": "20ms",
	})
	bridge := webhookBridge(t, e.c)
	startAlertmanagerAt(t, amBin, bridge.URL+"/v1/alerts:alertmanager", amAddr, 3*time.Second)

	const n = 30
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	errs := make(chan error, n)
	for i := range n {
		go func() {
			out, err := exec.CommandContext(ctx, amtool, "alert", "add", "--alertmanager.url="+amURL,
				"alertname=PodCrashLooping", "severity=warning", "namespace=shop", fmt.Sprintf("pod=web-%d", i+1),
				fmt.Sprintf("--annotation=summary=Pod shop/web-%d is crash looping", i+1)).CombinedOutput()
			if err != nil {
				err = fmt.Errorf("amtool alert add: %w\n%s", err, out)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	root := e.tg.WaitDelivered(1, 60*time.Second)
	if len(root) == 0 {
		t.Fatal("no message reached Telegram within 60s")
	}
	var gid string
	waitfor.Within(t, 60*time.Second, fmt.Sprintf("one group with %d firing and its root sent", n), e.tg.Changed(), func() bool {
		list, err := e.c.ListAlertGroups(ctx, &notifierv1.ListAlertGroupsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if gs := list.GetAlertGroups(); len(gs) == 1 && gs[0].GetFiringCount() == n && gs[0].GetRootMessageId() != "" {
			gid = gs[0].GetId()
		}
		return gid != ""
	})
	g := waitGroupDelivered(t, e.c, gid, n)
	var roots []telegramtest.Sent
	for _, s := range e.tg.Delivered() {
		if s.ReplyParameters == nil {
			roots = append(roots, s)
		}
	}
	if len(roots) != 1 {
		t.Fatalf("%d root messages for one Alertmanager group, want 1", len(roots))
	}
	rootMsg := roots[0]
	if g.GetRootMessageId() != strconv.FormatInt(rootMsg.MessageID, 10) {
		t.Fatalf("group root %q, want %d", g.GetRootMessageId(), rootMsg.MessageID)
	}
	if text := plain(t, rootMsg.Text); !strings.HasPrefix(text, "[FIRING:") || !strings.Contains(text, "PodCrashLooping") {
		t.Errorf("root = %q, want a FIRING title", text)
	}
	buttons := buttonData(t, rootMsg.ReplyMarkup)
	silence := buttons["🔕 Silence 1h"]
	if silence == "" || buttons["🔕 Silence 24h"] == "" || buttons["👀 Ack"] == "" {
		t.Fatalf("root buttons = %v, want Silence 1h, Silence 24h and Ack", buttons)
	}

	ann := &notifierv1.TelegramUser{Id: 501, FirstName: "Ann", Username: "ann_oncall"}
	if out, err := e.post(t, secSecret, callback(30, ann, silence, alertsChat, rootMsg.MessageID)); err != nil || out != "decided" {
		t.Fatalf("Silence press: %q, %v; want decided", out, err)
	}
	ss := querySilences(t, amtool, amURL)
	if len(ss) != 1 {
		t.Fatalf("amtool lists %d silences, want 1: %+v", len(ss), ss)
	}
	s := ss[0]
	if s.CreatedBy != "@ann_oncall" || !strings.Contains(s.Comment, "Telegram") || !strings.Contains(s.Comment, gid) {
		t.Errorf("silence created by %q with comment %q; want @ann_oncall and a comment naming the group and Telegram", s.CreatedBy, s.Comment)
	}
	matchers := map[string]string{}
	for _, m := range s.Matchers {
		if m.IsRegex || (m.IsEqual != nil && !*m.IsEqual) {
			t.Errorf("matcher %+v is not an equality matcher", m)
		}
		matchers[m.Name] = m.Value
	}
	if want := map[string]string{"alertname": "PodCrashLooping", "severity": "warning", "namespace": "shop"}; fmt.Sprint(matchers) != fmt.Sprint(want) {
		t.Errorf("silence matchers = %v, want %v", matchers, want)
	}
	answers := e.tg.WaitCalls("answerCallbackQuery", 1, 10*time.Second)
	if len(answers) != 1 || !strings.HasPrefix(answers[0].Form["text"], "🔕 Silenced by @ann_oncall until ") {
		t.Errorf("answers = %+v, want the silence told", answers)
	}
	var expire string
	waitfor.Signalled(t, "an edit of the root showing the silence with an Expire button", e.tg.Changed(), func() bool {
		for _, ed := range e.tg.Calls("editMessageText") {
			if ed.Form["message_id"] == g.GetRootMessageId() && strings.Contains(plain(t, ed.Form["text"]), "🔕 silenced by @ann_oncall until ") {
				expire = buttonData(t, ed.Form["reply_markup"])["Expire silence"]
			}
		}
		return expire != ""
	})
	if out, err := e.post(t, secSecret, callback(31, ann, expire, alertsChat, rootMsg.MessageID)); err != nil || out != "decided" {
		t.Fatalf("Expire press: %q, %v; want decided", out, err)
	}
	if ss := querySilences(t, amtool, amURL); len(ss) != 0 {
		t.Errorf("amtool still lists active silences after Expire: %+v", ss)
	}
}
