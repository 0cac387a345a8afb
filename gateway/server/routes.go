package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/groundcrew/groundcrew/gateway/internal/edge"
)

// route is one line of the route table: a method, a path pattern in the
// proto's http-rule syntax ({var} matches one segment, {var}:verb one
// segment ending in :verb) and what calling it takes.
type route struct {
	method, pattern string
	// scope is what an API key needs; open routes need no key.
	scope edge.Scope
	open  bool
	// stream routes run until the client leaves: no backend deadline, but
	// a cap on how many one client holds (GATEWAY_MAX_STREAMS_PER_CLIENT).
	stream bool
	// untrusted routes answer with stored third-party content (fetched web
	// pages): a browser must not run it with the gateway's origin.
	untrusted bool
	// costly routes call paid providers or models (web search engines,
	// Gemini, Groq, embeddings) or start work that does (a research run):
	// each call counts against the key's GATEWAY_KEY_BUDGETS entry.
	costly bool
	// bodyLimit, when set, replaces GATEWAY_BODY_LIMIT for the route.
	bodyLimit int64
	// webhook is Telegram's route: no key, its own secret header.
	webhook bool
}

// webhookBodyLimit bounds a Telegram update: the Bot API's largest (a
// 4096-character message with its entities, a reply and a keyboard) is a
// few kilobytes, so 64 KiB is room to spare and all that anyone without
// a key can make the gateway buffer per request.
const webhookBodyLimit = 64 << 10

// routes says, for every /v1/ route, which scope an API key needs
// (docs/security.md prints this table). read: GETs and queries that change
// nothing; write: ingest, grounding, conversations, research runs; alerts:
// the alert webhooks and nothing else; admin: acting for a person (sending
// to chats, deciding approvals, reviews, silencing and acknowledging alert
// groups) and raw stored evidence. A route missing here needs admin, the
// strictest scope, so a new route is closed until someone decides
// otherwise. Costly routes count against the key's budget.
var routes = []route{
	// Telegram's own secret header instead of a key.
	{method: "POST", pattern: "/v1/telegram/webhook", open: true, webhook: true, bodyLimit: webhookBodyLimit},

	{method: "POST", pattern: "/v1/search", scope: edge.ScopeRead, costly: true},
	{method: "GET", pattern: "/v1/search/engines", scope: edge.ScopeRead},
	{method: "POST", pattern: "/v1/search/documents", scope: edge.ScopeWrite},

	{method: "POST", pattern: "/v1/ground", scope: edge.ScopeWrite, costly: true},
	{method: "POST", pattern: "/v1/ground:query", scope: edge.ScopeRead, costly: true},
	{method: "POST", pattern: "/v1/converse", scope: edge.ScopeWrite, costly: true},
	{method: "GET", pattern: "/v1/messages", scope: edge.ScopeRead},
	{method: "GET", pattern: "/v1/messages/{id}", scope: edge.ScopeRead},
	{method: "POST", pattern: "/v1/messages/{id}:review", scope: edge.ScopeAdmin},
	{method: "GET", pattern: "/v1/messages/{message_id}/citations/{citation_id}/raw-html", scope: edge.ScopeAdmin, untrusted: true},

	{method: "POST", pattern: "/v1/research", scope: edge.ScopeWrite, costly: true},
	{method: "GET", pattern: "/v1/research", scope: edge.ScopeRead},
	{method: "GET", pattern: "/v1/research/{id}", scope: edge.ScopeRead},
	{method: "GET", pattern: "/v1/research/{id}/report", scope: edge.ScopeRead},
	{method: "GET", pattern: "/v1/research/{id}:watch", scope: edge.ScopeRead, stream: true},
	{method: "GET", pattern: "/v1/approvals", scope: edge.ScopeRead},
	{method: "POST", pattern: "/v1/approvals/{id}:decide", scope: edge.ScopeAdmin},

	{method: "GET", pattern: "/v1/collections", scope: edge.ScopeRead},
	{method: "POST", pattern: "/v1/collections", scope: edge.ScopeWrite},
	{method: "GET", pattern: "/v1/collections/{collection}", scope: edge.ScopeRead},
	{method: "DELETE", pattern: "/v1/collections/{collection}", scope: edge.ScopeAdmin},
	{method: "POST", pattern: "/v1/collections/{collection}/documents", scope: edge.ScopeWrite},
	{method: "POST", pattern: "/v1/collections/{collection}:retrieve", scope: edge.ScopeRead, costly: true},
	{method: "POST", pattern: "/v1/collections/{collection}:ask", scope: edge.ScopeRead, costly: true},
	{method: "POST", pattern: "/v1/collections/{collection}:askStream", scope: edge.ScopeRead, stream: true, costly: true},

	{method: "POST", pattern: "/v1/alerts", scope: edge.ScopeAlerts},
	{method: "POST", pattern: "/v1/alerts:alertmanager", scope: edge.ScopeAlerts},
	{method: "POST", pattern: "/v1/alerts:grafana", scope: edge.ScopeAlerts},
	{method: "GET", pattern: "/v1/alerts", scope: edge.ScopeRead},
	{method: "GET", pattern: "/v1/alerts:watch", scope: edge.ScopeRead, stream: true},
	{method: "GET", pattern: "/v1/alerts/{id}", scope: edge.ScopeRead},
	{method: "GET", pattern: "/v1/alert-groups", scope: edge.ScopeRead},
	{method: "GET", pattern: "/v1/alert-groups/{id}", scope: edge.ScopeRead},
	{method: "POST", pattern: "/v1/alert-groups/{id}:silence", scope: edge.ScopeAdmin},
	{method: "POST", pattern: "/v1/alert-groups/{id}:ack", scope: edge.ScopeAdmin},
	{method: "POST", pattern: "/v1/notifications:format", scope: edge.ScopeRead},
	{method: "POST", pattern: "/v1/notifications:send", scope: edge.ScopeAdmin},

	// On call (issue 26): read to see, admin to change.
	{method: "GET", pattern: "/v1/alert-groups/{group_id}/escalation", scope: edge.ScopeRead},
	{method: "GET", pattern: "/v1/oncall/schedules", scope: edge.ScopeRead},
	{method: "GET", pattern: "/v1/oncall/schedules/{id}", scope: edge.ScopeRead},
	{method: "PUT", pattern: "/v1/oncall/schedules/{id}", scope: edge.ScopeAdmin},
	{method: "DELETE", pattern: "/v1/oncall/schedules/{id}", scope: edge.ScopeAdmin},
	{method: "GET", pattern: "/v1/oncall/schedules/{id}/oncall", scope: edge.ScopeRead},
	{method: "GET", pattern: "/v1/oncall/schedules/{id}/shifts", scope: edge.ScopeRead},
	{method: "GET", pattern: "/v1/oncall/schedules/{id}/calendar.ics", scope: edge.ScopeRead},
	{method: "GET", pattern: "/v1/oncall/policies", scope: edge.ScopeRead},
	{method: "PUT", pattern: "/v1/oncall/policies/{id}", scope: edge.ScopeAdmin},
	{method: "DELETE", pattern: "/v1/oncall/policies/{id}", scope: edge.ScopeAdmin},
}

// lookupRoute finds r's line in the table; ok is false for a route the
// table does not know. Under [withRoute] it is found once per request.
func lookupRoute(r *http.Request) (route, bool) {
	if m, ok := r.Context().Value(routeKey{}).(*routeMatch); ok {
		return m.rt, m.ok
	}
	return findRoute(r)
}

func findRoute(r *http.Request) (route, bool) {
	for _, rt := range routes {
		if rt.method == r.Method && matchPattern(rt.pattern, r.URL.Path) {
			return rt, true
		}
	}
	return route{}, false
}

type routeKey struct{}

type routeMatch struct {
	rt route
	ok bool
}

// withRoute looks r's route up once, for every middleware after it that
// asks (scope, stream, budget, body limit, webhook).
func withRoute(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt, ok := findRoute(r)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), routeKey{}, &routeMatch{rt, ok})))
	})
}

// routeScope is what [edge.Require] asks: the scope r needs, and whether it
// needs a key at all. Only /v1/ is the API; everything else (probes,
// openapi.json, docs, the console's assets) is public.
func routeScope(r *http.Request) (edge.Scope, bool) {
	if !strings.HasPrefix(r.URL.Path, "/v1/") {
		return "", false
	}
	rt, ok := lookupRoute(r)
	if !ok {
		return edge.ScopeAdmin, true
	}
	return rt.scope, !rt.open
}

// isStream says whether r is a server stream, by route alone: a client's
// Accept header does not turn a unary call into an unbounded one.
func isStream(r *http.Request) bool {
	rt, ok := lookupRoute(r)
	return ok && rt.stream
}

// isCostly says whether r counts against its key's budget.
func isCostly(r *http.Request) bool {
	rt, ok := lookupRoute(r)
	return ok && rt.costly
}

// isWebhook says whether r is Telegram's webhook route.
func isWebhook(r *http.Request) bool {
	rt, ok := lookupRoute(r)
	return ok && rt.webhook
}

// bodyLimit returns the most body bytes r's route takes: its own limit,
// else def (GATEWAY_BODY_LIMIT).
func bodyLimit(def int64) func(*http.Request) int64 {
	return func(r *http.Request) int64 {
		if rt, ok := lookupRoute(r); ok && rt.bodyLimit > 0 {
			return min(rt.bodyLimit, def)
		}
		return def
	}
}

// matchPattern matches path against an http-rule pattern.
func matchPattern(pattern, path string) bool {
	ps := strings.Split(strings.Trim(pattern, "/"), "/")
	xs := strings.Split(strings.Trim(path, "/"), "/")
	if len(ps) != len(xs) || strings.HasSuffix(path, "//") {
		return false
	}
	for i, p := range ps {
		x := xs[i]
		if !strings.HasPrefix(p, "{") {
			if p != x {
				return false
			}
			continue
		}
		end := strings.IndexByte(p, '}')
		verb := p[end+1:] // "" or ":verb"
		if verb == "" {
			if x == "" || strings.Contains(x, ":") {
				return false
			}
			continue
		}
		if !strings.HasSuffix(x, verb) || len(x) == len(verb) || strings.Contains(strings.TrimSuffix(x, verb), ":") {
			return false
		}
	}
	return true
}

// secureHeaders marks every API response nosniff, and sandboxes routes that
// return stored third-party content: the raw HTML of a fetched page,
// opened in a browser, must not run scripts with the gateway's origin (and
// its API keys in the console's storage).
func secureHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if rt, ok := lookupRoute(r); ok && rt.untrusted {
			w.Header().Set("Content-Security-Policy", "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:")
			w.Header().Set("Referrer-Policy", "no-referrer")
		}
		next.ServeHTTP(w, r)
	})
}
