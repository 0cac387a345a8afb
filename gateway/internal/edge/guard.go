package edge

import (
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"go.opentelemetry.io/otel/baggage"
	"google.golang.org/grpc/codes"
)

// Hosts guards against DNS rebinding: a page on evil.example whose name
// later resolves to 127.0.0.1 can make a browser send requests to an open
// gateway, but the Host header still says evil.example. An open gateway
// therefore serves only loopback hosts ("localhost", 127.0.0.0/8, ::1) and
// the names in GATEWAY_HOSTS.
type Hosts struct {
	names map[string]bool
}

// NewHosts allows loopback hosts plus names (host names or addresses, with
// or without a port; compared without the port, case-insensitively).
func NewHosts(names []string) *Hosts {
	h := &Hosts{names: map[string]bool{}}
	for _, n := range names {
		if n = normalHost(n); n != "" {
			h.names[n] = true
		}
	}
	return h
}

func normalHost(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	return strings.TrimSuffix(strings.Trim(h, "[]"), ".")
}

// Allowed reports whether a request for host may be served.
func (h *Hosts) Allowed(host string) bool {
	n := normalHost(host)
	if n == "localhost" || strings.HasSuffix(n, ".localhost") || h.names[n] {
		return true
	}
	addr, err := netip.ParseAddr(n)
	return err == nil && addr.Unmap().IsLoopback()
}

// Middleware answers 403 to a request for a host that is not allowed.
func (h *Hosts) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.Allowed(r.Host) {
			WriteError(w, http.StatusForbidden, codes.PermissionDenied,
				"host not served: an open gateway answers only localhost and GATEWAY_HOSTS")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// RequireJSON answers 415 to a POST that does not say Content-Type:
// application/json, and to a PUT, PATCH or DELETE with a body in another
// type. Browsers send text/plain, form and multipart POSTs cross-site
// without a CORS preflight; application/json needs one, which the CORS
// allow-list then refuses. An empty POST is held to the same rule, so an
// empty cross-site POST cannot press a button (ack, silence) either. The
// other methods always need a preflight.
func RequireJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			next.ServeHTTP(w, r)
			return
		case http.MethodPost:
		default:
			if r.ContentLength == 0 && r.Header.Get("Content-Type") == "" {
				next.ServeHTTP(w, r)
				return
			}
		}
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/json" {
			WriteError(w, http.StatusUnsupportedMediaType, codes.InvalidArgument,
				"Content-Type must be application/json")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ScrubbedHeaders are request headers a client may send but no backend
// should see from it: credentials for the edge, and what only the edge may
// say (forwarding chains, trace baggage, the actor).
var ScrubbedHeaders = []string{
	"Authorization", "Cookie", "Forwarded", "Baggage", "X-Groundcrew-Actor",
	"X-Real-Ip", "True-Client-Ip",
}

// ReservedMetadata are gRPC metadata keys only the gateway sets; a
// GATEWAY_FORWARD_HEADERS entry may not name one.
func ReservedMetadata(key string) bool {
	k := strings.ToLower(strings.TrimSpace(key))
	if strings.HasPrefix(k, "x-forwarded-") || strings.HasPrefix(k, "grpc-") || strings.HasPrefix(k, "grpcgateway-") {
		return true
	}
	for _, h := range ScrubbedHeaders {
		if strings.EqualFold(h, k) {
			return true
		}
	}
	return false
}

// Scrub removes [ScrubbedHeaders], every X-Forwarded-* and Grpc-Metadata-*
// header before the request reaches the routes, then sets X-Forwarded-For
// to the client address [Identify] settled on when it is not the peer (a
// trusted proxy's client), so the forwarded-for metadata the backends get
// is the gateway's word alone.
func Scrub(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k := range r.Header {
			lk := strings.ToLower(k)
			if strings.HasPrefix(lk, "x-forwarded-") || strings.HasPrefix(lk, "grpc-metadata-") {
				r.Header.Del(k)
			}
		}
		for _, k := range ScrubbedHeaders {
			r.Header.Del(k)
		}
		if c := ClientFrom(r.Context()); c.IP != "" && c.IP != peerIP(r) {
			r.Header.Set("X-Forwarded-For", c.IP)
		}
		// The tracing middleware has already read the client's baggage
		// into the context, and the gRPC client would pass it on.
		next.ServeHTTP(w, r.WithContext(baggage.ContextWithoutBaggage(r.Context())))
	})
}
