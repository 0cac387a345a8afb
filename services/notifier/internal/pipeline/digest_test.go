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
	"github.com/groundcrew/groundcrew/services/notifier/internal/format"
	"github.com/groundcrew/groundcrew/services/notifier/internal/markdownv2"
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
	for _, want := range []string{"[DIGEST] 11 alerts during a storm", "HighCPU (critical): 11", "HighCPU on web-1\n", "HighCPU on web-11"} {
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

func TestDigestPages(t *testing.T) {
	var as []*alert.Alert
	for i := range 3 {
		as = append(as, &alert.Alert{Text: fmt.Sprintf("[FIRING] DiskFull (warning): disk %d\nmore", i), Labels: map[string]string{"alertname": "DiskFull", "severity": "warning"}})
	}
	as = append(as, &alert.Alert{Text: "plain", AlertStatus: alert.Resolved, Labels: map[string]string{}})
	as[0].Metadata = map[string]any{"annotations": map[string]any{"runbook_url": "https://runbooks.example.com/disk"}, "generatorURL": "http://prom:9090/graph?g0.expr=disk"}
	as[1].Metadata = map[string]any{"annotations": map[string]any{"runbook_url": "https://runbooks.example.com/disk"}, "generatorURL": "javascript:alert(1)"}
	want := "[DIGEST] 4 alerts during a storm\nDiskFull (warning): 3\nalert: 1\n\n🔥 [FIRING] DiskFull (warning): disk 0\n🔥 [FIRING] DiskFull (warning): disk 1\n🔥 [FIRING] DiskFull (warning): disk 2\n✅ plain" +
		"\nLinks:\n- https://runbooks.example.com/disk\n- http://prom:9090/graph?g0.expr=disk"
	pages := DigestPages(as, 0)
	if len(pages) != 1 || pages[0].Text != want || len(pages[0].Alerts) != 4 {
		t.Errorf("DigestPages = %+v, want one page of 4 alerts:\n%s", pages, want)
	}
}

// TestDigestPagesListEveryAlert is issue 24's storm: 300 alerts with long
// lines are listed, every one of them once and in order, over several
// messages that each fit Telegram's limit after entity parsing, with no
// cut.
func TestDigestPagesListEveryAlert(t *testing.T) {
	var as []*alert.Alert
	for i := range 300 {
		as = append(as, &alert.Alert{
			ID:     fmt.Sprint(i),
			Text:   fmt.Sprintf("[FIRING] HighLatency (critical): p99 %d ms on checkout-%03d — ", 900+i, i) + strings.Repeat("détail_* ", 30) + "\nsecond line",
			Labels: map[string]string{"alertname": "HighLatency", "severity": "critical"},
		})
	}
	pages := DigestPages(as, 0)
	if len(pages) < 3 {
		t.Fatalf("%d pages for 300 long lines, want several", len(pages))
	}
	next := 0
	for i, pg := range pages {
		res := format.Format(pg.Text, nil, format.Options{})
		if len(res.Cuts) > 0 {
			t.Errorf("page %d cut: %v", i+1, res.Cuts)
		}
		plain, _, err := markdownv2.Parse(res.Message.Text)
		if err != nil {
			t.Fatalf("page %d: %v", i+1, err)
		}
		if n := markdownv2.UTF16Len(plain); n > format.DefaultLimit {
			t.Errorf("page %d is %d UTF-16 units", i+1, n)
		}
		if i > 0 && !strings.HasPrefix(plain, fmt.Sprintf("[DIGEST] continued: alerts %d–", next+1)) {
			t.Errorf("page %d opens %q", i+1, plain[:60])
		}
		for _, a := range pg.Alerts {
			if a.ID != fmt.Sprint(next) {
				t.Fatalf("page %d lists alert %s, want %d", i+1, a.ID, next)
			}
			if !strings.Contains(plain, fmt.Sprintf("checkout-%03d", next)) {
				t.Errorf("page %d lacks the line of alert %d", i+1, next)
			}
			next++
		}
	}
	if next != len(as) {
		t.Errorf("pages list %d alerts, want %d", next, len(as))
	}
}

// pagedGroups is gatedGroups that refuses, for good, the digest's second
// message.
type pagedGroups struct {
	gatedGroups
	digestPages int
}

func (g *pagedGroups) Deliver(ctx context.Context, a *alert.Alert) (Receipt, error) {
	if a.Source == "digest" {
		g.mu.Lock()
		g.digestPages++
		n := g.digestPages
		g.mu.Unlock()
		if n == 2 {
			return Receipt{}, &deliveryError{msg: "chat not found", permanent: true}
		}
	}
	return g.gatedGroups.Deliver(ctx, a)
}

// TestStormDigestDeliveredLineByLine: a digest too long for one message
// goes out as several; an alert is DELIVERED only once the message with
// its line went out, and the alerts of a message that failed are FAILED.
func TestStormDigestDeliveredLineByLine(t *testing.T) {
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, sqlstoretest.URL(t, "pipeline"), t.TempDir(), "notifier", discard())
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	d := &pagedGroups{gatedGroups: gatedGroups{started: make(chan struct{}), release: make(chan struct{})}}
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
	for i := range 60 {
		text := fmt.Sprintf("HighLatency on checkout-%03d: ", i) + strings.Repeat("p99 over budget ", 12)
		a, err := alert.Generic(text, map[string]any{"alertname": "HighLatency", "n": float64(i)})
		if err != nil {
			t.Fatal(err)
		}
		storm = append(storm, a)
	}
	stored := ingest(t, p, storm...)
	close(d.release)
	waitStatus(t, p, first[0].ID, alert.StatusDelivered)

	delivered, failed := map[string]bool{}, 0
	for _, a := range stored {
		got := waitStatus(t, p, a.ID, alert.StatusDelivered, alert.StatusFailed)
		if got.Status == alert.StatusFailed {
			failed++
			continue
		}
		if got.DigestID == "" {
			continue // claimed by its own job before the storm was seen
		}
		delivered[got.DeliveryIDs[0]] = true
		if !strings.Contains(got.Message.Plain, got.Text[:len("HighLatency on checkout-000")]) {
			t.Errorf("alert %q DELIVERED with a message that lacks its line", got.Text[:30])
		}
	}
	if len(delivered) != 1 || failed == 0 {
		t.Errorf("digest alerts: delivered by %d messages, %d FAILED; want one message sent and the second page's alerts FAILED", len(delivered), failed)
	}
}
