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
	// `name:key[:scopes]` (scopes read, write, admin joined by +) or a bare
	// key, named key-1, key-2, … with every scope; see edge.ParseKeys.
	APIKeys []string `env:"GATEWAY_API_KEYS" envSeparator:"," secret:"true"`
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

// The HTTP server's timeouts when the environment does not set them (the
// envDefault tags above), also used for a Config built in code and left
// at zero: to net/http zero means no limit at all.
const (
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
	if _, err := edge.ParseKeys(c.APIKeys); err != nil {
		errs = append(errs, err)
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
