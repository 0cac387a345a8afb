package pipeline

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
)

// gatedGroups holds the first delivery until release is closed, so that a
// backlog builds up behind it.
type gatedGroups struct {
	fakeGroups
	started chan struct{}
	release chan struct{}
}

func (g *gatedGroups) Deliver(ctx context.Context, a *alert.Alert) (Receipt, error) {
	g.mu.Lock()
	first := len(g.sent) == 0
	g.mu.Unlock()
	if first {
		close(g.started)
		select {
		case <-g.release:
		case <-ctx.Done():
			return Receipt{}, ctx.Err()
		}
	}
	return g.fakeGroups.Deliver(ctx, a)
}

func TestStormDigest(t *testing.T) {
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, sqlstoretest.URL(t, "pipeline"), t.TempDir(), "notifier", discard())
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	d := &gatedGroups{started: make(chan struct{}), release: make(chan struct{})}
	p, err := New(ctx, Deps{Store: store.New(db), Deliverer: d, Logger: discard()},
		Config{RetryPolicy: fastRetry{}, PollInterval: 20 * time.Millisecond, Workers: 1, DigestThreshold: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = p.Stop(sctx)
		_ = db.Close()
	})

	first := ingest(t, p, generic(t, "first alert"))
	select {
	case <-d.started:
	case <-time.After(15 * time.Second):
		t.Fatal("the first delivery never started")
	}
	var storm []alert.Alert
	for i := range 12 {
		a, err := alert.Generic(fmt.Sprintf("HighCPU on web-%d", i), map[string]any{"alertname": "HighCPU", "severity": "critical", "n": float64(i)})
		if err != nil {
			t.Fatal(err)
		}
		storm = append(storm, a)
	}
	stored := ingest(t, p, storm...)
	close(d.release)

	waitStatus(t, p, first[0].ID, alert.StatusDelivered)
	byDelivery := map[string]int{}
	for _, a := range stored {
		got := waitStatus(t, p, a.ID, alert.StatusDelivered)
		if len(got.DeliveryIDs) != 1 {
			t.Fatalf("alert %s: delivery ids %v, want one", a.ID, got.DeliveryIDs)
		}
		byDelivery[got.DeliveryIDs[0]]++
	}
	// The storm's first alert is claimed by its own job (which then finds
	// the backlog of 11 > 5 and collapses it); the other 11 share a digest.
	if d.count() != 3 {
		t.Errorf("%d messages sent for 13 alerts, want 3 (first, one alert, one digest): %v", d.count(), byDelivery)
	}
	var digest *alert.Alert
	d.mu.Lock()
	for _, s := range d.sent {
		if s.Source == "digest" {
			digest = s
		}
	}
	d.mu.Unlock()
	if digest == nil {
		t.Fatal("no digest sent")
	}
	text := plainOf(t, digest.Message)
	for _, want := range []string{"[DIGEST] 11 alerts during a storm", "HighCPU (critical): 11", "… and 1 more"} {
		if !strings.Contains(text, want) {
			t.Errorf("digest lacks %q:\n%s", want, text)
		}
	}
	counts := []int{}
	for _, n := range byDelivery {
		counts = append(counts, n)
	}
	if len(byDelivery) != 2 || !(counts[0] == 11 && counts[1] == 1 || counts[0] == 1 && counts[1] == 11) {
		t.Errorf("alerts by delivery id = %v, want 11 on the digest and 1 alone", byDelivery)
	}
}

func TestDigestText(t *testing.T) {
	var as []*alert.Alert
	for i := range 3 {
		as = append(as, &alert.Alert{Text: fmt.Sprintf("[FIRING] DiskFull (warning): disk %d\nmore", i), Labels: map[string]string{"alertname": "DiskFull", "severity": "warning"}})
	}
	as = append(as, &alert.Alert{Text: "plain", AlertStatus: alert.Resolved, Labels: map[string]string{}})
	as[0].Metadata = map[string]any{"annotations": map[string]any{"runbook_url": "https://runbooks.example.com/disk"}, "generatorURL": "http://prom:9090/graph?g0.expr=disk"}
	as[1].Metadata = map[string]any{"annotations": map[string]any{"runbook_url": "https://runbooks.example.com/disk"}, "generatorURL": "javascript:alert(1)"}
	want := "[DIGEST] 4 alerts during a storm\nDiskFull (warning): 3\nalert: 1\n\n🔥 [FIRING] DiskFull (warning): disk 0\n🔥 [FIRING] DiskFull (warning): disk 1\n🔥 [FIRING] DiskFull (warning): disk 2\n✅ plain" +
		"\nLinks:\n- https://runbooks.example.com/disk\n- http://prom:9090/graph?g0.expr=disk"
	if got := DigestText(as); got != want {
		t.Errorf("DigestText =\n%s\nwant\n%s", got, want)
	}
}
