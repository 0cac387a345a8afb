package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

// ledgerRunbookURL is a team's own runbook, indexed beside the examples:
// its words are not the alert's, so relevance alone would not cite it.
const ledgerRunbookURL = "https://wiki.payments.example/runbooks/ledger-drift"

// ledgerGroup is an Alertmanager group of two LedgerDrift alerts, each
// with runbook_url when runbook is not empty.
func ledgerGroup(name, runbook string) map[string]any {
	var alerts []map[string]any
	for i, shard := range []string{"eu", "us"} {
		a := map[string]any{
			"status":      "firing",
			"labels":      map[string]string{"alertname": name, "severity": "critical", "service": "billing", "shard": shard},
			"annotations": map[string]string{"summary": "Nightly totals of shard " + shard + " differ from the bank"},
			"fingerprint": name + "-" + shard,
			"startsAt":    "2026-11-26T01:0" + string(rune('0'+i)) + ":00Z",
		}
		if runbook != "" {
			a["annotations"].(map[string]string)["runbook_url"] = runbook
		}
		alerts = append(alerts, a)
	}
	return map[string]any{
		"version": "4", "status": "firing", "receiver": "groundcrew",
		"groupKey":          `{}:{alertname="` + name + `"}`,
		"groupLabels":       map[string]string{"alertname": name},
		"commonLabels":      map[string]string{"alertname": name, "severity": "critical", "service": "billing"},
		"commonAnnotations": map[string]string{},
		"externalURL":       "http://alertmanager.example.com:9093",
		"alerts":            alerts,
	}
}

// TestTeamRunbookFirst is issue 24 item 4 through the whole stack: an
// Alertmanager group whose alerts carry the runbook_url of an indexed
// runbook gets a root message whose enrichment cites that runbook first
// and summarises its first diagnostic step and mitigation, though the
// relevance score alone would not cite it; the same group without
// runbook_url does not cite it.
func TestTeamRunbookFirst(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole stack")
	}
	docs := runbookCorpusJSON(t)
	ledger, err := json.Marshal(map[string]any{
		"url": ledgerRunbookURL, "title": "Payments team on-call notes",
		"text": "Payments team on-call notes.\n\nDiagnose.\nOpen the settlement dashboard and compare yesterday's batch with the bank file.\n\n" +
			"Mitigate.\nRe-run the settlement export for the missing day.",
	})
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, ledger)

	tg := telegramtest.NewServer(t.Cleanup)
	s := startStack(t, map[string]string{
		"TELEGRAM_BOT_TOKEN": "7100000001:AAE-e2e", "TELEGRAM_WEBHOOK_SECRET": "e2e-secret", "TELEGRAM_API_URL": tg.URL,
		"TELEGRAM_CHAT_ID": "-100123", "TELEGRAM_BOT_USERNAME": "groundcrew_bot",
		"NOTIFIER_POLL_INTERVAL": "50ms",
	}, "")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if _, err := call(ctx, http.MethodPost, s.GatewayURL+"/v1/search/documents", map[string]any{"documents": docs}, nil); err != nil {
		t.Fatalf("indexing the runbooks: %v", err)
	}
	for _, p := range []map[string]any{ledgerGroup("LedgerDrift", ledgerRunbookURL), ledgerGroup("LedgerDriftUnlinked", "")} {
		if _, err := call(ctx, http.MethodPost, s.GatewayURL+"/v1/alerts:alertmanager", p, nil); err != nil {
			t.Fatal(err)
		}
	}
	roots := map[string]string{}
	eventually(t, 60*time.Second, "both groups' root messages", func() bool {
		for _, m := range tg.Delivered() {
			if m.ReplyParameters != nil {
				continue
			}
			// The message is MarkdownV2; its escapes removed, as Telegram shows it.
			text := strings.ReplaceAll(m.Text, `\`, "")
			for _, name := range []string{"LedgerDriftUnlinked", "LedgerDrift"} {
				if strings.Contains(text, name) {
					roots[name] = text
					break
				}
			}
		}
		return len(roots) == 2
	})

	linked := roots["LedgerDrift"]
	_, enrichment, ok := strings.Cut(linked, "Enriched Context")
	if !ok {
		t.Fatalf("the linked group's root has no enrichment:\n%s", linked)
	}
	_, sources, _ := strings.Cut(enrichment, "Sources:")
	first, _, _ := strings.Cut(strings.TrimSpace(sources), "\n")
	if !strings.Contains(first, ledgerRunbookURL) {
		t.Errorf("the first source is %q, want the group's runbook %s; root:\n%s", first, ledgerRunbookURL, linked)
	}
	if !strings.Contains(enrichment, "Open the settlement dashboard") || !strings.Contains(enrichment, "Re-run the settlement export") {
		t.Errorf("the summary does not give the runbook's first diagnostic step and mitigation; root:\n%s", linked)
	}

	unlinked := roots["LedgerDriftUnlinked"]
	if strings.Contains(unlinked, ledgerRunbookURL) {
		t.Errorf("the group without runbook_url cites the team's runbook (relevance alone should not):\n%s", unlinked)
	}
}
