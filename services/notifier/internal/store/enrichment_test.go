package store

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
)

// TestEnrichmentEncoding holds the stored shape of a group's enrichment:
// rows written before alert.Enrichment was the one type (the pipeline's
// struct embedding the formatter's) read back whole, what is written reads
// back equal, and a row that cannot be read is an error, not "no
// enrichment".
func TestEnrichmentEncoding(t *testing.T) {
	const legacy = `{"Summary":"Disk full.","Confidence":0.8,"Citations":[{"Title":"Runbook","Snippet":"Free space.","URL":"https://runbooks.example.com/disk"}],"MessageID":"gm-1","Unavailable":""}`
	conf := 0.8
	want := &alert.Enrichment{Summary: "Disk full.", Confidence: &conf, MessageID: "gm-1",
		Citations: []alert.Citation{{Title: "Runbook", Snippet: "Free space.", URL: "https://runbooks.example.com/disk"}}}
	got, err := decodeEnrichment(legacy)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("legacy row (-want +got):\n%s", diff)
	}
	raw, err := encodeEnrichment(want)
	if err != nil {
		t.Fatal(err)
	}
	if raw != legacy {
		t.Errorf("encoded %s, want the stored shape %s", raw, legacy)
	}
	if e, err := decodeEnrichment(""); e != nil || err != nil {
		t.Errorf(`decode "" = %v, %v; want none`, e, err)
	}
	if raw, err := encodeEnrichment(nil); raw != "" || err != nil {
		t.Errorf("encode nil = %q, %v; want empty", raw, err)
	}
	if _, err := decodeEnrichment(`{"Summary":`); err == nil {
		t.Error("a truncated row decoded without error")
	}
}
