package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/notifier/internal/markdownv2"
	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

// slowGrounding answers like grounding, taking delay per Ground call so that
// a kill lands while alerts are mid-pipeline.
type slowGrounding struct {
	groundingv1.UnimplementedGroundingServiceServer
	delay time.Duration
}

func (g *slowGrounding) DeriveQuery(_ context.Context, req *groundingv1.DeriveQueryRequest) (*groundingv1.DeriveQueryResponse, error) {
	return &groundingv1.DeriveQueryResponse{Query: "disk full runbook", Method: "keywords"}, nil
}

func (g *slowGrounding) Ground(ctx context.Context, req *groundingv1.GroundRequest) (*groundingv1.GroundResponse, error) {
	t := time.NewTimer(g.delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
	}
	return &groundingv1.GroundResponse{Message: &groundingv1.AnnotatedMessage{
		Id: "g-" + req.GetQuery(), Summary: "Free space on the data volume.", Status: groundingv1.AnnotatedMessage_PROCESSED,
		Citations: []*groundingv1.Citation{{Url: "https://runbooks.example.com/disk", Title: "Disk runbook"}},
	}}, nil
}

func startGrounding(t *testing.T, delay time.Duration) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	groundingv1.RegisterGroundingServiceServer(srv, &slowGrounding{delay: delay})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

func buildNotifier(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "notifier")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = ".." // the module root, where main.go is
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the notifier: %v\n%s", err, out)
	}
	return bin
}

// child is a running notifier process.
type child struct {
	cmd  *exec.Cmd
	addr string
	done chan struct{}
	mu   sync.Mutex
	log  strings.Builder
}

// start runs the binary and waits for its "serving" log line, which carries
// the gRPC address it bound (":0" in the environment).
func start(t *testing.T, bin string, env []string) *child {
	t.Helper()
	c := &child{cmd: exec.Command(bin), done: make(chan struct{})}
	c.cmd.Env = append(os.Environ(), env...)
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			c.mu.Lock()
			c.log.WriteString(line + "\n")
			c.mu.Unlock()
			var rec struct {
				Msg      string `json:"msg"`
				GRPCAddr string `json:"grpc_addr"`
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving" && rec.GRPCAddr != "" {
				select {
				case addr <- rec.GRPCAddr:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		<-c.done
		_ = c.cmd.Wait()
		if t.Failed() {
			t.Logf("notifier log:\n%s", c.logs())
		}
	})
	select {
	case c.addr = <-addr:
	case <-c.done:
		t.Fatalf("notifier exited before serving:\n%s", c.logs())
	case <-time.After(60 * time.Second):
		t.Fatalf("notifier did not start serving:\n%s", c.logs())
	}
	return c
}

func (c *child) logs() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.log.String()
}

// kill ends the process with SIGKILL: no shutdown code runs.
func (c *child) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-c.done
	_ = c.cmd.Wait()
}

func dial(t *testing.T, addr string) notifierv1.NotifierServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return notifierv1.NewNotifierServiceClient(conn)
}

// TestCrashSafety kills the notifier with SIGKILL while alerts are being
// enriched and delivered, restarts it on the same database, and checks that
// every accepted alert reached Telegram. The guarantee is at least once:
// an alert whose Telegram send completed just before the kill, but whose
// DELIVERED status was not yet saved, is sent again after the restart. The
// test reports such repeats and requires them to be rare (at most the
// number of alerts in flight at the kill).
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the notifier binary")
	}
	bin := buildNotifier(t)
	tg := telegramtest.NewServer(t.Cleanup)
	grounding := startGrounding(t, 150*time.Millisecond)
	const workers = 3
	env := []string{
		"DATA_DIR=" + t.TempDir(),
		"DATABASE_URL=" + sqlstoretest.URL(t, "notifier_crash"),
		"LOG_FORMAT=json",
		"LOG_LEVEL=info",
		"NOTIFIER_LISTEN_ADDR=127.0.0.1:0",
		"NOTIFIER_ADMIN_ADDR=127.0.0.1:0",
		"GROUNDING_ADDR=" + grounding,
		"TELEGRAM_BOT_TOKEN=7100000001:AAE-crash-test",
		"TELEGRAM_WEBHOOK_SECRET=crash-test-secret",
		"TELEGRAM_API_URL=" + tg.URL,
		"TELEGRAM_CHAT_ID=-100123",
		"TELEGRAM_BOT_USERNAME=groundcrew_bot",
		"NOTIFIER_TELEGRAM_RATE_PER_CHAT=1000",
		"NOTIFIER_TELEGRAM_RATE_OVERALL=1000",
		"NOTIFIER_POLL_INTERVAL=50ms",
		fmt.Sprintf("NOTIFIER_WORKERS=%d", workers),
		"GRACE_PERIOD=1s",
		// Each alert's own message is what this test follows; a storm
		// digest would collapse the backlog of 30 into one.
		"NOTIFIER_DIGEST_THRESHOLD=0",
	}

	if sqlstoretest.OnPostgres() {
		// On PostgreSQL another instance may still be working a job left
		// running, so the restarted one takes it back only after
		// NOTIFIER_RESCUE_AFTER (River's rescuer): short here, minutes by
		// default.
		env = append(env, "NOTIFIER_ENRICH_TIMEOUT=1s", "NOTIFIER_JOB_TIMEOUT=11s", "NOTIFIER_RESCUE_AFTER=12s")
	}

	first := start(t, bin, env)
	client := dial(t, first.addr)
	const n = 30
	texts := make(map[string]string, n) // text → alert id
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := range n {
		text := fmt.Sprintf("crash test alert #%02d: disk full on db-%d", i, i)
		resp, err := client.IngestAlert(ctx, &notifierv1.IngestAlertRequest{Text: text})
		if err != nil {
			t.Fatalf("ingesting alert %d: %v", i, err)
		}
		texts[text] = resp.GetAlert().GetId()
	}

	// Kill once some, not all, alerts are through.
	if got := tg.WaitDelivered(4, 30*time.Second); len(got) < 4 {
		t.Fatalf("only %d alerts delivered before the kill:\n%s", len(got), first.logs())
	}
	first.kill(t)
	before := len(tg.Delivered())
	t.Logf("killed the notifier with %d of %d alerts at Telegram", before, n)
	if before >= n {
		t.Fatalf("every alert was delivered before the kill; slow the pipeline down")
	}

	second := start(t, bin, env)
	client = dial(t, second.addr)
	// Poll Telegram until every alert text has arrived, or the deadline.
	// On PostgreSQL the jobs that were running come back through River's
	// rescuer: once the new instance holds leadership (the dead one's
	// lapses after 15 s) and a rescuer pass (at once, then every 30 s)
	// finds them running for longer than NOTIFIER_RESCUE_AFTER.
	wait := 90 * time.Second
	if sqlstoretest.OnPostgres() {
		wait = 3 * time.Minute
	}
	deadline := time.Now().Add(wait)
	var counts map[string]int
	for {
		counts = map[string]int{}
		for _, m := range tg.WaitDelivered(n, time.Second) {
			for text := range texts {
				if strings.HasPrefix(m.Text, markdownv2.Escape(text)+"\n") {
					counts[text]++
				}
			}
		}
		if len(counts) == n || time.Now().After(deadline) {
			break
		}
	}
	var missing []string
	repeats := 0
	for text := range texts {
		switch c := counts[text]; {
		case c == 0:
			missing = append(missing, text)
		case c > 1:
			repeats += c - 1
			t.Logf("delivered %d times (a send completed just before the kill): %s", c, text)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%d accepted alerts never reached Telegram: %v", len(missing), missing)
	}
	if repeats > workers {
		t.Errorf("%d repeated deliveries; at most %d alerts were in flight at the kill", repeats, workers)
	}
	// The DELIVERED status is written just after Telegram answers, so the
	// last sends may still be recording it: wait for it, with a deadline.
	for text, id := range texts {
		var st notifierv1.Alert_Status
		for {
			resp, err := client.GetAlert(ctx, &notifierv1.GetAlertRequest{Id: id})
			if err != nil {
				t.Fatal(err)
			}
			st = resp.GetAlert().GetStatus()
			if st == notifierv1.Alert_DELIVERED || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if st != notifierv1.Alert_DELIVERED {
			t.Errorf("%s is %s after restart", text, st)
		}
	}
}

// TestCrashSafetyStormOfGroups SIGKILLs the notifier while a storm of
// alert groups is on its way (each group a root and a reply) and restarts
// it: every alert ends DELIVERED, each group has one root, every reply
// threads under its group's root, and nothing is sent twice beyond the
// sends in flight at the kill.
func TestCrashSafetyStormOfGroups(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the notifier binary")
	}
	bin := buildNotifier(t)
	tg := telegramtest.NewServer(t.Cleanup)
	grounding := startGrounding(t, 150*time.Millisecond)
	const workers = 3
	env := []string{
		"DATA_DIR=" + t.TempDir(),
		"DATABASE_URL=" + sqlstoretest.URL(t, "notifier_crash_groups"),
		"LOG_FORMAT=json", "LOG_LEVEL=info",
		"NOTIFIER_LISTEN_ADDR=127.0.0.1:0", "NOTIFIER_ADMIN_ADDR=127.0.0.1:0",
		"GROUNDING_ADDR=" + grounding,
		"TELEGRAM_BOT_TOKEN=7100000001:AAE-crash-test", "TELEGRAM_WEBHOOK_SECRET=crash-test-secret",
		"TELEGRAM_API_URL=" + tg.URL, "TELEGRAM_CHAT_ID=-100123", "TELEGRAM_BOT_USERNAME=groundcrew_bot",
		"NOTIFIER_TELEGRAM_RATE_PER_CHAT=1000", "NOTIFIER_TELEGRAM_RATE_OVERALL=1000",
		"NOTIFIER_POLL_INTERVAL=50ms", fmt.Sprintf("NOTIFIER_WORKERS=%d", workers), "GRACE_PERIOD=1s",
	}
	if sqlstoretest.OnPostgres() {
		env = append(env, "NOTIFIER_ENRICH_TIMEOUT=1s", "NOTIFIER_JOB_TIMEOUT=11s", "NOTIFIER_RESCUE_AFTER=12s")
	}
	first := start(t, bin, env)
	client := dial(t, first.addr)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const groups, perPayload = 8, 5
	groupIDs := map[string]string{} // group id → alertname
	for g := range groups {
		name := fmt.Sprintf("CrashStorm%02d", g)
		for half := range 2 {
			req := &notifierv1.IngestAlertmanagerRequest{
				Version: "4", GroupKey: `{}:{alertname="` + name + `"}`, Status: "firing",
				GroupLabels:  map[string]string{"alertname": name},
				CommonLabels: map[string]string{"alertname": name, "severity": "warning"},
			}
			for i := range perPayload {
				n := half*perPayload + i
				req.Alerts = append(req.Alerts, &notifierv1.AlertmanagerAlert{
					Status: "firing", Fingerprint: fmt.Sprintf("%02d%014d", g, n),
					Labels:      map[string]string{"alertname": name, "severity": "warning", "pod": fmt.Sprintf("web-%d", n)},
					Annotations: map[string]string{"summary": fmt.Sprintf("%s on web-%d", name, n)},
				})
			}
			resp, err := client.IngestAlertmanager(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			groupIDs[resp.GetAlerts()[0].GetGroupId()] = name
		}
	}
	if got := tg.WaitDelivered(3, 30*time.Second); len(got) < 3 {
		t.Fatalf("only %d messages before the kill:\n%s", len(got), first.logs())
	}
	first.kill(t)
	before := len(tg.Delivered())
	t.Logf("killed the notifier with %d of %d group messages at Telegram", before, 2*groups)
	if before >= 2*groups {
		t.Fatal("every message went out before the kill; slow the pipeline down")
	}

	second := start(t, bin, env)
	client = dial(t, second.addr)
	deadline := time.Now().Add(3 * time.Minute)
	for id := range groupIDs {
		for {
			res, err := client.GetAlertGroup(ctx, &notifierv1.GetAlertGroupRequest{Id: id})
			if err != nil {
				t.Fatal(err)
			}
			delivered := 0
			for _, a := range res.GetAlertGroup().GetAlerts() {
				if a.GetStatus() == notifierv1.Alert_DELIVERED {
					delivered++
				}
			}
			if delivered == 2*perPayload {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("group %s: %d of %d alerts DELIVERED after the restart", groupIDs[id], delivered, 2*perPayload)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	roots := map[string][]int64{} // alertname → root message ids
	replies := map[string][]telegramtest.Sent{}
	for _, m := range tg.Delivered() {
		text := plainText(t, m.Text)
		name := ""
		for _, n := range groupIDs {
			if strings.Contains(strings.SplitN(text, "\n", 2)[0], n) {
				name = n
			}
		}
		if name == "" {
			t.Fatalf("message names no group: %q", text)
		}
		if m.ReplyParameters == nil {
			roots[name] = append(roots[name], m.MessageID)
		} else {
			replies[name] = append(replies[name], m)
		}
	}
	repeats := 0
	for _, name := range groupIDs {
		if len(roots[name]) == 0 {
			t.Errorf("group %s has no root message", name)
			continue
		}
		repeats += len(roots[name]) - 1
		if len(replies[name]) == 0 {
			t.Errorf("group %s: its second notification never replied", name)
		}
		repeats += max(0, len(replies[name])-1)
		for _, r := range replies[name] {
			if id, _ := r.ReplyParameters["message_id"].(float64); !slices.Contains(roots[name], int64(id)) {
				t.Errorf("group %s: a reply threads under %v, not its root %v", name, r.ReplyParameters, roots[name])
			}
		}
	}
	if repeats > workers {
		t.Errorf("%d messages sent twice; at most %d were in flight at the kill", repeats, workers)
	}
}

func plainText(t *testing.T, text string) string {
	t.Helper()
	p, _, err := markdownv2.Parse(text)
	if err != nil {
		t.Fatalf("not valid MarkdownV2: %v\n%s", err, text)
	}
	return p
}
