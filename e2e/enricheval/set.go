// Package enricheval measures alert enrichment and research on the
// labelled evaluation sets under eval/ (docs/evaluation.md): it runs the
// real search and grounding services in-process and offline (no keys, no
// network), indexes the corpus (examples/runbooks as the team's runbooks,
// docs/runbooks in groundcrew's own collection) and asks grounding about
// every alert and topic exactly as the notifier and a research client do.
//
// Enrichment figures, over one set of alerts:
//
//   - precision: of all sources cited, the share labelled relevant (or
//     acceptable) for their alert;
//   - recall: of the (alert, required runbook) pairs, the share cited;
//   - abstention: of the alerts no runbook is about, the share answered
//     NEEDS_REVIEW with no citation.
//
// Research figures, over a set of topics: of the covered topics, how many
// cite every runbook they must and answer at least half their sections;
// of the uncovered ones, how many cite nothing and say so once.
package enricheval

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Alert is one labelled alert of an enrichment set.
type Alert struct {
	ID string `json:"id"`
	// Format is "alertmanager", "grafana" or "text".
	Format      string            `json:"format"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	// Value is Grafana's valueString.
	Value string `json:"value,omitempty"`
	// Text is a generic alert's text.
	Text string `json:"text,omitempty"`
	// Runbooks must be cited (file names without .md); none means no
	// runbook is about the alert.
	Runbooks []string `json:"runbooks"`
	// Acceptable may be cited without counting against precision.
	Acceptable []string `json:"acceptable,omitempty"`
}

// AlertSet is one part (tuning or held-out) of the enrichment set.
type AlertSet struct {
	Part   string  `json:"part"`
	About  string  `json:"about"`
	Alerts []Alert `json:"alerts"`
}

// Topic is one labelled research topic.
type Topic struct {
	ID    string `json:"id"`
	Topic string `json:"topic"`
	// Runbooks must be cited; none means nothing covers the topic.
	Runbooks []string `json:"runbooks"`
	// Acceptable may be cited without being wrong; a citation outside
	// Runbooks and Acceptable is off the label.
	Acceptable []string `json:"acceptable,omitempty"`
}

// TopicSet is one part of the research set.
type TopicSet struct {
	Part   string  `json:"part"`
	About  string  `json:"about"`
	Topics []Topic `json:"topics"`
}

// Root is the repository's root directory, found from this file.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// LoadAlerts reads an enrichment set.
func LoadAlerts(path string) (AlertSet, error) {
	var s AlertSet
	if err := readJSON(path, &s); err != nil {
		return s, err
	}
	seen := map[string]bool{}
	for _, a := range s.Alerts {
		if a.ID == "" || seen[a.ID] {
			return s, fmt.Errorf("%s: alert id %q missing or repeated", path, a.ID)
		}
		seen[a.ID] = true
		if a.Text == "" && a.Format == "text" || a.Format != "text" && a.Labels == nil {
			return s, fmt.Errorf("%s: alert %s has no text", path, a.ID)
		}
	}
	return s, nil
}

// LoadTopics reads a research set.
func LoadTopics(path string) (TopicSet, error) {
	var s TopicSet
	err := readJSON(path, &s)
	return s, err
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// keyLabels are the labels the notifier shows on an alert's label line,
// in its order (services/notifier/internal/alert.KeyLabels).
var keyLabels = []string{
	"instance", "job", "namespace", "pod", "container", "service", "deployment",
	"cluster", "node", "env", "environment", "region", "team",
}

// Rendered is the alert's text as the notifier builds it from an
// Alertmanager or Grafana payload (services/notifier/internal/alert), the
// text grounding is asked about:
//
//	[FIRING] <alertname> (<severity>): <summary>
//	<description>
//	<key labels as name=value>
//	Value: <Grafana valueString>
//	Runbook: <runbook_url>
func (a Alert) Rendered() string {
	if a.Format == "text" {
		return a.Text
	}
	clean := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	var b strings.Builder
	b.WriteString("[FIRING] ")
	name := clean(a.Labels["alertname"])
	if name == "" {
		name = clean(a.Labels["rulename"])
	}
	if name == "" {
		name = "alert"
	}
	b.WriteString(name)
	if sev := clean(a.Labels["severity"]); sev != "" {
		b.WriteString(" (" + sev + ")")
	}
	summary := clean(a.Annotations["summary"])
	if summary != "" {
		b.WriteString(": " + summary)
	}
	if d := strings.TrimSpace(a.Annotations["description"]); d != "" && clean(d) != summary {
		b.WriteString("\n" + d)
	}
	var kv []string
	for _, k := range keyLabels {
		if v := clean(a.Labels[k]); v != "" {
			kv = append(kv, k+"="+v)
		}
	}
	if len(kv) > 0 {
		b.WriteString("\n" + strings.Join(kv, " "))
	}
	if v := clean(a.Value); v != "" {
		b.WriteString("\nValue: " + v)
	}
	if r := clean(a.Annotations["runbook_url"]); r != "" {
		b.WriteString("\nRunbook: " + r)
	}
	return b.String()
}
