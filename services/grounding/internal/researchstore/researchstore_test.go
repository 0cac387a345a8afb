package researchstore_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/riverqueue/river/rivertype"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/platform/waitfor"
	"github.com/groundcrew/groundcrew/services/grounding/internal/research"
	"github.com/groundcrew/groundcrew/services/grounding/internal/researchstore"
)

const userID = "0b0e7a4c-3f9d-4c55-9a43-7a0f1f0f6b21"

var discard = slog.New(slog.DiscardHandler)

// retryNow retries a failed job at once, so tests need not wait out
// River's backoff.
type retryNow struct{}

func (retryNow) NextRetry(*rivertype.JobRow) time.Time { return time.Now() }

func openDB(t *testing.T, dir string) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.Open(t.Context(), sqlstoretest.URL(t, "researchstore"), dir, "research", discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func openStore(t *testing.T, db *sqlstore.DB) *researchstore.Store {
	t.Helper()
	st, err := researchstore.Open(t.Context(), db, discard, researchstore.Options{PollInterval: 20 * time.Millisecond, RetryPolicy: retryNow{}})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// startWorkers starts st's workers with svc and stops them at cleanup.
func startWorkers(t *testing.T, st *researchstore.Store, svc *research.Service) {
	t.Helper()
	if err := st.Start(t.Context(), svc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = st.Stop(ctx)
	})
}

type search struct {
	// block, when set, makes searches wait for the context after closing
	// entered once.
	block   bool
	entered chan struct{}
	once    sync.Once
	calls   atomic.Int32
}

func (s *search) Search(ctx context.Context, q string, n int) ([]research.Evidence, error) {
	s.calls.Add(1)
	if s.block {
		s.once.Do(func() { close(s.entered) })
		<-ctx.Done()
		return nil, ctx.Err()
	}
	var out []research.Evidence
	for i := range min(n, 3) {
		out = append(out, research.Evidence{
			Title:   fmt.Sprintf("%s %d", q, i),
			URL:     fmt.Sprintf("https://site%d.example/%s", i, strings.ReplaceAll(q, " ", "-")),
			Snippet: "Kubernetes operators work by reconciling; benefits include automation; risks include outages; best practice is idempotency.",
		})
	}
	return out, nil
}

// countingPlanner counts Plan calls, to show a restart does not plan again.
type countingPlanner struct {
	research.OfflinePlanner
	plans atomic.Int32
}

func (p *countingPlanner) Plan(ctx context.Context, topic string) ([]string, error) {
	p.plans.Add(1)
	return p.OfflinePlanner.Plan(ctx, topic)
}

type notifier struct {
	mu   sync.Mutex
	sent []research.Message
}

func (n *notifier) Send(_ context.Context, m research.Message) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.sent = append(n.sent, m)
	return "1", nil
}

func (n *notifier) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.sent)
}

func newService(t *testing.T, st research.Store, s research.Searcher, p research.Planner, n research.Notifier, cfg research.Config) *research.Service {
	t.Helper()
	return newServiceWith(t, research.Deps{Store: st, Searcher: s, Planner: p, Notifier: n}, cfg)
}

func newServiceWith(t *testing.T, deps research.Deps, cfg research.Config) *research.Service {
	t.Helper()
	deps.Logger = discard
	svc, err := research.New(deps, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func TestRestartResumesFromLastStep(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	db := openDB(t, dir)
	planner := &countingPlanner{}

	// First process: plans, then hangs in the research step and is stopped.
	st1 := openStore(t, db)
	blocked := &search{block: true, entered: make(chan struct{})}
	svc1 := newService(t, st1, blocked, planner, &notifier{}, research.Config{})
	if err := st1.Start(t.Context(), svc1); err != nil {
		t.Fatal(err)
	}
	run, err := svc1.Start(t.Context(), research.StartParams{Topic: "Kubernetes operators", UserID: userID})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-blocked.entered:
	case <-time.After(20 * time.Second):
		t.Fatal("the research step never started")
	}
	stopCtx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := st1.Stop(stopCtx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	mid, err := st1.GetRun(t.Context(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if mid.Status != research.StatusResearching || mid.Seq != 1 || len(mid.Plan) == 0 {
		t.Fatalf("after the stop: status=%s seq=%d plan=%d; want researching, 1, a plan", mid.Status, mid.Seq, len(mid.Plan))
	}

	// Second process on the same database: continues with the research
	// step and finishes without planning again.
	st2 := openStore(t, db)
	good := &search{}
	svc2 := newService(t, st2, good, planner, &notifier{}, research.Config{})
	startWorkers(t, st2, svc2)
	var final *research.Run
	waitfor.Cond(t, "the run to finish", func() bool {
		final, err = svc2.Get(t.Context(), run.ID)
		return err == nil && final.Status.Terminal()
	})
	if final.Status != research.StatusFinished || final.Report == nil || final.IterationCount < 1 || final.IterationCount > research.MaxIterations {
		t.Fatalf("final: status=%s error=%q iterations=%d", final.Status, final.Error, final.IterationCount)
	}
	if n := planner.plans.Load(); n != 1 {
		t.Errorf("planned %d times, want once", n)
	}
	if good.calls.Load() == 0 {
		t.Error("the second process never searched")
	}
	rec, err := st2.GetReport(t.Context(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Metadata.Type != research.ReportMetadataType || rec.Metadata.IterationCount != final.IterationCount || len(rec.Metadata.Sources) != len(final.Sources) {
		t.Errorf("stored metadata = %+v", rec.Metadata)
	}
}

func TestApprovalTimesOutEndToEnd(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "data"))
	st := openStore(t, db)
	n := &notifier{}
	svc := newService(t, st, &search{}, nil, n, research.Config{ApprovalTimeout: 300 * time.Millisecond})
	startWorkers(t, st, svc)
	run, err := svc.Start(t.Context(), research.StartParams{Topic: "Kubernetes operators", UserID: userID, MaxIterations: new(1)})
	if err != nil {
		t.Fatal(err)
	}
	var appr *research.Approval
	waitfor.Cond(t, "the approval to escalate", func() bool {
		as, _, err := svc.ListApprovals(t.Context(), research.ApprovalFilter{RunID: run.ID}, research.Page{})
		if err != nil || len(as) == 0 {
			return false
		}
		appr = as[0]
		return appr.Status == research.ApprovalEscalated
	})
	if appr.Decision == nil || appr.Decision.Reason != research.ReasonApprovalTimeout || appr.Decision.DurationSeconds < 0.3 {
		t.Errorf("decision = %+v", appr.Decision)
	}
	got, _ := svc.Get(t.Context(), run.ID)
	if got.Actions[0].Status != research.ActionSkipped {
		t.Errorf("action = %+v, want skipped", got.Actions[0])
	}
	if _, err := svc.Decide(t.Context(), research.DecideParams{ApprovalID: appr.ID, Approve: true, DecidedBy: "late"}); !errors.Is(err, research.ErrAlreadyDecided) {
		t.Errorf("late decision: %v", err)
	}
}

func TestListPaging(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "data"))
	st := openStore(t, db)
	ctx := t.Context()
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 5 {
		id := fmt.Sprintf("run-%d", i)
		ids = append([]string{id}, ids...) // newest first
		// Two runs share a creation time, to exercise the id tiebreak.
		at := base.Add(time.Duration(min(i, 3)) * time.Minute)
		r := &research.Run{ID: id, UserID: userID, Topic: "t", Status: research.StatusPlanning, CreatedAt: at, UpdatedAt: at}
		if err := st.CreateRun(ctx, r, nil); err != nil {
			t.Fatal(err)
		}
		err := st.Update(ctx, id, func(c *research.Change) error {
			c.Approvals = append(c.Approvals, &research.Approval{
				ID: "appr-" + id, RunID: id, Status: research.ApprovalPending, RequestedAt: at, TimeoutAt: at.Add(time.Minute),
			})
			if i%2 == 0 {
				c.Approvals[0].Status = research.ApprovalRejected
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	other := &research.Run{ID: "other", UserID: "9b0e7a4c-3f9d-4c55-9a43-7a0f1f0f6b21", CreatedAt: base, UpdatedAt: base}
	if err := st.CreateRun(ctx, other, nil); err != nil {
		t.Fatal(err)
	}

	var got []string
	tok := ""
	for pages := 0; ; pages++ {
		runs, next, err := st.ListRuns(ctx, userID, research.Page{Size: 2, Token: tok})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			got = append(got, r.ID)
		}
		if next == "" {
			break
		}
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		tok = next
	}
	wantOrder := []string{"run-4", "run-3", "run-2", "run-1", "run-0"}
	if diff := cmp.Diff(wantOrder, got); diff != "" {
		t.Errorf("paged runs (-want +got):\n%s", diff)
	}

	// Without a user id every user's runs are listed, newest first.
	all, next, err := st.ListRuns(ctx, "", research.Page{Size: 5})
	if err != nil || next == "" {
		t.Fatalf("first page of every run = %v, %q, %v", all, next, err)
	}
	rest, last, err := st.ListRuns(ctx, "", research.Page{Size: 5, Token: next})
	if err != nil || last != "" {
		t.Fatalf("second page of every run = %v, %q, %v", rest, last, err)
	}
	got = nil
	for _, r := range append(all, rest...) {
		got = append(got, r.ID)
	}
	if diff := cmp.Diff([]string{"run-4", "run-3", "run-2", "run-1", "run-0", "other"}, got); diff != "" {
		t.Errorf("every run (-want +got):\n%s", diff)
	}

	pending, next, err := st.ListApprovals(ctx, research.ApprovalFilter{Status: research.ApprovalPending}, research.Page{Size: 1})
	if err != nil || len(pending) != 1 || pending[0].ID != "appr-run-3" || next == "" {
		t.Fatalf("first pending page = %v, %q, %v", pending, next, err)
	}
	pending, next, err = st.ListApprovals(ctx, research.ApprovalFilter{Status: research.ApprovalPending}, research.Page{Size: 1, Token: next})
	if err != nil || len(pending) != 1 || pending[0].ID != "appr-run-1" {
		t.Fatalf("second pending page = %v, %q, %v", pending, next, err)
	}
	byRun, _, err := st.ListApprovals(ctx, research.ApprovalFilter{RunID: "run-2"}, research.Page{})
	if err != nil || len(byRun) != 1 || byRun[0].Status != research.ApprovalRejected {
		t.Errorf("approvals of run-2 = %v, %v", byRun, err)
	}

	if _, _, err := st.ListRuns(ctx, userID, research.Page{Token: "%%%"}); !errors.Is(err, research.ErrInvalidPageToken) {
		t.Errorf("bad token: %v", err)
	}
	if _, err := st.GetRun(ctx, "missing"); !errors.Is(err, research.ErrNotFound) {
		t.Errorf("GetRun(missing) = %v", err)
	}
	if _, err := st.GetApproval(ctx, "missing"); !errors.Is(err, research.ErrNotFound) {
		t.Errorf("GetApproval(missing) = %v", err)
	}
	if err := st.Update(ctx, "run-0", func(*research.Change) error { return research.ErrNoChange }); err != nil {
		t.Errorf("Update with ErrNoChange = %v", err)
	}
}
