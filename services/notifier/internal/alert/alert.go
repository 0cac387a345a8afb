// Package alert is the notifier's alert model and intake: it turns the three
// webhook payloads the notifier accepts (a generic {text, metadata}, an
// Alertmanager webhook v4 payload, a Grafana webhook contact point payload)
// into Alerts with a text, labels for routing and a deduplication key.
//
// # How an alert's text is built
//
// A generic alert keeps its text as sent. An Alertmanager or Grafana alert
// (each alert of the payload separately; the payload's common labels and
// annotations fill in what an alert lacks) gets:
//
//	[FIRING] <alertname> (<severity>): <summary>
//	<description>
//	<key labels as name=value, space-separated>
//	Value: <Grafana valueString>
//
// "[RESOLVED]" replaces "[FIRING]" for a resolved alert. alertname falls back
// to Grafana's rulename label, then to "alert"; " (<severity>)" is left out
// without a severity label; ": <summary>" is left out without a summary
// annotation (Grafana's "title" or "message" annotation stands in). A line
// whose value is missing is left out, and the description is left out when it
// repeats the summary. The key labels are, in this order and when present:
// instance, job, namespace, pod, container, service, deployment, cluster,
// node, env, environment, region, team.
//
// The alert's own links (runbook_url, dashboards, generatorURL) are not
// part of its text: Links lists them, and the message shows them on a line
// of their own.
//
// Metadata is at most MaxMetadataBytes encoded as JSON; an upstream
// alert's labels, annotations and values count as its metadata.
//
// Text longer than MaxTextLen characters is cut (ending with "…") and the
// alert flagged TextTruncated; blank text is rejected.
//
// # Deduplication key
//
// Fingerprint is Alertmanager's or Grafana's fingerprint of the label set
// (or, when a payload has none, a hash of the sorted labels); a generic
// alert's is a hash of its text and canonical metadata, or its metadata's
// "fingerprint" string when it gives one. Two alerts are the same when
// source, fingerprint and alert status (firing or resolved) match.
//
// A generic alert may say whether it fires or resolves with a metadata
// "status" of "firing" or "resolved": a resolution is delivered as a reply
// to the firing alert with the same fingerprint, without enrichment.
package alert

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxTextLen is the longest alert text kept, in characters (runes).
const MaxTextLen = 4000

// Status is where an alert stands in the pipeline.
type Status string

// The statuses, in pipeline order; Duplicate is set at intake instead.
const (
	StatusReceived   Status = "RECEIVED"
	StatusEnriching  Status = "ENRICHING"
	StatusDelivering Status = "DELIVERING"
	StatusDelivered  Status = "DELIVERED"
	StatusFailed     Status = "FAILED"
	StatusDuplicate  Status = "DUPLICATE"
)

// Valid reports whether s is one of the statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusReceived, StatusEnriching, StatusDelivering, StatusDelivered, StatusFailed, StatusDuplicate:
		return true
	}
	return false
}

// Where an alert came from.
const (
	SourceGeneric      = "generic"
	SourceAlertmanager = "alertmanager"
	SourceGrafana      = "grafana"
)

// Alert statuses as Alertmanager and Grafana report them.
const (
	Firing   = "firing"
	Resolved = "resolved"
)

// ErrInvalid is wrapped by every validation error; FieldError says which
// field.
var ErrInvalid = errors.New("invalid alert")

// FieldError is a validation problem with one request field.
type FieldError struct {
	Field       string // path of the field, e.g. "alerts[2].status"
	Description string // what is wrong
}

// Error is "field: description".
func (e *FieldError) Error() string { return e.Field + ": " + e.Description }

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *FieldError) Unwrap() error { return ErrInvalid }

// Message is a rendered Telegram message.
type Message struct {
	Text                  string // MarkdownV2
	Plain                 string // what the reader sees; sent when MarkdownV2 is refused
	ParseMode             string
	DisableWebPagePreview bool
}

// Alert is one alert as received and as it moves through the pipeline.
type Alert struct {
	ID            string
	Source        string // SourceGeneric, SourceAlertmanager or SourceGrafana
	Text          string
	TextTruncated bool
	// Metadata is a JSON object: the generic alert's metadata, or what the
	// payload said about the alert (labels, annotations, times, links).
	Metadata map[string]any
	// Labels route the alert: the upstream labels, or a generic alert's
	// top-level string metadata.
	Labels      map[string]string
	AlertStatus string // Firing or Resolved; empty for generic alerts
	Fingerprint string

	Status             Status
	Attempts           int
	Error              string // last error, safe to show
	Message            *Message
	DuplicateOf        string
	GroundingMessageID string
	EnrichmentError    string
	DeliveryIDs        []string
	Destination        string
	ReceivedAt         time.Time
	UpdatedAt          time.Time
	DeliveredAt        time.Time // zero until delivered
	// GroupID is the alert group the alert was delivered with (Group.ID),
	// "" for an alert delivered on its own.
	GroupID string
	// DigestID is the storm digest that carries the alert, "" when it is
	// delivered on its own.
	DigestID string
	// ReplyTo is the message a resolution replies to (its firing alert's
	// delivery id), set by the pipeline just before delivery; not stored.
	ReplyTo string
}

// DedupKey is what makes two alerts the same for deduplication.
func (a *Alert) DedupKey() string {
	return a.Source + "|" + a.AlertStatus + "|" + a.Fingerprint
}

// Resolved reports whether the alert is a resolution.
func (a *Alert) Resolved() bool { return a.AlertStatus == Resolved }

// Generic builds the alert for a generic {text, metadata} payload. metadata
// may be nil.
func Generic(text string, metadata map[string]any) (Alert, error) {
	if !utf8.ValidString(text) {
		return Alert{}, &FieldError{"text", "must be valid UTF-8"}
	}
	if strings.TrimFunc(text, unicode.IsSpace) == "" {
		return Alert{}, &FieldError{"text", "must not be blank"}
	}
	if metadata == nil {
		metadata = map[string]any{}
	}
	canon, err := json.Marshal(metadata) // map keys are sorted: canonical
	if err != nil {
		return Alert{}, &FieldError{"metadata", "must be a JSON object"}
	}
	if len(canon) > MaxMetadataBytes {
		return Alert{}, &FieldError{"metadata", fmt.Sprintf("must be at most %d bytes (16 KiB) encoded as JSON, got %d", MaxMetadataBytes, len(canon))}
	}
	labels := map[string]string{}
	for k, v := range metadata {
		if s, ok := v.(string); ok {
			labels[k] = s
		}
	}
	a := Alert{
		Source:      SourceGeneric,
		Metadata:    metadata,
		Labels:      labels,
		Fingerprint: hash(text, "\x00", string(canon)),
	}
	if st, ok := metadata["status"].(string); ok {
		switch strings.ToLower(strings.TrimSpace(st)) {
		case Firing:
			a.AlertStatus = Firing
		case Resolved:
			a.AlertStatus = Resolved
		}
	}
	if fp, ok := metadata["fingerprint"].(string); ok && strings.TrimSpace(fp) != "" && len(fp) <= 128 {
		a.Fingerprint = strings.TrimSpace(fp)
	}
	a.Text, a.TextTruncated = Truncate(text)
	return a, nil
}

// Truncate cuts text to MaxTextLen characters, ending it with "…", and
// reports whether it did.
func Truncate(text string) (string, bool) {
	if utf8.RuneCountInString(text) <= MaxTextLen {
		return text, false
	}
	n := 0
	for i := range text {
		if n == MaxTextLen-1 {
			return text[:i] + "…", true
		}
		n++
	}
	return text, false
}

func hash(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// labelHash fingerprints a label set when the payload carries none.
func labelHash(labels map[string]string) string {
	keys := sortedKeys(labels)
	parts := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		parts = append(parts, k, "\x00", labels[k], "\x00")
	}
	return hash(parts...)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// KeyLabels are the labels shown on an alert's label line, in order.
var KeyLabels = []string{
	"instance", "job", "namespace", "pod", "container", "service", "deployment",
	"cluster", "node", "env", "environment", "region", "team",
}

// upstream is one Alertmanager or Grafana alert with the payload's common
// values merged in.
type upstream struct {
	status      string
	labels      map[string]string
	annotations map[string]string
	valueString string
}

// buildText renders an upstream alert's text as the package doc says.
func buildText(u upstream) string {
	var b strings.Builder
	if u.status == Resolved {
		b.WriteString("[RESOLVED] ")
	} else {
		b.WriteString("[FIRING] ")
	}
	name := clean(firstNonEmpty(u.labels["alertname"], u.labels["rulename"], "alert"))
	b.WriteString(name)
	if sev := clean(u.labels["severity"]); sev != "" {
		b.WriteString(" (" + sev + ")")
	}
	summary := clean(firstNonEmpty(u.annotations["summary"], u.annotations["title"], u.annotations["message"]))
	if summary != "" {
		b.WriteString(": " + summary)
	}
	if d := strings.TrimSpace(u.annotations["description"]); d != "" && clean(d) != summary {
		b.WriteString("\n" + d)
	}
	var kv []string
	for _, k := range KeyLabels {
		if v := clean(u.labels[k]); v != "" {
			kv = append(kv, k+"="+v)
		}
	}
	if len(kv) > 0 {
		b.WriteString("\n" + strings.Join(kv, " "))
	}
	if v := clean(u.valueString); v != "" {
		b.WriteString("\nValue: " + v)
	}
	return strings.ToValidUTF8(b.String(), "\uFFFD")
}

// clean puts a value on one trimmed line.
func clean(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}

// merge returns common overlaid by specific.
func merge(common, specific map[string]string) map[string]string {
	out := make(map[string]string, len(common)+len(specific))
	for k, v := range common {
		out[k] = v
	}
	for k, v := range specific {
		out[k] = v
	}
	return out
}

func checkStatus(field, s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case Firing:
		return Firing, nil
	case Resolved:
		return Resolved, nil
	}
	return "", &FieldError{field, fmt.Sprintf("must be %q or %q", Firing, Resolved)}
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func timeString(t time.Time) string {
	if t.IsZero() || t.Year() <= 1 {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// fromUpstream finishes an Alertmanager or Grafana alert.
func fromUpstream(source string, u upstream, fingerprint string, metadata map[string]any) Alert {
	if fingerprint == "" {
		fingerprint = labelHash(u.labels)
	}
	a := Alert{
		Source:      source,
		Metadata:    metadata,
		Labels:      u.labels,
		AlertStatus: u.status,
		Fingerprint: fingerprint,
	}
	a.Text, a.TextTruncated = Truncate(buildText(u))
	return a
}
