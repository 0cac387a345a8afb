package e2e_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/groundcrew/groundcrew/e2e/enricheval"
)

// TestRelevantRunbooksOnly is "make run, then send alerts" offline (issue
// 24), through the gateway and the notifier: with the example runbooks
// and groundcrew's own (in collection groundcrew, as make run indexes
// them), an alert about a system no runbook mentions goes out with
// "Enrichment unavailable: no relevant runbook found"; a disk alert cites
// the disk runbook and no groundcrew operational runbook; groundcrew's own
// alert cites groundcrew's runbook.
func TestRelevantRunbooksOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole stack")
	}
	docs := runbookCorpusJSON(t)
	s := startStack(t, map[string]string{"NOTIFIER_POLL_INTERVAL": "50ms"}, "")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if _, err := call(ctx, "POST", s.GatewayURL+"/v1/search/documents", map[string]any{"documents": docs}, nil); err != nil {
		t.Fatalf("indexing the runbooks: %v", err)
	}
	const groundcrewDocs = "github.com/groundcrew/groundcrew/blob/main/docs/runbooks/"
	tests := []struct {
		text   string
		cites  string // a URL the message must link; "" for none
		reason string // the note when nothing is cited
	}{
		{text: "MongoDB replica set rs0: member mongo-2 has been in RECOVERING state for 10 minutes", reason: "no relevant runbook found"},
		{text: "Disk almost full on db-1: / at 96% used", cites: "runbooks.groundcrew.example/node-disk-full"},
		{text: "[FIRING] GroundcrewServiceDown (critical): groundcrew grounding is down\nPrometheus has not scraped grounding for 5 minutes.\njob=grounding service=groundcrew",
			cites: groundcrewDocs + "groundcrew-service-down.md"},
	}
	for _, tt := range tests {
		var created struct{ Alert alertView }
		if _, err := call(ctx, "POST", s.GatewayURL+"/v1/alerts", map[string]any{"text": tt.text}, &created); err != nil {
			t.Fatal(err)
		}
		var got struct {
			Alert struct {
				alertView
				EnrichmentError string `json:"enrichmentError"`
			}
		}
		eventually(t, 45*time.Second, "the alert to be DELIVERED", func() bool {
			_, err := call(ctx, "GET", s.GatewayURL+"/v1/alerts/"+created.Alert.ID, nil, &got)
			return err == nil && (got.Alert.Status == "DELIVERED" || got.Alert.Status == "FAILED")
		})
		// The message is MarkdownV2; its escapes removed, as Telegram shows it.
		text := strings.ReplaceAll(got.Alert.Message.Text, `\`, "")
		if tt.cites == "" {
			if strings.Contains(text, "Enriched Context") || !strings.Contains(text, "_Enrichment unavailable: "+tt.reason+"_") || got.Alert.EnrichmentError != tt.reason {
				t.Errorf("%q: want the note %q and no sources, got enrichmentError %q and\n%s", tt.text, tt.reason, got.Alert.EnrichmentError, text)
			}
			continue
		}
		if !strings.Contains(text, "Sources:") || !strings.Contains(text, tt.cites) {
			t.Errorf("%q: want a source %s, got enrichmentError %q and\n%s", tt.text, tt.cites, got.Alert.EnrichmentError, text)
		}
		if !strings.HasPrefix(tt.cites, groundcrewDocs) && strings.Contains(text, groundcrewDocs) {
			t.Errorf("%q cites a groundcrew operational runbook:\n%s", tt.text, text)
		}
	}
}

// runbookCorpusJSON is the team's example runbooks and groundcrew's own
// (in collection "groundcrew"), as make run indexes them, and the runbooks
// of the directories more names (relative to the repository's root), each
// document in the JSON an IndexDocuments request carries.
func runbookCorpusJSON(t *testing.T, more ...string) []json.RawMessage {
	t.Helper()
	root := enricheval.Root()
	dirs := []string{filepath.Join(root, "examples", "runbooks")}
	for _, d := range more {
		dirs = append(dirs, filepath.Join(root, d))
	}
	corpus, err := enricheval.LoadCorpus(dirs, filepath.Join(root, "docs", "runbooks"))
	if err != nil {
		t.Fatal(err)
	}
	var docs []json.RawMessage
	for _, d := range corpus.Docs {
		b, err := protojson.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, b)
	}
	return docs
}
