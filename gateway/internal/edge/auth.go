package edge

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
)

// Scope is what a key may do. A key holds any set of scopes; a route needs
// exactly one (see the gateway's route table).
type Scope string

// The scopes of GATEWAY_API_KEYS entries.
const (
	// ScopeRead reads: GETs and read-only queries.
	ScopeRead Scope = "read"
	// ScopeWrite creates work: ingest, ground, converse, research.
	ScopeWrite Scope = "write"
	// ScopeAdmin acts for people: sends notifications, decides approvals,
	// reviews, silences and acknowledges alert groups, reads raw evidence.
	ScopeAdmin Scope = "admin"
	// ScopeAlerts posts alerts through the webhook routes and nothing
	// else: what Alertmanager and Grafana hold, so a leaked webhook key
	// cannot replace documents or start research.
	ScopeAlerts Scope = "alerts"
)

// AllScopes are the scopes a bare key (no name, no scopes) holds.
var AllScopes = []Scope{ScopeRead, ScopeWrite, ScopeAdmin, ScopeAlerts}

// Key is one parsed GATEWAY_API_KEYS entry.
type Key struct {
	// Name is who the key belongs to; backends record it as the actor.
	Name string
	// Secret is the bearer value.
	Secret string
	// Scopes are what the key may do.
	Scopes []Scope
}

// Has reports whether the key holds scope s.
func (k Key) Has(s Scope) bool {
	for _, have := range k.Scopes {
		if have == s {
			return true
		}
	}
	return false
}

var keyName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`)

// ParseKeys reads GATEWAY_API_KEYS entries: `name:key[:scopes]` with scopes
// read, write, admin, alerts joined by `+`, or a bare `key`, which is named key-1,
// key-2, … in order and holds every scope. Errors never quote a key.
func ParseKeys(entries []string) ([]Key, error) {
	var keys []Key
	var errs []error
	names := map[string]bool{}
	secrets := map[string]bool{}
	bare := 0
	for i, raw := range entries {
		e := strings.TrimSpace(raw)
		pos := "entry " + strconv.Itoa(i+1)
		if e == "" {
			errs = append(errs, fmt.Errorf("GATEWAY_API_KEYS: %s is empty", pos))
			continue
		}
		parts := strings.Split(e, ":")
		var k Key
		switch len(parts) {
		case 1:
			bare++
			k = Key{Name: "key-" + strconv.Itoa(bare), Secret: parts[0], Scopes: AllScopes}
		case 2, 3:
			k = Key{Name: parts[0], Secret: parts[1], Scopes: AllScopes}
			if len(parts) == 3 {
				scopes, err := parseScopes(parts[2])
				if err != nil {
					errs = append(errs, fmt.Errorf("GATEWAY_API_KEYS: %s (%q): %w", pos, k.Name, err))
					continue
				}
				k.Scopes = scopes
			}
			if !keyName.MatchString(k.Name) {
				errs = append(errs, fmt.Errorf("GATEWAY_API_KEYS: %s: the name must be 1-64 letters, digits, '.', '_', '@' or '-'", pos))
				continue
			}
		default:
			errs = append(errs, fmt.Errorf("GATEWAY_API_KEYS: %s: want name:key[:scopes] or a bare key", pos))
			continue
		}
		if strings.TrimSpace(k.Secret) == "" {
			errs = append(errs, fmt.Errorf("GATEWAY_API_KEYS: %s (%q) has an empty key", pos, k.Name))
			continue
		}
		if names[k.Name] {
			errs = append(errs, fmt.Errorf("GATEWAY_API_KEYS: the name %q is used twice", k.Name))
			continue
		}
		if secrets[k.Secret] {
			errs = append(errs, fmt.Errorf("GATEWAY_API_KEYS: %s (%q) repeats another entry's key", pos, k.Name))
			continue
		}
		names[k.Name], secrets[k.Secret] = true, true
		keys = append(keys, k)
	}
	return keys, errors.Join(errs...)
}

func parseScopes(s string) ([]Scope, error) {
	var out []Scope
	seen := map[Scope]bool{}
	for _, p := range strings.Split(s, "+") {
		sc := Scope(strings.ToLower(strings.TrimSpace(p)))
		switch sc {
		case ScopeRead, ScopeWrite, ScopeAdmin, ScopeAlerts:
		default:
			return nil, fmt.Errorf("unknown scope %q: want read, write, admin or alerts joined by +", p)
		}
		if !seen[sc] {
			seen[sc] = true
			out = append(out, sc)
		}
	}
	return out, nil
}

// Client is who sent a request, as far as the edge can tell: the address
// it came from (X-Forwarded-For only through a trusted proxy) and the API
// key it proved, if any.
type Client struct {
	// IP is the client's address.
	IP string
	// Key is the matched API key; nil when none was sent or it did not match.
	Key *Key
	// SentBearer is true when the request carried a bearer token at all.
	SentBearer bool
	// Webhook is true when the request proved the Telegram webhook's
	// secret ([WebhookSecret]): no API key, but Telegram's own credential
	// for the one route it calls.
	Webhook bool
}

// Authenticated reports whether the client proved a credential: an API
// key, or the webhook secret on the webhook route.
func (c Client) Authenticated() bool { return c.Key != nil || c.Webhook }

// Bucket is the identity limits are counted under: the key's name for an
// authenticated client, otherwise its address. Junk tokens therefore share
// their sender's address bucket instead of each getting a fresh one.
func (c Client) Bucket() string {
	if c.Key != nil {
		return "key:" + c.Key.Name
	}
	return "ip:" + c.IP
}

// Actor is the name backends record for this client ("" without a key).
func (c Client) Actor() string {
	if c.Key != nil {
		return c.Key.Name
	}
	return ""
}

type clientKey struct{}

// clientSlot lets [AccessLog], which runs outside [Identify], log the
// client Identify settled on.
type clientSlot struct{ c *Client }

type clientSlotKey struct{}

// ClientFrom returns the client [Identify] attached to ctx.
func ClientFrom(ctx context.Context) Client {
	c, _ := ctx.Value(clientKey{}).(Client)
	return c
}

// Identify works out who sent each request: its address (see
// [Proxies.ClientIP]) and which of keys its bearer token matches. It
// rejects nothing; [Require] does, after the rate limiter has counted the
// request, so guessing keys is rate limited like everything else.
func Identify(keys []Key, proxies *Proxies, next http.Handler) http.Handler {
	hashes := make([][32]byte, len(keys))
	for i, k := range keys {
		hashes[i] = sha256.Sum256([]byte(k.Secret))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := Client{IP: proxies.ClientIP(r)}
		if tok, ok := bearer(r); ok {
			c.SentBearer = true
			if i := matchKey(hashes, tok); i >= 0 {
				c.Key = &keys[i]
			}
		}
		if slot, ok := r.Context().Value(clientSlotKey{}).(*clientSlot); ok {
			slot.c = &c
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientKey{}, c)))
	})
}

// Access is what [Require] enforces.
type Access struct {
	// Scope returns the scope r needs, and whether it needs a key at all.
	Scope func(r *http.Request) (Scope, bool)
	// WriteCoversAlerts lets a key with write but not alerts call the
	// alerts routes, as write did before the alerts scope existed. It is
	// the deprecation period of that rule (GATEWAY_WRITE_COVERS_ALERTS);
	// [LegacyAlertKeys] names the keys that still rely on it.
	WriteCoversAlerts bool
}

// Allows reports whether k may call a route that needs scope need.
func (a Access) Allows(k Key, need Scope) bool {
	if k.Has(need) {
		return true
	}
	return need == ScopeAlerts && a.WriteCoversAlerts && k.Has(ScopeWrite)
}

// LegacyAlertKeys names the keys that can post alerts only because
// write still covers the alerts routes: they hold write but not alerts.
func LegacyAlertKeys(keys []Key) []string {
	var names []string
	for _, k := range keys {
		if k.Has(ScopeWrite) && !k.Has(ScopeAlerts) {
			names = append(names, k.Name)
		}
	}
	return names
}

// Require enforces keys and scopes on the routes for which access.Scope
// returns ok: with keys configured, no valid key is 401 and a key without
// the route's scope is 403, both before the body is read. With no keys
// configured (an open gateway, loopback or GATEWAY_ALLOW_OPEN) it lets
// everything through.
func Require(enabled bool, access Access, next http.Handler) http.Handler {
	if !enabled {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		need, protected := access.Scope(r)
		if !protected || r.Method == http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		c := ClientFrom(r.Context())
		if c.Key == nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="groundcrew"`)
			refuseUnread(w, r)
			WriteError(w, http.StatusUnauthorized, codes.Unauthenticated, "missing or invalid API key: send Authorization: Bearer <key>")
			return
		}
		if !access.Allows(*c.Key, need) {
			WriteError(w, http.StatusForbidden, codes.PermissionDenied, "this API key lacks the "+string(need)+" scope for "+r.Method+" "+r.URL.Path)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refuseUnread closes the connection after a refusal that leaves r's
// body unread, so the server neither reads the rest of it nor keeps a
// connection whose sender may still be writing. Without the read
// deadline, net/http would drain up to 256 KiB of a chunked body once the
// handler returns, waiting as long as the sender holds it open.
func refuseUnread(w http.ResponseWriter, r *http.Request) {
	if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
		_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	}
}

// WebhookSecretHeader is the header Telegram sends with every webhook
// update: the secret_token given to setWebhook.
const WebhookSecretHeader = "X-Telegram-Bot-Api-Secret-Token"

// WebhookSecret checks [WebhookSecretHeader] against secret on the routes
// isWebhook picks, in constant time and before anything reads the body:
// a missing or wrong secret is 401, and the connection is closed rather
// than drained. A request with the right secret is marked
// [Client.Webhook]. With no secret (the gateway was not given
// TELEGRAM_WEBHOOK_SECRET) it checks nothing and the notifier alone
// checks the header, after the body has arrived. refused, when not nil,
// is called for each refusal (for a metric).
func WebhookSecret(secret string, isWebhook func(*http.Request) bool, refused func(), next http.Handler) http.Handler {
	if secret == "" {
		return next
	}
	want := sha256.Sum256([]byte(secret))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isWebhook(r) {
			next.ServeHTTP(w, r)
			return
		}
		got := sha256.Sum256([]byte(r.Header.Get(WebhookSecretHeader)))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			if refused != nil {
				refused()
			}
			refuseUnread(w, r)
			WriteError(w, http.StatusUnauthorized, codes.Unauthenticated, "missing or wrong "+WebhookSecretHeader)
			return
		}
		c := ClientFrom(r.Context())
		c.Webhook = true
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientKey{}, c)))
	})
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return "", false
	}
	tok := strings.TrimSpace(h[len(prefix):])
	return tok, tok != ""
}

// matchKey compares tok with every key in constant time (over SHA-256, so
// neither content nor length leaks through timing) and returns the index of
// the match or -1.
func matchKey(hashes [][32]byte, tok string) int {
	sum := sha256.Sum256([]byte(tok))
	found := -1
	// Compare against every key so the time taken does not say which matched.
	for i := range hashes {
		if subtle.ConstantTimeCompare(sum[:], hashes[i][:]) == 1 {
			found = i
		}
	}
	return found
}
