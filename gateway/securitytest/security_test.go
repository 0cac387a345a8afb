package securitytest

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/gateway/server"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/entrypoint"
)

// A fresh checkout's gateway bound to every interface without keys refuses
// to start, naming the two ways out.
func TestOpenBindRefusesToStart(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want int
	}{
		{"0.0.0.0 without keys", map[string]string{"GATEWAY_ADDR": "0.0.0.0:8080"}, entrypoint.ExitConfig},
		{":8080 without keys", map[string]string{"GATEWAY_ADDR": ":8080"}, entrypoint.ExitConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			ran := false
			got := entrypoint.Run(t.Context(), "gateway", config.MapLookup(tt.env), &stderr,
				func(c *server.Config) *config.Common { return &c.Common },
				func(context.Context, server.Config, *slog.Logger) error { ran = true; return nil })
			if got != tt.want || ran {
				t.Fatalf("exit %d (ran %v), want %d without running; stderr:\n%s", got, ran, tt.want, stderr.String())
			}
			for _, name := range []string{"GATEWAY_API_KEYS", "GATEWAY_ALLOW_OPEN"} {
				if !strings.Contains(stderr.String(), name) {
					t.Errorf("stderr does not name %s:\n%s", name, stderr.String())
				}
			}
		})
	}
	// The defaults (loopback) start.
	got := entrypoint.Run(t.Context(), "gateway", config.MapLookup(nil), &bytes.Buffer{},
		func(c *server.Config) *config.Common { return &c.Common },
		func(context.Context, server.Config, *slog.Logger) error { return nil })
	if got != entrypoint.ExitOK {
		t.Errorf("defaults: exit %d, want %d", got, entrypoint.ExitOK)
	}
}

// A web page can POST text/plain, forms and multipart to any origin
// without a CORS preflight; the gateway takes only application/json.
func TestCrossSiteSimpleRequestsAre415(t *testing.T) {
	e := newEdge(t, baseConfig(), nil)
	tests := []struct {
		name        string
		path, body  string
		contentType string
		want        int
	}{
		{"text/plain alert", "/v1/alerts", `{"text":"pwned"}`, "text/plain", http.StatusUnsupportedMediaType},
		{"text/plain with charset", "/v1/alerts", `{"text":"pwned"}`, "text/plain;charset=UTF-8", http.StatusUnsupportedMediaType},
		{"form", "/v1/alerts", `text=pwned`, "application/x-www-form-urlencoded", http.StatusUnsupportedMediaType},
		{"multipart", "/v1/alerts", "--b\r\n\r\n--b--", "multipart/form-data; boundary=b", http.StatusUnsupportedMediaType},
		{"no content type", "/v1/alerts", `{"text":"pwned"}`, "", http.StatusUnsupportedMediaType},
		{"empty body pressing a button", "/v1/approvals/ap1:decide", "", "text/plain", http.StatusUnsupportedMediaType},
		{"telegram webhook too", "/v1/telegram/webhook", `{"update_id":1}`, "text/plain", http.StatusUnsupportedMediaType},
		{"application/json", "/v1/alerts", `{"text":"fine"}`, "application/json", http.StatusOK},
		{"application/json; charset=utf-8", "/v1/alerts", `{"text":"fine"}`, "application/json; charset=utf-8", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.rec.reset()
			var h []string
			if tt.contentType != "" {
				h = []string{"Content-Type", tt.contentType}
			}
			got := e.do(t, request{method: "POST", path: tt.path, body: tt.body, headers: h})
			if got.code != tt.want {
				t.Fatalf("POST %s as %q = %d %s, want %d", tt.path, tt.contentType, got.code, got.body, tt.want)
			}
			if tt.want == http.StatusUnsupportedMediaType && e.rec.count() != 0 {
				t.Errorf("a refused request reached a backend: %v", e.rec.calls)
			}
		})
	}
}

// DNS rebinding: evil.example resolves to 127.0.0.1, so the browser sends
// the gateway requests with Host: evil.example.
func TestRebindingHostIsRefused(t *testing.T) {
	open := newEdge(t, baseConfig(), nil)
	withHosts := baseConfig()
	withHosts.Hosts = []string{"groundcrew.internal"}
	named := newEdge(t, withHosts, nil)
	keyed := baseConfig()
	keyed.APIKeys = []string{"ops:k-ops-0123456789:read"}
	closed := newEdge(t, keyed, nil)
	tests := []struct {
		name string
		e    *edge
		host string
		want int
	}{
		{"open, evil host", open, "evil.example:8080", http.StatusForbidden},
		{"open, evil host without port", open, "evil.example", http.StatusForbidden},
		{"open, localhost", open, "localhost:8080", http.StatusOK},
		{"open, 127.0.0.1", open, "127.0.0.1:8080", http.StatusOK},
		{"open, [::1]", open, "[::1]:8080", http.StatusOK},
		{"open with GATEWAY_HOSTS, that host", named, "groundcrew.internal:8080", http.StatusOK},
		{"open with GATEWAY_HOSTS, evil host", named, "evil.example", http.StatusForbidden},
		{"keys set, any host (the key is the guard)", closed, "evil.example", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.e.rec.reset()
			got := tt.e.do(t, request{method: "GET", path: "/v1/alerts", headers: []string{"Host", tt.host, "Authorization", "Bearer k-ops-0123456789"}})
			if got.code != tt.want {
				t.Fatalf("GET /v1/alerts with Host %q = %d %s, want %d", tt.host, got.code, got.body, tt.want)
			}
			if tt.want == http.StatusForbidden && tt.e.rec.count() != 0 {
				t.Error("a refused request reached a backend")
			}
		})
	}
	// The rest of the REST port (docs, openapi.json) is guarded as well,
	// but not the probes, which a kubelet sends with the pod's address.
	if got := open.do(t, request{method: "GET", path: "/openapi.json", headers: []string{"Host", "evil.example"}}); got.code != http.StatusForbidden {
		t.Errorf("GET /openapi.json with an evil host = %d, want 403", got.code)
	}
	if got := open.do(t, request{method: "GET", path: "/healthz", headers: []string{"Host", "10.1.2.3:8080"}}); got.code != http.StatusOK {
		t.Errorf("GET /healthz with the pod's address as host = %d, want 200", got.code)
	}
}

// Each new junk bearer token used to get a fresh rate-limit bucket (and a
// table entry). Now requests without a valid key count against their
// address, and the table stays bounded.
func TestJunkBearersDoNotDodgeTheRateLimit(t *testing.T) {
	for _, keys := range [][]string{nil, {"ops:k-ops-0123456789"}} {
		t.Run("keys="+strconv.Itoa(len(keys)), func(t *testing.T) {
			cfg := baseConfig()
			cfg.APIKeys = keys
			cfg.RateLimit, cfg.RateBurst = 0.001, 3
			e := newEdge(t, cfg, nil)
			limited := 0
			for i := range 20 {
				got := e.do(t, jsonPost("/v1/alerts", `{"text":"x"}`, "Authorization", "Bearer junk-"+strconv.Itoa(i)))
				if got.code == http.StatusTooManyRequests {
					limited++
				}
			}
			if limited != 17 {
				t.Errorf("%d of 20 junk-token requests limited, want 17 (burst 3 for the one address)", limited)
			}
			// A valid key is counted on its own, not with the junk.
			if len(keys) > 0 {
				if got := e.do(t, jsonPost("/v1/alerts", `{"text":"x"}`, "Authorization", "Bearer k-ops-0123456789")); got.code != http.StatusOK {
					t.Errorf("valid key after the junk = %d %s, want 200", got.code, got.body)
				}
			}
		})
	}
}

// Headers a client sends to speak for the gateway never reach a backend;
// the metadata the backend sees is the gateway's.
func TestHeadersAreNotSmuggledToBackends(t *testing.T) {
	const key = "k-ops-0123456789"
	cfg := baseConfig()
	cfg.APIKeys = []string{"ops:" + key}
	// A GATEWAY_FORWARD_HEADERS list cannot reopen what is scrubbed.
	cfg.ForwardHeaders = []string{"x-tenant"}
	e := newEdge(t, cfg, nil)
	got := e.do(t, jsonPost("/v1/alerts", `{"text":"x"}`,
		"Authorization", "Bearer "+key,
		"Cookie", "session=stolen",
		"X-Forwarded-For", "6.6.6.6",
		"X-Forwarded-Host", "evil.example",
		"X-Forwarded-Proto", "gopher",
		"Forwarded", "for=6.6.6.6",
		"X-Real-Ip", "6.6.6.6",
		"Baggage", "user=admin",
		"X-Groundcrew-Actor", "root",
		"Grpc-Metadata-X-Groundcrew-Actor", "root",
		"Grpc-Metadata-Authorization", "Bearer forged",
		"X-Tenant", "t1",
	))
	if got.code != http.StatusOK {
		t.Fatalf("POST /v1/alerts = %d %s", got.code, got.body)
	}
	c, ok := e.rec.last("IngestAlert")
	if !ok {
		t.Fatal("IngestAlert never reached the backend")
	}
	for _, k := range []string{"authorization", "cookie", "forwarded", "x-real-ip", "baggage", "x-forwarded-proto", "grpcgateway-cookie", "grpcgateway-authorization"} {
		if v := c.md.Get(k); len(v) > 0 {
			t.Errorf("backend got %s = %q from the client", k, v)
		}
	}
	if v := c.md.Get("x-groundcrew-actor"); len(v) != 1 || v[0] != "ops" {
		t.Errorf("backend actor metadata = %q, want exactly [ops] (the key's name)", v)
	}
	if v := c.md.Get("x-forwarded-for"); len(v) != 1 || v[0] != "127.0.0.1" {
		t.Errorf("backend x-forwarded-for = %q, want the gateway's [127.0.0.1]", v)
	}
	if v := c.md.Get("x-forwarded-host"); len(v) != 1 || strings.Contains(v[0], "evil") {
		t.Errorf("backend x-forwarded-host = %q, want the request's own Host", v)
	}
	if v := c.md.Get("x-tenant"); len(v) != 1 || v[0] != "t1" {
		t.Errorf("configured forward header x-tenant = %q, want [t1]", v)
	}
}

// Behind a trusted proxy the client's address comes from X-Forwarded-For;
// from anyone else the header is ignored.
func TestForwardedForOnlyThroughTrustedProxies(t *testing.T) {
	tests := []struct {
		name    string
		trusted []string
		xff     string
		want    string
	}{
		{"untrusted peer", nil, "6.6.6.6", "127.0.0.1"},
		{"trusted peer", []string{"127.0.0.1"}, "203.0.113.7", "203.0.113.7, 127.0.0.1"},
		{"trusted chain, spoofed head", []string{"127.0.0.0/8", "10.0.0.0/8"}, "6.6.6.6, 203.0.113.7, 10.1.2.3", "203.0.113.7, 127.0.0.1"},
		{"trusted peer, junk header", []string{"127.0.0.1"}, "not-an-ip", "127.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := baseConfig()
			cfg.TrustedProxies = tt.trusted
			e := newEdge(t, cfg, nil)
			if got := e.do(t, jsonPost("/v1/alerts", `{"text":"x"}`, "X-Forwarded-For", tt.xff)); got.code != http.StatusOK {
				t.Fatalf("POST = %d %s", got.code, got.body)
			}
			c, _ := e.rec.last("IngestAlert")
			if v := c.md.Get("x-forwarded-for"); len(v) != 1 || v[0] != tt.want {
				t.Errorf("backend x-forwarded-for = %q, want [%s]", v, tt.want)
			}
		})
	}
}

// A client's Grpc-Timeout used to replace GATEWAY_BACKEND_TIMEOUT; now it
// can only shorten it, and an Accept header does not make a unary route a
// stream.
func TestClientCannotLiftTheBackendDeadline(t *testing.T) {
	cfg := baseConfig()
	cfg.BackendTimeout = 2 * time.Second
	e := newEdge(t, cfg, nil)
	tests := []struct {
		name    string
		headers []string
		max     time.Duration
	}{
		{"no Grpc-Timeout", nil, 2 * time.Second},
		{"Grpc-Timeout of an hour", []string{"Grpc-Timeout", "1H"}, 2 * time.Second},
		{"Accept: text/event-stream on a unary route", []string{"Accept", "text/event-stream"}, 2 * time.Second},
		{"a shorter Grpc-Timeout still applies", []string{"Grpc-Timeout", "500m"}, 500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sent := time.Now()
			if got := e.do(t, jsonPost("/v1/search", `{"query":"q"}`, tt.headers...)); got.code != http.StatusOK {
				t.Fatalf("POST /v1/search = %d %s", got.code, got.body)
			}
			c, _ := e.rec.last("Search")
			if c.deadline.IsZero() {
				t.Fatal("the backend call had no deadline")
			}
			// The gateway starts its clock a moment after the request
			// left; the slack is far below what lifting would give.
			if left := c.deadline.Sub(sent); left > tt.max+200*time.Millisecond {
				t.Errorf("backend deadline %v after the request, want at most %v", left, tt.max)
			}
		})
	}
}

// One client may hold GATEWAY_MAX_STREAMS_PER_CLIENT streams; the next is
// 429 until one closes.
func TestStreamsPerClientAreCapped(t *testing.T) {
	cfg := baseConfig()
	cfg.MaxStreamsPerClient = 1
	e := newEdge(t, cfg, nil)
	ctx, cancel := context.WithCancel(t.Context())
	first := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/v1/collections/c:askStream", strings.NewReader(`{"query":"q"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_, err = resp.Body.Read(make([]byte, 1))
			// Hold the stream open until the test is done with it.
			<-ctx.Done()
			resp.Body.Close()
		}
		first <- err
	}()
	select {
	case <-e.streams:
	case <-time.After(10 * time.Second):
		t.Fatal("the first stream never reached the backend")
	}
	if got := e.do(t, jsonPost("/v1/collections/c:askStream", `{"query":"q"}`)); got.code != http.StatusTooManyRequests {
		t.Errorf("second concurrent stream = %d %s, want 429", got.code, got.body)
	}
	cancel()
	<-first
}

// Scopes: a read key cannot ingest, a write key cannot decide or send, and
// a route the table does not know needs admin.
func TestScopeViolationsAre403(t *testing.T) {
	cfg := baseConfig()
	cfg.APIKeys = []string{
		"console:k-read-0123456789:read",
		"ci:k-write-0123456789:read+write",
		"ops:k-admin-0123456789:admin",
		"k-bare-0123456789",
	}
	e := newEdge(t, cfg, nil)
	const (
		read  = "k-read-0123456789"
		write = "k-write-0123456789"
		admin = "k-admin-0123456789"
		bare  = "k-bare-0123456789"
	)
	ingest := jsonPost("/v1/collections/c/documents", `{"documents":[{"url":"https://example.com/a","title":"a","text":"t"}]}`)
	decide := jsonPost("/v1/approvals/ap1:decide", `{"decision":"APPROVE","decidedBy":"me"}`)
	tests := []struct {
		name string
		req  request
		key  string
		want int
	}{
		{"read key ingests documents", ingest, read, http.StatusForbidden},
		{"read key ingests an alert", jsonPost("/v1/alerts", `{"text":"x"}`), read, http.StatusForbidden},
		{"read key lists alerts", request{method: "GET", path: "/v1/alerts"}, read, http.StatusOK},
		{"read key searches", jsonPost("/v1/search", `{"query":"q"}`), read, http.StatusOK},
		{"read key reads raw evidence HTML", request{method: "GET", path: "/v1/messages/m1/citations/c1/raw-html"}, read, http.StatusForbidden},
		{"write key ingests", ingest, write, http.StatusOK},
		{"write key decides an approval", decide, write, http.StatusForbidden},
		{"write key sends to a chat", jsonPost("/v1/notifications:send", `{"chatId":"1","text":"x"}`), write, http.StatusForbidden},
		{"write key reviews a message", jsonPost("/v1/messages/m1:review", `{}`), write, http.StatusForbidden},
		{"write key silences an alert group", jsonPost("/v1/alert-groups/g1:silence", `{}`), write, http.StatusForbidden},
		{"write key on a route the table does not know", jsonPost("/v1/alerts/a1:purge", `{}`), write, http.StatusForbidden},
		{"admin key decides", decide, admin, http.StatusOK},
		{"admin key without read lists alerts", request{method: "GET", path: "/v1/alerts"}, admin, http.StatusForbidden},
		{"bare key has every scope", decide, bare, http.StatusOK},
		{"no key", request{method: "GET", path: "/v1/alerts"}, "", http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.rec.reset()
			req := tt.req
			if tt.key != "" {
				req.headers = append(append([]string{}, req.headers...), "Authorization", "Bearer "+tt.key)
			}
			got := e.do(t, req)
			if got.code != tt.want {
				t.Fatalf("%s %s = %d %s, want %d", req.method, req.path, got.code, got.body, tt.want)
			}
			if got.code == http.StatusForbidden && e.rec.count() != 0 {
				t.Errorf("a forbidden request reached a backend")
			}
		})
	}
}

// An approval decided through the gateway records the key's name, whatever
// the body or headers claim.
func TestApprovalRecordsTheKeyName(t *testing.T) {
	cfg := baseConfig()
	cfg.APIKeys = []string{"ops-alice:k-alice-0123456789:admin", "k-bare-0123456789"}
	e := newEdge(t, cfg, nil)
	tests := []struct {
		key, want string
	}{
		{"k-alice-0123456789", "ops-alice"},
		{"k-bare-0123456789", "key-1"},
	}
	for _, tt := range tests {
		got := e.do(t, jsonPost("/v1/approvals/ap1:decide", `{"decision":"APPROVE","decidedBy":"mallory"}`,
			"Authorization", "Bearer "+tt.key, "X-Groundcrew-Actor", "root", "Grpc-Metadata-X-Groundcrew-Actor", "root"))
		if got.code != http.StatusOK {
			t.Fatalf("decide = %d %s", got.code, got.body)
		}
		c, ok := e.rec.last("DecideApproval")
		if !ok {
			t.Fatal("DecideApproval never reached the backend")
		}
		if c.actor != tt.want {
			t.Errorf("actor at the backend = %q, want %q (the key's name)", c.actor, tt.want)
		}
		if !strings.Contains(got.body, `"requester":"`+tt.want+`"`) {
			t.Errorf("decision recorded as %s, want the actor %q", got.body, tt.want)
		}
	}
}

// With GRPC_SHARED_TOKEN the gateway's calls carry the shared token, not
// the client's key, and backends refuse callers without it.
func TestSharedTokenBetweenGatewayAndBackends(t *testing.T) {
	const token = "shared-token-0123456789abcdef"
	cfg := baseConfig()
	cfg.APIKeys = []string{"ops:k-ops-0123456789"}
	cfg.Transport.SharedToken = token
	e := newEdge(t, cfg, &config.Transport{SharedToken: token})
	if got := e.do(t, jsonPost("/v1/alerts", `{"text":"x"}`, "Authorization", "Bearer k-ops-0123456789")); got.code != http.StatusOK {
		t.Fatalf("POST /v1/alerts = %d %s, want 200", got.code, got.body)
	}
	c, _ := e.rec.last("IngestAlert")
	if v := c.md.Get("authorization"); len(v) != 1 || v[0] != "Bearer "+token {
		t.Errorf("backend authorization = %q, want the shared token only", v)
	}
	if got := e.do(t, request{method: "GET", path: "/readyz"}); got.code != http.StatusOK {
		t.Errorf("/readyz = %d %s, want 200 (health checks need no token)", got.code, got.body)
	}

	// A gateway without the token is refused by the backends.
	cfg.Transport.SharedToken = ""
	noToken := newEdge(t, cfg, &config.Transport{SharedToken: token})
	if got := noToken.do(t, jsonPost("/v1/alerts", `{"text":"x"}`, "Authorization", "Bearer k-ops-0123456789")); got.code != http.StatusUnauthorized {
		t.Errorf("without the shared token: %d %s, want 401 from the backend's Unauthenticated", got.code, got.body)
	}
}
