package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/groundcrew/groundcrew/gateway/internal/edge"
	"github.com/groundcrew/groundcrew/gen"
)

func TestRouteScopes(t *testing.T) {
	tests := []struct {
		method, path string
		want         edge.Scope
		protected    bool
		stream       bool
	}{
		{"POST", "/v1/telegram/webhook", "", false, false},
		{"GET", "/healthz", "", false, false},
		{"GET", "/console/alerts", "", false, false},
		{"GET", "/v1/alerts", edge.ScopeRead, true, false},
		{"GET", "/v1/alerts/a1", edge.ScopeRead, true, false},
		{"POST", "/v1/alerts", edge.ScopeAlerts, true, false},
		{"POST", "/v1/alerts:alertmanager", edge.ScopeAlerts, true, false},
		{"POST", "/v1/alerts:grafana", edge.ScopeAlerts, true, false},
		{"POST", "/v1/search/documents", edge.ScopeWrite, true, false},
		{"POST", "/v1/collections/gospec/documents", edge.ScopeWrite, true, false},
		{"POST", "/v1/collections/gospec:ask", edge.ScopeRead, true, false},
		{"POST", "/v1/collections/gospec:askStream", edge.ScopeRead, true, true},
		{"GET", "/v1/research/r1:watch", edge.ScopeRead, true, true},
		{"POST", "/v1/approvals/ap1:decide", edge.ScopeAdmin, true, false},
		{"POST", "/v1/notifications:send", edge.ScopeAdmin, true, false},
		{"GET", "/v1/messages/m1/citations/c1/raw-html", edge.ScopeAdmin, true, false},
		{"GET", "/v1/messages/m1", edge.ScopeRead, true, false},
		// Not in the table: the strictest scope.
		{"DELETE", "/v1/alerts/a1", edge.ScopeAdmin, true, false},
		{"POST", "/v1/alerts/a1:purge", edge.ScopeAdmin, true, false},
		{"GET", "/v1/alerts/a1/extra", edge.ScopeAdmin, true, false},
		{"GET", "/v1/approvals/:decide", edge.ScopeAdmin, true, false},
		{"POST", "/v1/approvals/a:b:decide", edge.ScopeAdmin, true, false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, tt.path, nil)
		scope, protected := routeScope(r)
		if scope != tt.want || protected != tt.protected {
			t.Errorf("routeScope(%s %s) = %q, %v; want %q, %v", tt.method, tt.path, scope, protected, tt.want, tt.protected)
		}
		if got := isStream(r); got != tt.stream {
			t.Errorf("isStream(%s %s) = %v, want %v", tt.method, tt.path, got, tt.stream)
		}
	}
}

// TestEveryRouteHasAScope fails when a route in the generated OpenAPI
// document is missing from the scope table: it would still work, but need
// the admin scope. Decide its scope in routes.go.
func TestEveryRouteHasAScope(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(gen.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
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
			n++
			// A concrete path: each {var} becomes a value.
			concrete := path
			for strings.Contains(concrete, "{") {
				i, j := strings.Index(concrete, "{"), strings.Index(concrete, "}")
				concrete = concrete[:i] + "x1" + concrete[j+1:]
			}
			if _, ok := lookupRoute(httptest.NewRequest(method, concrete, nil)); !ok {
				t.Errorf("%s %s is not in the scope table (gateway/server/routes.go); it needs admin until it is", method, path)
			}
		}
	}
	if n < 20 {
		t.Fatalf("found only %d /v1/ operations in the OpenAPI document", n)
	}
}

func TestSecureHeaders(t *testing.T) {
	h := secureHeaders(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for path, sandboxed := range map[string]bool{
		"/v1/messages/m1/citations/c1/raw-html": true,
		"/v1/messages/m1":                       false,
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		if w.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no X-Content-Type-Options: nosniff", path)
		}
		if csp := w.Header().Get("Content-Security-Policy"); strings.Contains(csp, "sandbox") != sandboxed {
			t.Errorf("%s: Content-Security-Policy %q, want sandboxed = %v", path, csp, sandboxed)
		}
	}
}

// The scope table gives an alerts key the three alert webhooks and no
// other route; a write key keeps them only during the deprecation.
func TestAlertsScopeInTheTable(t *testing.T) {
	alerts := edge.Key{Name: "alertmanager", Scopes: []edge.Scope{edge.ScopeAlerts}}
	write := edge.Key{Name: "ci", Scopes: []edge.Scope{edge.ScopeRead, edge.ScopeWrite}}
	webhooks := map[string]bool{"/v1/alerts": true, "/v1/alerts:alertmanager": true, "/v1/alerts:grafana": true}
	deprecated, strict := edge.Access{WriteCoversAlerts: true}, edge.Access{}
	for _, rt := range routes {
		if rt.open {
			continue
		}
		isWebhook := rt.method == "POST" && webhooks[rt.pattern]
		if got := deprecated.Allows(alerts, rt.scope); got != isWebhook {
			t.Errorf("alerts key on %s %s: allowed %v, want %v", rt.method, rt.pattern, got, isWebhook)
		}
		if isWebhook {
			if !deprecated.Allows(write, rt.scope) || strict.Allows(write, rt.scope) {
				t.Errorf("write key on %s %s: want allowed during the deprecation only", rt.method, rt.pattern)
			}
		}
	}
}
