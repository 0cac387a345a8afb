package securitytest

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/groundcrew/groundcrew/gen"
)

// apiRoutes lists every /v1/ operation of the OpenAPI document the gateway
// serves, as a method and a concrete path (each {var} becomes "x1").
func apiRoutes(t *testing.T) [][2]string {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(gen.OpenAPI3, &doc); err != nil {
		t.Fatal(err)
	}
	var out [][2]string
	for path, ops := range doc.Paths {
		if !strings.HasPrefix(path, "/v1/") {
			continue
		}
		for method := range ops {
			method = strings.ToUpper(method)
			switch method {
			case "GET", "POST", "PUT", "PATCH", "DELETE":
			default:
				continue
			}
			concrete := path
			for strings.Contains(concrete, "{") {
				i, j := strings.Index(concrete, "{"), strings.Index(concrete, "}")
				concrete = concrete[:i] + "x1" + concrete[j+1:]
			}
			out = append(out, [2]string{method, concrete})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][1]+out[i][0] < out[j][1]+out[j][0] })
	if len(out) < 20 {
		t.Fatalf("found only %d /v1/ operations in the OpenAPI document", len(out))
	}
	return out
}

// A key with the alerts scope alone is what Alertmanager and Grafana
// hold: it posts alerts, and every other route of the API (reads
// included) is 403 before any backend is called, so a leaked webhook key
// cannot replace a runbook or start research. A write key still posts
// alerts during the deprecation period, and not once
// GATEWAY_ALERTS_SCOPE_STRICT ends it.
func TestAlertsKeyPostsAlertsAndNothingElse(t *testing.T) {
	const (
		alerts = "k-alerts-0123456789"
		write  = "k-write-0123456789"
	)
	cfg := baseConfig()
	cfg.APIKeys = []string{"alertmanager:" + alerts + ":alerts", "ci:" + write + ":read+write"}
	e := newEdge(t, cfg, nil)
	cfg.AlertsScopeStrict = true
	strict := newEdge(t, cfg, nil)
	bodies := map[string]string{
		"/v1/alerts":              `{"text":"disk full"}`,
		"/v1/alerts:alertmanager": `{"version":"4","status":"firing","alerts":[{"status":"firing","labels":{"alertname":"DiskFull"}}]}`,
		"/v1/alerts:grafana":      `{"status":"firing","alerts":[{"status":"firing","labels":{"alertname":"DiskFull"}}]}`,
	}
	posted := 0
	for _, rt := range apiRoutes(t) {
		method, path := rt[0], rt[1]
		req := request{method: method, path: path, headers: []string{"Authorization", "Bearer " + alerts}}
		if method != "GET" && method != "DELETE" {
			req.body = `{}`
			req.headers = append(req.headers, "Content-Type", "application/json")
		}
		if b, ok := bodies[path]; ok && method == "POST" {
			req.body = b
		}
		e.rec.reset()
		got := e.do(t, req)
		switch {
		case method == "POST" && bodies[path] != "":
			posted++
			if got.code != http.StatusOK {
				t.Errorf("alerts key: %s %s = %d %s, want 200", method, path, got.code, got.body)
			}
			for name, edge := range map[string]*edge{"during the deprecation": e, "strict": strict} {
				w := edge.do(t, request{method: method, path: path, body: req.body,
					headers: []string{"Authorization", "Bearer " + write, "Content-Type", "application/json"}})
				want := http.StatusOK
				if name == "strict" {
					want = http.StatusForbidden
				}
				if w.code != want {
					t.Errorf("write key %s: %s %s = %d %s, want %d", name, method, path, w.code, w.body, want)
				}
			}
		case path == "/v1/telegram/webhook":
			// Telegram's route needs no key at all.
		default:
			if got.code != http.StatusForbidden {
				t.Errorf("alerts key: %s %s = %d %s, want 403", method, path, got.code, got.body)
			}
			if e.rec.count() != 0 {
				t.Errorf("alerts key: %s %s reached a backend", method, path)
			}
		}
	}
	if posted != 3 {
		t.Errorf("posted to %d alert routes, want the 3 webhooks (/v1/alerts, :alertmanager, :grafana)", posted)
	}
}

// GATEWAY_KEY_BUDGETS: a key's provider-backed calls stop at its budget
// with 429 and Retry-After, before any backend is called; its other calls
// and other keys go on.
func TestKeyBudgetStopsProviderCalls(t *testing.T) {
	const (
		ci    = "k-ci-0123456789"
		other = "k-other-0123456789"
	)
	cfg := baseConfig()
	cfg.APIKeys = []string{"ci:" + ci + ":read+write", "other:" + other + ":read"}
	cfg.KeyBudgets = []string{"ci:3/d"}
	e := newEdge(t, cfg, nil)
	auth := func(key string) []string { return []string{"Authorization", "Bearer " + key} }
	for i, path := range []string{"/v1/search", "/v1/ground:query", "/v1/collections/c:ask"} {
		if got := e.do(t, jsonPost(path, `{"query":"q","text":"t"}`, auth(ci)...)); got.code == http.StatusTooManyRequests {
			t.Fatalf("call %d (%s) within the budget = 429 %s", i+1, path, got.body)
		}
	}
	e.rec.reset()
	for _, path := range []string{"/v1/search", "/v1/research", "/v1/collections/c:retrieve", "/v1/converse", "/v1/ground"} {
		got := e.do(t, jsonPost(path, `{"query":"q"}`, auth(ci)...))
		if got.code != http.StatusTooManyRequests || got.header.Get("Retry-After") == "" {
			t.Errorf("%s past the budget = %d (Retry-After %q) %s, want 429 with Retry-After", path, got.code, got.header.Get("Retry-After"), got.body)
		}
	}
	if e.rec.count() != 0 {
		t.Errorf("calls past the budget reached a backend: %v", e.rec.calls)
	}
	if got := e.do(t, request{method: "GET", path: "/v1/alerts", headers: auth(ci)}); got.code != http.StatusOK {
		t.Errorf("a read that calls no provider, past the budget = %d %s, want 200", got.code, got.body)
	}
	if got := e.do(t, jsonPost("/v1/search", `{"query":"q"}`, auth(other)...)); got.code != http.StatusOK {
		t.Errorf("another key's search = %d %s, want 200", got.code, got.body)
	}
}
