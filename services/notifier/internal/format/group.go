package format

import (
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// Group rendering: an alert group's root message and its threaded replies.
//
//	[FIRING:60] KubePodCrashLooping (warning shop)
//	👀 acked by @ann
//	Labels: alertname=KubePodCrashLooping namespace=shop severity=warning
//
//	🔥 pod=web-1 — Pod shop/web-1 is crash looping
//	… (at most MaxGroupLines lines)
//	… and 50 more
//	Alertmanager: https://am.example.com/#/alerts?filter=…
//	🔗 Runbook: https://runbooks.example.com/… · Source: http://prometheus/graph?…
//
//	--- Enriched Context ---
//	…
//
// The whole text goes through Format, so the root keeps the formatter's
// guarantees (escaped MarkdownV2, within the limit, cuts listed) and the
// title, being the first line, is the last thing given up.

// MaxGroupLines is how many alerts a group message lists, one line each.
const MaxGroupLines = 10

// maxGroupLine caps one alert line, in characters.
const maxGroupLine = 200

// Markers of an alert line.
const (
	FiringMark   = "🔥"
	ResolvedMark = "✅"
)

// GroupAlert is one alert line of a group message.
type GroupAlert struct {
	Resolved bool
	// Labels are the alert's distinguishing labels as name=value.
	Labels  []string
	Summary string
}

// Group is what a group message shows.
type Group struct {
	// Title is the first line, e.g. "[FIRING:60] KubePodCrashLooping (warning shop)".
	Title string
	// State lines under the title: "🔕 silenced by @ann until 21:50 UTC",
	// "👀 acked by @ann".
	State []string
	// CommonLabels are shown once.
	CommonLabels map[string]string
	// Changes, for a reply: e.g. "+1 firing, 60 resolved"; "" for a root.
	Changes string
	// Alerts are listed, at most MaxGroupLines, then "… and N more".
	Alerts []GroupAlert
	// ExternalURL is Alertmanager's own URL; with GroupLabels it makes a
	// link to the group in Alertmanager's UI. "" for none.
	ExternalURL string
	GroupLabels map[string]string
	Receiver    string
	// Links are the alerts' own links (runbook_url, dashboards,
	// generatorURL), shown on the links line of a root message.
	Links []Link
}

// GroupText is the plain text of g, before enrichment and fitting.
func GroupText(g Group) string {
	var b strings.Builder
	title := oneLine(cleanText(g.Title))
	if title == "" {
		title = "[FIRING] alert group"
	}
	b.WriteString(title)
	for _, s := range g.State {
		if s = oneLine(cleanText(s)); s != "" {
			b.WriteString("\n" + s)
		}
	}
	if g.Changes != "" {
		b.WriteString("\n" + oneLine(cleanText(g.Changes)))
	}
	if len(g.CommonLabels) > 0 {
		keys := make([]string, 0, len(g.CommonLabels))
		for k := range g.CommonLabels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		pairs := make([]string, 0, len(keys))
		for _, k := range keys {
			pairs = append(pairs, oneLine(cleanText(k))+"="+oneLine(cleanText(g.CommonLabels[k])))
		}
		line, _ := truncate("Labels: "+strings.Join(pairs, " "), 4*maxGroupLine, runes)
		b.WriteString("\n" + line)
	}
	if len(g.Alerts) > 0 {
		b.WriteString("\n")
	}
	for i, a := range g.Alerts {
		if i == MaxGroupLines {
			b.WriteString("\n… and " + strconv.Itoa(len(g.Alerts)-MaxGroupLines) + " more")
			break
		}
		mark := FiringMark
		if a.Resolved {
			mark = ResolvedMark
		}
		line := mark
		if len(a.Labels) > 0 {
			line += " " + strings.Join(a.Labels, " ")
		}
		if a.Summary != "" {
			line += separator + a.Summary
		}
		line, _ = truncate(oneLine(cleanText(line)), maxGroupLine, runes)
		b.WriteString("\n" + line)
	}
	if link := GroupLink(g.ExternalURL, g.Receiver, g.GroupLabels); link != "" {
		b.WriteString("\nAlertmanager: " + link)
	}
	return b.String()
}

// GroupLink is the link to a group in Alertmanager's UI, or "" when
// externalURL is not an absolute http(s) URL.
func GroupLink(externalURL, receiver string, groupLabels map[string]string) string {
	u, err := url.Parse(strings.TrimSpace(externalURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(externalURL) > maxURL {
		return ""
	}
	u.User = nil
	keys := make([]string, 0, len(groupLabels))
	for k := range groupLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	matchers := make([]string, 0, len(keys))
	for _, k := range keys {
		matchers = append(matchers, k+"="+strconv.Quote(groupLabels[k]))
	}
	q := url.Values{}
	if receiver != "" {
		q.Set("receiver", receiver)
	}
	if len(matchers) > 0 {
		q.Set("filter", "{"+strings.Join(matchers, ",")+"}")
	}
	link := strings.TrimRight(u.String(), "/") + "/#/alerts"
	if enc := q.Encode(); enc != "" {
		link += "?" + enc
	}
	return link
}

// FormatGroup renders a group's root message with its enrichment (nil:
// none), under Format's guarantees.
func FormatGroup(g Group, e *Enrichment, opt Options) Result {
	return FormatAlert(Input{Text: GroupText(g), Links: g.Links}, e, opt)
}

// FormatGroupFailed renders a group's root message with the note that its
// enrichment failed, as FormatFailed does.
func FormatGroupFailed(g Group, reason string, opt Options) Result {
	return FormatAlertFailed(Input{Text: GroupText(g), Links: g.Links}, reason, opt)
}
