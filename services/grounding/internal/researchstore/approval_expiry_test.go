package researchstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/platform/waitfor"
	"github.com/groundcrew/groundcrew/services/grounding/internal/research"
	"github.com/groundcrew/groundcrew/services/grounding/internal/researchstore"
)

// backends are the databases the approval-expiry tests run on: SQLite
// always, PostgreSQL when TEST_DATABASE_URL is set (skipped otherwise).
var backends = []struct {
	name string
	url  func(t *testing.T) string
}{
	{"sqlite", func(*testing.T) string { return "" }},
	{"postgres", func(t *testing.T) string { return sqlstoretest.PostgresURL(t, "researchexpiry") }},
}

func openBackend(t *testing.T, url string) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.Open(t.Context(), url, filepath.Join(t.TempDir(), "data"), "research", discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// settable is a clock that follows the system clock until it is set.
type settable struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *settable) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *settable) SetTo(at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off = time.Until(at)
}

// pendingApproval starts a one-round run and waits, reading the store
// directly (no read-time escalation), for its approval.
func pendingApproval(t *testing.T, st *researchstore.Store, svc *research.Service) *research.Approval {
	t.Helper()
	run, err := svc.Start(t.Context(), research.StartParams{Topic: "Kubernetes operators", UserID: userID, MaxIterations: new(1)})
	if err != nil {
		t.Fatal(err)
	}
	var appr *research.Approval
	waitfor.Cond(t, "the approval request", func() bool {
		as, _, err := st.ListApprovals(t.Context(), research.ApprovalFilter{RunID: run.ID}, research.Page{})
		if err != nil || len(as) == 0 {
			return false
		}
		appr = as[0]
		return true
	})
	return appr
}

// TestApprovalEscalatesOnTheQueue: with the workers running, the timeout
// job escalates an undecided approval no later than 10 s after timeout_at,
// for both risk levels that need an approval.
func TestApprovalEscalatesOnTheQueue(t *testing.T) {
	for _, b := range backends {
		for _, risk := range []research.RiskLevel{research.ReversibleWithDelay, research.Irreversible} {
			t.Run(b.name+"/"+string(risk), func(t *testing.T) {
				st := openStore(t, openBackend(t, b.url(t)))
				n := &notifier{}
				svc := newServiceWith(t, research.Deps{Store: st, Searcher: &search{}, Notifier: n}, research.Config{ApprovalTimeout: 500 * time.Millisecond, SummaryRisk: risk})
				startWorkers(t, st, svc)
				appr := pendingApproval(t, st, svc)
				if appr.Risk != risk {
					t.Fatalf("approval risk = %s, want %s", appr.Risk, risk)
				}

				deadline := appr.TimeoutAt.Add(10 * time.Second)
				var got *research.Approval
				for {
					var err error
					if got, err = st.GetApproval(t.Context(), appr.ID); err != nil {
						t.Fatal(err)
					}
					if got.Status != research.ApprovalPending {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("still pending 10 s after timeout_at (%s)", appr.TimeoutAt)
					}
					time.Sleep(20 * time.Millisecond)
				}
				if got.Status != research.ApprovalEscalated || got.Decision.Reason != research.ReasonApprovalTimeout {
					t.Fatalf("approval = %s %+v, want escalated for approval_timeout", got.Status, got.Decision)
				}
				if late := got.Decision.DecidedAt.Sub(appr.TimeoutAt); late > 10*time.Second || late < -10*time.Second {
					t.Errorf("escalated %s after timeout_at, want within ±10 s", late)
				}
				run, err := st.GetRun(t.Context(), appr.RunID)
				if err != nil {
					t.Fatal(err)
				}
				if run.Actions[0].Status != research.ActionSkipped {
					t.Errorf("action = %+v, want skipped", run.Actions[0])
				}
			})
		}
	}
}

// TestLateDecisionRefusedWhileJobHeldBack is the probe of issue 19: the
// timeout job has not run (the workers are stopped), a decision comes 45 s
// after timeout_at, and it is refused; the approval escalates on the spot
// and the action never runs, also once the workers come back.
func TestLateDecisionRefusedWhileJobHeldBack(t *testing.T) {
	for _, b := range backends {
		for _, risk := range []research.RiskLevel{research.ReversibleWithDelay, research.Irreversible} {
			t.Run(b.name+"/"+string(risk), func(t *testing.T) {
				db := openBackend(t, b.url(t))
				st := openStore(t, db)
				clock := &settable{}
				n := &notifier{}
				deps := research.Deps{Store: st, Searcher: &search{}, Notifier: n, Clock: clock}
				svc := newServiceWith(t, deps, research.Config{ApprovalTimeout: time.Minute, SummaryRisk: risk})
				if err := st.Start(t.Context(), svc); err != nil {
					t.Fatal(err)
				}
				appr := pendingApproval(t, st, svc)
				waitfor.Cond(t, "the approval post", func() bool { return n.count() == 1 })
				ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
				defer cancel()
				if err := st.Stop(ctx); err != nil {
					t.Fatal(err)
				}

				clock.SetTo(appr.TimeoutAt.Add(45 * time.Second))
				_, err := svc.Decide(t.Context(), research.DecideParams{ApprovalID: appr.ID, Approve: true, Actor: "ops", DecidedBy: "late"})
				if !errors.Is(err, research.ErrEscalated) {
					t.Fatalf("decision 45 s late: %v, want ErrEscalated", err)
				}
				got, err := st.GetApproval(t.Context(), appr.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != research.ApprovalEscalated || got.Decision.Reason != research.ReasonApprovalTimeout || got.Decision.ApprovedBy != "" {
					t.Fatalf("approval = %s %+v, want escalated for approval_timeout", got.Status, got.Decision)
				}

				// The held-back timeout job runs at last (its River row is
				// scheduled by the real clock, a minute out, so it is handed
				// to the service directly): nothing changes, nothing is sent.
				if err := svc.HandleJob(t.Context(), research.Job{Kind: research.JobTimeout, RunID: appr.RunID, ApprovalID: appr.ID}); err != nil {
					t.Fatalf("late timeout job: %v", err)
				}
				if again, _ := st.GetApproval(t.Context(), appr.ID); again.Status != research.ApprovalEscalated || !again.Decision.DecidedAt.Equal(got.Decision.DecidedAt) {
					t.Errorf("after the timeout job: %s %+v, want the escalation unchanged", again.Status, again.Decision)
				}
				run, _ := st.GetRun(t.Context(), appr.RunID)
				if act := run.Actions[0]; act.Status != research.ActionSkipped {
					t.Errorf("action = %+v, want skipped", act)
				}
				if c := n.count(); c != 1 {
					t.Errorf("%d messages sent, want only the approval post", c)
				}
			})
		}
	}
}
