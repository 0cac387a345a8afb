package server_test

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/logging/logtest"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/notifier/server"
)

// running is a notifier started by runNotifier.
type running struct {
	grpcAddr, adminAddr string
	logs                *logtest.Buffer
}

// runNotifier runs the service as main would, with env, until the test
// ends, and returns once it serves, with the addresses it logged (set
// NOTIFIER_LISTEN_ADDR and NOTIFIER_ADMIN_ADDR to 127.0.0.1:0).
func runNotifier(t *testing.T, env map[string]string) running {
	t.Helper()
	if _, ok := env["DATABASE_URL"]; !ok {
		// SQLite under DATA_DIR, or a schema of its own on PostgreSQL when
		// the suite runs with DATABASE_URL.
		env["DATABASE_URL"] = sqlstoretest.URL(t, "notifier_server")
	}
	cfg, err := config.Load[server.Config](config.MapLookup(env))
	if err != nil {
		t.Fatal(err)
	}
	logs := &logtest.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.Run(ctx, cfg, slog.New(slog.NewJSONHandler(logs, nil))) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("Run did not return after cancel")
		}
		if t.Failed() {
			t.Logf("notifier log:\n%s", logs.String())
		}
	})
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if recs := logs.Named(t, "serving"); len(recs) > 0 {
			r := recs[0]
			admin, _ := r["admin_addr"].(string)
			return running{grpcAddr: r["grpc_addr"].(string), adminAddr: admin, logs: logs}
		}
		select {
		case err := <-done:
			t.Fatalf("Run returned early: %v\n%s", err, logs.String())
		case <-tick.C:
		}
	}
	t.Fatalf("notifier not serving:\n%s", logs.String())
	return running{}
}

// closedAddr is a loopback address nothing listens on (it was free a
// moment ago): a dependency that is down, or a port for a program to bind.
func closedAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	_ = lis.Close()
	return addr
}

func TestRunOfflineDeliversToLog(t *testing.T) {
	n := runNotifier(t, map[string]string{
		"DATA_DIR":               t.TempDir(),
		"NOTIFIER_LISTEN_ADDR":   "127.0.0.1:0",
		"NOTIFIER_ADMIN_ADDR":    "127.0.0.1:0",
		"GROUNDING_ADDR":         closedAddr(t),
		"NOTIFIER_POLL_INTERVAL": "20ms",
		"GRACE_PERIOD":           "2s",
	})
	logs, ctx := n.logs, t.Context()
	if len(logs.Named(t, "delivery: log (TELEGRAM_BOT_TOKEN unset; messages are stored and logged, not sent)")) == 0 {
		t.Error("no start-up line saying delivery goes to the log")
	}

	c := dial(t, n.grpcAddr)
	resp, err := c.IngestAlert(ctx, &notifierv1.IngestAlertRequest{Text: "High error rate on checkout-api: 5xx > 10% for 5m"})
	if err != nil {
		t.Fatal(err)
	}
	var a *notifierv1.Alert
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(20 * time.Second); ; <-tick.C {
		got, err := c.GetAlert(ctx, &notifierv1.GetAlertRequest{Id: resp.GetAlert().GetId()})
		if err != nil {
			t.Fatal(err)
		}
		if a = got.GetAlert(); a.GetStatus() == notifierv1.Alert_DELIVERED || time.Now().After(deadline) {
			break
		}
	}
	if a.GetStatus() != notifierv1.Alert_DELIVERED || a.GetDestination() != "log" || a.GetEnrichmentError() != "grounding service unavailable" {
		t.Fatalf("alert %v", a)
	}
	if !strings.Contains(a.GetMessage().GetText(), "_Enrichment unavailable: grounding service unavailable_") {
		t.Errorf("message %q lacks the enrichment note", a.GetMessage().GetText())
	}

	// SendMessage is wired to the same delivery (the log, offline).
	sent, err := c.SendMessage(ctx, &notifierv1.SendMessageRequest{Text: "Research finished", IdempotencyKey: "run-1"})
	if err != nil || sent.GetDestination() != "log" || sent.GetDuplicate() {
		t.Errorf("SendMessage = %v, %v; want a delivery to the log", sent, err)
	}

	// The domain metrics are on the admin server's /metrics. The delivered
	// counter moves just after the status is saved, so the scrape may wait.
	waitForMetrics(t, "http://"+n.adminAddr+"/metrics",
		`notifier_alerts_accepted_total\{source="generic"\} 1`,
		`notifier_alerts_delivered_total\{destination="log",source="generic"\} 1`,
		`notifier_enrichment_duration_seconds_count\{outcome="error"\} 1`,
	)
}

func TestConfigValidation(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string // substring of the error; "" means valid
	}{
		{"defaults", nil, ""},
		{"routes", map[string]string{"NOTIFIER_ROUTES": "severity=critical:-100123,team=db&env=prod:@db_alerts"}, ""},
		{"bad route", map[string]string{"NOTIFIER_ROUTES": "severity=critical"}, "NOTIFIER_ROUTES"},
		{"bad chat", map[string]string{"TELEGRAM_CHAT_ID": "alerts"}, "TELEGRAM_CHAT_ID"},
		{"bad sources", map[string]string{"GROUNDING_MAX_SOURCES": "0"}, "GROUNDING_MAX_SOURCES"},
		{"bad window", map[string]string{"NOTIFIER_DEDUP_WINDOW": "-1m"}, "NOTIFIER_DEDUP_WINDOW"},
		{"bad timeout", map[string]string{"NOTIFIER_ENRICH_TIMEOUT": "0s"}, "NOTIFIER_ENRICH_TIMEOUT"},
		{"bad retry base", map[string]string{"NOTIFIER_RETRY_BASE_DELAY": "0s"}, "NOTIFIER_RETRY_BASE_DELAY"},
		{"retry ceiling below base", map[string]string{"NOTIFIER_RETRY_BASE_DELAY": "1m", "NOTIFIER_RETRY_MAX_DELAY": "30s"}, "NOTIFIER_RETRY_MAX_DELAY"},
		{"job shorter than enrichment", map[string]string{"NOTIFIER_ENRICH_TIMEOUT": "20s", "NOTIFIER_JOB_TIMEOUT": "25s"}, "NOTIFIER_JOB_TIMEOUT"},
		{"rescue before the job times out", map[string]string{"NOTIFIER_JOB_TIMEOUT": "1m", "NOTIFIER_RESCUE_AFTER": "30s"}, "NOTIFIER_RESCUE_AFTER"},
		{"rescue after the job times out", map[string]string{"NOTIFIER_JOB_TIMEOUT": "1m", "NOTIFIER_RESCUE_AFTER": "90s"}, ""},
		{"bot token without webhook secret", map[string]string{"TELEGRAM_BOT_TOKEN": "7100000001:x"}, "TELEGRAM_WEBHOOK_SECRET"},
		{"bot token with webhook secret", map[string]string{"TELEGRAM_BOT_TOKEN": "7100000001:x", "TELEGRAM_WEBHOOK_SECRET": "s3cr3t-_token"}, ""},
		{"bot token, webhook disabled", map[string]string{"TELEGRAM_BOT_TOKEN": "7100000001:x", "TELEGRAM_WEBHOOK_DISABLED": "true"}, ""},
		{"secret and disabled", map[string]string{"TELEGRAM_WEBHOOK_SECRET": "s", "TELEGRAM_WEBHOOK_DISABLED": "true"}, "TELEGRAM_WEBHOOK_DISABLED"},
		{"secret Telegram refuses", map[string]string{"TELEGRAM_WEBHOOK_SECRET": "not allowed!"}, "TELEGRAM_WEBHOOK_SECRET"},
		{"allowed chats", map[string]string{"TELEGRAM_ALLOWED_CHATS": "-100123, 84211"}, ""},
		{"bad allowed chat", map[string]string{"TELEGRAM_ALLOWED_CHATS": "-100123,@channel"}, "TELEGRAM_ALLOWED_CHATS"},
		{"approvers", map[string]string{"TELEGRAM_APPROVERS": "84211,@anasilva,bo_li_ops"}, ""},
		{"bad approver", map[string]string{"TELEGRAM_APPROVERS": "@ana-silva"}, "TELEGRAM_APPROVERS"},
		{"readme approvers", map[string]string{"TELEGRAM_APPROVERS": "84211,@ana", "NOTIFIER_ACTION_USERS": "84211,@ann"}, ""},
		{"chat rate off", map[string]string{"NOTIFIER_CHAT_RATE": "off"}, ""},
		{"bad chat rate", map[string]string{"NOTIFIER_CHAT_RATE": "20 per hour"}, "NOTIFIER_CHAT_RATE"},
		{"alert retention kept for ever", map[string]string{"NOTIFIER_ALERT_RETENTION": "0"}, ""},
		{"negative alert retention", map[string]string{"NOTIFIER_ALERT_RETENTION": "-24h"}, "NOTIFIER_ALERT_RETENTION"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"DATA_DIR": t.TempDir()}
			for k, v := range tt.env {
				env[k] = v
			}
			_, err := config.Load[server.Config](config.MapLookup(env))
			if tt.want == "" && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("err = %v, want one naming %s", err, tt.want)
			}
		})
	}
}
