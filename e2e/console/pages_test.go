package console

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// scenario is what seed created: something real on every console page.
type scenario struct {
	alertID        string // a single alert, delivered
	groupID        string // an Alertmanager group of two alerts
	groupedAlertID string // one alert of that group
	messageID      string // a grounded answer with citations
	pendingRunID   string // a finished run whose summary waits for approval
	decidedRunID   string // a finished run whose approval was decided
}

// seed posts alerts, an alert group, a grounded answer and research runs
// (one approval left pending, one decided), and waits until each is where
// a page shows it.
func seed(t *testing.T, su *suite) scenario {
	t.Helper()
	var sc scenario
	var alert struct {
		Alert struct{ ID string }
	}
	for _, text := range []string{
		"Checkout API 5xx above 10% for 5 minutes",
		"Disk full on db-1: /var/lib/postgresql at 97%",
	} {
		su.api(t, "POST", "/v1/alerts", map[string]any{"text": text, "metadata": map[string]any{"labels": map[string]string{"severity": "page"}}}, &alert)
	}
	sc.alertID = alert.Alert.ID
	// On call: a schedule and a policy for severity=page, so the group
	// below escalates and the on-call page has someone on call.
	su.api(t, "PUT", "/v1/oncall/schedules/dba", map[string]any{
		"name": "Database on call", "timeZone": "Europe/Berlin",
		"layers": []map[string]any{{"name": "weekly",
			"rotation":     map[string]any{"length": "WEEKLY", "startDate": "2026-01-05", "handoffTime": "10:00"},
			"participants": []map[string]any{{"userId": 111111111, "username": "ann_sre"}, {"userId": 222222222, "username": "ben_dba"}}}},
	}, nil)
	su.api(t, "PUT", "/v1/oncall/policies/paging", map[string]any{
		"match": "severity=page", "steps": []map[string]any{{"scheduleId": "dba", "waitMinutes": 10}},
	}, nil)
	var grouped struct {
		Alerts []struct{ ID, GroupID string }
	}
	su.api(t, "POST", "/v1/alerts:alertmanager", map[string]any{
		"version": "4", "status": "firing", "receiver": "groundcrew", "groupKey": `{}:{alertname="PostgresTooManyConnections"}`,
		"groupLabels":  map[string]string{"alertname": "PostgresTooManyConnections"},
		"commonLabels": map[string]string{"alertname": "PostgresTooManyConnections", "severity": "page"},
		"alerts": []map[string]any{
			{"status": "firing", "fingerprint": "f1", "labels": map[string]string{"alertname": "PostgresTooManyConnections", "instance": "db-1", "severity": "page"},
				"annotations": map[string]string{"summary": "Postgres on db-1 refuses connections: too many clients"}},
			{"status": "firing", "fingerprint": "f2", "labels": map[string]string{"alertname": "PostgresTooManyConnections", "instance": "db-2", "severity": "page"},
				"annotations": map[string]string{"summary": "Postgres on db-2 refuses connections: too many clients"}},
		},
	}, &grouped)
	if len(grouped.Alerts) == 0 || grouped.Alerts[0].GroupID == "" {
		t.Fatalf("the Alertmanager payload made no grouped alerts: %+v", grouped)
	}
	sc.groupID, sc.groupedAlertID = grouped.Alerts[0].GroupID, grouped.Alerts[0].ID

	var msg struct{ ID string }
	su.api(t, "POST", "/v1/ground", map[string]any{
		"text":        "Postgres refuses connections: too many clients already",
		"roundConfig": map[string]any{"engine": "local", "maxResults": 5},
	}, &msg)
	sc.messageID = msg.ID

	var run struct {
		Run struct{ ID string }
	}
	for i, topic := range []string{"how to free disk space on a full database host", "postgres connection pooling"} {
		su.api(t, "POST", "/v1/research", map[string]any{
			"topic": topic, "userId": "6f1c2d8e-4b7a-4c1e-9a55-2f0d3b9e7c41", "maxIterations": 1,
		}, &run)
		if i == 0 {
			sc.pendingRunID = run.Run.ID
		} else {
			sc.decidedRunID = run.Run.ID
		}
	}
	var decided string
	eventually(t, 90*time.Second, "the alerts to be delivered and both runs to wait for approval", func() bool {
		var a struct {
			Alert struct{ Status string }
		}
		su.api(t, "GET", "/v1/alerts/"+sc.alertID, nil, &a)
		var g struct {
			Alert struct{ Status string }
		}
		su.api(t, "GET", "/v1/alerts/"+sc.groupedAlertID, nil, &g)
		var ap struct{ Approvals []struct{ ID, RunID string } }
		su.api(t, "GET", "/v1/approvals?status=PENDING&runId="+sc.decidedRunID, nil, &ap)
		if len(ap.Approvals) > 0 {
			decided = ap.Approvals[0].ID
		}
		var pending struct{ Approvals []struct{ ID string } }
		su.api(t, "GET", "/v1/approvals?status=PENDING&runId="+sc.pendingRunID, nil, &pending)
		return a.Alert.Status == "DELIVERED" && g.Alert.Status == "DELIVERED" && decided != "" && len(pending.Approvals) > 0
	})
	su.api(t, "POST", "/v1/approvals/"+decided+":decide", map[string]any{"decision": "APPROVE", "decidedBy": "dana", "comment": "send it"}, nil)
	eventually(t, 30*time.Second, "the approved summary to be sent", func() bool {
		var r struct {
			Run struct{ PlannedActions []struct{ Status string } }
		}
		su.api(t, "GET", "/v1/research/"+sc.decidedRunID, nil, &r)
		return len(r.Run.PlannedActions) > 0 && r.Run.PlannedActions[0].Status == "EXECUTED"
	})
	return sc
}

// consolePage is a console page, the element that shows it is ready, and
// the element that shows it holds the scenario's content.
type consolePage struct {
	name, path, ready, content string
	act                        []chromedp.Action
}

// consolePages are every page of the console, over sc.
func consolePages(sc scenario) []consolePage {
	return []consolePage{
		{name: "alerts", path: "/console/alerts", ready: "#h-alerts", content: "#alert-groups li"},
		{name: "alert", path: "/console/alerts/" + sc.alertID, ready: "#h-alert", content: "#h-alert"},
		{name: "grouped-alert", path: "/console/alerts/" + sc.groupedAlertID, ready: "#h-alert", content: "#alert-group-link"},
		{name: "group", path: "/console/groups/" + sc.groupID, ready: "#h-group", content: "#escalation-timeline li"},
		{name: "messages", path: "/console/messages", ready: "#h-messages", content: "section .rows li"},
		{name: "message", path: "/console/messages/" + sc.messageID, ready: "#h-message", content: "#cited-text mark"},
		{name: "approvals", path: "/console/approvals", ready: "#h-approvals", content: "#pending-approvals li"},
		{name: "oncall", path: "/console/oncall", ready: "#h-oncall", content: ".oncall-now strong"},
		{name: "ask", path: "/console/ask", ready: "#h-ask", content: "#primary-source", act: []chromedp.Action{
			chromedp.WaitReady(`form[aria-label="Ask"] select option[value="runbooks"]`, chromedp.ByQuery),
			chromedp.SendKeys(`form[aria-label="Ask"] textarea`, "What should I check when the checkout API returns 5xx errors?", chromedp.ByQuery),
			chromedp.Click(`form[aria-label="Ask"] button[type="submit"]`, chromedp.ByQuery),
		}},
		{name: "research", path: "/console/research", ready: "#h-research", content: "#research-runs li"},
		{name: "research-run", path: "/console/research/" + sc.pendingRunID, ready: "#run-status", content: `#planned-actions [data-action-status="AWAITING_APPROVAL"]`},
		{name: "research-run-decided", path: "/console/research/" + sc.decidedRunID, ready: "#run-status", content: `#planned-actions [data-action-status="EXECUTED"]`},
		{name: "search", path: "/console/search", ready: "#h-search", content: "#search-results", act: []chromedp.Action{
			chromedp.SendKeys(`form[aria-label="Search"] input[type="search"]`, "disk full", chromedp.ByQuery),
			chromedp.Click(`form[aria-label="Search"] button[type="submit"]`, chromedp.ByQuery),
		}},
	}
}

// consoleErrors collects what the browser reports as errors: uncaught
// exceptions, console.error calls and error log entries (a failed
// request is one: "Failed to load resource: … status of 400").
type consoleErrors struct {
	mu   sync.Mutex
	errs []string
}

// watchErrors starts collecting the tab's errors.
func watchErrors(t *testing.T, su *suite) *consoleErrors {
	t.Helper()
	ce := &consoleErrors{}
	chromedp.ListenTarget(su.browser, func(ev any) {
		var msg string
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			msg = "exception: " + e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
		case *runtime.EventConsoleAPICalled:
			if e.Type != runtime.APITypeError && e.Type != runtime.APITypeAssert {
				return
			}
			var parts []string
			for _, a := range e.Args {
				parts = append(parts, strings.Trim(string(a.Value), `"`)+a.Description)
			}
			msg = "console." + string(e.Type) + ": " + strings.Join(parts, " ")
		case *log.EventEntryAdded:
			if e.Entry.Level != log.LevelError {
				return
			}
			msg = fmt.Sprintf("%s: %s %s", e.Entry.Source, e.Entry.Text, e.Entry.URL)
		default:
			return
		}
		ce.mu.Lock()
		ce.errs = append(ce.errs, msg)
		ce.mu.Unlock()
	})
	su.run(t, 10*time.Second, chromedp.ActionFunc(func(ctx context.Context) error {
		if err := runtime.Enable().Do(ctx); err != nil {
			return err
		}
		return log.Enable().Do(ctx)
	}))
	return ce
}

// take returns the errors collected since the last take.
func (ce *consoleErrors) take() []string {
	ce.mu.Lock()
	defer ce.mu.Unlock()
	out := ce.errs
	ce.errs = nil
	return out
}

// visitClean opens p, runs its actions, waits for its content and fails
// the test on an error banner or on anything the browser reported as an
// error while the page loaded.
func visitClean(t *testing.T, su *suite, ce *consoleErrors, p consolePage) {
	t.Helper()
	su.run(t, 20*time.Second, chromedp.Navigate(su.s.GatewayURL+p.path), chromedp.WaitVisible(p.ready, chromedp.ByQuery))
	su.run(t, 60*time.Second, p.act...)
	su.run(t, 60*time.Second, chromedp.WaitVisible(p.content, chromedp.ByQuery))
	var banners []string
	su.run(t, 10*time.Second, chromedp.Evaluate(
		`[...document.querySelectorAll('.error, [role="alert"]')].map(e => e.textContent.trim()).filter(Boolean)`, &banners))
	for _, b := range banners {
		t.Errorf("%s (%s) shows an error: %q", p.name, p.path, b)
	}
	for _, e := range ce.take() {
		t.Errorf("%s (%s): the browser reported %s", p.name, p.path, e)
	}
}

// TestConsoleEveryPage visits every console page after a scenario that
// creates alerts, a group, an answer, approvals and research runs, and
// fails on any error banner or browser error, and on a page that does not
// show the scenario's content. It also holds the page-level fixes of
// issue 25: the research list lists every user's runs, the executive
// summary shows once, a citation marker once with every cited span
// highlighted, a document once in Ask's sources, dropped sources as titles
// under a count, and a grouped alert linking to its group's page.
func TestConsoleEveryPage(t *testing.T) {
	su := startSuite(t)
	sc := seed(t, su)
	// A run started by another user: the operator's list shows it too.
	var other struct {
		Run struct{ ID string }
	}
	su.api(t, "POST", "/v1/research", map[string]any{
		"topic": "kafka consumer lag", "userId": "0b8f1a52-93a4-4d4e-b5c9-3e3f3f6c2a10", "maxIterations": 1,
	}, &other)

	su.run(t, 20*time.Second, chromedp.Navigate(su.s.GatewayURL+"/console/alerts"))
	su.signIn(t)
	su.run(t, 20*time.Second, chromedp.WaitVisible("#h-alerts", chromedp.ByQuery))
	ce := watchErrors(t, su)
	for _, p := range consolePages(sc) {
		visitClean(t, su, ce, p)
	}

	t.Run("the research list shows every user's runs", func(t *testing.T) {
		su.run(t, 20*time.Second, chromedp.Navigate(su.s.GatewayURL+"/console/research"),
			chromedp.WaitVisible(sel(`#research-runs a[href="/console/research/%s"]`, other.Run.ID), chromedp.ByQuery))
		var n int
		su.run(t, 5*time.Second, chromedp.Evaluate(`document.querySelectorAll("#research-runs li").length`, &n))
		if n != 3 {
			t.Errorf("the research list shows %d runs, want all 3", n)
		}
	})

	t.Run("a run's page shows the executive summary once", func(t *testing.T) {
		var summary string
		var count int
		su.run(t, 20*time.Second, chromedp.Navigate(su.s.GatewayURL+"/console/research/"+sc.decidedRunID),
			chromedp.WaitVisible("#executive-summary", chromedp.ByQuery),
			chromedp.Text("#executive-summary", &summary, chromedp.ByQuery))
		// Its sentences come from the findings, so they recur there; the
		// summary as a whole (with its quality note) shows once.
		summary = strings.TrimSpace(summary)
		su.run(t, 5*time.Second, chromedp.Evaluate(
			sel(`document.querySelector("main").innerText.split(%q).length - 1`, summary), &count))
		if !strings.Contains(summary, "(Quality score") || count != 1 {
			t.Errorf("the executive summary %q shows %d times, want once", summary, count)
		}
		var h1s int
		su.run(t, 5*time.Second, chromedp.Evaluate(`document.querySelectorAll("main h1").length`, &h1s))
		if h1s != 1 {
			t.Errorf("the run's page has %d level-one headings, want the topic once", h1s)
		}
	})

	t.Run("an answer's markers show once and every cited span is highlighted", func(t *testing.T) {
		var m struct {
			Text           string
			ParsedMetadata struct {
				Markers []struct{ Start, End int }
			}
		}
		su.api(t, "GET", "/v1/messages/"+sc.messageID, nil, &m)
		if len(m.ParsedMetadata.Markers) < 2 {
			t.Fatalf("the answer has %d cited spans, want several: %+v", len(m.ParsedMetadata.Markers), m)
		}
		var marks []string
		var sups int
		var text string
		su.run(t, 20*time.Second, chromedp.Navigate(su.s.GatewayURL+"/console/messages/"+sc.messageID),
			chromedp.WaitVisible("#cited-text mark", chromedp.ByQuery),
			chromedp.Evaluate(`[...document.querySelectorAll("#cited-text mark")].map(m => m.firstChild.textContent)`, &marks),
			chromedp.Evaluate(`document.querySelectorAll("#cited-text sup").length`, &sups),
			chromedp.Text("#cited-text", &text, chromedp.ByQuery))
		cps := []rune(m.Text)
		joined := strings.Join(marks, "")
		for _, mk := range m.ParsedMetadata.Markers {
			if span := string(cps[mk.Start:mk.End]); !strings.Contains(joined, span) {
				t.Errorf("cited span %q is not highlighted (marks %q)", span, marks)
			}
		}
		if sups != 0 {
			t.Errorf("%d numbers added after spans whose text already carries its markers", sups)
		}
		if strings.Contains(text, "] [") || strings.Count(text, "[1]") != strings.Count(m.Text, "[1]") {
			t.Errorf("the cited text shows markers twice: %q", text)
		}
	})

	t.Run("Ask lists each document once", func(t *testing.T) {
		var urls []string
		su.run(t, 60*time.Second, chromedp.Navigate(su.s.GatewayURL+"/console/ask"),
			chromedp.WaitReady(`form[aria-label="Ask"] select option[value="runbooks"]`, chromedp.ByQuery),
			chromedp.SendKeys(`form[aria-label="Ask"] textarea`, "Postgres refuses connections: too many clients. What do I do?", chromedp.ByQuery),
			chromedp.Click(`form[aria-label="Ask"] button[type="submit"]`, chromedp.ByQuery),
			chromedp.WaitVisible("#answer-sources li", chromedp.ByQuery),
			chromedp.Evaluate(`[...document.querySelectorAll("#answer-sources a")].map(a => a.href)`, &urls))
		seen := map[string]bool{}
		for _, u := range urls {
			if seen[u] {
				t.Errorf("Ask lists %s twice (%q)", u, urls)
			}
			seen[u] = true
		}
	})

	t.Run("dropped sources are listed by title under a count", func(t *testing.T) {
		var r struct {
			Run struct{ Critique struct{ Reasons []string } }
		}
		su.api(t, "GET", "/v1/research/"+sc.pendingRunID, nil, &r)
		dropped := ""
		for _, reason := range r.Run.Critique.Reasons {
			if strings.HasPrefix(reason, "dropped ") {
				dropped = reason
			}
		}
		if dropped == "" {
			t.Fatalf("the scenario's run dropped no source, so nothing shows how dropped sources read: %q", r.Run.Critique.Reasons)
		}
		var summary string
		var nodes []*cdp.Node
		su.run(t, 20*time.Second, chromedp.Navigate(su.s.GatewayURL+"/console/research/"+sc.pendingRunID),
			chromedp.WaitVisible("#critique details.dropped summary", chromedp.ByQuery),
			chromedp.Text("#critique details.dropped summary", &summary, chromedp.ByQuery),
			chromedp.Nodes("#critique details.dropped li", &nodes, chromedp.ByQueryAll, chromedp.AtLeast(0)))
		if !strings.Contains(summary, "off-topic") || len(nodes) == 0 {
			t.Errorf("dropped sources summary %q with %d items", summary, len(nodes))
		}
		var critique string
		su.run(t, 5*time.Second, chromedp.Text("#critique", &critique, chromedp.ByQuery))
		if strings.Contains(critique, "https://") {
			t.Errorf("the critique shows URLs: %q", critique)
		}
	})

	t.Run("a grouped alert links to its group, whose page lists its alerts", func(t *testing.T) {
		var n int
		su.run(t, 20*time.Second, chromedp.Navigate(su.s.GatewayURL+"/console/alerts/"+sc.groupedAlertID),
			chromedp.WaitVisible("#alert-group-link", chromedp.ByQuery),
			chromedp.Click("#alert-group-link", chromedp.ByQuery),
			chromedp.WaitVisible("#group-alerts li", chromedp.ByQuery),
			chromedp.Evaluate(`document.querySelectorAll("#group-alerts li").length`, &n))
		if n != 2 {
			t.Errorf("the group page lists %d alerts, want 2", n)
		}
	})
	for _, e := range ce.take() {
		t.Errorf("the browser reported %s", e)
	}
}
