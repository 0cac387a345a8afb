package edge

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestParseBudgets(t *testing.T) {
	keys := []Key{{Name: "ci"}, {Name: "console"}, {Name: "am"}}
	tests := []struct {
		name    string
		entries []string
		want    map[string]string // key name → budget
		wantErr string
	}{
		{"none", nil, map[string]string{}, ""},
		{"one key", []string{"ci:1000/d"}, map[string]string{"ci": "1000/d"}, ""},
		{"every other key through *", []string{"ci:5/s", "*:60/m"}, map[string]string{"ci": "5/s", "console": "60/m", "am": "60/m"}, ""},
		{"hours, spaces around", []string{" console : 30/h "}, map[string]string{"console": "30/h"}, ""},
		{"unknown key", []string{"cj:1000/d"}, nil, `no key in GATEWAY_API_KEYS is named "cj"`},
		{"unknown unit", []string{"ci:1000/w"}, nil, `unknown unit "w"`},
		{"zero", []string{"ci:0/d"}, nil, "want a positive number"},
		{"no count", []string{"ci:/d"}, nil, "want a positive number"},
		{"no name", []string{"1000/d"}, nil, "want name:calls/unit"},
		{"twice", []string{"ci:1/s", "ci:2/s"}, nil, `"ci" is given twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := ParseBudgets(tt.entries, keys)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "GATEWAY_KEY_BUDGETS") {
					t.Fatalf("ParseBudgets(%q) error = %v, want one naming GATEWAY_KEY_BUDGETS and %q", tt.entries, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseBudgets(%q) = %v", tt.entries, err)
			}
			got := map[string]string{}
			for name, kb := range b.byKey {
				got[name] = kb.spec.String()
			}
			if len(got) != len(tt.want) {
				t.Fatalf("budgets %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("budget of %s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

// A key's budget is spent by costly calls only; past it the call is 429
// with Retry-After until it refills; other keys are not affected.
func TestBudgetMiddleware(t *testing.T) {
	keys := []Key{{Name: "ci", Scopes: AllScopes}, {Name: "console", Scopes: AllScopes}}
	b, err := ParseBudgets([]string{"ci:2/h"}, keys)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	b.now = func() time.Time { return now }
	var refused []string
	b.Refused = func(key string) { refused = append(refused, key) }
	reached := 0
	h := b.Middleware(func(r *http.Request) bool { return r.URL.Path == "/v1/search" }, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached++ }))
	call := func(key *Key, path string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", path, strings.NewReader("{}"))
		r = r.WithContext(context.WithValue(r.Context(), clientKey{}, Client{IP: "192.0.2.1", Key: key}))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	for i := range 2 {
		if w := call(&keys[0], "/v1/search"); w.Code != http.StatusOK {
			t.Fatalf("call %d within the budget = %d %s", i+1, w.Code, w.Body.String())
		}
	}
	w := call(&keys[0], "/v1/search")
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "1800" {
		t.Errorf("third call = %d, Retry-After %q, want 429 after 1800 s (one call per half hour)", w.Code, w.Header().Get("Retry-After"))
	}
	if !strings.Contains(w.Body.String(), "2/h") || !strings.Contains(w.Body.String(), "ci") {
		t.Errorf("refusal %s does not name the key and its budget", w.Body.String())
	}
	if w := call(&keys[0], "/v1/alerts"); w.Code != http.StatusOK {
		t.Errorf("a call that is not costly = %d, want 200 with the budget spent", w.Code)
	}
	if w := call(&keys[1], "/v1/search"); w.Code != http.StatusOK {
		t.Errorf("a key without a budget = %d, want 200", w.Code)
	}
	if w := call(nil, "/v1/search"); w.Code != http.StatusOK {
		t.Errorf("no key (open gateway) = %d, want 200", w.Code)
	}
	now = now.Add(30 * time.Minute)
	if w := call(&keys[0], "/v1/search"); w.Code != http.StatusOK {
		t.Errorf("after half an hour = %d, want 200 (one call refilled)", w.Code)
	}
	if w := call(&keys[0], "/v1/search"); w.Code != http.StatusTooManyRequests {
		t.Errorf("and the next = %d, want 429", w.Code)
	}
	if len(refused) != 2 || refused[0] != "ci" || refused[1] != "ci" {
		t.Errorf("refusals counted for %q, want ci twice", refused)
	}
	if reached != 6 {
		t.Errorf("%d calls reached the route, want 6", reached)
	}
}

func TestWebhookSecret(t *testing.T) {
	const secret = "s3cret-webhook-0123456789"
	isWebhook := func(r *http.Request) bool { return r.URL.Path == "/v1/telegram/webhook" }
	tests := []struct {
		name, secret, path, header string
		want                       int
		wantWebhook                bool
	}{
		{"right secret", secret, "/v1/telegram/webhook", secret, http.StatusOK, true},
		{"no header", secret, "/v1/telegram/webhook", "", http.StatusUnauthorized, false},
		{"wrong secret", secret, "/v1/telegram/webhook", secret + "x", http.StatusUnauthorized, false},
		{"a prefix of the secret", secret, "/v1/telegram/webhook", secret[:10], http.StatusUnauthorized, false},
		{"other routes are not checked", secret, "/v1/alerts", "", http.StatusOK, false},
		{"no secret configured: the notifier checks", "", "/v1/telegram/webhook", "", http.StatusOK, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Client
			read := false
			refusals := 0
			h := WebhookSecret(tt.secret, isWebhook, func() { refusals++ }, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				got = ClientFrom(r.Context())
				read = true
			}))
			r := httptest.NewRequest("POST", tt.path, strings.NewReader(`{"update_id":1}`))
			if tt.header != "" {
				r.Header.Set(WebhookSecretHeader, tt.header)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.want {
				t.Fatalf("%d %s, want %d", w.Code, w.Body.String(), tt.want)
			}
			if tt.want == http.StatusUnauthorized {
				if read || w.Header().Get("Connection") != "close" {
					t.Errorf("refused, but the route ran (%v) or the connection stays open (%q)", read, w.Header().Get("Connection"))
				}
				if strings.Contains(w.Body.String(), secret) {
					t.Errorf("refusal %s quotes the secret", w.Body.String())
				}
				if refusals != 1 {
					t.Errorf("%d refusals counted, want 1", refusals)
				}
			}
			if got.Webhook != tt.wantWebhook || got.Authenticated() != tt.wantWebhook {
				t.Errorf("client %+v, want Webhook (and Authenticated) %v", got, tt.wantWebhook)
			}
		})
	}
}

func TestAccessAlertsScope(t *testing.T) {
	alerts := Key{Name: "am", Scopes: []Scope{ScopeAlerts}}
	write := Key{Name: "ci", Scopes: []Scope{ScopeRead, ScopeWrite}}
	bare := Key{Name: "key-1", Scopes: AllScopes}
	tests := []struct {
		name   string
		access Access
		key    Key
		need   Scope
		want   bool
	}{
		{"alerts key posts alerts", Access{}, alerts, ScopeAlerts, true},
		{"alerts key cannot write", Access{WriteCoversAlerts: true}, alerts, ScopeWrite, false},
		{"alerts key cannot read", Access{}, alerts, ScopeRead, false},
		{"write key posts alerts during the deprecation", Access{WriteCoversAlerts: true}, write, ScopeAlerts, true},
		{"write key cannot once it ends", Access{}, write, ScopeAlerts, false},
		{"write covers nothing else", Access{WriteCoversAlerts: true}, write, ScopeAdmin, false},
		{"a bare key holds alerts", Access{}, bare, ScopeAlerts, true},
	}
	for _, tt := range tests {
		if got := tt.access.Allows(tt.key, tt.need); got != tt.want {
			t.Errorf("%s: Allows = %v, want %v", tt.name, got, tt.want)
		}
	}
	got := LegacyAlertKeys([]Key{alerts, write, bare, {Name: "ro", Scopes: []Scope{ScopeRead}}, {Name: "w2", Scopes: []Scope{ScopeWrite}}})
	if strings.Join(got, ",") != "ci,w2" {
		t.Errorf("LegacyAlertKeys = %q, want [ci w2] (write without alerts)", got)
	}
}
