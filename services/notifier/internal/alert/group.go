package alert

import (
	"sort"
	"strconv"
	"strings"
	"time"
)

// GroupStatus is where an alert group stands as its latest notification
// says.
type GroupStatus string

// The group statuses.
const (
	GroupFiring   GroupStatus = "FIRING"
	GroupResolved GroupStatus = "RESOLVED"
)

// Group is one group notification stream: the alerts an Alertmanager or
// Grafana payload groups under one groupKey, for one destination chat. Its
// first notification sends one root message; later ones reply to the root
// and edit its title.
type Group struct {
	ID                string
	GroupKey          string
	Source            string // SourceAlertmanager or SourceGrafana
	Destination       string // the chat its messages go to, or "log"
	RootMessageID     string // "" until the root is delivered
	Status            GroupStatus
	Firing            int // alerts firing as of the latest notification
	Resolved          int // alerts resolved as of the latest notification
	GroupLabels       map[string]string
	CommonLabels      map[string]string
	CommonAnnotations map[string]string
	ExternalURL       string
	// Enrichment is the group's enrichment (nil: none yet), kept so that
	// an edit of the root shows it again without asking grounding twice.
	Enrichment         *Enrichment
	GroundingMessageID string
	EnrichmentError    string
	Silence            *Silence
	Ack                *Ack
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// Silence is an Alertmanager silence created for a group.
type Silence struct {
	ID        string // Alertmanager's silence id
	Actor     string // the Telegram user (@username or id) or the API key name
	By        string // the caller's own display note
	EndsAt    time.Time
	CreatedAt time.Time
	Expired   bool
}

// Ack says who acknowledged a group, and when.
type Ack struct {
	Actor string
	By    string
	At    time.Time
}

// GroupPayload is what a webhook payload says about its group, beside its
// alerts.
type GroupPayload struct {
	GroupKey          string
	Source            string
	GroupLabels       map[string]string
	CommonLabels      map[string]string
	CommonAnnotations map[string]string
	ExternalURL       string
}

// AlertmanagerGroup is p's group; ok is false when p carries no groupKey
// (a hand-made payload), whose alerts then go out one by one.
func AlertmanagerGroup(p AlertmanagerPayload) (GroupPayload, bool) {
	return groupPayload(SourceAlertmanager, p.GroupKey, p.GroupLabels, p.CommonLabels, p.CommonAnnotations, p.ExternalURL)
}

// GrafanaGroup is p's group; ok is false when p carries no groupKey.
func GrafanaGroup(p GrafanaPayload) (GroupPayload, bool) {
	return groupPayload(SourceGrafana, p.GroupKey, p.GroupLabels, p.CommonLabels, p.CommonAnnotations, p.ExternalURL)
}

func groupPayload(source, key string, gl, cl, ca map[string]string, ext string) (GroupPayload, bool) {
	if strings.TrimSpace(key) == "" {
		return GroupPayload{}, false
	}
	// Stored as text on PostgreSQL too, which refuses NUL and invalid
	// UTF-8.
	key = strings.ReplaceAll(strings.ToValidUTF8(key, "\uFFFD"), "\x00", "\uFFFD")
	return GroupPayload{
		GroupKey: key, Source: source,
		GroupLabels: nonNil(gl), CommonLabels: nonNil(cl), CommonAnnotations: nonNil(ca),
		ExternalURL: strings.ReplaceAll(strings.ToValidUTF8(strings.TrimSpace(ext), ""), "\x00", ""),
	}, true
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// Title is the group's title in Alertmanager's default convention:
// "[FIRING:<n>] <group label values> (<other common label values>)", or
// "[RESOLVED] …" once nothing fires. Values are sorted by label name, as
// Alertmanager's SortedPairs are.
func (g *Group) Title() string {
	var b strings.Builder
	if g.Status == GroupResolved {
		b.WriteString("[RESOLVED]")
	} else {
		b.WriteString("[FIRING:" + strconv.Itoa(g.Firing) + "]")
	}
	var names []string
	for _, k := range sortedKeys(g.GroupLabels) {
		if v := clean(g.GroupLabels[k]); v != "" {
			names = append(names, v)
		}
	}
	if len(names) == 0 {
		if v := clean(firstNonEmpty(g.CommonLabels["alertname"], g.CommonLabels["rulename"])); v != "" {
			names = append(names, v)
		}
	}
	if len(names) > 0 {
		b.WriteString(" " + strings.Join(names, " "))
	}
	var rest []string
	for _, k := range sortedKeys(g.CommonLabels) {
		if _, grouped := g.GroupLabels[k]; grouped {
			continue
		}
		if len(g.GroupLabels) == 0 && (k == "alertname" || k == "rulename") {
			continue
		}
		if v := clean(g.CommonLabels[k]); v != "" {
			rest = append(rest, v)
		}
	}
	if len(rest) > 0 {
		b.WriteString(" (" + strings.Join(rest, " ") + ")")
	}
	return strings.ToValidUTF8(b.String(), "\uFFFD")
}

// GroupQuery is the text a group is enriched with: its title without the
// counts, its common labels and its common annotations.
func (g *Group) GroupQuery() string {
	t := g.Title()
	if i := strings.Index(t, "] "); i >= 0 {
		t = t[i+2:]
	}
	var b strings.Builder
	b.WriteString(t)
	for _, k := range sortedKeys(g.CommonLabels) {
		b.WriteString("\n" + k + "=" + clean(g.CommonLabels[k]))
	}
	for _, k := range []string{"summary", "description"} {
		if v := clean(g.CommonAnnotations[k]); v != "" {
			b.WriteString("\n" + v)
		}
	}
	return strings.ToValidUTF8(b.String(), "\uFFFD")
}

// CacheKey is what makes two groups' enrichment the same for the
// enrichment cache: the alertname and the common labels.
func (g *Group) CacheKey() string {
	keys := sortedKeys(g.CommonLabels)
	parts := []string{g.CommonLabels["alertname"], "\x00"}
	for _, k := range keys {
		parts = append(parts, k, "\x00", g.CommonLabels[k], "\x00")
	}
	return hash(parts...)
}

// Tally counts the firing and resolved alerts among the latest state of
// each alert (by fingerprint) and sets the group's status from them.
func (g *Group) Tally(latest []*Alert) {
	g.Firing, g.Resolved = 0, 0
	for _, a := range latest {
		if a.Resolved() {
			g.Resolved++
		} else {
			g.Firing++
		}
	}
	g.Status = GroupFiring
	if g.Firing == 0 {
		g.Status = GroupResolved
	}
}

// Distinguishing are the labels of a that are not common to its group, as
// "name=value", sorted by name.
func Distinguishing(a *Alert, common map[string]string) []string {
	var out []string
	keys := make([]string, 0, len(a.Labels))
	for k := range a.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if cv, ok := common[k]; ok && cv == a.Labels[k] {
			continue
		}
		if v := clean(a.Labels[k]); v != "" {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// Summary is a's summary annotation (or its stand-ins), on one line.
func Summary(a *Alert) string {
	ann, _ := a.Metadata["annotations"].(map[string]any)
	for _, k := range []string{"summary", "title", "message"} {
		if s, ok := ann[k].(string); ok && strings.TrimSpace(s) != "" {
			return clean(s)
		}
	}
	return ""
}

// GroupAction is what an alert group button does.
type GroupAction string

// The group actions and the data their buttons carry.
const (
	ActionAck       GroupAction = "ack"
	ActionSilence1h GroupAction = "s1h"
	ActionSilence1d GroupAction = "s24h"
	ActionExpire    GroupAction = "exp"
)

// groupCallbackPrefix starts a group button's callback data.
const groupCallbackPrefix = "ag:"

// GroupCallbackData is a group button's callback_data:
// "ag:<group id>:<action>" (at most 44 bytes with a UUID, within
// Telegram's 64). The id alone grants nothing: a press acts only from the
// group's own root message, in its chat.
func GroupCallbackData(groupID string, a GroupAction) string {
	return groupCallbackPrefix + groupID + ":" + string(a)
}

// ParseGroupCallback reads GroupCallbackData; ok is false for other data.
func ParseGroupCallback(data string) (groupID string, a GroupAction, ok bool) {
	rest, ok := strings.CutPrefix(data, groupCallbackPrefix)
	if !ok {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, ':')
	if i <= 0 || i > 64 {
		return "", "", false
	}
	switch act := GroupAction(rest[i+1:]); act {
	case ActionAck, ActionSilence1h, ActionSilence1d, ActionExpire:
		return rest[:i], act, true
	}
	return "", "", false
}

// Duration is how long a silence action silences; 0 for other actions.
func (a GroupAction) Duration() time.Duration {
	switch a {
	case ActionSilence1h:
		return time.Hour
	case ActionSilence1d:
		return 24 * time.Hour
	}
	return 0
}
