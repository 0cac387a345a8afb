package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/platform/waitfor"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alertmanager"
	"github.com/groundcrew/groundcrew/services/notifier/internal/markdownv2"
	"github.com/groundcrew/groundcrew/services/notifier/internal/outbound"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
)

// groupSend is one message the fake group transport sent or edited.
type groupSend struct {
	id, replyTo, plain string
	buttons            []outbound.Button
}

// fakeGroups is a Deliverer and GroupTransport that records what it sends.
type fakeGroups struct {
	fakeDeliverer
	gmu   sync.Mutex
	sends []groupSend
	edits []groupSend
	// failFirst fails the first group send with it, when set.
	failFirst error
}

func (f *fakeGroups) Chat(map[string]string) string { return "-100123" }

func (f *fakeGroups) SendGroupMessage(_ context.Context, chat string, m alert.Message, replyTo string, bs []outbound.Button) (string, error) {
	f.gmu.Lock()
	defer f.gmu.Unlock()
	if err := f.failFirst; err != nil {
		f.failFirst = nil
		return "", err
	}
	id := fmt.Sprint(1000 + len(f.sends))
	f.sends = append(f.sends, groupSend{id: id, replyTo: replyTo, plain: mustParse(m), buttons: bs})
	return id, nil
}

func (f *fakeGroups) EditGroupMessage(_ context.Context, chat, id string, m alert.Message, bs []outbound.Button) error {
	f.gmu.Lock()
	defer f.gmu.Unlock()
	f.edits = append(f.edits, groupSend{id: id, plain: mustParse(m), buttons: bs})
	return nil
}

func (f *fakeGroups) snapshot() (sends, edits []groupSend) {
	f.gmu.Lock()
	defer f.gmu.Unlock()
	return append([]groupSend(nil), f.sends...), append([]groupSend(nil), f.edits...)
}

func mustParse(m alert.Message) string {
	plain, _, err := markdownv2.Parse(m.Text)
	if err != nil {
		return "INVALID MarkdownV2: " + err.Error()
	}
	return plain
}

type fakeSilencer struct {
	mu       sync.Mutex
	created  []alertmanager.Silence
	expired  []string
	createFn func() error
}

func (f *fakeSilencer) CreateSilence(_ context.Context, s alertmanager.Silence) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.createFn != nil {
		if err := f.createFn(); err != nil {
			return "", err
		}
	}
	f.created = append(f.created, s)
	return fmt.Sprintf("sil-%d", len(f.created)), nil
}

func (f *fakeSilencer) ExpireSilence(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.expired = append(f.expired, id)
	return nil
}

func newGroupPipeline(t *testing.T, e Enricher, d Deliverer, s Silencer) *Pipeline {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, sqlstoretest.URL(t, "pipeline"), t.TempDir(), "notifier", discard())
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	deps := Deps{Store: store.New(db), Enricher: e, Deliverer: d, Logger: discard()}
	if s != nil {
		deps.Silencer = s
	}
	p, err := New(ctx, deps, Config{RetryPolicy: fastRetry{}, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.Stop(sctx); err != nil {
			t.Error(err)
		}
		_ = db.Close()
	})
	return p
}

// crashPayload is an Alertmanager payload of n KubePodCrashLooping alerts
// in one group, all with status.
func crashPayload(t testing.TB, key string, n int, status string) (alert.GroupPayload, []alert.Alert) {
	t.Helper()
	p := alert.AlertmanagerPayload{
		Version: "4", GroupKey: key, Status: status, Receiver: "groundcrew",
		GroupLabels:       map[string]string{"alertname": "KubePodCrashLooping"},
		CommonLabels:      map[string]string{"alertname": "KubePodCrashLooping", "severity": "warning", "namespace": "shop"},
		CommonAnnotations: map[string]string{},
		ExternalURL:       "http://alertmanager.example.com:9093",
	}
	for i := range n {
		p.Alerts = append(p.Alerts, alert.AlertmanagerAlert{
			Status:      status,
			Labels:      map[string]string{"alertname": "KubePodCrashLooping", "severity": "warning", "namespace": "shop", "pod": fmt.Sprintf("web-%d", i+1)},
			Annotations: map[string]string{"summary": fmt.Sprintf("Pod shop/web-%d is crash looping", i+1)},
			Fingerprint: fmt.Sprintf("fp%04d", i),
		})
	}
	as, err := alert.FromAlertmanager(p)
	if err != nil {
		t.Fatal(err)
	}
	gp, ok := alert.AlertmanagerGroup(p)
	if !ok {
		t.Fatal("payload has no group")
	}
	return gp, as
}

func TestGroupRootThenThreadedResolution(t *testing.T) {
	e := &fakeEnricher{fn: okEnrichment}
	d := &fakeGroups{}
	p := newGroupPipeline(t, e, d, nil)
	ctx := context.Background()

	gp, firing := crashPayload(t, `{}:{alertname="KubePodCrashLooping"}`, 60, alert.Firing)
	stored, err := p.IngestGroup(ctx, gp, firing)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range stored {
		waitStatus(t, p, a.ID, alert.StatusDelivered)
	}
	sends, _ := d.snapshot()
	if len(sends) != 1 {
		t.Fatalf("%d messages sent for one group of 60, want 1 root", len(sends))
	}
	root := sends[0]
	for _, want := range []string{"[FIRING:60] KubePodCrashLooping (shop warning)", "… and 50 more", "pod=web-1 — Pod shop/web-1 is crash looping", "--- Enriched Context ---", "Alertmanager: http://alertmanager.example.com:9093/#/alerts?"} {
		if !strings.Contains(root.plain, want) {
			t.Errorf("root lacks %q:\n%s", want, root.plain)
		}
	}
	if len(root.buttons) != 1 || root.buttons[0].Text != ButtonAck {
		t.Errorf("root buttons = %v, want only %q without a silencer", root.buttons, ButtonAck)
	}
	if e.count() != 1 {
		t.Errorf("%d grounding calls for one group, want 1", e.count())
	}
	for _, a := range stored {
		got, _ := p.Get(ctx, a.ID)
		if len(got.DeliveryIDs) != 1 || got.DeliveryIDs[0] != root.id || got.GroupID == "" {
			t.Fatalf("alert %s: delivery ids %v, group %q; want [%s] and a group", a.ID, got.DeliveryIDs, got.GroupID, root.id)
		}
	}

	gp, resolved := crashPayload(t, gp.GroupKey, 60, alert.Resolved)
	stored, err = p.IngestGroup(ctx, gp, resolved)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range stored {
		waitStatus(t, p, a.ID, alert.StatusDelivered)
	}
	waitfor.Cond(t, "the root's edit", func() bool { _, edits := d.snapshot(); return len(edits) == 1 })
	sends, edits := d.snapshot()
	if len(sends) != 2 {
		t.Fatalf("%d messages sent, want the root and one reply", len(sends))
	}
	reply := sends[1]
	if reply.replyTo != root.id {
		t.Errorf("reply goes to %q, want the root %q", reply.replyTo, root.id)
	}
	for _, want := range []string{"[RESOLVED] KubePodCrashLooping (shop warning)", "60 resolved", "✅ pod=web-1"} {
		if !strings.Contains(reply.plain, want) {
			t.Errorf("reply lacks %q:\n%s", want, reply.plain)
		}
	}
	if strings.Contains(reply.plain, "Enriched Context") {
		t.Errorf("reply is enriched again:\n%s", reply.plain)
	}
	edit := edits[0]
	if edit.id != root.id || !strings.HasPrefix(edit.plain, "[RESOLVED] KubePodCrashLooping") || len(edit.buttons) != 0 {
		t.Errorf("edit of %s = %q with buttons %v; want the root, [RESOLVED] and no buttons", edit.id, edit.plain, edit.buttons)
	}
	if !strings.Contains(edit.plain, "--- Enriched Context ---") {
		t.Errorf("edited root lost its enrichment:\n%s", edit.plain)
	}
	if e.count() != 1 {
		t.Errorf("%d grounding calls after the resolution, want still 1", e.count())
	}
	page, err := p.ListGroups(ctx, store.GroupListQuery{PageSize: 10})
	groups := page.Items
	if err != nil || len(groups) != 1 {
		t.Fatalf("ListGroups = %d groups, %v; want 1", len(groups), err)
	}
	if g := groups[0]; g.Status != alert.GroupResolved || g.Resolved != 60 || g.Firing != 0 || g.RootMessageID != root.id {
		t.Errorf("group = %+v, want RESOLVED 0/60 with root %s", g, root.id)
	}
}

func TestGroupEnrichmentCache(t *testing.T) {
	e := &fakeEnricher{fn: okEnrichment}
	d := &fakeGroups{}
	p := newGroupPipeline(t, e, d, nil)
	ctx := context.Background()
	for _, key := range []string{"k1", "k2", "k3"} {
		gp, as := crashPayload(t, key, 3, alert.Firing)
		for i := range as {
			as[i].Fingerprint += key // not repeats of the other groups
		}
		stored, err := p.IngestGroup(ctx, gp, as)
		if err != nil {
			t.Fatal(err)
		}
		waitStatus(t, p, stored[0].ID, alert.StatusDelivered)
	}
	if e.count() != 1 {
		t.Errorf("%d grounding calls for three groups with the same alertname and labels, want 1", e.count())
	}
	var m dto.Metric
	if err := p.metrics.enrichCacheHits.Write(&m); err != nil {
		t.Fatal(err)
	}
	if got := m.GetCounter().GetValue(); got != 2 {
		t.Errorf("cache hits = %v, want 2", got)
	}
	page, _ := p.ListGroups(ctx, store.GroupListQuery{PageSize: 10})
	for _, g := range page.Items {
		if g.GroundingMessageID != "g-1" {
			t.Errorf("group %s grounding message %q, want the cached g-1", g.GroupKey, g.GroundingMessageID)
		}
	}
	sends, _ := d.snapshot()
	for _, s := range sends {
		if !strings.Contains(s.plain, "Payments upstream is failing") {
			t.Errorf("a root lacks the cached enrichment:\n%s", s.plain)
		}
	}
}

func TestGroupActions(t *testing.T) {
	sil := &fakeSilencer{}
	d := &fakeGroups{}
	p := newGroupPipeline(t, &fakeEnricher{fn: okEnrichment}, d, sil)
	ctx := context.Background()
	gp, as := crashPayload(t, "k", 2, alert.Firing)
	stored, err := p.IngestGroup(ctx, gp, as)
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, p, stored[0].ID, alert.StatusDelivered)
	sends, _ := d.snapshot()
	var labels []string
	for _, b := range sends[0].buttons {
		labels = append(labels, b.Text)
		if len(b.CallbackData) > 64 {
			t.Errorf("callback data %q over 64 bytes", b.CallbackData)
		}
	}
	if want := []string{ButtonSilence1h, ButtonSilence1d, ButtonAck}; strings.Join(labels, "|") != strings.Join(want, "|") {
		t.Errorf("root buttons = %q, want %q", labels, want)
	}
	gid := stored[0].GroupID

	// Alertmanager down: nothing recorded, the error says so.
	sil.createFn = func() error { return &alertmanager.Error{} }
	if _, err := p.Silence(ctx, gid, "@ann", "", time.Hour); err == nil {
		t.Fatal("Silence succeeded with Alertmanager failing")
	}
	if g, _, _ := p.GetGroup(ctx, gid); g.Silence != nil {
		t.Fatalf("silence recorded although Alertmanager failed: %+v", g.Silence)
	}
	sil.createFn = nil

	for range 2 { // pressing twice creates one silence
		g, err := p.Silence(ctx, gid, "@ann", "Ann", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if g.Silence == nil || g.Silence.Actor != "@ann" || g.Silence.ID != "sil-1" {
			t.Fatalf("silence = %+v, want sil-1 by @ann", g.Silence)
		}
	}
	if len(sil.created) != 1 {
		t.Fatalf("%d silences created, want 1", len(sil.created))
	}
	s := sil.created[0]
	if s.CreatedBy != "@ann" || len(s.Matchers) != 3 || s.Matchers[0] != (alertmanager.Matcher{Name: "alertname", Value: "KubePodCrashLooping", IsEqual: true}) ||
		!strings.Contains(s.Comment, "Telegram") || !strings.Contains(s.Comment, gid) || s.EndsAt.Sub(s.StartsAt) != time.Hour {
		t.Errorf("silence sent = %+v", s)
	}
	waitfor.Cond(t, "the edit showing the silence", func() bool {
		_, edits := d.snapshot()
		return len(edits) > 0 && strings.Contains(edits[len(edits)-1].plain, "🔕 silenced by @ann until ")
	})
	_, edits := d.snapshot()
	if last := edits[len(edits)-1]; len(last.buttons) != 2 || last.buttons[0].Text != ButtonExpire {
		t.Errorf("buttons after silencing = %v, want Expire silence and Ack", last.buttons)
	}

	for range 2 {
		g, err := p.Ack(ctx, gid, "@bob", "")
		if err != nil {
			t.Fatal(err)
		}
		if g.Ack == nil || g.Ack.Actor != "@bob" {
			t.Fatalf("ack = %+v, want @bob", g.Ack)
		}
	}
	if g, _ := p.Ack(ctx, gid, "@carol", ""); g.Ack.Actor != "@bob" {
		t.Errorf("a second ack replaced the first: %+v", g.Ack)
	}
	waitfor.Cond(t, "the edit showing the ack", func() bool {
		_, edits := d.snapshot()
		return len(edits) > 0 && strings.Contains(edits[len(edits)-1].plain, "👀 acked by @bob")
	})

	if _, err := p.ExpireSilence(ctx, gid, "@ann"); err != nil {
		t.Fatal(err)
	}
	if len(sil.expired) != 1 || sil.expired[0] != "sil-1" {
		t.Errorf("expired %v, want [sil-1]", sil.expired)
	}
	if _, err := p.ExpireSilence(ctx, gid, "@ann"); !errors.Is(err, ErrNoSilence) {
		t.Errorf("second expire error = %v, want ErrNoSilence", err)
	}
}

func TestGroupRootFailedNextNotificationTakesOver(t *testing.T) {
	d := &fakeGroups{failFirst: &deliveryError{msg: "chat not found", permanent: true}}
	p := newGroupPipeline(t, &fakeEnricher{fn: okEnrichment}, d, nil)
	ctx := context.Background()
	gp, as := crashPayload(t, "k", 4, alert.Firing)
	stored, err := p.IngestGroup(ctx, gp, as[:2])
	if err != nil {
		t.Fatal(err)
	}
	failed := waitStatus(t, p, stored[0].ID, alert.StatusFailed)
	if failed.Error != "chat not found" {
		t.Errorf("failed alert error = %q, want the public error", failed.Error)
	}
	stored, err = p.IngestGroup(ctx, gp, as[2:])
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, p, stored[0].ID, alert.StatusDelivered)
	sends, _ := d.snapshot()
	if len(sends) != 1 || sends[0].replyTo != "" || !strings.HasPrefix(sends[0].plain, "[FIRING:2]") {
		t.Fatalf("sends = %+v, want the second notification sent as the new root", sends)
	}
	g, _, _ := p.GetGroup(ctx, stored[0].GroupID)
	if g.RootMessageID != sends[0].id {
		t.Errorf("group root = %q, want %q", g.RootMessageID, sends[0].id)
	}
}
