package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"
	"go.uber.org/goleak"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/format"
	"github.com/groundcrew/groundcrew/services/notifier/internal/markdownv2"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fastRetry retries failed jobs at once, so tests do not wait for River's
// backoff.
type fastRetry struct{}

func (fastRetry) NextRetry(*rivertype.JobRow) time.Time { return time.Now() }

type fakeEnricher struct {
	mu    sync.Mutex
	calls []string
	fn    func(ctx context.Context, text string) (Enrichment, error)
}

func (f *fakeEnricher) Enrich(ctx context.Context, text string) (Enrichment, error) {
	f.mu.Lock()
	f.calls = append(f.calls, text)
	f.mu.Unlock()
	return f.fn(ctx, text)
}

func (f *fakeEnricher) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func okEnrichment(context.Context, string) (Enrichment, error) {
	return Enrichment{
		MessageID: "g-1",
		Summary:   "Payments upstream is failing (see runbook).",
		Citations: []format.Citation{{Title: "Checkout runbook", URL: "https://runbooks.example.com/checkout"}},
	}, nil
}

type fakeDeliverer struct {
	mu   sync.Mutex
	sent []*alert.Alert
	errs []error // returned by the first calls, in order
}

func (f *fakeDeliverer) Deliver(_ context.Context, a *alert.Alert) (Receipt, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cp := *a
	f.sent = append(f.sent, &cp)
	if n := len(f.sent); n <= len(f.errs) && f.errs[n-1] != nil {
		return Receipt{}, f.errs[n-1]
	}
	return Receipt{Destination: "-100123", MessageIDs: []string{fmt.Sprint(len(f.sent))}}, nil
}

func (f *fakeDeliverer) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.sent)
}

type deliveryError struct {
	msg       string
	permanent bool
	wait      time.Duration
}

func (e *deliveryError) Error() string             { return "internal detail: " + e.msg }
func (e *deliveryError) Public() string            { return e.msg }
func (e *deliveryError) Permanent() bool           { return e.permanent }
func (e *deliveryError) Code() string              { return "400" }
func (e *deliveryError) RetryAfterOrZero() float64 { return e.wait.Seconds() }

type rateLimited struct{ deliveryError }

func (e *rateLimited) RetryAfter() time.Duration { return e.wait }

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newPipeline(t *testing.T, e Enricher, d Deliverer, cfg Config) *Pipeline {
	t.Helper()
	return newLoggedPipeline(t, e, d, cfg, discard())
}

func newLoggedPipeline(t *testing.T, e Enricher, d Deliverer, cfg Config, logger *slog.Logger) *Pipeline {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, sqlstoretest.URL(t, "pipeline"), t.TempDir(), "notifier", discard())
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	if cfg.RetryPolicy == nil {
		cfg.RetryPolicy = fastRetry{}
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = 20 * time.Millisecond
	}
	p, err := New(ctx, Deps{Store: store.New(db), Enricher: e, Deliverer: d, Logger: logger}, cfg)
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

// waitStatus polls until the alert reaches one of the statuses, or fails
// the test at the deadline.
func waitStatus(t *testing.T, p *Pipeline, id string, want ...alert.Status) *alert.Alert {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		a, err := p.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range want {
			if a.Status == s {
				return a
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("alert %s is %s (error %q), want %v", id, a.Status, a.Error, want)
		}
		<-tick.C
	}
}

func ingest(t *testing.T, p *Pipeline, as ...alert.Alert) []*alert.Alert {
	t.Helper()
	got, err := p.Ingest(context.Background(), as)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func generic(t *testing.T, text string) alert.Alert {
	t.Helper()
	a, err := alert.Generic(text, map[string]any{"severity": "critical"})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func plainOf(t *testing.T, m *alert.Message) string {
	t.Helper()
	plain, _, err := markdownv2.Parse(m.Text)
	if err != nil {
		t.Fatalf("message is not valid MarkdownV2: %v\n%s", err, m.Text)
	}
	if plain != m.Plain {
		t.Errorf("stored plain text %q differs from the parsed message %q", m.Plain, plain)
	}
	return plain
}

func TestEnrichedDelivery(t *testing.T) {
	e := &fakeEnricher{fn: okEnrichment}
	d := &fakeDeliverer{}
	p := newPipeline(t, e, d, Config{})
	in := ingest(t, p, generic(t, "High error rate on checkout-api: 5xx > 10% for 5m"))
	if in[0].Status != alert.StatusReceived || in[0].ID == "" {
		t.Fatalf("ingested %+v", in[0])
	}
	a := waitStatus(t, p, in[0].ID, alert.StatusDelivered)
	want := "High error rate on checkout-api: 5xx > 10% for 5m\n\n--- Enriched Context ---\n" +
		"Summary: Payments upstream is failing (see runbook).\nSources:\n- Checkout runbook — https://runbooks.example.com/checkout"
	if got := plainOf(t, a.Message); got != want {
		t.Errorf("delivered text\n%q\nwant\n%q", got, want)
	}
	if a.GroundingMessageID != "g-1" || a.Destination != "-100123" || len(a.DeliveryIDs) != 1 || a.Attempts != 1 || a.DeliveredAt.IsZero() {
		t.Errorf("alert after delivery: %+v", a)
	}
}

func TestEnrichmentFailureStillDelivers(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		fn      func(ctx context.Context, text string) (Enrichment, error)
		reason  string
	}{
		{
			name: "error",
			fn: func(context.Context, string) (Enrichment, error) {
				return Enrichment{}, errors.New("dial tcp: secret detail")
			},
			reason: "grounding failed",
		},
		{
			name:    "timeout",
			timeout: 50 * time.Millisecond,
			fn: func(ctx context.Context, _ string) (Enrichment, error) {
				<-ctx.Done()
				return Enrichment{}, ctx.Err()
			},
			reason: "search timed out",
		},
		{
			name: "enricher's own words",
			fn: func(context.Context, string) (Enrichment, error) {
				return Enrichment{}, &publicErr{public: "model unavailable"}
			},
			reason: "model unavailable",
		},
		{
			name: "uncited summary",
			fn: func(context.Context, string) (Enrichment, error) {
				return Enrichment{MessageID: "g-2", Summary: "Looks like a full disk."}, nil
			},
			reason: "no sources found",
		},
		{
			name: "no usable source",
			fn: func(context.Context, string) (Enrichment, error) {
				return Enrichment{MessageID: "g-3",
					Summary: "Looks like a full disk.", Citations: []format.Citation{{Title: "x", URL: "file:///etc/passwd"}},
				}, nil
			},
			reason: "no sources found",
		},
		{
			name: "search down, as the enricher says",
			fn: func(context.Context, string) (Enrichment, error) {
				return Enrichment{MessageID: "g-4", Unavailable: "search unavailable", Summary: "Looks like a full disk."}, nil
			},
			reason: "search unavailable",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPipeline(t, &fakeEnricher{fn: tt.fn}, &fakeDeliverer{}, Config{EnrichTimeout: tt.timeout})
			in := ingest(t, p, generic(t, "disk full on db-1"))
			a := waitStatus(t, p, in[0].ID, alert.StatusDelivered)
			if want := "disk full on db-1\n\nEnrichment unavailable: " + tt.reason; plainOf(t, a.Message) != want {
				t.Errorf("delivered %q, want %q", a.Message.Plain, want)
			}
			if a.EnrichmentError != tt.reason {
				t.Errorf("enrichment error %q, want %q", a.EnrichmentError, tt.reason)
			}
		})
	}
}

type publicErr struct{ public string }

func (e *publicErr) Error() string  { return "rpc error: code = Unavailable desc = secret detail" }
func (e *publicErr) Public() string { return e.public }

// TestMaxSources: the configured limit bounds the sources shown, and a
// message within it logs no cut.
func TestMaxSources(t *testing.T) {
	var citations []format.Citation
	for i := range 5 {
		citations = append(citations, format.Citation{Title: fmt.Sprintf("Source %d", i+1), URL: fmt.Sprintf("https://s%d.example.com/", i+1)})
	}
	five := func(context.Context, string) (Enrichment, error) {
		return Enrichment{MessageID: "g-5", Summary: "Five sources agree.", Citations: citations}, nil
	}
	tests := []struct {
		name      string
		max       int
		wantShown int
	}{
		{"five configured", 5, 5},
		{"default", 0, format.DefaultMaxSources},
		{"two configured", 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &strings.Builder{}
			var mu sync.Mutex
			logger := slog.New(slog.NewTextHandler(writerFunc(func(b []byte) (int, error) {
				mu.Lock()
				defer mu.Unlock()
				return logs.Write(b)
			}), nil))
			p := newLoggedPipeline(t, &fakeEnricher{fn: five}, &fakeDeliverer{}, Config{Format: format.Options{MaxSources: tt.max}}, logger)
			in := ingest(t, p, generic(t, "disk full on db-1"))
			a := waitStatus(t, p, in[0].ID, alert.StatusDelivered)
			plain := plainOf(t, a.Message)
			if got := strings.Count(plain, "\n- Source "); got != tt.wantShown {
				t.Errorf("%d sources shown, want %d:\n%s", got, tt.wantShown, plain)
			}
			mu.Lock()
			cutLogged := strings.Contains(logs.String(), "message cut")
			mu.Unlock()
			if wantCut := tt.wantShown < 5; cutLogged != wantCut {
				t.Errorf("cut logged = %v, want %v", cutLogged, wantCut)
			}
		})
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

func TestResolvedIsNotEnriched(t *testing.T) {
	e := &fakeEnricher{fn: okEnrichment}
	p := newPipeline(t, e, &fakeDeliverer{}, Config{})
	as, err := alert.FromAlertmanager(alert.AlertmanagerPayload{Alerts: []alert.AlertmanagerAlert{{
		Status: "resolved", Labels: map[string]string{"alertname": "DiskFull"}, Fingerprint: "f1",
	}}})
	if err != nil {
		t.Fatal(err)
	}
	in := ingest(t, p, as...)
	a := waitStatus(t, p, in[0].ID, alert.StatusDelivered)
	if got := plainOf(t, a.Message); got != "[RESOLVED] DiskFull" {
		t.Errorf("delivered %q", got)
	}
	if e.count() != 0 {
		t.Errorf("enricher called %d times for a resolution", e.count())
	}
}

func TestDeliveryRetries(t *testing.T) {
	transient := &deliveryError{msg: "telegram: 502 Bad Gateway"}
	tests := []struct {
		name         string
		errs         []error
		maxAttempts  int
		wantStatus   alert.Status
		wantAttempts int
		wantError    string
	}{
		{"recovers", []error{transient, transient}, 5, alert.StatusDelivered, 3, ""},
		{"gives up", []error{transient, transient, transient}, 3, alert.StatusFailed, 3, "telegram: 502 Bad Gateway"},
		{"permanent", []error{&deliveryError{msg: "telegram: chat not found", permanent: true}}, 5, alert.StatusFailed, 1, "telegram: chat not found"},
		{"rate limited", []error{&rateLimited{deliveryError{msg: "telegram: 429", wait: 10 * time.Millisecond}}}, 1, alert.StatusDelivered, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &fakeDeliverer{errs: tt.errs}
			p := newPipeline(t, &fakeEnricher{fn: okEnrichment}, d, Config{MaxAttempts: tt.maxAttempts})
			in := ingest(t, p, generic(t, "queue backlog"))
			a := waitStatus(t, p, in[0].ID, alert.StatusDelivered, alert.StatusFailed)
			if a.Status != tt.wantStatus || a.Attempts != tt.wantAttempts || a.Error != tt.wantError {
				t.Errorf("got status %s, attempts %d, error %q; want %s, %d, %q", a.Status, a.Attempts, a.Error, tt.wantStatus, tt.wantAttempts, tt.wantError)
			}
			if d.count() != tt.wantAttempts {
				t.Errorf("deliverer called %d times, want %d", d.count(), tt.wantAttempts)
			}
		})
	}
}

func TestDeduplication(t *testing.T) {
	d := &fakeDeliverer{}
	p := newPipeline(t, &fakeEnricher{fn: okEnrichment}, d, Config{})
	first := ingest(t, p, generic(t, "disk full"))
	// Same text and metadata again, in one batch with a different alert.
	second := ingest(t, p, generic(t, "disk full"), generic(t, "disk almost full"))
	if second[0].Status != alert.StatusDuplicate || second[0].DuplicateOf != first[0].ID {
		t.Errorf("repeat stored as %s of %q, want DUPLICATE of %q", second[0].Status, second[0].DuplicateOf, first[0].ID)
	}
	if second[1].Status != alert.StatusReceived {
		t.Errorf("different alert stored as %s", second[1].Status)
	}
	waitStatus(t, p, first[0].ID, alert.StatusDelivered)
	waitStatus(t, p, second[1].ID, alert.StatusDelivered)
	if got, _ := p.Get(context.Background(), second[0].ID); got.Status != alert.StatusDuplicate {
		t.Errorf("duplicate became %s", got.Status)
	}
	if d.count() != 2 {
		t.Errorf("delivered %d messages, want 2", d.count())
	}
}

func TestDedupWindow(t *testing.T) {
	p := newPipeline(t, &fakeEnricher{fn: okEnrichment}, &fakeDeliverer{}, Config{DedupWindow: time.Minute})
	now := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	p.now = func() time.Time { return now }
	first := ingest(t, p, generic(t, "disk full"))
	now = now.Add(2 * time.Minute)
	later := ingest(t, p, generic(t, "disk full"))
	if later[0].Status != alert.StatusReceived {
		t.Errorf("repeat after the window stored as %s (of %s)", later[0].Status, first[0].ID)
	}
}

func TestIngestManyConcurrently(t *testing.T) {
	d := &fakeDeliverer{}
	p := newPipeline(t, &fakeEnricher{fn: okEnrichment}, d, Config{})
	const n = 40
	var wg sync.WaitGroup
	ids := make(chan string, n)
	for i := range n {
		wg.Go(func() {
			got, err := p.Ingest(context.Background(), []alert.Alert{generic(t, fmt.Sprintf("alert %d", i))})
			if err != nil {
				t.Error(err)
				return
			}
			ids <- got[0].ID
		})
	}
	wg.Wait()
	close(ids)
	for id := range ids {
		waitStatus(t, p, id, alert.StatusDelivered)
	}
	if d.count() != n {
		t.Errorf("delivered %d, want %d", d.count(), n)
	}
	for _, a := range d.sent {
		if !strings.Contains(a.Message.Plain, "alert ") {
			t.Errorf("odd message %q", a.Message.Plain)
		}
	}
}
