package pipeline

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/format"
)

// linkedEnricher records the evidence URLs it is given.
type linkedEnricher struct {
	mu   sync.Mutex
	urls [][]string
}

func (e *linkedEnricher) Enrich(ctx context.Context, text string) (Enrichment, error) {
	return e.EnrichLinked(ctx, text, nil)
}

func (e *linkedEnricher) EnrichLinked(ctx context.Context, text string, urls []string) (Enrichment, error) {
	e.mu.Lock()
	e.urls = append(e.urls, urls)
	e.mu.Unlock()
	return okEnrichment(ctx, text)
}

// TestAlertLinksShownAndGrounded: a generic alert's runbook_url is shown
// as a link under its text and goes to the enricher as the evidence to
// start from, before its dashboard.
func TestAlertLinksShownAndGrounded(t *testing.T) {
	e, d := &linkedEnricher{}, &fakeDeliverer{}
	p := newPipeline(t, e, d, Config{})
	a, err := alert.Generic("Disk almost full on db-1", map[string]any{
		"dashboard_url": "https://grafana.example.com/d/disk", "runbook_url": "https://runbooks.example.com/disk_(full)",
	})
	if err != nil {
		t.Fatal(err)
	}
	in := ingest(t, p, a)
	got := waitStatus(t, p, in[0].ID, alert.StatusDelivered)
	want := "Disk almost full on db-1\n" + format.LinksPrefix +
		"Runbook: https://runbooks.example.com/disk_(full) · Dashboard: https://grafana.example.com/d/disk\n\n" + format.Header
	if !strings.HasPrefix(got.Message.Plain, want) {
		t.Errorf("message = %q, want it to start with %q", got.Message.Plain, want)
	}
	if !strings.Contains(got.Message.Text, `[https://runbooks\.example\.com/disk\_\(full\)](https://runbooks.example.com/disk_(full\))`) {
		t.Errorf("runbook is not a link entity in %q", got.Message.Text)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if diff := cmp.Diff([][]string{{"https://runbooks.example.com/disk_(full)", "https://grafana.example.com/d/disk"}}, e.urls); diff != "" {
		t.Errorf("evidence URLs given to the enricher (-want +got):\n%s", diff)
	}
}

// TestGroupRootShowsRunbook is issue 24's check: an Alertmanager group
// whose alerts carry the team's runbook_url shows that link, and each
// alert's generatorURL, in its root message.
func TestGroupRootShowsRunbook(t *testing.T) {
	d := &fakeGroups{}
	p := newGroupPipeline(t, &linkedEnricher{}, d, nil)
	gp, as := crashPayload(t, `{}:{alertname="KubePodCrashLooping"}`, 3, alert.Firing)
	for i := range as {
		as[i].Metadata["annotations"].(map[string]any)["runbook_url"] = "https://runbooks.example.com/crashloop"
		as[i].Metadata["generatorURL"] = "http://prometheus.example.com/graph?g0.expr=kube_pod_crash"
	}
	stored, err := p.IngestGroup(context.Background(), gp, as)
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, p, stored[0].ID, alert.StatusDelivered)
	sends, _ := d.snapshot()
	if len(sends) != 1 {
		t.Fatalf("%d messages sent, want the root", len(sends))
	}
	want := format.LinksPrefix + "Runbook: https://runbooks.example.com/crashloop · Source: http://prometheus.example.com/graph?g0.expr=kube_pod_crash"
	if !strings.Contains(sends[0].plain, want+"\n\n"+format.Header) {
		t.Errorf("root lacks the links line %q before the enrichment:\n%s", want, sends[0].plain)
	}
}

// TestEnrichmentDroppedForLengthIsRecorded: an alert whose first line
// leaves no room for its enrichment is delivered with the note, and its
// enrichmentError says why.
func TestEnrichmentDroppedForLengthIsRecorded(t *testing.T) {
	p := newPipeline(t, &fakeEnricher{fn: okEnrichment}, &fakeDeliverer{}, Config{})
	in := ingest(t, p, generic(t, strings.Repeat("x", alert.MaxTextLen)))
	got := waitStatus(t, p, in[0].ID, alert.StatusDelivered)
	if got.EnrichmentError != format.ReasonTooLong || !strings.Contains(got.Message.Plain, format.FailedNote) {
		t.Errorf("enrichmentError %q, message ends %q; want %q and the note", got.EnrichmentError, got.Message.Plain[len(got.Message.Plain)-60:], format.ReasonTooLong)
	}
}

// TestGroupEnrichmentDroppedForLengthIsRecorded: a group root whose alert
// leaves no room for the enrichment records why on the alerts it delivers.
func TestGroupEnrichmentDroppedForLengthIsRecorded(t *testing.T) {
	d := &fakeGroups{}
	p := newGroupPipeline(t, &fakeEnricher{fn: okEnrichment}, d, nil)
	gp, as := crashPayload(t, `{}:{alertname="KubePodCrashLooping"}`, 1, alert.Firing)
	as[0].Text = strings.Repeat("x", alert.MaxTextLen)
	stored, err := p.IngestGroup(context.Background(), gp, as)
	if err != nil {
		t.Fatal(err)
	}
	got := waitStatus(t, p, stored[0].ID, alert.StatusDelivered)
	if got.EnrichmentError != format.ReasonTooLong {
		t.Errorf("enrichmentError = %q, want %q", got.EnrichmentError, format.ReasonTooLong)
	}
}
