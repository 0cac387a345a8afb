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
)

// AllScopes are the scopes a bare key (no name, no scopes) holds.
var AllScopes = []Scope{ScopeRead, ScopeWrite, ScopeAdmin}

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
// read, write, admin joined by `+`, or a bare `key`, which is named key-1,
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
		case ScopeRead, ScopeWrite, ScopeAdmin:
		default:
			return nil, fmt.Errorf("unknown scope %q: want read, write or admin joined by +", p)
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
}

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

// Require enforces keys and scopes on the routes for which scope returns
// ok: with keys configured, no valid key is 401 and a key without the
// route's scope is 403. With no keys configured (an open gateway, loopback
// or GATEWAY_ALLOW_OPEN) it lets everything through.
func Require(enabled bool, scope func(*http.Request) (Scope, bool), next http.Handler) http.Handler {
	if !enabled {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		need, protected := scope(r)
		if !protected || r.Method == http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		c := ClientFrom(r.Context())
		if c.Key == nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="groundcrew"`)
			WriteError(w, http.StatusUnauthorized, codes.Unauthenticated, "missing or invalid API key: send Authorization: Bearer <key>")
			return
		}
		if !c.Key.Has(need) {
			WriteError(w, http.StatusForbidden, codes.PermissionDenied, "this API key lacks the "+string(need)+" scope for "+r.Method+" "+r.URL.Path)
			return
		}
		next.ServeHTTP(w, r)
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
