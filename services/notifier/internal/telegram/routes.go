package telegram

import (
	"fmt"
	"regexp"
	"strings"
)

// Route sends alerts whose labels match every matcher to a chat.
type Route struct {
	Match  map[string]string // label name → exact value
	ChatID string
}

// Router picks an alert's chat: the first route whose matchers all hold,
// otherwise the default chat.
type Router struct {
	Routes  []Route
	Default string
}

var chatIDPattern = regexp.MustCompile(`^(-?[0-9]{1,20}|@[A-Za-z][A-Za-z0-9_]{3,31})$`)

// ValidChatID reports whether id is a Telegram chat id (an integer, negative
// for groups and channels) or a public @channelusername.
func ValidChatID(id string) bool { return chatIDPattern.MatchString(id) }

// ParseRoutes reads NOTIFIER_ROUTES:
//
//	routes  = route *("," route)
//	route   = matcher *("&" matcher) ":" chat
//	matcher = label "=" value
//
// for example "severity=critical:-100123,team=db&env=prod:-100456". The
// chat is what follows the last ':' (so a value may contain ':'), a numeric
// chat id or @channelusername; labels and values may not contain ',', '&'
// or '=' and are matched exactly after trimming spaces. Routes are tried in
// order and the first match wins. An empty spec means no routes.
func ParseRoutes(spec string) ([]Route, error) {
	var routes []Route
	if strings.TrimSpace(spec) == "" {
		return nil, nil
	}
	for i, raw := range strings.Split(spec, ",") {
		raw = strings.TrimSpace(raw)
		sep := strings.LastIndex(raw, ":")
		if sep < 0 {
			return nil, fmt.Errorf("route %d %q: want label=value[&label=value…]:chat_id", i+1, raw)
		}
		chat := strings.TrimSpace(raw[sep+1:])
		if !ValidChatID(chat) {
			return nil, fmt.Errorf("route %d %q: chat %q is not a chat id (-100123) or @channelname", i+1, raw, chat)
		}
		r := Route{Match: map[string]string{}, ChatID: chat}
		for _, m := range strings.Split(raw[:sep], "&") {
			k, v, ok := strings.Cut(m, "=")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !ok || k == "" || v == "" || strings.Contains(v, "=") {
				return nil, fmt.Errorf("route %d %q: matcher %q: want label=value", i+1, raw, m)
			}
			r.Match[k] = v
		}
		routes = append(routes, r)
	}
	return routes, nil
}

// Route returns the chat for labels, or "" when no route matches and there
// is no default.
func (r Router) Route(labels map[string]string) string {
	for _, route := range r.Routes {
		if matches(route.Match, labels) {
			return route.ChatID
		}
	}
	return r.Default
}

func matches(match, labels map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}
