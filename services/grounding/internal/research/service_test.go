package research

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const userID = "0b0e7a4c-3f9d-4c55-9a43-7a0f1f0f6b21"

type harness struct {
	svc      *Service
	store    *memStore
	clock    *fakeClock
	search   *fakeSearch
	notifier *fakeNotifier
}

func newHarness(t *testing.T, cfg Config, search func(string, int) ([]Evidence, error)) *harness {
	t.Helper()
	h := &harness{store: newMemStore(), clock: newFakeClock(), search: &fakeSearch{fn: search}, notifier: &fakeNotifier{}}
	svc, err := New(Deps{Store: h.store, Searcher: h.search, Notifier: h.notifier, Clock: h.clock}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.svc = svc
	return h
}

func ptr[T any](v T) *T { return &v }

// start starts a run and drains its jobs.
func (h *harness) run(t *testing.T, p StartParams) *Run {
	t.Helper()
	if p.UserID == "" {
		p.UserID = userID
	}
	run, err := h.svc.Start(t.Context(), p)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	drain(t, h.svc, h.store, h.clock)
	got, err := h.svc.Get(t.Context(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestIterationCap(t *testing.T) {
	// Search that finds one thin passage per query: the score never reaches
	// the threshold, so only the cap stops the loop.
	thin := func(q string, _ int) ([]Evidence, error) {
		return []Evidence{{Title: q, URL: "https://thin.example/" + strings.ReplaceAll(q, " ", "-"), Snippet: "nothing useful"}}, nil
	}
	tests := []struct {
		name      string
		ask       *int
		threshold *float64
		wantMax   int
		wantIter  int
	}{
		{"unset means 5", nil, ptr(1.0), 5, 5},
		{"1000 is capped at 5", ptr(1000), ptr(1.0), 5, 5},
		{"6 is capped at 5", ptr(6), ptr(1.0), 5, 5},
		{"3 is kept", ptr(3), ptr(1.0), 3, 3},
		{"1 is one round", ptr(1), ptr(1.0), 1, 1},
		{"threshold 0 stops after one round", ptr(1000), ptr(0.0), 5, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Config{}, thin)
			run := h.run(t, StartParams{Topic: "Kubernetes operators", MaxIterations: tt.ask, QualityThreshold: tt.threshold})
			if run.Status != StatusFinished {
				t.Fatalf("status = %s (%s), want finished", run.Status, run.Error)
			}
			if run.MaxIterations != tt.wantMax || run.IterationCount != tt.wantIter || run.Report.Iterations != tt.wantIter {
				t.Errorf("max_iterations=%d iteration_count=%d report.iterations=%d; want %d, %d, %d",
					run.MaxIterations, run.IterationCount, run.Report.Iterations, tt.wantMax, tt.wantIter, tt.wantIter)
			}
		})
	}
}

func TestRunReachesThreshold(t *testing.T) {
	h := newHarness(t, Config{}, richEvidence)
	run := h.run(t, StartParams{Topic: "Kubernetes operators"})
	if run.RefinedAnswer != "" {
		t.Errorf("refined_answer = %q without a refine step, want empty", run.RefinedAnswer)
	}
	if run.Status != StatusFinished || run.IterationCount != 1 || *run.QualityScore < DefaultQualityThreshold {
		t.Fatalf("status=%s iterations=%d score=%v; want finished after 1 round with score ≥ 0.8", run.Status, run.IterationCount, *run.QualityScore)
	}
	seen := map[string]bool{}
	for _, s := range run.Sources {
		if seen[urlKey(s.URL)] {
			t.Errorf("source %s listed twice", s.URL)
		}
		seen[urlKey(s.URL)] = true
		if n := utf8.RuneCountInString(s.Snippet); n > MaxSnippetChars {
			t.Errorf("snippet of %s has %d characters, want ≤ %d", s.URL, n, MaxSnippetChars)
		}
		if s.RetrievedAt.IsZero() || s.SubQuestion == "" {
			t.Errorf("source %s lacks retrieved_at or sub_question", s.URL)
		}
	}
	if len(run.Sources) != 7 { // 8 passages, one a duplicate URL
		t.Errorf("%d sources, want 7", len(run.Sources))
	}
	r := run.Report
	if !regexp.MustCompile(`\[\d\]`).MatchString(r.FindingsMarkdown) || !strings.Contains(r.FindingsMarkdown, "## What goes wrong with Kubernetes operators, and why?") {
		t.Errorf("findings lack citations or sections:\n%s", r.FindingsMarkdown)
	}
	if r.ExecutiveSummary == "" || r.Quality.LimitedSources || len(r.Quality.Warnings) != 0 || r.GeneratedAt != h.clock.Now() {
		t.Errorf("report = %+v", r)
	}
	if len(h.search.queries) != 4 {
		t.Errorf("searched %d times, want one per sub-question (4)", len(h.search.queries))
	}
}

func TestRefineSearchesOnlyGaps(t *testing.T) {
	// Evidence for the overview only: the other angles are gaps, refined and
	// searched again with sharper words each round.
	h := newHarness(t, Config{}, func(q string, _ int) ([]Evidence, error) {
		return []Evidence{
			{Title: "Kubernetes operators", URL: "https://a.example/" + strings.ReplaceAll(q, " ", "-"), Snippet: "Kubernetes operators are software."},
		}, nil
	})
	run := h.run(t, StartParams{Topic: "Kubernetes operators", MaxIterations: ptr(2)})
	if run.IterationCount != 2 {
		t.Fatalf("iteration_count = %d, want 2", run.IterationCount)
	}
	// Round 1 searches 4 questions; round 2 the gaps (each has one source
	// of the two wanted), in new words.
	if len(h.search.queries) != 8 {
		t.Fatalf("queries = %q, want 8", h.search.queries)
	}
	for _, q := range h.search.queries[4:] {
		for _, old := range h.search.queries[:4] {
			if q == old {
				t.Errorf("refined query %q repeats round 1", q)
			}
		}
	}
	if !run.Report.Quality.LimitedSources == (len(run.Sources) >= limitedSourceCount) {
		t.Logf("sources=%d", len(run.Sources))
	}
	if len(run.Report.Quality.Warnings) == 0 || !strings.Contains(run.Report.Quality.Warnings[0], "below the threshold") {
		t.Errorf("warnings = %q, want a below-threshold warning", run.Report.Quality.Warnings)
	}
	// The refine step wrote a draft answer, cited by position in sources.
	if want := "Kubernetes operators are software. [1]"; run.RefinedAnswer != want {
		t.Errorf("refined_answer = %q, want %q", run.RefinedAnswer, want)
	}
}

func TestStartValidation(t *testing.T) {
	tests := []struct {
		name  string
		p     StartParams
		field string
	}{
		{"blank topic", StartParams{Topic: " \n", UserID: userID}, "topic"},
		{"long topic", StartParams{Topic: strings.Repeat("é", 501), UserID: userID}, "topic"},
		{"bad user", StartParams{Topic: "x", UserID: "alice"}, "user_id"},
		{"uuid without dashes", StartParams{Topic: "x", UserID: strings.ReplaceAll(userID, "-", "")}, "user_id"},
		{"zero iterations", StartParams{Topic: "x", UserID: userID, MaxIterations: ptr(0)}, "max_iterations"},
		{"threshold above 1", StartParams{Topic: "x", UserID: userID, QualityThreshold: ptr(1.5)}, "quality_threshold"},
		{"negative threshold", StartParams{Topic: "x", UserID: userID, QualityThreshold: ptr(-0.1)}, "quality_threshold"},
	}
	h := newHarness(t, Config{}, richEvidence)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.svc.Start(t.Context(), tt.p)
			var inv *InvalidError
			if !errors.As(err, &inv) || inv.Field != tt.field {
				t.Errorf("Start error = %v, want an InvalidError on %s", err, tt.field)
			}
		})
	}
	if _, err := h.svc.Start(t.Context(), StartParams{Topic: strings.Repeat("é", 500), UserID: userID}); err != nil {
		t.Errorf("500-character topic: %v", err)
	}
}

func TestReportMetadataHasNoPersonalData(t *testing.T) {
	h := newHarness(t, Config{}, func(string, int) ([]Evidence, error) {
		return []Evidence{{Title: "Ask Dr. Alan Smith about COBOL compilers (grace@navy.mil)", URL: "https://user:pw@example.org/a?email=bob@example.com#x",
			Snippet: "Ask jane.doe@example.com and Dr. Alan Smith about COBOL compilers, cc @jdoe or +1 415 555 0100."}}, nil
	})
	run := h.run(t, StartParams{Topic: "Ask jane.doe@example.com and Dr. Alan Smith about COBOL compilers, cc @jdoe or +1 415 555 0100", MaxIterations: ptr(1)})
	rec, err := h.store.GetReport(t.Context(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := ReportMetadata{
		Type:           ReportMetadataType,
		Topic:          "Ask [email] and [name] about COBOL compilers, cc [handle] or [phone]",
		UserID:         userID,
		Sources:        []SourceRef{{Title: "Ask [name] about COBOL compilers ([email])", URL: "https://example.org/a"}},
		IterationCount: 1,
		Timestamp:      h.clock.Now(),
	}
	if diff := cmp.Diff(want, rec.Metadata); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
}

func TestRedactPersonalData(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Kubernetes Operators in Go", "Kubernetes Operators in Go"},
		{"papers by Maria Garcia Lopez on CRDTs", "papers by [name] on CRDTs"},
		{"Using Linus Torvalds' git", "Using [name] git"},
		{"Ms O'Neil on 2019-2024 trends", "[name] on 2019-2024 trends"},
		{"mail A.B@Example.COM now", "mail [email] now"},
	}
	for _, tt := range tests {
		if got := RedactPersonalData(tt.in); got != tt.want {
			t.Errorf("RedactPersonalData(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStepReplayIsIgnored(t *testing.T) {
	h := newHarness(t, Config{}, richEvidence)
	run, err := h.svc.Start(t.Context(), StartParams{Topic: "Kubernetes operators", UserID: userID})
	if err != nil {
		t.Fatal(err)
	}
	job, _ := h.store.takeJob(h.clock.Now())
	for range 2 { // a crash after the commit makes the queue run the job again
		if err := h.svc.HandleJob(t.Context(), job); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := h.svc.Get(t.Context(), run.ID)
	if got.Seq != 1 || got.Step != StepResearch || len(h.store.pending()) != 1 {
		t.Errorf("after a replayed plan job: seq=%d step=%s queued=%d; want 1, research, 1", got.Seq, got.Step, len(h.store.pending()))
	}
}

func TestSearchFailure(t *testing.T) {
	h := newHarness(t, Config{}, func(string, int) ([]Evidence, error) { return nil, errors.New("connection refused") })
	run, err := h.svc.Start(t.Context(), StartParams{Topic: "Kubernetes operators", UserID: userID})
	if err != nil {
		t.Fatal(err)
	}
	plan, _ := h.store.takeJob(h.clock.Now())
	if err := h.svc.HandleJob(t.Context(), plan); err != nil {
		t.Fatal(err)
	}
	research, _ := h.store.takeJob(h.clock.Now())
	research.Attempt, research.MaxAttempts = 1, 3
	if err := h.svc.HandleJob(t.Context(), research); err == nil {
		t.Fatal("research with every search failing: want an error so the queue retries")
	}
	research.Attempt = 3
	if err := h.svc.HandleJob(t.Context(), research); err != nil {
		t.Fatalf("last attempt: %v", err)
	}
	got, _ := h.svc.Get(t.Context(), run.ID)
	if got.Status != StatusFailed || got.Error == "" || strings.Contains(got.Error, "refused") {
		t.Errorf("status=%s error=%q; want failed with a public reason", got.Status, got.Error)
	}
}

// finishedWithApproval runs a run to the end and returns it with its
// pending approval.
func finishedWithApproval(t *testing.T, h *harness) (*Run, *Approval) {
	t.Helper()
	run := h.run(t, StartParams{Topic: "Kubernetes operators"})
	approvals, _, err := h.svc.ListApprovals(t.Context(), ApprovalFilter{RunID: run.ID}, Page{})
	if err != nil || len(approvals) != 1 {
		t.Fatalf("approvals = %v, %v; want one", approvals, err)
	}
	return run, approvals[0]
}

func TestApprovalRequested(t *testing.T) {
	h := newHarness(t, Config{}, richEvidence)
	run, a := finishedWithApproval(t, h)
	now := h.clock.Now()
	want := &Approval{
		ID: a.ID, RunID: run.ID, ActionID: run.Actions[0].ID, ActionType: ActionSendSummary,
		Description: run.Actions[0].Description, Risk: ReversibleWithDelay, Requester: userID,
		RequestedAt: now, TimeoutAt: now.Add(5 * time.Minute), Status: ApprovalPending,
	}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("approval (-want +got):\n%s", diff)
	}
	if got := run.Actions[0]; got.Status != ActionAwaitingApproval || got.ApprovalID != a.ID {
		t.Errorf("action = %+v", got)
	}
	msgs := h.notifier.messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages sent, want the approval post only", len(msgs))
	}
	wantButtons := []Button{{"Approve", a.ID, true}, {"Reject", a.ID, false}}
	if diff := cmp.Diff(wantButtons, msgs[0].Buttons); diff != "" {
		t.Errorf("buttons (-want +got):\n%s", diff)
	}
}

func TestDecideApproval(t *testing.T) {
	tests := []struct {
		name       string
		approve    bool
		actor      string
		wantStatus ApprovalStatus
		wantAction ActionStatus
		wantSent   int // messages after the approval post
		wantDec    Decision
	}{
		{"approve runs the action", true, "", ApprovalApproved, ActionExecuted, 1,
			Decision{ApprovedBy: "tg:42", DecidedBy: "tg:42", Comment: "ok", DurationSeconds: 90}},
		{"reject skips it", false, "", ApprovalRejected, ActionSkipped, 0,
			Decision{RejectedBy: "tg:42", DecidedBy: "tg:42", Comment: "ok", DurationSeconds: 90}},
		{"the actor is who approved, decided_by a note", true, "ops-key", ApprovalApproved, ActionExecuted, 1,
			Decision{ApprovedBy: "ops-key", Actor: "ops-key", DecidedBy: "tg:42", Comment: "ok", DurationSeconds: 90}},
		{"the actor is who rejected", false, "ops-key", ApprovalRejected, ActionSkipped, 0,
			Decision{RejectedBy: "ops-key", Actor: "ops-key", DecidedBy: "tg:42", Comment: "ok", DurationSeconds: 90}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Config{}, richEvidence)
			run, a := finishedWithApproval(t, h)
			h.clock.Set(a.RequestedAt.Add(90 * time.Second))
			got, err := h.svc.Decide(t.Context(), DecideParams{ApprovalID: a.ID, Approve: tt.approve, Actor: tt.actor, DecidedBy: "tg:42", Comment: "ok"})
			if err != nil {
				t.Fatal(err)
			}
			tt.wantDec.DecidedAt = h.clock.Now()
			if diff := cmp.Diff(&tt.wantDec, got.Decision); diff != "" || got.Status != tt.wantStatus {
				t.Errorf("status %s, decision (-want +got):\n%s", got.Status, diff)
			}
			drain(t, h.svc, h.store, h.clock)
			run, _ = h.svc.Get(t.Context(), run.ID)
			if run.Actions[0].Status != tt.wantAction {
				t.Errorf("action = %+v, want %s", run.Actions[0], tt.wantAction)
			}
			if n := len(h.notifier.messages()) - 1; n != tt.wantSent {
				t.Errorf("%d summary messages sent, want %d", n, tt.wantSent)
			}
			if tt.approve && !strings.Contains(h.notifier.messages()[1].Text, run.Report.ExecutiveSummary[:20]) {
				t.Errorf("summary message = %q", h.notifier.messages()[1].Text)
			}
			// A second decision, either way, is refused.
			_, err = h.svc.Decide(t.Context(), DecideParams{ApprovalID: a.ID, Approve: !tt.approve, DecidedBy: "tg:43"})
			if !errors.Is(err, ErrAlreadyDecided) {
				t.Errorf("second decision: %v, want ErrAlreadyDecided", err)
			}
			// The timeout that fires later changes nothing.
			h.clock.Set(a.TimeoutAt.Add(time.Second))
			drain(t, h.svc, h.store, h.clock)
			if again, _ := h.svc.GetApproval(t.Context(), a.ID); again.Status != tt.wantStatus {
				t.Errorf("after the timeout the approval is %s, want %s", again.Status, tt.wantStatus)
			}
		})
	}
	h := newHarness(t, Config{}, richEvidence)
	if _, err := h.svc.Decide(context.Background(), DecideParams{ApprovalID: "nope", Approve: true, DecidedBy: "x"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown approval: %v, want ErrNotFound", err)
	}
}

func TestApprovalTimeout(t *testing.T) {
	h := newHarness(t, Config{}, richEvidence)
	run, a := finishedWithApproval(t, h)

	// The timeout job is queued for timeout_at; run early anyway (a clock
	// skew between replicas), it does nothing and asks to come back.
	var timeout Job
	for _, j := range h.store.pending() {
		if j.Kind == JobTimeout {
			timeout = j
		}
	}
	if !timeout.NotBefore.Equal(a.RequestedAt.Add(5 * time.Minute)) {
		t.Fatalf("timeout job not before %v, want requested_at + 5 min", timeout.NotBefore)
	}
	h.clock.Set(a.RequestedAt.Add(5*time.Minute - 10*time.Second))
	err := h.svc.HandleJob(t.Context(), timeout)
	var notDue *NotDueError
	if !errors.As(err, &notDue) || notDue.Wait != 10*time.Second {
		t.Fatalf("timeout at 4m50s: %v, want NotDueError{10s}", err)
	}
	if got, _ := h.svc.GetApproval(t.Context(), a.ID); got.Status != ApprovalPending {
		t.Fatalf("at 4m50s the approval is %s, want pending", got.Status)
	}

	h.clock.Set(a.RequestedAt.Add(5*time.Minute + 10*time.Second))
	drain(t, h.svc, h.store, h.clock)
	got, _ := h.svc.GetApproval(t.Context(), a.ID)
	want := &Decision{Reason: ReasonApprovalTimeout, DurationSeconds: 310, DecidedAt: h.clock.Now()}
	if diff := cmp.Diff(want, got.Decision); diff != "" || got.Status != ApprovalEscalated {
		t.Errorf("status %s, decision (-want +got):\n%s", got.Status, diff)
	}
	run, _ = h.svc.Get(t.Context(), run.ID)
	if act := run.Actions[0]; act.Status != ActionSkipped || !strings.Contains(act.Result, ReasonApprovalTimeout) {
		t.Errorf("action = %+v, want skipped for approval_timeout", act)
	}
	if n := len(h.notifier.messages()); n != 1 {
		t.Errorf("%d messages, want only the approval post", n)
	}
	if _, err := h.svc.Decide(t.Context(), DecideParams{ApprovalID: a.ID, Approve: true, DecidedBy: "late"}); !errors.Is(err, ErrEscalated) || !errors.Is(err, ErrAlreadyDecided) {
		t.Errorf("decision after escalation: %v, want ErrEscalated (an ErrAlreadyDecided)", err)
	}
	pending, _, _ := h.svc.ListApprovals(t.Context(), ApprovalFilter{Status: ApprovalPending}, Page{})
	if len(pending) != 0 {
		t.Errorf("pending approvals after the timeout: %d", len(pending))
	}
}

func TestReversibleActionRunsAtOnce(t *testing.T) {
	h := newHarness(t, Config{SummaryRisk: Reversible}, richEvidence)
	run := h.run(t, StartParams{Topic: "Kubernetes operators"})
	if act := run.Actions[0]; act.Status != ActionExecuted || act.ApprovalID != "" {
		t.Errorf("action = %+v, want executed without approval", act)
	}
	if all, _, _ := h.svc.ListApprovals(t.Context(), ApprovalFilter{}, Page{}); len(all) != 0 {
		t.Errorf("%d approvals, want none", len(all))
	}
	msgs := h.notifier.messages()
	if len(msgs) != 1 || !strings.HasPrefix(msgs[0].Text, "Research: Kubernetes operators") || msgs[0].IdempotencyKey == "" {
		t.Errorf("messages = %+v", msgs)
	}
}

func TestWatch(t *testing.T) {
	h := newHarness(t, Config{WatchPoll: time.Hour}, richEvidence)
	run, err := h.svc.Start(t.Context(), StartParams{Topic: "Kubernetes operators", UserID: userID})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan Status, 20)
	done := make(chan error, 1)
	go func() {
		done <- h.svc.Watch(t.Context(), run.ID, func(r *Run) error { got <- r.Status; return nil })
	}()
	if s := <-got; s != StatusPlanning {
		t.Fatalf("first state %s, want planning", s)
	}
	// Each job's commit wakes the watcher; wait for its state before the
	// next job so no change is coalesced.
	var statuses []Status
	for {
		job, ok := h.store.takeJob(h.clock.Now())
		if !ok || job.Kind != JobStep {
			break
		}
		if err := h.svc.HandleJob(t.Context(), job); err != nil {
			t.Fatal(err)
		}
		statuses = append(statuses, <-got)
	}
	if err := <-done; err != nil {
		t.Fatalf("Watch: %v", err)
	}
	want := []Status{StatusResearching, StatusCritiquing, StatusCritiquing, StatusFinished}
	if diff := cmp.Diff(want, statuses, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("watched statuses (-want +got):\n%s", diff)
	}
	if _, err := h.svc.Get(t.Context(), "missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(missing) = %v", err)
	}
}

// TestQuotedMessageSearched: a message the topic quotes, an alert it
// names and what it tells it saw are each searched on their own, once in
// a run of several rounds: the first words of a long question never
// reach them, and the sources found stay with the run.
func TestQuotedMessageSearched(t *testing.T) {
	thin := func(q string, _ int) ([]Evidence, error) {
		return []Evidence{{Title: q, URL: "https://thin.example/" + strings.ReplaceAll(q, " ", "-"), Snippet: "nothing useful"}}, nil
	}
	h := newHarness(t, Config{}, thin)
	run := h.run(t, StartParams{Topic: "every night two of our nodes go NotReady for a few minutes while the backups run, and KubeNodeNotReady pages us; the kubelet log says `PLEG is not healthy: pleg was last seen active 3m41s ago; threshold is 3m0s`. what do we do?", MaxIterations: ptr(3), QualityThreshold: ptr(1.0)})
	if run.IterationCount != 3 {
		t.Fatalf("iteration_count = %d, want 3 rounds", run.IterationCount)
	}
	for _, want := range []string{searchQuery("PLEG is not healthy: pleg was last seen active 3m41s ago; threshold is 3m0s"), searchQuery("KubeNodeNotReady"), searchQuery("every night two of our nodes go NotReady for a few minutes")} {
		if n := len(slices.DeleteFunc(slices.Clone(h.search.queries), func(q string) bool { return q != want })); n != 1 {
			t.Errorf("searched %q %d times, want once; queries %q", want, n, h.search.queries)
		}
	}
}
