// Package server is the groundcrew REST edge: a grpc-gateway v2 mux that
// dials the four services, plus health, readiness, the merged OpenAPI
// document, an API docs page, API-key auth, CORS, body and rate limits.
package server

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/groundcrew/groundcrew/gateway/internal/edge"
	"github.com/groundcrew/groundcrew/platform/config"
)

// Config is the gateway's configuration, read from the environment.
type Config struct {
	config.Common

	// Addr is where the REST edge listens. Loopback by default: binding
	// anything else needs APIKeys, or AllowOpen.
	Addr string `env:"GATEWAY_ADDR" envDefault:"127.0.0.1:8080"`
	// AdminAddr serves /metrics, /healthz and /readyz for the platform.
	AdminAddr string `env:"GATEWAY_ADMIN_ADDR" envDefault:"127.0.0.1:9090"`

	// SearchAddr, GroundingAddr, RagAddr and NotifierAddr are the backends'
	// gRPC addresses.
	SearchAddr    string `env:"SEARCH_ADDR" envDefault:"127.0.0.1:50051"`
	GroundingAddr string `env:"GROUNDING_ADDR" envDefault:"127.0.0.1:50052"`
	RagAddr       string `env:"RAG_ADDR" envDefault:"127.0.0.1:50053"`
	NotifierAddr  string `env:"NOTIFIER_ADDR" envDefault:"127.0.0.1:50054"`

	// APIKeys, when set, are required as `Authorization: Bearer <key>` on
	// every /v1/ route except the Telegram webhook. Entries are
	// `name:key[:scopes]` (scopes read, write, admin, alerts joined by +)
	// or a bare key, named key-1, key-2, … with every scope; see
	// edge.ParseKeys.
	APIKeys []string `env:"GATEWAY_API_KEYS" envSeparator:"," secret:"true"`
	// AlertsScopeStrict ends the deprecation period of write keys posting
	// alerts: when false (for now the default) a key with write but not
	// alerts may still call the alerts routes, and the gateway names such
	// keys at start.
	AlertsScopeStrict bool `env:"GATEWAY_ALERTS_SCOPE_STRICT" envDefault:"false"`
	// KeyBudgets are per-key budgets for provider-backed calls and
	// research runs: `name:calls/unit` (unit s, m, h or d), `*` for every
	// key not named, e.g. `ci:1000/d,*:10000/d`. Empty: no budgets.
	KeyBudgets []string `env:"GATEWAY_KEY_BUDGETS" envSeparator:","`
	// TelegramWebhookSecret, when set (the notifier's
	// TELEGRAM_WEBHOOK_SECRET, from the same Secret), lets the gateway
	// refuse a webhook call with a missing or wrong
	// X-Telegram-Bot-Api-Secret-Token before reading its body.
	TelegramWebhookSecret string `env:"TELEGRAM_WEBHOOK_SECRET" secret:"true"`
	// UnauthMaxRequests bounds the requests without a valid key (or
	// webhook secret) in flight at once; past it they get 503 at once.
	UnauthMaxRequests int `env:"GATEWAY_UNAUTH_MAX_REQUESTS" envDefault:"256"`
	// UnauthMaxRequestsPerClient bounds those from one client address
	// (IPv6: one /64); past it they get 429 at once.
	UnauthMaxRequestsPerClient int `env:"GATEWAY_UNAUTH_MAX_REQUESTS_PER_CLIENT" envDefault:"64"`
	// UnauthMaxBuffered bounds the body bytes those requests may have the
	// gateway buffer between them (declared lengths, or the route's whole
	// body limit for a chunked body); past it they get 503 at once.
	UnauthMaxBuffered int64 `env:"GATEWAY_UNAUTH_MAX_BUFFERED" envDefault:"8388608"`
	// AllowOpen lets the gateway listen on a non-loopback address without
	// API keys. Even then only loopback hosts and Hosts are served.
	AllowOpen bool `env:"GATEWAY_ALLOW_OPEN" envDefault:"false"`
	// Hosts are the Host names served besides localhost and loopback
	// addresses; when set they are checked with keys too. An open gateway
	// refuses other hosts (DNS rebinding).
	Hosts []string `env:"GATEWAY_HOSTS" envSeparator:","`
	// TrustedProxies are the addresses or CIDR prefixes of reverse proxies
	// whose X-Forwarded-For is believed (for rate limits and the
	// forwarded-for metadata); empty trusts none.
	TrustedProxies []string `env:"GATEWAY_TRUSTED_PROXIES" envSeparator:","`
	// MaxStreamsPerClient caps the server streams (askStream, watch) one
	// client (key, or address without one) holds open at once; 0 disables.
	MaxStreamsPerClient int `env:"GATEWAY_MAX_STREAMS_PER_CLIENT" envDefault:"8"`
	// RateClients bounds the rate limiter's table of clients (least
	// recently seen evicted first).
	RateClients int `env:"GATEWAY_RATE_CLIENTS" envDefault:"10000"`
	// CORSOrigins are the browser origins allowed to call the API ("*" for
	// any); empty allows none.
	CORSOrigins []string `env:"GATEWAY_CORS_ORIGINS" envSeparator:","`
	// BodyLimit is the largest request body accepted, in bytes.
	BodyLimit int64 `env:"GATEWAY_BODY_LIMIT" envDefault:"1048576"`
	// RateLimit is each client's sustained requests per second; 0 disables.
	RateLimit float64 `env:"GATEWAY_RATE_LIMIT" envDefault:"100"`
	// RateBurst is how many requests a client may send at once.
	RateBurst int `env:"GATEWAY_RATE_BURST" envDefault:"200"`
	// ForwardHeaders are extra request headers passed to the backends as gRPC
	// metadata, on top of the built-in allow-list.
	ForwardHeaders []string `env:"GATEWAY_FORWARD_HEADERS" envSeparator:","`
	// BackendTimeout bounds every unary call; a client's Grpc-Timeout can
	// shorten it, never lengthen it.
	BackendTimeout time.Duration `env:"GATEWAY_BACKEND_TIMEOUT" envDefault:"60s"`
	// ReadinessTimeout bounds each backend health check of /readyz.
	ReadinessTimeout time.Duration `env:"GATEWAY_READINESS_TIMEOUT" envDefault:"2s"`
	// JSONMaxDepth is how deeply a request body's arrays and objects may
	// nest; deeper bodies get 400 before any decoding.
	JSONMaxDepth int `env:"GATEWAY_JSON_MAX_DEPTH" envDefault:"64"`

	// ReadHeaderTimeout bounds how long a client may take to send a
	// request's headers, so slow clients (slowloris) cannot hold
	// connections open.
	ReadHeaderTimeout time.Duration `env:"GATEWAY_READ_HEADER_TIMEOUT" envDefault:"5s"`
	// ReadTimeout bounds reading a whole request, body included.
	ReadTimeout time.Duration `env:"GATEWAY_READ_TIMEOUT" envDefault:"30s"`
	// WriteTimeout bounds writing a response, counted from the end of the
	// request headers; for server streams (Server-Sent Events, watches) it
	// bounds each event instead, so long streams are not cut short.
	WriteTimeout time.Duration `env:"GATEWAY_WRITE_TIMEOUT" envDefault:"5m"`
	// IdleTimeout is how long a keep-alive connection may wait for its next
	// request.
	IdleTimeout time.Duration `env:"GATEWAY_IDLE_TIMEOUT" envDefault:"2m"`
}

// The unauthenticated bounds and the HTTP server's timeouts when the
// environment does not set them (the envDefault tags above), also used
// for a Config built in code and left at zero: zero would mean no limit
// at all, or none admitted.
const (
	defaultUnauthMaxRequests          = 256
	defaultUnauthMaxRequestsPerClient = 64
	defaultUnauthMaxBuffered          = 8 << 20

	defaultReadHeaderTimeout = 5 * time.Second
	defaultReadTimeout       = 30 * time.Second
	defaultWriteTimeout      = 5 * time.Minute
	defaultIdleTimeout       = 2 * time.Minute
)

// minJSONMaxDepth is the least GATEWAY_JSON_MAX_DEPTH accepted: legitimate
// requests (an Alertmanager webhook, a document with metadata) nest a few
// levels, so a smaller limit would only break clients.
const minJSONMaxDepth = 8

// Validate checks what types cannot.
func (c Config) Validate() error {
	errs := []error{c.Common.Validate()}
	for name, addr := range map[string]string{
		"GATEWAY_ADDR": c.Addr, "GATEWAY_ADMIN_ADDR": c.AdminAddr,
		"SEARCH_ADDR": c.SearchAddr, "GROUNDING_ADDR": c.GroundingAddr,
		"RAG_ADDR": c.RagAddr, "NOTIFIER_ADDR": c.NotifierAddr,
	} {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			errs = append(errs, fmt.Errorf("%s: must be host:port (e.g. 127.0.0.1:8080), got %q", name, addr))
		}
	}
	if c.BodyLimit < 1024 {
		errs = append(errs, fmt.Errorf("GATEWAY_BODY_LIMIT: must be at least 1024 bytes, got %d", c.BodyLimit))
	}
	if c.JSONMaxDepth < minJSONMaxDepth {
		errs = append(errs, fmt.Errorf("GATEWAY_JSON_MAX_DEPTH: must be at least %d, got %d", minJSONMaxDepth, c.JSONMaxDepth))
	}
	for _, d := range []struct {
		name  string
		value time.Duration
	}{
		{"GATEWAY_READ_HEADER_TIMEOUT", c.ReadHeaderTimeout},
		{"GATEWAY_READ_TIMEOUT", c.ReadTimeout},
		{"GATEWAY_WRITE_TIMEOUT", c.WriteTimeout},
		{"GATEWAY_IDLE_TIMEOUT", c.IdleTimeout},
	} {
		// Zero would mean no timeout at all to net/http.
		if d.value <= 0 {
			errs = append(errs, fmt.Errorf("%s: must be positive (e.g. 30s), got %q", d.name, d.value))
		}
	}
	if c.RateLimit < 0 || (c.RateLimit > 0 && c.RateBurst < 1) {
		errs = append(errs, errors.New("GATEWAY_RATE_LIMIT must be >= 0 and GATEWAY_RATE_BURST >= 1 when limiting"))
	}
	keys, err := edge.ParseKeys(c.APIKeys)
	if err != nil {
		errs = append(errs, err)
	} else if len(c.KeyBudgets) > 0 {
		if len(keys) == 0 {
			errs = append(errs, errors.New("GATEWAY_KEY_BUDGETS: budgets are per API key; set GATEWAY_API_KEYS too"))
		} else if _, err := edge.ParseBudgets(c.KeyBudgets, keys); err != nil {
			errs = append(errs, err)
		}
	}
	for _, n := range []struct {
		name  string
		value int64
	}{
		{"GATEWAY_UNAUTH_MAX_REQUESTS", int64(c.UnauthMaxRequests)},
		{"GATEWAY_UNAUTH_MAX_REQUESTS_PER_CLIENT", int64(c.UnauthMaxRequestsPerClient)},
		{"GATEWAY_UNAUTH_MAX_BUFFERED", c.UnauthMaxBuffered},
	} {
		if n.value < 0 {
			errs = append(errs, fmt.Errorf("%s: must be positive (0 takes the default), got %d", n.name, n.value))
		}
	}
	// Without keys every route is open, so the bound must hold the
	// largest body; with keys only the webhook is, and its own limit.
	if b, largest := orDefaultN(c.UnauthMaxBuffered, defaultUnauthMaxBuffered), c.BodyLimit; err == nil {
		if len(keys) > 0 {
			largest = min(c.BodyLimit, webhookBodyLimit)
		}
		if b < largest {
			errs = append(errs, fmt.Errorf("GATEWAY_UNAUTH_MAX_BUFFERED (%d) is below the largest body a request without a key may send (%d, GATEWAY_BODY_LIMIT or the webhook's 64 KiB): "+
				"such a request could never be admitted", b, largest))
		}
	}
	if len(c.APIKeys) == 0 && !c.AllowOpen && !loopback(c.Addr) {
		errs = append(errs, fmt.Errorf("GATEWAY_ADDR %s is not a loopback address and GATEWAY_API_KEYS is not set: "+
			"set GATEWAY_API_KEYS (e.g. name:key:read+write), or GATEWAY_ALLOW_OPEN=true to serve without keys", c.Addr))
	}
	if _, err := edge.ParseProxies(c.TrustedProxies); err != nil {
		errs = append(errs, err)
	}
	if c.MaxStreamsPerClient < 0 {
		errs = append(errs, fmt.Errorf("GATEWAY_MAX_STREAMS_PER_CLIENT: must be >= 0 (0 disables), got %d", c.MaxStreamsPerClient))
	}
	if c.RateClients < 0 {
		errs = append(errs, fmt.Errorf("GATEWAY_RATE_CLIENTS: must be >= 0, got %d", c.RateClients))
	}
	for _, h := range c.ForwardHeaders {
		if edge.ReservedMetadata(h) {
			errs = append(errs, fmt.Errorf("GATEWAY_FORWARD_HEADERS: %q is set by the gateway alone and cannot be forwarded from clients", strings.TrimSpace(h)))
		}
	}
	return errors.Join(errs...)
}

// loopback reports whether addr (host:port) binds loopback only: an
// empty host, 0.0.0.0 or :: bind every interface, and a host name other
// than localhost may resolve to anything.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// orDefaultN is n, or def when n is not positive.
func orDefaultN[T int | int64](n, def T) T {
	if n <= 0 {
		return def
	}
	return n
}
