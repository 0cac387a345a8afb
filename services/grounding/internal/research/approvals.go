package research

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// This file holds what happens after a run finished: the actions it
// proposes, their approvals (posting, deciding, expiring) and executing
// them. The run's step machine is in service.go.
//
// An approval expires at timeout_at whatever the job queue does: the
// timeout job escalates it when it runs, and every decision or read that
// meets a pending approval past timeout_at escalates it on the spot, so a
// late job (busy workers, a restart) can never let a late decision count.

// maxRequestedActions bounds the actions one run may be started with.
const maxRequestedActions = 5

// maxPageSize is the largest page a Store list returns; a run has far
// fewer approvals.
const maxPageSize = 100

// timeoutJobSlack is how early the timeout job may escalate: the queue
// hands a job over at its scheduled time by its own clock, and one that
// came a moment early would otherwise wait another scheduling round. The
// rule allows ±10 s; decisions stay accepted until timeout_at exactly.
const timeoutJobSlack = time.Second

// riskRank orders risk levels from least to most guarded.
func riskRank(r RiskLevel) int {
	switch r {
	case Reversible:
		return 0
	case ReversibleWithDelay:
		return 1
	default:
		return 2
	}
}

// summaryChats are the chats a send_summary may post to.
func (s *Service) summaryChats() []string {
	chats := slices.Clone(s.cfg.SummaryChats)
	if s.cfg.SummaryChat != "" {
		chats = append(chats, s.cfg.SummaryChat)
	}
	return chats
}

// checkRequested validates the actions a run is started with and returns
// them with their effective risk levels.
func (s *Service) checkRequested(reqs []ActionRequest) ([]ActionRequest, error) {
	if len(reqs) > maxRequestedActions {
		return nil, &InvalidError{Field: "actions", Reason: fmt.Sprintf("at most %d actions, got %d", maxRequestedActions, len(reqs))}
	}
	out := make([]ActionRequest, 0, len(reqs))
	for i, r := range reqs {
		field := fmt.Sprintf("actions[%d]", i)
		if r.Type != ActionSendSummary {
			return nil, &InvalidError{Field: field + ".action_type", Reason: "must be " + ActionSendSummary}
		}
		risk := s.cfg.SummaryRisk
		if r.Risk != "" {
			if _, err := ParseRiskLevel(string(r.Risk)); err != nil {
				return nil, &InvalidError{Field: field + ".risk_level", Reason: err.Error()}
			}
			if riskRank(r.Risk) > riskRank(risk) {
				risk = r.Risk
			}
		}
		for k := range r.Parameters {
			if k != ParamChatID {
				return nil, &InvalidError{Field: field + ".parameters." + k, Reason: "unknown parameter of " + ActionSendSummary}
			}
		}
		raw, named := r.Parameters[ParamChatID]
		chat, _ := raw.(string)
		switch {
		case !named:
			// No chat named: the configured one, as the default action
			// posts to (the notifier's default chat when none is set).
			params := map[string]any{}
			if s.cfg.SummaryChat != "" {
				params[ParamChatID] = s.cfg.SummaryChat
			}
			out = append(out, ActionRequest{Type: r.Type, Risk: risk, Parameters: params})
			continue
		case strings.TrimSpace(chat) == "":
			return nil, &InvalidError{Field: field + ".parameters." + ParamChatID, Reason: "must be a chat id; leave it out for the configured chat"}
		case !slices.Contains(s.summaryChats(), chat):
			return nil, &InvalidError{Field: field + ".parameters." + ParamChatID, Reason: "must be a chat configured for research summaries (RESEARCH_CHAT_ID or RESEARCH_SUMMARY_CHATS)"}
		}
		out = append(out, ActionRequest{Type: r.Type, Risk: risk, Parameters: map[string]any{ParamChatID: chat}})
	}
	return out, nil
}

// propose adds the finished run's actions to c: the requested ones, or the
// default send_summary to the configured chat. An action that needs no
// approval is queued at once; the others wait for an approval that is
// posted to the chat and expires at timeout_at.
func (s *Service) propose(c *Change, now time.Time) {
	run := c.Run
	reqs := run.Requested
	if len(reqs) == 0 {
		def := ActionRequest{Type: ActionSendSummary, Risk: s.cfg.SummaryRisk}
		if s.cfg.SummaryChat != "" {
			def.Parameters = map[string]any{ParamChatID: s.cfg.SummaryChat}
		}
		reqs = []ActionRequest{def}
	}
	for _, r := range reqs {
		action := Action{
			ID:          uuid.NewString(),
			Type:        r.Type,
			Description: describeAction(r),
			Risk:        r.Risk,
			Parameters:  r.Parameters,
		}
		if !action.Risk.NeedsApproval() {
			action.Status = ActionQueued
			c.Jobs = append(c.Jobs, Job{Kind: JobExecute, RunID: run.ID, ActionID: action.ID})
			run.Actions = append(run.Actions, action)
			continue
		}
		a := &Approval{
			ID:          uuid.NewString(),
			RunID:       run.ID,
			ActionID:    action.ID,
			ActionType:  action.Type,
			Description: action.Description,
			Risk:        action.Risk,
			Requester:   run.UserID,
			RequestedAt: now,
			TimeoutAt:   now.Add(s.cfg.ApprovalTimeout),
			Status:      ApprovalPending,
		}
		action.Status, action.ApprovalID = ActionAwaitingApproval, a.ID
		c.Approvals = append(c.Approvals, a)
		c.Jobs = append(c.Jobs,
			Job{Kind: JobPostApproval, RunID: run.ID, ApprovalID: a.ID},
			Job{Kind: JobTimeout, RunID: run.ID, ApprovalID: a.ID, NotBefore: a.TimeoutAt},
		)
		run.Actions = append(run.Actions, action)
	}
}

func describeAction(r ActionRequest) string {
	if chat, _ := r.Parameters[ParamChatID].(string); chat != "" {
		return "Post the executive summary of the research report to chat " + chat + "."
	}
	return "Post the executive summary of the research report to the team chat."
}

// GetApproval returns an approval request; one still pending after its
// timeout is escalated first.
func (s *Service) GetApproval(ctx context.Context, id string) (*Approval, error) {
	a, err := s.deps.Store.GetApproval(ctx, id)
	if err != nil {
		return nil, err
	}
	if !s.overdue(a) {
		return a, nil
	}
	if err := s.escalateOverdue(ctx, a.RunID); err != nil {
		return nil, err
	}
	return s.deps.Store.GetApproval(ctx, id)
}

// ListApprovals returns approval requests, newest first, and the next page
// token. Pending ones past their timeout are escalated first (and then
// left out of a list of pending ones).
func (s *Service) ListApprovals(ctx context.Context, f ApprovalFilter, page Page) ([]*Approval, string, error) {
	as, next, err := s.deps.Store.ListApprovals(ctx, f, page)
	if err != nil {
		return nil, "", err
	}
	out := as[:0]
	for _, a := range as {
		if s.overdue(a) {
			if err := s.escalateOverdue(ctx, a.RunID); err != nil {
				return nil, "", err
			}
			if a, err = s.deps.Store.GetApproval(ctx, a.ID); err != nil {
				return nil, "", err
			}
		}
		if f.Status == "" || a.Status == f.Status {
			out = append(out, a)
		}
	}
	return out, next, nil
}

// overdue reports whether a is pending at or after its timeout.
func (s *Service) overdue(a *Approval) bool {
	return a.Status == ApprovalPending && !s.now().Before(a.TimeoutAt)
}

// DecideParams are a person's answer to an approval request.
type DecideParams struct {
	ApprovalID string
	Approve    bool
	// Actor is the authenticated caller (platform/actor); "" when the call
	// carried none.
	Actor string
	// DecidedBy is the decider's self-declared name, kept as a note.
	DecidedBy string
	Comment   string
}

// Decide records a decision on a pending approval: approve queues the
// action, reject skips it. The decider is the actor when there is one,
// else DecidedBy. A decision at or after timeout_at is refused with
// ErrEscalated, and the approval is escalated on the spot if the timeout
// job has not done it yet; a decision on an approval decided before fails
// with ErrAlreadyDecided.
func (s *Service) Decide(ctx context.Context, p DecideParams) (*Approval, error) {
	if strings.TrimSpace(p.DecidedBy) == "" && p.Actor == "" {
		return nil, &InvalidError{Field: "decided_by", Reason: "must not be blank"}
	}
	who := p.Actor
	if who == "" {
		who = p.DecidedBy
	}
	a, err := s.deps.Store.GetApproval(ctx, p.ApprovalID)
	if err != nil {
		return nil, err
	}
	var (
		decided   *Approval
		escalated *Approval
	)
	err = s.update(ctx, a.RunID, func(c *Change) error {
		appr, action := find(c, p.ApprovalID)
		if appr == nil {
			return fmt.Errorf("approval %s: %w", p.ApprovalID, ErrNotFound)
		}
		if appr.Status == ApprovalEscalated {
			return fmt.Errorf("approval %s: %w", appr.ID, ErrEscalated)
		}
		if appr.Status != ApprovalPending {
			return fmt.Errorf("approval %s is %s: %w", appr.ID, appr.Status, ErrAlreadyDecided)
		}
		now := s.now()
		if !now.Before(appr.TimeoutAt) {
			// Too late, whether or not the timeout job has run: the
			// escalation is committed and the decision refused below.
			escalate(c, appr, action, now)
			escalated = appr
			return nil
		}
		d := &Decision{
			Actor: p.Actor, DecidedBy: p.DecidedBy, Comment: p.Comment,
			DurationSeconds: math.Max(0, now.Sub(appr.RequestedAt).Seconds()), DecidedAt: now,
		}
		if p.Approve {
			appr.Status, d.ApprovedBy = ApprovalApproved, who
			if action != nil {
				action.Status, action.Result = ActionApproved, "approved by "+who
				c.Jobs = append(c.Jobs, Job{Kind: JobExecute, RunID: c.Run.ID, ActionID: action.ID})
			}
		} else {
			appr.Status, d.RejectedBy = ApprovalRejected, who
			if action != nil {
				action.Status, action.Result = ActionSkipped, "rejected by "+who
			}
		}
		appr.Decision = d
		c.Run.UpdatedAt = now
		decided = appr
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrEscalated) {
			s.deps.Metrics.lateDecision()
		}
		return nil, err
	}
	if escalated != nil {
		s.deps.Metrics.approvalEnded(ApprovalEscalated)
		s.deps.Metrics.lateDecision()
		s.logEscalation(ctx, escalated, "decision came after the timeout")
		s.log.WarnContext(ctx, "late approval decision refused", "approval_id", escalated.ID, "run_id", escalated.RunID,
			"actor", p.Actor, "decided_by", p.DecidedBy, "timeout_at", escalated.TimeoutAt)
		return nil, fmt.Errorf("approval %s: %w", escalated.ID, ErrEscalated)
	}
	s.deps.Metrics.approvalEnded(decided.Status)
	s.log.InfoContext(ctx, "approval decided", "approval_id", decided.ID, "run_id", decided.RunID,
		"status", decided.Status, "actor", p.Actor, "decided_by", p.DecidedBy)
	return decided, nil
}

// find returns the change's approval with that id and the action it
// guards.
func find(c *Change, approvalID string) (*Approval, *Action) {
	for _, a := range c.Approvals {
		if a.ID != approvalID {
			continue
		}
		return a, actionOf(c, a)
	}
	return nil, nil
}

func actionOf(c *Change, a *Approval) *Action {
	for i := range c.Run.Actions {
		if c.Run.Actions[i].ID == a.ActionID {
			return &c.Run.Actions[i]
		}
	}
	return nil
}

// escalate marks a pending approval escalated for approval_timeout and
// skips its action.
func escalate(c *Change, appr *Approval, action *Action, now time.Time) {
	appr.Status = ApprovalEscalated
	appr.Decision = &Decision{Reason: ReasonApprovalTimeout, DurationSeconds: math.Max(0, now.Sub(appr.RequestedAt).Seconds()), DecidedAt: now}
	if action != nil {
		action.Status = ActionSkipped
		action.Result = fmt.Sprintf("skipped: nobody decided within %s (%s)", appr.TimeoutAt.Sub(appr.RequestedAt), ReasonApprovalTimeout)
	}
	c.Run.UpdatedAt = now
}

func (s *Service) logEscalation(ctx context.Context, a *Approval, why string) {
	s.log.WarnContext(ctx, "approval timed out; action skipped",
		"approval_id", a.ID, "run_id", a.RunID, "action_type", a.ActionType,
		"reason", ReasonApprovalTimeout, "waited_seconds", a.Decision.DurationSeconds, "escalated_by", why)
}

// escalateOverdue escalates every approval of the run that is still
// pending at or after its timeout.
func (s *Service) escalateOverdue(ctx context.Context, runID string) error {
	var done []*Approval
	err := s.update(ctx, runID, func(c *Change) error {
		now := s.now()
		for _, a := range c.Approvals {
			if a.Status == ApprovalPending && !now.Before(a.TimeoutAt) {
				escalate(c, a, actionOf(c, a), now)
				done = append(done, a)
			}
		}
		if len(done) == 0 {
			return ErrNoChange
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("escalating overdue approvals of run %s: %w", runID, err)
	}
	for _, a := range done {
		s.deps.Metrics.approvalEnded(ApprovalEscalated)
		s.logEscalation(ctx, a, "read after the timeout")
	}
	return nil
}

// expire escalates an approval still pending at its timeout and skips its
// action. Before the timeout it asks to be run again then.
func (s *Service) expire(ctx context.Context, job Job) error {
	var (
		wait      time.Duration
		escalated *Approval
	)
	err := s.update(ctx, job.RunID, func(c *Change) error {
		appr, action := find(c, job.ApprovalID)
		if appr == nil || appr.Status != ApprovalPending {
			return ErrNoChange
		}
		now := s.now()
		if due := appr.TimeoutAt.Add(-timeoutJobSlack); now.Before(due) {
			wait = appr.TimeoutAt.Sub(now)
			return ErrNoChange
		}
		escalate(c, appr, action, now)
		escalated = appr
		return nil
	})
	if err != nil {
		return fmt.Errorf("escalating approval %s: %w", job.ApprovalID, err)
	}
	if wait > 0 {
		return &NotDueError{Wait: wait}
	}
	if escalated != nil {
		s.deps.Metrics.approvalEnded(ApprovalEscalated)
		s.logEscalation(ctx, escalated, "timeout job")
	}
	return nil
}

// approvalButtons are the Approve and Reject buttons under a posted
// approval. The notifier turns them into Telegram callback data and, on a
// press, calls DecideApproval in the presser's name.
func approvalButtons(approvalID string) []Button {
	return []Button{
		{Text: "Approve", ApprovalID: approvalID, Approve: true},
		{Text: "Reject", ApprovalID: approvalID, Approve: false},
	}
}

// postApproval posts a pending approval to the chat with Approve and Reject
// buttons. A failure is retried; when retries run out the approval stays
// pending (it can still be decided through the API) and times out as usual.
func (s *Service) postApproval(ctx context.Context, job Job) error {
	a, err := s.deps.Store.GetApproval(ctx, job.ApprovalID)
	if err != nil {
		return fmt.Errorf("loading approval %s: %w", job.ApprovalID, err)
	}
	if a.Status != ApprovalPending || s.overdue(a) {
		return nil
	}
	run, err := s.deps.Store.GetRun(ctx, a.RunID)
	if err != nil {
		return fmt.Errorf("loading run %s: %w", a.RunID, err)
	}
	if s.deps.Notifier == nil {
		s.log.WarnContext(ctx, "no notifier configured; approval not posted", "approval_id", a.ID)
		return nil
	}
	msg := Message{
		ChatID: s.cfg.SummaryChat,
		Text: truncateRunes(fmt.Sprintf("Approval needed (%s): %s\nResearch: %s\nTimes out at %s; without a decision the action is skipped.",
			strings.ReplaceAll(string(a.Risk), "_", " "), a.Description, run.Topic, a.TimeoutAt.Format(time.RFC1123)), 3900),
		Buttons:        approvalButtons(a.ID),
		IdempotencyKey: "research-approval:" + a.ID,
	}
	if _, err := s.deps.Notifier.Send(ctx, msg); err != nil {
		var refused *RefusedError
		if errors.As(err, &refused) || lastAttempt(job) {
			s.log.ErrorContext(ctx, "posting approval failed for good; it can still be decided through the API", "approval_id", a.ID, "error", err)
			return nil
		}
		return fmt.Errorf("posting approval %s: %w", a.ID, err)
	}
	s.log.InfoContext(ctx, "approval posted", "approval_id", a.ID, "run_id", a.RunID)
	return nil
}

// execute runs an approved or reversible action once: the notifier's
// idempotency key makes a retried send deliver a single message.
func (s *Service) execute(ctx context.Context, job Job) error {
	run, err := s.deps.Store.GetRun(ctx, job.RunID)
	if err != nil {
		return fmt.Errorf("loading run %s: %w", job.RunID, err)
	}
	var action *Action
	for i := range run.Actions {
		if run.Actions[i].ID == job.ActionID {
			action = &run.Actions[i]
		}
	}
	if action == nil || !action.Status.Queued() {
		return nil
	}
	var (
		status = ActionExecuted
		result string
	)
	switch {
	case action.Type != ActionSendSummary:
		status, result = ActionFailed, "unknown action type "+action.Type
	case s.deps.Notifier == nil:
		status, result = ActionFailed, "no notifier configured"
	case run.Report == nil:
		status, result = ActionFailed, "the run has no report"
	default:
		chat, _ := action.Parameters[ParamChatID].(string)
		id, err := s.deps.Notifier.Send(ctx, Message{ChatID: chat, Text: summaryMessage(run), IdempotencyKey: "research-action:" + action.ID})
		var refused *RefusedError
		switch {
		case errors.As(err, &refused):
			// Sending again cannot help: the action fails now, saying why,
			// instead of staying QUEUED through every retry.
			s.log.WarnContext(ctx, "summary refused by the notifier", "run_id", run.ID, "action_id", action.ID, "reason", refused.Reason)
			status, result = ActionFailed, "refused by the notifier: "+refused.Reason
		case err != nil && !lastAttempt(job):
			return fmt.Errorf("sending summary of run %s: %w", run.ID, err)
		case err != nil:
			s.log.ErrorContext(ctx, "sending summary failed for good", "run_id", run.ID, "error", err)
			status, result = ActionFailed, "sending failed: the notifier was unavailable"
		default:
			result = "summary sent (delivery " + id + ")"
		}
	}
	err = s.update(ctx, run.ID, func(c *Change) error {
		for i := range c.Run.Actions {
			a := &c.Run.Actions[i]
			if a.ID == job.ActionID && a.Status.Queued() {
				a.Status, a.Result = status, result
				c.Run.UpdatedAt = s.now()
				return nil
			}
		}
		return ErrNoChange
	})
	if err != nil {
		return fmt.Errorf("saving action result of run %s: %w", run.ID, err)
	}
	s.log.InfoContext(ctx, "action done", "run_id", run.ID, "action_type", action.Type, "status", status)
	return nil
}
