package alert

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// MaxMetadataBytes bounds an alert's metadata, encoded as the store keeps
// it (compact JSON): one writer must not be able to make the alert list
// too large to answer.
const MaxMetadataBytes = 16 << 10

// checkMetadata refuses metadata larger than MaxMetadataBytes, naming
// field.
func checkMetadata(field string, md map[string]any) error {
	raw, err := json.Marshal(md)
	if err != nil {
		return &FieldError{field, "must be a JSON object"}
	}
	if len(raw) > MaxMetadataBytes {
		return &FieldError{field, fmt.Sprintf("must be at most %d bytes (16 KiB) encoded as JSON, got %d", MaxMetadataBytes, len(raw))}
	}
	return nil
}

// Link is one of an alert's own links, shown under its text.
type Link struct {
	Label string // "Runbook", "Dashboard", …
	URL   string // an absolute http(s) URL
}

// Link labels, in the order a message shows them.
const (
	LinkRunbook   = "Runbook"
	LinkDashboard = "Dashboard"
	LinkPanel     = "Panel"
	LinkSource    = "Source"
	LinkSilence   = "Silence"
)

// linkKeys are the metadata and annotation keys that hold an alert's own
// links, with their labels, most telling first: the team's runbook, its
// dashboards, the rule that fired (Prometheus's graph or Grafana's rule),
// Grafana's silence page.
var linkKeys = []struct{ key, label string }{
	{"runbook_url", LinkRunbook},
	{"runbook", LinkRunbook},
	{"dashboard_url", LinkDashboard},
	{"dashboardURL", LinkDashboard},
	{"panelURL", LinkPanel},
	{"generatorURL", LinkSource},
	{"silenceURL", LinkSilence},
}

// maxLinkLen skips links longer than this many bytes: unusable in a chat.
const maxLinkLen = 2048

// Links are a's own links, most telling first, one per label and URL:
// the keys above in its annotations (Alertmanager, Grafana) or at the top
// of its metadata (any alert). Values that are not absolute http(s) URLs
// are left out.
func Links(a *Alert) []Link {
	var out []Link
	seen := map[string]bool{}
	ann, _ := a.Metadata["annotations"].(map[string]any)
	for _, k := range linkKeys {
		for _, src := range []map[string]any{ann, a.Metadata} {
			s, _ := src[k.key].(string)
			s = strings.TrimSpace(s)
			if !webURL(s) || seen[k.label] || seen[s] {
				continue
			}
			seen[k.label], seen[s] = true, true
			out = append(out, Link{Label: k.label, URL: s})
		}
	}
	return out
}

// GroupLinks are the links of a group's root message: each alert's, in
// order, one per URL, at most max.
func GroupLinks(alerts []*Alert, max int) []Link {
	var out []Link
	seen := map[string]bool{}
	for _, a := range alerts {
		for _, l := range Links(a) {
			if len(out) == max {
				return out
			}
			if !seen[l.URL] {
				seen[l.URL] = true
				out = append(out, l)
			}
		}
	}
	return out
}

// EvidenceURLs are the URLs grounding may start its evidence from: the
// runbook first, then the other links.
func EvidenceURLs(links []Link) []string {
	out := make([]string, 0, len(links))
	for _, l := range links {
		if l.Label == LinkRunbook {
			out = append(out, l.URL)
		}
	}
	for _, l := range links {
		if l.Label != LinkRunbook && l.Label != LinkSilence {
			out = append(out, l.URL)
		}
	}
	return out
}

func webURL(s string) bool {
	if s == "" || len(s) > maxLinkLen || strings.ContainsAny(s, " \t\r\n") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
