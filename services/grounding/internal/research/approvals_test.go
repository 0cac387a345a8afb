package research

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestLateDecisionEscalates: approvals expire at timeout_at whether or not
// the timeout job has run. The jobs here are never drained past the
// decision, as when the queue's workers are stopped or busy.
func TestLateDecisionEscalates(t *testing.T) {
	tests := []struct {
		name    string
		risk    RiskLevel
		at      time.Duration // after requested_at
		approve bool
		wantErr error
		want    ApprovalStatus
	}{
		{"approve a nanosecond early counts", ReversibleWithDelay, 5*time.Minute - time.Nanosecond, true, nil, ApprovalApproved},
		{"approve at timeout_at is refused", ReversibleWithDelay, 5 * time.Minute, true, ErrEscalated, ApprovalEscalated},
		{"approve 45 s late is refused", ReversibleWithDelay, 5*time.Minute + 45*time.Second, true, ErrEscalated, ApprovalEscalated},
		{"reject late is refused too", ReversibleWithDelay, 6 * time.Minute, false, ErrEscalated, ApprovalEscalated},
		{"irreversible: approve late is refused", Irreversible, 5*time.Minute + time.Second, true, ErrEscalated, ApprovalEscalated},
		{"irreversible: approve in time counts", Irreversible, 4 * time.Minute, true, nil, ApprovalApproved},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Config{SummaryRisk: tt.risk}, richEvidence)
			run, a := finishedWithApproval(t, h)
			if a.Risk != tt.risk {
				t.Fatalf("approval risk = %s, want %s", a.Risk, tt.risk)
			}
			h.clock.Set(a.RequestedAt.Add(tt.at))
			_, err := h.svc.Decide(t.Context(), DecideParams{ApprovalID: a.ID, Approve: tt.approve, DecidedBy: "tg:42"})
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Decide at +%s: %v, want %v", tt.at, err, tt.wantErr)
			}
			got, err := h.store.GetApproval(t.Context(), a.ID) // as stored, no read-time escalation
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tt.want {
				t.Fatalf("stored approval is %s, want %s", got.Status, tt.want)
			}
			stored, _ := h.store.GetRun(t.Context(), run.ID)
			if tt.want == ApprovalEscalated {
				if got.Decision == nil || got.Decision.Reason != ReasonApprovalTimeout || got.Decision.ApprovedBy != "" || got.Decision.RejectedBy != "" {
					t.Errorf("decision = %+v, want reason approval_timeout and nobody's decision", got.Decision)
				}
				if act := stored.Actions[0]; act.Status != ActionSkipped || !strings.Contains(act.Result, ReasonApprovalTimeout) {
					t.Errorf("action = %+v, want skipped for approval_timeout", act)
				}
			}
			// The held-back jobs run now: the timeout job changes nothing
			// and the refused action is never executed.
			h.clock.Set(a.TimeoutAt.Add(time.Hour))
			drain(t, h.svc, h.store, h.clock)
			after, _ := h.svc.GetApproval(t.Context(), a.ID)
			if after.Status != tt.want {
				t.Errorf("after the jobs ran the approval is %s, want %s", after.Status, tt.want)
			}
			sent := len(h.notifier.messages()) - 1 // the approval post
			if wantSent := map[bool]int{true: 1, false: 0}[tt.want == ApprovalApproved]; sent != wantSent {
				t.Errorf("%d summaries sent, want %d", sent, wantSent)
			}
		})
	}
}

// TestReadsEscalateOverdue: a pending approval read after its timeout is
// escalated then, not shown as pending until the job runs.
func TestReadsEscalateOverdue(t *testing.T) {
	reads := map[string]func(h *harness, a *Approval) ApprovalStatus{
		"GetApproval": func(h *harness, a *Approval) ApprovalStatus {
			got, err := h.svc.GetApproval(t.Context(), a.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got.Status
		},
		"ListApprovals": func(h *harness, a *Approval) ApprovalStatus {
			pending, _, err := h.svc.ListApprovals(t.Context(), ApprovalFilter{Status: ApprovalPending}, Page{})
			if err != nil || len(pending) != 0 {
				t.Errorf("pending list = %v, %v; want empty", pending, err)
			}
			all, _, err := h.svc.ListApprovals(t.Context(), ApprovalFilter{}, Page{})
			if err != nil || len(all) != 1 {
				t.Fatalf("list = %v, %v", all, err)
			}
			return all[0].Status
		},
		"Get run": func(h *harness, a *Approval) ApprovalStatus {
			run, err := h.svc.Get(t.Context(), a.RunID)
			if err != nil {
				t.Fatal(err)
			}
			if run.Actions[0].Status != ActionSkipped {
				t.Errorf("action = %+v, want skipped", run.Actions[0])
			}
			got, _ := h.store.GetApproval(t.Context(), a.ID)
			return got.Status
		},
	}
	for name, read := range reads {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, Config{}, richEvidence)
			_, a := finishedWithApproval(t, h)
			h.clock.Set(a.TimeoutAt)
			if got := read(h, a); got != ApprovalEscalated {
				t.Errorf("read at timeout_at: %s, want escalated", got)
			}
			stored, _ := h.store.GetApproval(t.Context(), a.ID)
			if stored.Status != ApprovalEscalated || stored.Decision.Reason != ReasonApprovalTimeout {
				t.Errorf("stored = %+v, want escalated for approval_timeout", stored)
			}
		})
	}
}

func TestRequestedActions(t *testing.T) {
	cfg := Config{SummaryChat: "team", SummaryChats: []string{"ops", "research"}}
	t.Run("planned and gated by risk", func(t *testing.T) {
		h := newHarness(t, cfg, richEvidence)
		run := h.run(t, StartParams{Topic: "Kubernetes operators", Actions: []ActionRequest{
			{Type: ActionSendSummary, Risk: Irreversible, Parameters: map[string]any{ParamChatID: "ops"}},
			{Type: ActionSendSummary, Parameters: map[string]any{ParamChatID: "research"}},
		}})
		if len(run.Actions) != 2 {
			t.Fatalf("actions = %+v, want two", run.Actions)
		}
		wantRisk := []RiskLevel{Irreversible, ReversibleWithDelay}
		for i, act := range run.Actions {
			if act.Risk != wantRisk[i] || act.Status != ActionAwaitingApproval || act.ApprovalID == "" {
				t.Errorf("action %d = %+v, want %s awaiting approval", i, act, wantRisk[i])
			}
		}
		if diff := cmp.Diff(map[string]any{ParamChatID: "ops"}, run.Actions[0].Parameters); diff != "" {
			t.Errorf("parameters (-want +got):\n%s", diff)
		}
		h.clock.Set(run.UpdatedAt.Add(time.Minute))
		if _, err := h.svc.Decide(t.Context(), DecideParams{ApprovalID: run.Actions[0].ApprovalID, Approve: true, DecidedBy: "x"}); err != nil {
			t.Fatal(err)
		}
		drain(t, h.svc, h.store, h.clock)
		var chats []string
		for _, m := range h.notifier.messages() {
			chats = append(chats, m.ChatID)
		}
		// Two approval posts to the approvers' chat, then the approved
		// summary to its own chat.
		if diff := cmp.Diff([]string{"team", "team", "ops"}, chats); diff != "" {
			t.Errorf("chats posted to (-want +got):\n%s", diff)
		}
	})
	t.Run("a request cannot lower the risk", func(t *testing.T) {
		h := newHarness(t, cfg, richEvidence)
		run := h.run(t, StartParams{Topic: "Kubernetes operators", Actions: []ActionRequest{
			{Type: ActionSendSummary, Risk: Reversible, Parameters: map[string]any{ParamChatID: "team"}},
		}})
		if act := run.Actions[0]; act.Risk != ReversibleWithDelay || act.Status != ActionAwaitingApproval {
			t.Errorf("action = %+v, want reversible_with_delay awaiting approval", act)
		}
	})
	t.Run("a requested action without a chat posts to the configured chat", func(t *testing.T) {
		h := newHarness(t, Config{SummaryChat: "team", SummaryRisk: Reversible}, richEvidence)
		run := h.run(t, StartParams{Topic: "Kubernetes operators", Actions: []ActionRequest{{Type: ActionSendSummary, Risk: Irreversible}}})
		if act := run.Actions[0]; act.Parameters[ParamChatID] != "team" || act.Risk != Irreversible || act.Status != ActionAwaitingApproval {
			t.Errorf("action = %+v, want irreversible to team, awaiting approval", act)
		}
		// Without RESEARCH_CHAT_ID it goes to the notifier's default chat.
		h = newHarness(t, Config{SummaryRisk: Reversible}, richEvidence)
		run = h.run(t, StartParams{Topic: "Kubernetes operators", Actions: []ActionRequest{{Type: ActionSendSummary}}})
		if act := run.Actions[0]; len(act.Parameters) != 0 || act.Status != ActionExecuted {
			t.Errorf("action = %+v, want executed without a chat", act)
		}
		if msgs := h.notifier.messages(); len(msgs) != 1 || msgs[0].ChatID != "" {
			t.Errorf("messages = %+v, want one to the default chat", msgs)
		}
	})
	t.Run("the default action carries the configured chat", func(t *testing.T) {
		h := newHarness(t, Config{SummaryChat: "team", SummaryRisk: Reversible}, richEvidence)
		run := h.run(t, StartParams{Topic: "Kubernetes operators"})
		if act := run.Actions[0]; act.Parameters[ParamChatID] != "team" || act.Status != ActionExecuted {
			t.Errorf("action = %+v", act)
		}
		if msgs := h.notifier.messages(); len(msgs) != 1 || msgs[0].ChatID != "team" {
			t.Errorf("messages = %+v", msgs)
		}
	})

	invalid := []struct {
		name  string
		req   ActionRequest
		field string
	}{
		{"unknown type", ActionRequest{Type: "send_email", Parameters: map[string]any{ParamChatID: "ops"}}, "actions[0].action_type"},
		{"blank chat", ActionRequest{Type: ActionSendSummary, Parameters: map[string]any{ParamChatID: " "}}, "actions[0].parameters.chat_id"},
		{"chat not a string", ActionRequest{Type: ActionSendSummary, Parameters: map[string]any{ParamChatID: 42.0}}, "actions[0].parameters.chat_id"},
		{"chat not configured", ActionRequest{Type: ActionSendSummary, Parameters: map[string]any{ParamChatID: "elsewhere"}}, "actions[0].parameters.chat_id"},
		{"unknown parameter", ActionRequest{Type: ActionSendSummary, Parameters: map[string]any{ParamChatID: "ops", "to": "x"}}, "actions[0].parameters.to"},
		{"bad risk", ActionRequest{Type: ActionSendSummary, Risk: "risky", Parameters: map[string]any{ParamChatID: "ops"}}, "actions[0].risk_level"},
	}
	for _, tt := range invalid {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, cfg, richEvidence)
			_, err := h.svc.Start(t.Context(), StartParams{Topic: "x", UserID: userID, Actions: []ActionRequest{tt.req}})
			var inv *InvalidError
			if !errors.As(err, &inv) || inv.Field != tt.field {
				t.Errorf("Start error = %v, want an InvalidError on %s", err, tt.field)
			}
		})
	}
}

func TestApprovalMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	count := func(outcome ApprovalStatus) float64 {
		return testutil.ToFloat64(m.approvals.WithLabelValues(string(outcome)))
	}
	// One approval approved in time, one escalated by a late decision (and
	// a second late try), one escalated by the timeout job.
	for _, step := range []func(h *harness, a *Approval){
		func(h *harness, a *Approval) {
			h.clock.Set(a.RequestedAt.Add(time.Minute))
			_, _ = h.svc.Decide(t.Context(), DecideParams{ApprovalID: a.ID, Approve: true, DecidedBy: "x"})
		},
		func(h *harness, a *Approval) {
			h.clock.Set(a.TimeoutAt)
			for range 2 {
				_, _ = h.svc.Decide(t.Context(), DecideParams{ApprovalID: a.ID, Approve: true, DecidedBy: "x"})
			}
		},
		func(h *harness, a *Approval) {
			h.clock.Set(a.TimeoutAt)
			drain(t, h.svc, h.store, h.clock)
		},
	} {
		h := &harness{store: newMemStore(), clock: newFakeClock(), search: &fakeSearch{fn: richEvidence}, notifier: &fakeNotifier{}}
		h.svc, err = New(Deps{Store: h.store, Searcher: h.search, Notifier: h.notifier, Clock: h.clock, Metrics: m}, Config{})
		if err != nil {
			t.Fatal(err)
		}
		_, a := finishedWithApproval(t, h)
		step(h, a)
	}
	if got := []float64{count(ApprovalApproved), count(ApprovalRejected), count(ApprovalEscalated)}; !slices.Equal(got, []float64{1, 0, 2}) {
		t.Errorf("approved, rejected, escalated = %v, want [1 0 2]", got)
	}
	if got := testutil.ToFloat64(m.lateDecisions); got != 2 {
		t.Errorf("late decisions = %v, want 2", got)
	}
}

// TestRefusedSummaryFails holds that a permanent refusal by the notifier
// (a chat it may not post to) ends the action FAILED with the reason at the
// first attempt, instead of leaving it QUEUED through every retry; the
// approval post refused the same way is not retried either.
func TestRefusedSummaryFails(t *testing.T) {
	h := newHarness(t, Config{SummaryRisk: Reversible}, richEvidence)
	h.notifier.err = &RefusedError{Reason: "chat_id is not a configured chat"}
	run := h.run(t, StartParams{Topic: "Kubernetes operators"})
	act := run.Actions[0]
	if act.Status != ActionFailed || act.Result != "refused by the notifier: chat_id is not a configured chat" {
		t.Errorf("action = %+v, want FAILED with the notifier's reason", act)
	}

	h = newHarness(t, Config{}, richEvidence)
	h.notifier.err = &RefusedError{Reason: "no"}
	run = h.run(t, StartParams{Topic: "Kubernetes operators"})
	if act := run.Actions[0]; act.Status != ActionAwaitingApproval {
		t.Errorf("action = %+v, want still awaiting its approval (decidable through the API)", act)
	}
}
