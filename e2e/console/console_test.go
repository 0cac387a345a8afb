package console

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// TestConsole runs the console's scenarios in one browser against one
// stack, in order: later scenarios use the signed-in tab.
func TestConsole(t *testing.T) {
	su := startSuite(t)

	t.Run("sign in with a key", func(t *testing.T) {
		su.run(t, 20*time.Second, chromedp.Navigate(su.s.GatewayURL+"/console/alerts"))
		su.signIn(t)
		var stored, loc string
		su.run(t, 20*time.Second,
			chromedp.WaitVisible("#h-alerts", chromedp.ByQuery),
			chromedp.Evaluate(`sessionStorage.getItem("groundcrew.apiKey")`, &stored),
			chromedp.Location(&loc),
		)
		if stored != apiKey {
			t.Errorf("sessionStorage holds %q, want the key", stored)
		}
		if strings.Contains(loc, apiKey) {
			t.Errorf("the key is in the URL %s", loc)
		}
	})

	t.Run("the first page's JS and CSS fit the budget", func(t *testing.T) {
		if n := firstPageBytes(t, su); n == 0 || n > firstPageBudget {
			t.Errorf("the first page transferred %d bytes of JS and CSS, want 1..%d", n, firstPageBudget)
		}
	})

	t.Run("axe-core finds no serious violations", func(t *testing.T) {
		checkPagesAccessible(t, su, map[string]string{
			"/console/alerts": "#h-alerts", "/console/messages": "#h-messages", "/console/approvals": "#h-approvals",
			"/console/ask": "#h-ask", "/console/research": "#h-research", "/console/search": "#h-search",
		})
	})

	t.Run("a wrong key returns to sign-in", func(t *testing.T) {
		var errText string
		su.run(t, 20*time.Second,
			chromedp.Evaluate(`sessionStorage.setItem("groundcrew.apiKey", "wrong")`, nil),
			chromedp.Navigate(su.s.GatewayURL+"/console/approvals"),
			chromedp.WaitVisible("#api-key", chromedp.ByQuery),
			chromedp.SendKeys("#api-key", "still-wrong", chromedp.ByQuery),
			chromedp.Click(`form[aria-label="Sign in"] button[type="submit"]`, chromedp.ByQuery),
			chromedp.Text(`[role="alert"]`, &errText, chromedp.ByQuery),
		)
		if !strings.Contains(errText, "Request failed") {
			t.Errorf("sign-in with a wrong key says %q", errText)
		}
		// A reload starts over: the wrong key is gone, sign-in again.
		su.run(t, 20*time.Second, chromedp.Navigate(su.s.GatewayURL+"/console/approvals"))
		su.signIn(t)
		su.run(t, 20*time.Second, chromedp.WaitVisible("#h-approvals", chromedp.ByQuery))
	})

	t.Run("a posted alert appears and turns DELIVERED without a reload", func(t *testing.T) {
		su.open(t, "/console/alerts", "#h-alerts")
		// The page follows the WatchAlerts stream (it re-reads the list
		// only when the stream fails), so the changes below come through it.
		su.run(t, 30*time.Second, chromedp.WaitVisible(`section[data-live="stream"]`, chromedp.ByQuery))
		// A marker in the page that a reload would remove.
		su.run(t, 5*time.Second, chromedp.Evaluate(`window.__noReload = true`, nil))
		var out struct {
			Alert struct{ ID string }
		}
		su.api(t, "POST", "/v1/alerts", map[string]any{"text": "Disk full on db-1: /var/lib/postgresql at 97%"}, &out)
		if out.Alert.ID == "" {
			t.Fatal("POST /v1/alerts returned no id")
		}
		row := sel(`li[data-alert-id=%q]`, out.Alert.ID)
		su.run(t, 30*time.Second, chromedp.WaitVisible(row, chromedp.ByQuery))
		su.run(t, 90*time.Second, chromedp.WaitVisible(row+`[data-status="DELIVERED"]`, chromedp.ByQuery))
		var same bool
		su.run(t, 5*time.Second, chromedp.Evaluate(`window.__noReload === true`, &same))
		if !same {
			t.Error("the page reloaded")
		}
	})

	t.Run("without the alert stream the page re-reads and still turns DELIVERED", func(t *testing.T) {
		// Every watch the page opens fails as a lost connection would.
		var script page.ScriptIdentifier
		su.run(t, 5*time.Second, chromedp.ActionFunc(func(ctx context.Context) error {
			var err error
			script, err = page.AddScriptToEvaluateOnNewDocument(`{
				const f = window.fetch;
				window.fetch = (input, init) => String(input instanceof Request ? input.url : input).includes("/v1/alerts:watch")
					? Promise.reject(new TypeError("Failed to fetch"))
					: f(input, init);
			}`).Do(ctx)
			return err
		}))
		t.Cleanup(func() {
			su.run(t, 5*time.Second, chromedp.ActionFunc(func(ctx context.Context) error {
				return page.RemoveScriptToEvaluateOnNewDocument(script).Do(ctx)
			}))
		})
		su.open(t, "/console/alerts", "#h-alerts")
		su.run(t, 30*time.Second, chromedp.WaitVisible(`section[data-live="rereading"]`, chromedp.ByQuery))
		var out struct {
			Alert struct{ ID string }
		}
		su.api(t, "POST", "/v1/alerts", map[string]any{"text": "Replica lag on db-2 above 30s"}, &out)
		row := sel(`li[data-alert-id=%q]`, out.Alert.ID)
		su.run(t, 90*time.Second, chromedp.WaitVisible(row+`[data-status="DELIVERED"]`, chromedp.ByQuery))
	})

	t.Run("the alert's Telegram message is shown as Telegram renders it", func(t *testing.T) {
		// Every MarkdownV2 reserved character, a backslash and non-ASCII text.
		text := "Disk 97% full (db-1): /var/lib/postgresql! Check *now* [runbook] _x_ ~y~ `z` > # + - = | {} . \\ Überlauf ✓ 日本"
		var out struct {
			Alert struct{ ID string }
		}
		su.api(t, "POST", "/v1/alerts", map[string]any{"text": text}, &out)
		eventually(t, 90*time.Second, "the alert to be delivered", func() bool {
			var got struct{ Alert struct{ Status string } }
			su.api(t, "GET", "/v1/alerts/"+out.Alert.ID, nil, &got)
			return got.Alert.Status == "DELIVERED"
		})
		var shown string
		su.open(t, "/console/alerts/"+out.Alert.ID, "#h-alert")
		su.run(t, 20*time.Second,
			chromedp.WaitVisible(".tg-message", chromedp.ByQuery),
			chromedp.Text(".tg-message", &shown, chromedp.ByQuery),
		)
		// The message escapes every reserved character; rendered, the
		// alert's first line reads as it was posted, with no escaping backslashes.
		if !strings.Contains(shown, text) || strings.Count(shown, "\\") != strings.Count(text, "\\") {
			t.Errorf("the rendered message reads %q, want it to contain %q and no escaping backslashes", shown, text)
		}

		// An enriched alert: its sources are links to the runbooks.
		su.api(t, "POST", "/v1/alerts", map[string]any{"text": "High error rate on checkout-api: 5xx > 10% for 5m"}, &out)
		eventually(t, 90*time.Second, "the enriched alert to be delivered", func() bool {
			var got struct{ Alert struct{ Status string } }
			su.api(t, "GET", "/v1/alerts/"+out.Alert.ID, nil, &got)
			return got.Alert.Status == "DELIVERED"
		})
		var href string
		su.open(t, "/console/alerts/"+out.Alert.ID, "#h-alert")
		su.run(t, 20*time.Second,
			chromedp.WaitVisible(".tg-message", chromedp.ByQuery),
			chromedp.Text(".tg-message", &shown, chromedp.ByQuery),
			chromedp.Evaluate(`[...document.querySelectorAll(".tg-message a")].map(a => a.href).join(" ")`, &href),
		)
		if !strings.Contains(shown, "--- Enriched Context ---") || !strings.Contains(href, "https://runbooks.groundcrew.example/checkout-api-5xx") {
			t.Errorf("the enriched message reads %q with links %q, want the enrichment and a link to the checkout runbook", shown, href)
		}
	})

	t.Run("citations are highlighted at their stored offsets, and the answer reviewed", func(t *testing.T) {
		var msg struct {
			ID        string
			Text      string
			Citations []struct{ StartIndex, EndIndex int }
		}
		su.api(t, "POST", "/v1/ground", map[string]any{
			"text":        "Postgres refuses connections: too many clients already",
			"roundConfig": map[string]any{"engine": "local", "maxResults": 5},
		}, &msg)
		var want []string
		cps := []rune(msg.Text)
		for _, c := range msg.Citations {
			if c.EndIndex > c.StartIndex && c.EndIndex <= len(cps) {
				want = append(want, string(cps[c.StartIndex:c.EndIndex]))
			}
		}
		if len(want) == 0 {
			t.Fatalf("the grounded answer has no citation spans to show: %+v", msg)
		}
		var marks []string
		forgetName(t, su)
		su.open(t, "/console/messages/"+msg.ID, "#cited-text")
		su.run(t, 10*time.Second, chromedp.Evaluate(
			`[...document.querySelectorAll("#cited-text mark")].map(m => m.firstChild.textContent)`, &marks))
		// Marks split where spans overlap; joined in order, they hold each
		// span whole.
		joined := strings.Join(marks, "")
		for _, w := range want {
			if !strings.Contains(joined, w) {
				t.Errorf("highlighted %q, want it to cover the span %q", marks, w)
			}
		}

		// Review it from the page.
		su.run(t, 20*time.Second,
			chromedp.SendKeys(`form[aria-label="Review"] input`, "Dana On-Call", chromedp.ByQuery),
			chromedp.SendKeys(`form[aria-label="Review"] textarea`, "sources check out", chromedp.ByQuery),
			chromedp.Click(`form[aria-label="Review"] .actions button:not(.danger)`, chromedp.ByQuery),
			chromedp.WaitVisible(`#h-message .chip-approved`, chromedp.ByQuery),
		)
		var stored struct {
			Status string
			Review struct{ ReviewerID, Notes string }
		}
		su.api(t, "GET", "/v1/messages/"+msg.ID, nil, &stored)
		if stored.Status != "APPROVED" || stored.Review.Notes != "sources check out" {
			t.Errorf("after review the message is %+v, want APPROVED with the note", stored)
		}
	})

	t.Run("an alert group is shown and acknowledged from the page", func(t *testing.T) {
		su.api(t, "POST", "/v1/alerts:alertmanager", map[string]any{
			"version": "4", "status": "firing", "receiver": "groundcrew", "groupKey": `{}:{alertname="DiskFull"}`,
			"groupLabels": map[string]string{"alertname": "DiskFull"},
			"alerts": []map[string]any{
				{"status": "firing", "labels": map[string]string{"alertname": "DiskFull", "instance": "db-1"}, "annotations": map[string]string{"summary": "Disk full on db-1"}},
				{"status": "firing", "labels": map[string]string{"alertname": "DiskFull", "instance": "db-2"}, "annotations": map[string]string{"summary": "Disk full on db-2"}},
			},
		}, nil)
		var groups struct {
			AlertGroups []struct{ ID string }
		}
		eventually(t, 60*time.Second, "the alert group", func() bool {
			su.api(t, "GET", "/v1/alert-groups", nil, &groups)
			return len(groups.AlertGroups) > 0
		})
		row := sel(`[data-group-id=%q]`, groups.AlertGroups[0].ID)
		var text string
		su.open(t, "/console/alerts", "#h-alerts")
		su.run(t, 60*time.Second,
			chromedp.WaitVisible(row, chromedp.ByQuery),
			chromedp.Click(row+` button:not(.danger)`, chromedp.ByQuery),
			chromedp.WaitVisible(row+` button:not(.danger):disabled`, chromedp.ByQuery),
			chromedp.Text(row, &text, chromedp.ByQuery),
		)
		if !strings.Contains(text, "acknowledged by") {
			t.Errorf("the group reads %q after Acknowledge", text)
		}
	})

	t.Run("a 400 shows the field violation next to the field", func(t *testing.T) {
		su.open(t, "/console/research", "#h-research")
		var msg string
		su.run(t, 20*time.Second,
			chromedp.Click(`form[aria-label="Start research"] button[type="submit"]`, chromedp.ByQuery),
			chromedp.WaitVisible(`.violation[data-field="topic"]`, chromedp.ByQuery),
			chromedp.Text(`.violation[data-field="topic"]`, &msg, chromedp.ByQuery),
		)
		if msg == "" {
			t.Error("the topic's violation is empty")
		}
		// The topic's length is counted as it is typed, against the 500
		// characters the service accepts.
		var hint string
		su.run(t, 20*time.Second,
			chromedp.SendKeys(`form[aria-label="Start research"] textarea`, "disk full on db-1", chromedp.ByQuery),
			chromedp.Text(`form[aria-label="Start research"] .hint`, &hint, chromedp.ByQuery),
		)
		if hint != "17 of 500 characters" {
			t.Errorf("the topic's hint reads %q, want %q", hint, "17 of 500 characters")
		}
	})

	t.Run("a streamed call's 400 shows its field violation too", func(t *testing.T) {
		su.open(t, "/console/ask", "#h-ask")
		su.run(t, 20*time.Second,
			chromedp.WaitReady(`form[aria-label="Ask"] select option[value="runbooks"]`, chromedp.ByQuery),
			chromedp.Click(`form[aria-label="Ask"] button[type="submit"]`, chromedp.ByQuery),
			chromedp.WaitVisible(`.violation[data-field="query"]`, chromedp.ByQuery),
		)
	})

	t.Run("a violation on one entry of a list is shown next to the list", func(t *testing.T) {
		// xn--a.example passes the proto's host-name rule; the search
		// handler's own IDNA check refuses it as blockedDomains[1].
		su.open(t, "/console/search", "#h-search")
		var msg string
		su.run(t, 20*time.Second,
			chromedp.SendKeys(`form[aria-label="Search"] input[type="search"]`, "disk full", chromedp.ByQuery),
			chromedp.SendKeys(`//label[text()="Never these domains"]/following-sibling::input`, "example.org, xn--a.example", chromedp.BySearch),
			chromedp.Click(`form[aria-label="Search"] button[type="submit"]`, chromedp.ByQuery),
			chromedp.WaitVisible(`.violation[data-field="blocked_domains"]`, chromedp.ByQuery),
			chromedp.Text(`.violation[data-field="blocked_domains"]`, &msg, chromedp.ByQuery),
		)
		if !strings.HasPrefix(msg, "entry 2: ") {
			t.Errorf("the blocked domains' violation reads %q, want it to name entry 2", msg)
		}
	})

	t.Run("approving a pending approval moves the run to EXECUTED", func(t *testing.T) {
		var started struct {
			Run struct{ ID string }
		}
		su.api(t, "POST", "/v1/research", map[string]any{
			"topic": "how to free disk space on a full database host", "userId": "6f1c2d8e-4b7a-4c1e-9a55-2f0d3b9e7c41",
			"maxIterations": 1,
		}, &started)
		var approvalID string
		eventually(t, 90*time.Second, "the run's pending approval", func() bool {
			var list struct {
				Approvals []struct{ ID, RunID string }
			}
			su.api(t, "GET", "/v1/approvals?status=PENDING&runId="+started.Run.ID, nil, &list)
			for _, a := range list.Approvals {
				if a.RunID == started.Run.ID {
					approvalID = a.ID
				}
			}
			return approvalID != ""
		})
		card := sel(`[data-approval-id=%q]`, approvalID)
		forgetName(t, su)
		su.open(t, "/console/approvals", "#h-approvals")
		su.run(t, 30*time.Second,
			chromedp.WaitVisible(card, chromedp.ByQuery),
			chromedp.SendKeys(`form[aria-label="Decider"] input`, "Dana On-Call", chromedp.ByQuery),
			chromedp.Click(card+` .actions button`, chromedp.ByQuery),
			chromedp.WaitNotPresent(card, chromedp.ByQuery),
		)
		eventually(t, 90*time.Second, "the planned action to be EXECUTED", func() bool {
			var got struct {
				Run struct {
					PlannedActions []struct{ Status string }
				}
			}
			su.api(t, "GET", "/v1/research/"+started.Run.ID, nil, &got)
			return len(got.Run.PlannedActions) > 0 && got.Run.PlannedActions[0].Status == "EXECUTED"
		})
		var decided struct {
			Approvals []struct {
				ID       string
				Decision struct{ ApprovedBy, Actor, DecidedBy string }
			}
		}
		// The key's name is who approved; the name typed in the page is
		// kept beside it as a note.
		su.api(t, "GET", "/v1/approvals?status=APPROVED&runId="+started.Run.ID, nil, &decided)
		if len(decided.Approvals) != 1 {
			t.Fatalf("approved approvals of the run = %+v, want one", decided.Approvals)
		}
		if d := decided.Approvals[0].Decision; d.ApprovedBy != "ops" || d.DecidedBy != "Dana On-Call" {
			t.Errorf("decision = %+v, want approved by ops (the key's name), decidedBy the name typed in the page", d)
		}
	})

	t.Run("the research page follows its run live", func(t *testing.T) {
		var started struct {
			Run struct{ ID string }
		}
		su.api(t, "POST", "/v1/research", map[string]any{
			"topic": "why does the checkout API return 5xx errors", "userId": "6f1c2d8e-4b7a-4c1e-9a55-2f0d3b9e7c41",
			"maxIterations": 1,
		}, &started)
		su.open(t, "/console/research/"+started.Run.ID, "#run-status")
		su.run(t, 5*time.Second, chromedp.Evaluate(`window.__noReload = true`, nil))
		// The run finishes and waits for the summary's approval; the page
		// shows it from the stream.
		su.run(t, 90*time.Second, chromedp.WaitVisible(`#planned-actions [data-action-status="AWAITING_APPROVAL"]`, chromedp.ByQuery))
		var pending struct {
			Approvals []struct{ ID string }
		}
		su.api(t, "GET", "/v1/approvals?status=PENDING&runId="+started.Run.ID, nil, &pending)
		if len(pending.Approvals) != 1 {
			t.Fatalf("pending approvals of the run = %+v, want one", pending.Approvals)
		}
		su.api(t, "POST", "/v1/approvals/"+pending.Approvals[0].ID+":decide",
			map[string]any{"decision": "REJECT", "decidedBy": "test", "comment": "not now"}, nil)
		var report string
		su.run(t, 60*time.Second,
			chromedp.WaitVisible(`#planned-actions [data-action-status="SKIPPED"]`, chromedp.ByQuery),
			chromedp.WaitVisible(`#run-status[data-status="FINISHED"]`, chromedp.ByQuery),
			chromedp.Text(".markdown", &report, chromedp.ByQuery),
		)
		var same bool
		su.run(t, 5*time.Second, chromedp.Evaluate(`window.__noReload === true`, &same))
		if !same {
			t.Error("the page reloaded")
		}
		if strings.TrimSpace(report) == "" {
			t.Error("the report's Markdown rendered empty")
		}
	})

	t.Run("Swagger UI at /docs/ reads the OpenAPI 3 document", func(t *testing.T) {
		var ops int
		var version string
		su.run(t, 30*time.Second,
			chromedp.Navigate(su.s.GatewayURL+"/docs/"),
			chromedp.WaitVisible(".opblock", chromedp.ByQuery),
			chromedp.Evaluate(`document.querySelectorAll(".opblock").length`, &ops),
			chromedp.Evaluate(`fetch("/openapi.json").then(r => r.json()).then(d => d.openapi)`, &version,
				func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }),
		)
		if ops < 25 || !strings.HasPrefix(version, "3.") {
			t.Errorf("Swagger UI shows %d operations of an OpenAPI %q document, want 25+ of 3.x", ops, version)
		}
	})

	t.Run("ask shows the answer with its primary source", func(t *testing.T) {
		su.open(t, "/console/ask", "#h-ask")
		var source string
		su.run(t, 60*time.Second,
			chromedp.WaitReady(`form[aria-label="Ask"] select option[value="runbooks"]`, chromedp.ByQuery),
			chromedp.SendKeys(`form[aria-label="Ask"] textarea`, "What should I check when the checkout API returns 5xx errors?", chromedp.ByQuery),
			chromedp.Click(`form[aria-label="Ask"] button[type="submit"]`, chromedp.ByQuery),
			chromedp.WaitVisible("#primary-source", chromedp.ByQuery),
			chromedp.Text("#primary-source", &source, chromedp.ByQuery),
		)
		if !contains(source, "Primary source:", "Checkout") {
			t.Errorf("primary source = %q, want the checkout runbook", source)
		}
	})

	t.Run("an out-of-scope question is shown as such", func(t *testing.T) {
		su.open(t, "/console/ask", "#h-ask")
		var text string
		su.run(t, 60*time.Second,
			chromedp.WaitReady(`form[aria-label="Ask"] select option[value="runbooks"]`, chromedp.ByQuery),
			chromedp.SendKeys(`form[aria-label="Ask"] textarea`, "What is a good recipe for chocolate cake with raspberries?", chromedp.ByQuery),
			chromedp.Click(`form[aria-label="Ask"] button[type="submit"]`, chromedp.ByQuery),
			chromedp.WaitVisible(".out-of-scope", chromedp.ByQuery),
			chromedp.Text(".out-of-scope", &text, chromedp.ByQuery),
		)
		if !strings.Contains(text, "Out of scope") {
			t.Errorf("out-of-scope panel says %q", text)
		}
	})
}

// forgetName clears the name the console remembers for decisions and
// reviews, so a scenario types it into an empty field.
func forgetName(t *testing.T, su *suite) {
	t.Helper()
	su.run(t, 20*time.Second,
		chromedp.Navigate(su.s.GatewayURL+"/console/"),
		chromedp.Evaluate(`localStorage.removeItem("groundcrew.name")`, nil),
	)
}
