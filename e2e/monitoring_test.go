package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/e2e/faultinject"
	"github.com/groundcrew/groundcrew/e2e/providerfake"
	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

// The deploy artefacts these tests hold to the running services.
var (
	rulesFile     = filepath.Join("..", "deploy", "prometheus", "groundcrew.rules.yml")
	dashboardFile = filepath.Join("..", "deploy", "grafana", "groundcrew.json")
	ownRunbooks   = filepath.Join("..", "docs", "runbooks")
)

// prometheusOwn are series Prometheus makes itself, not the services.
var prometheusOwn = map[string]bool{"up": true}

// rule is one rule of a Prometheus rules file, as far as these tests need.
type rule struct {
	Alert, Record, Expr string
	Labels, Annotations map[string]string
}

// loadRules reads groundcrew.rules.yml. The file is YAML in the one shape
// Prometheus documents (groups → rules → record|alert, expr, labels,
// annotations); a small reader of that shape keeps this module free of a
// YAML dependency, and TestRulesFileReads pins it to what promtool counts.
func loadRules(t *testing.T) []rule {
	t.Helper()
	f, err := os.Open(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		rules         []rule
		cur           *rule
		block         *string // a "key: |" block being read
		blockIndent   int
		section       map[string]string // labels or annotations being read
		sectionIndent int
	)
	indentOf := func(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		ind := indentOf(line)
		if block != nil {
			if ind > blockIndent {
				*block += trimmed + "\n"
				continue
			}
			block = nil
		}
		if section != nil && ind <= sectionIndent {
			section = nil
		}
		if strings.HasPrefix(trimmed, "- record:") || strings.HasPrefix(trimmed, "- alert:") {
			rules = append(rules, rule{Labels: map[string]string{}, Annotations: map[string]string{}})
			cur = &rules[len(rules)-1]
			trimmed = strings.TrimPrefix(trimmed, "- ")
		}
		key, value, ok := strings.Cut(trimmed, ":")
		if !ok || cur == nil {
			continue
		}
		value = strings.TrimSpace(value)
		if section != nil {
			section[key] = unquote(value)
			continue
		}
		switch key {
		case "record":
			cur.Record = value
		case "alert":
			cur.Alert = value
		case "expr":
			if value == "|" {
				block, blockIndent = &cur.Expr, ind
			} else {
				cur.Expr = value
			}
		case "labels":
			section, sectionIndent = cur.Labels, ind
		case "annotations":
			section, sectionIndent = cur.Annotations, ind
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rules
}

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		var out string
		if err := json.Unmarshal([]byte(s), &out); err == nil {
			return out
		}
	}
	return s
}

func TestRulesFileReads(t *testing.T) {
	rules := loadRules(t)
	var alerts, records int
	for _, r := range rules {
		if r.Expr == "" {
			t.Errorf("rule %s%s has no expression", r.Alert, r.Record)
		}
		if r.Alert != "" {
			alerts++
			for _, a := range []string{"summary", "description", "runbook_url"} {
				if r.Annotations[a] == "" {
					t.Errorf("alert %s has no %s", r.Alert, a)
				}
			}
			if r.Labels["severity"] == "" {
				t.Errorf("alert %s has no severity", r.Alert)
			}
		} else {
			records++
		}
	}
	// promtool check rules counts 30 rules: 16 recording rules, 14 alerts.
	if alerts != 14 || records != 16 {
		t.Errorf("read %d alerts and %d recording rules, want 14 and 16 (as promtool counts)", alerts, records)
	}
}

// TestEveryAlertHasItsRunbook: each alert's runbook_url is the url of a
// page in docs/runbooks, so indexing them lets groundcrew cite it.
func TestEveryAlertHasItsRunbook(t *testing.T) {
	web, err := providerfake.LoadWeb(ownRunbooks)
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{}
	for _, d := range web.Docs() {
		pages[d.URL] = d.Text
	}
	for _, r := range loadRules(t) {
		if r.Alert == "" {
			continue
		}
		text, ok := pages[r.Annotations["runbook_url"]]
		if !ok {
			t.Errorf("%s: runbook_url %s is no page in docs/runbooks", r.Alert, r.Annotations["runbook_url"])
			continue
		}
		if !strings.Contains(text, r.Alert) {
			t.Errorf("%s: its runbook does not name it", r.Alert)
		}
	}
}

// metricNames returns the metric names a PromQL expression selects: the
// identifiers that are not functions, aggregations, keywords, label names
// (in braces, by/without/on/ignoring/group_* lists), strings or durations.
func metricNames(expr string) []string {
	keywords := map[string]bool{
		"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
		"bool": true, "and": true, "or": true, "unless": true, "offset": true, "atan2": true,
	}
	// Aggregations may be followed by by/without before their parenthesis.
	aggregations := map[string]bool{
		"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
		"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
	}
	isIdentStart := func(c byte) bool { return c == '_' || c == ':' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
	isIdent := func(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }
	var out []string
	skipLabelList := false
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(expr) && expr[j] != c {
				if expr[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
		case c == '{' || c == '[':
			closing := map[byte]byte{'{': '}', '[': ']'}[c]
			j := i + 1
			for j < len(expr) && expr[j] != closing {
				if expr[j] == '"' {
					j++
					for j < len(expr) && expr[j] != '"' {
						if expr[j] == '\\' {
							j++
						}
						j++
					}
				}
				j++
			}
			i = j + 1
		case c == '(' && skipLabelList:
			i = strings.IndexByte(expr[i:], ')') + i + 1
			skipLabelList = false
		case c == '$':
			// A dashboard variable such as $__rate_interval.
			i++
			for i < len(expr) && isIdent(expr[i]) {
				i++
			}
		case c >= '0' && c <= '9':
			// Numbers, including 1e3 and durations outside brackets.
			for i < len(expr) && (isIdent(expr[i]) || expr[i] == '.') {
				i++
			}
		case isIdentStart(c):
			j := i
			for j < len(expr) && isIdent(expr[j]) {
				j++
			}
			word := expr[i:j]
			k := j
			for k < len(expr) && (expr[k] == ' ' || expr[k] == '\n' || expr[k] == '\t') {
				k++
			}
			switch {
			case keywords[word]:
				skipLabelList = word != "and" && word != "or" && word != "unless" && word != "offset" && word != "bool"
			case aggregations[word], k < len(expr) && expr[k] == '(':
				// an aggregation or a function
			default:
				out = append(out, word)
			}
			i = j
		default:
			i++
		}
	}
	return out
}

func TestMetricNames(t *testing.T) {
	tests := []struct {
		expr string
		want []string
	}{
		{`up{job=~"a|b"} == 0`, []string{"up"}},
		{`sum by (job, code) (increase(notifier_delivery_errors_total[15m])) > 5`, []string{"notifier_delivery_errors_total"}},
		{"sum by (job) (jobqueue_jobs{state=~\"available\"}) > 0\nunless on (job)\nsum by (job) (increase(x_total[15m])) > 0", []string{"jobqueue_jobs", "x_total"}},
		{`histogram_quantile(0.95, sum by (le) (rate(h_bucket{route!~".*Stream"}[$__rate_interval])))`, []string{"h_bucket"}},
		{`groundcrew:ratio:rate5m > (14.4 * 0.001) and y`, []string{"groundcrew:ratio:rate5m", "y"}},
		{`a / on (job) group_left (provider) b offset 5m`, []string{"a", "b"}},
		{`sum without (instance) (rate(c[1m])) * 1e3`, []string{"c"}},
		{`rate(d[$__rate_interval]) / $scale + e`, []string{"d", "e"}},
	}
	for _, tt := range tests {
		if got := metricNames(tt.expr); !slices.Equal(got, tt.want) {
			t.Errorf("metricNames(%q) = %q, want %q", tt.expr, got, tt.want)
		}
	}
}

// dashboardExprs returns every query of the Grafana dashboard.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Templating struct {
			List []struct{ Name, Type string } `json:"list"`
		} `json:"templating"`
		Panels []struct {
			Title      string `json:"title"`
			Datasource any    `json:"datasource"`
			Targets    []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if !slices.ContainsFunc(dash.Templating.List, func(v struct{ Name, Type string }) bool { return v.Type == "datasource" }) {
		t.Errorf("the dashboard has no datasource variable")
	}
	var exprs []string
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			if tg.Expr == "" {
				t.Errorf("panel %q has a target without a query", p.Title)
			}
			exprs = append(exprs, tg.Expr)
		}
	}
	if len(exprs) < 15 {
		t.Fatalf("%d queries in the dashboard; reading it went wrong", len(exprs))
	}
	return exprs
}

// scrapeNames returns the sample names (histograms as _bucket, _sum and
// _count) every part of the stack serves on its admin /metrics.
func scrapeNames(t *testing.T, adminAddrs map[string]string) map[string][]string {
	t.Helper()
	names := map[string][]string{}
	for part, addr := range adminAddrs {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatalf("scraping %s: %v", part, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("scraping %s: %d %v", part, resp.StatusCode, err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if line == "" || line[0] == '#' {
				continue
			}
			name := line[:strings.IndexAny(line, "{ ")]
			if !slices.Contains(names[name], part) {
				names[name] = append(names[name], part)
			}
		}
	}
	return names
}

// TestMonitoringMetricsExist runs the stack, makes it do each thing the
// rules and the dashboard watch (intake, delivery, a Telegram 429, an
// alert given up on, Gemini errors, search, rag, REST), scrapes every
// part's /metrics and checks that every metric name the rules and the
// dashboard use is one the services export: no alert or panel on a
// series that does not exist.
func TestMonitoringMetricsExist(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole stack")
	}
	web := loadWeb(t)
	gemini := &providerfake.Gemini{Web: web, APIKey: "gemini-key"}
	// Half of Gemini's answers are 5xx: rounds fail and succeed, errors
	// are counted. The seed makes the sequence repeatable.
	_, geminiURL := faulty(t, gemini, faultinject.Config{Rate: 0.5, Seed: 7, Faults: []faultinject.Fault{faultinject.Error}, Body: providerfake.GeminiErrorBody})
	tg := telegramtest.NewServer(t.Cleanup)
	var first = make(chan struct{}, 1)
	first <- struct{}{}
	tg.Handle(func(s telegramtest.Sent) telegramtest.Reply {
		if strings.Contains(s.Text, "undeliverable") {
			return telegramtest.Reply{ErrorCode: 400, Description: "Bad Request: chat not found"}
		}
		select {
		case <-first:
			return telegramtest.TooManyRequests(1)
		default:
			return telegramtest.Reply{}
		}
	})
	env := map[string]string{
		"GEMINI_API_KEY": "gemini-key", "GEMINI_MODEL": "gemini-test", "GOOGLE_GEMINI_BASE_URL": geminiURL,
		"TELEGRAM_BOT_TOKEN": "7100000001:AAE-e2e", "TELEGRAM_WEBHOOK_SECRET": "e2e-secret", "TELEGRAM_API_URL": tg.URL,
		"TELEGRAM_CHAT_ID": "-100123", "TELEGRAM_BOT_USERNAME": "groundcrew_bot",
		"NOTIFIER_TELEGRAM_RATE_PER_CHAT": "1000", "NOTIFIER_TELEGRAM_RATE_OVERALL": "1000",
		"NOTIFIER_POLL_INTERVAL": "50ms", "NOTIFIER_DELIVERY_MAX_ATTEMPTS": "2",
		"NOTIFIER_RETRY_BASE_DELAY": "100ms", "NOTIFIER_RETRY_MAX_DELAY": "200ms",
	}
	s := startStack(t, env, "")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	docs := runbookDocs(t)
	must := func(method, path string, in any) {
		t.Helper()
		if _, err := call(ctx, method, s.GatewayURL+path, in, nil); err != nil {
			t.Fatal(err)
		}
	}
	must("POST", "/v1/search/documents", map[string]any{"documents": docs})
	for range 2 { // the second is a cache hit
		must("POST", "/v1/search", map[string]any{"query": "postgres too many connections", "engine": "local"})
	}
	must("POST", "/v1/collections/runbooks/documents", map[string]any{"documents": docs})
	must("POST", "/v1/collections/runbooks:ask", map[string]any{"query": "How do I fix a full disk?"})
	for range 3 {
		must("POST", "/v1/ground", map[string]any{"text": "Postgres refuses connections: too many clients", "roundConfig": map[string]any{"engine": "local"}})
	}
	var ids []string
	for _, text := range []string{"Disk almost full on the database volume", "undeliverable: checkout 5xx"} {
		var out struct{ Alert alertView }
		if _, err := call(ctx, "POST", s.GatewayURL+"/v1/alerts", map[string]any{"text": text}, &out); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, out.Alert.ID)
	}
	for i, want := range []string{"DELIVERED", "FAILED"} {
		eventually(t, time.Minute, fmt.Sprintf("alert %s to be %s", ids[i], want), func() bool {
			var out struct{ Alert alertView }
			if _, err := call(ctx, "GET", s.GatewayURL+"/v1/alerts/"+ids[i], nil, &out); err != nil {
				t.Fatal(err)
			}
			return out.Alert.Status == want
		})
	}

	exported := scrapeNames(t, s.AdminAddrs)
	recorded := map[string]bool{}
	type use struct{ name, where string }
	var uses []use
	for _, r := range loadRules(t) {
		if r.Record != "" {
			recorded[r.Record] = true
		}
		for _, n := range metricNames(r.Expr) {
			uses = append(uses, use{n, "rule " + r.Alert + r.Record})
		}
	}
	for _, e := range dashboardExprs(t) {
		for _, n := range metricNames(e) {
			uses = append(uses, use{n, "dashboard query " + e})
		}
	}
	checked := map[string]bool{}
	for _, u := range uses {
		switch {
		case recorded[u.name], prometheusOwn[u.name]:
		case exported[u.name] == nil:
			t.Errorf("%s uses %s, which no service exports", u.where, u.name)
		default:
			checked[u.name] = true
		}
	}
	// The names the rules stand on, so the check above cannot pass on an
	// empty reading of the files.
	for _, n := range []string{"jobqueue_jobs", "jobqueue_oldest_job_age_seconds", "research_approvals_total", "notifier_alerts_delivered_total", "notifier_delivery_errors_total",
		"notifier_alerts_failed_total", "provider_requests_total", "grounding_round_duration_seconds_count",
		"gateway_http_request_duration_seconds_bucket", "grpc_server_handling_seconds_bucket"} {
		if !checked[n] {
			t.Errorf("%s is not among the checked names %v", n, checked)
		}
	}
	t.Logf("%d metric names used by the rules and the dashboard, all exported", len(checked))
}

// TestGroundcrewAlertCitesItsOwnRunbook: Alertmanager fires
// GroundcrewDeliveryStalled, as deploy/prometheus defines it, at
// groundcrew; with groundcrew's own runbooks indexed (as make run does),
// the message delivered to Telegram cites the alert's runbook_url.
// Offline: no model key, Telegram is a local stand-in.
func TestGroundcrewAlertCitesItsOwnRunbook(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole stack")
	}
	var stalled rule
	for _, r := range loadRules(t) {
		if r.Alert == "GroundcrewDeliveryStalled" {
			stalled = r
		}
	}
	if stalled.Alert == "" {
		t.Fatal("GroundcrewDeliveryStalled is not in " + rulesFile)
	}
	tg := telegramtest.NewServer(t.Cleanup)
	s := startStack(t, map[string]string{
		"TELEGRAM_BOT_TOKEN": "7100000001:AAE-e2e", "TELEGRAM_WEBHOOK_SECRET": "e2e-secret", "TELEGRAM_API_URL": tg.URL,
		"TELEGRAM_CHAT_ID": "-100123", "TELEGRAM_BOT_USERNAME": "groundcrew_bot",
		"NOTIFIER_POLL_INTERVAL": "50ms",
	}, "")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	var docs []map[string]string
	for _, dir := range []string{"../examples/runbooks", ownRunbooks} {
		web, err := providerfake.LoadWeb(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range web.Docs() {
			docs = append(docs, map[string]string{"url": d.URL, "title": d.Title, "text": d.Text})
		}
	}
	if _, err := call(ctx, "POST", s.GatewayURL+"/v1/search/documents", map[string]any{"documents": docs}, nil); err != nil {
		t.Fatal(err)
	}

	// The annotations as Prometheus renders them for this alert.
	labels := map[string]string{"alertname": stalled.Alert, "job": "notifier", "namespace": "groundcrew"}
	for k, v := range stalled.Labels {
		labels[k] = v
	}
	render := strings.NewReplacer("{{ $value }}", "5", "{{ $labels.job }}", "notifier")
	annotations := map[string]string{}
	for k, v := range stalled.Annotations {
		annotations[k] = render.Replace(v)
	}
	payload := map[string]any{
		"version": "4", "status": "firing", "receiver": "groundcrew", "groupKey": `{}:{alertname="GroundcrewDeliveryStalled"}`,
		"groupLabels": map[string]string{"alertname": stalled.Alert}, "commonLabels": labels, "commonAnnotations": annotations,
		"externalURL": "http://alertmanager.monitoring:9093",
		"alerts": []map[string]any{{
			"status": "firing", "labels": labels, "annotations": annotations,
			"startsAt": time.Now().Add(-10 * time.Minute).UTC().Format(time.RFC3339), "endsAt": "0001-01-01T00:00:00Z",
			"generatorURL": "http://prometheus.monitoring:9090/graph?g0.expr=jobqueue_jobs", "fingerprint": "5c1d0a4d6f0b7e21",
		}},
	}
	var out struct{ Alerts []alertView }
	if _, err := call(ctx, "POST", s.GatewayURL+"/v1/alerts:alertmanager", payload, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Alerts) != 1 {
		t.Fatalf("intake returned %d alerts, want 1", len(out.Alerts))
	}
	sent := tg.WaitDelivered(1, 30*time.Second)
	if len(sent) != 1 {
		t.Fatalf("Telegram received %d messages, want 1", len(sent))
	}
	// MarkdownV2 escapes the URL's reserved characters in plain text;
	// without the escapes the URL must be there, among the sources.
	text := strings.ReplaceAll(sent[0].Text, `\`, "")
	if !strings.Contains(text, "GroundcrewDeliveryStalled") || !strings.Contains(text, "--- Enriched Context ---") {
		t.Fatalf("the delivered message is not the enriched alert:\n%s", sent[0].Text)
	}
	_, sources, _ := strings.Cut(text, "Sources:")
	if !strings.Contains(sources, stalled.Annotations["runbook_url"]) {
		t.Errorf("the delivered message does not cite %s among its sources:\n%s", stalled.Annotations["runbook_url"], sent[0].Text)
	}
	t.Logf("delivered:\n%s", sent[0].Text)
	// DELIVERED is written once Telegram has answered.
	eventually(t, 10*time.Second, "the alert to be DELIVERED", func() bool {
		var got struct{ Alert alertView }
		if _, err := call(ctx, "GET", s.GatewayURL+"/v1/alerts/"+out.Alerts[0].ID, nil, &got); err != nil {
			t.Fatal(err)
		}
		return got.Alert.Status == "DELIVERED"
	})
}
