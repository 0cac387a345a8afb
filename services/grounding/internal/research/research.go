// Package research is the research workflow, Plan → Research → Critique →
// (Refine → Research)* → Finish: a run plans sub-questions for a topic,
// collects evidence for them, critiques the evidence and refines the
// sub-questions at the gaps until the quality threshold or the iteration cap
// is reached, then writes a cited report and proposes actions; risky actions
// wait for a person's approval, which times out.
//
// The run is a sequence of steps (plan, research, critique, refine, …,
// finish), each executed by one durable job. A step reads the run, does its
// I/O (search, retrieval), then commits the new state together with the job
// for the next step through [Store.Update], so a process that dies mid-run
// resumes at the last committed step. Every job carries the step number it
// was queued for; a job whose step was already committed is a replay and does
// nothing.
//
// The package imports no gRPC and no SQL: evidence, retrieval, delivery,
// persistence and time come in through small interfaces.
package research

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Limits and defaults of a run.
const (
	// MaxIterations caps the plan-research-critique rounds of a run,
	// whatever is asked.
	MaxIterations = 5
	// DefaultQualityThreshold is the critique score at which a run stops
	// when the request names none.
	DefaultQualityThreshold = 0.8
	// MaxTopicChars bounds a topic in characters.
	MaxTopicChars = 500
	// MaxSnippetChars bounds a source's snippet in characters.
	MaxSnippetChars = 1000
	// MaxSourceTextChars bounds the document text a source keeps for
	// judging its relevance (a runbook is a few thousand characters).
	MaxSourceTextChars = 16000
	// DefaultApprovalTimeout is how long an approval waits for a person.
	DefaultApprovalTimeout = 5 * time.Minute
	// DefaultLookupConcurrency is how many evidence calls a research step
	// has in flight at once unless configured: a typical plan's five
	// sub-questions, each searched and looked up in a collection, all at
	// once, so the step costs its slowest call; few enough not to flood the
	// search and rag services.
	DefaultLookupConcurrency = 10
)

// Status is where a run stands, as callers see it.
type Status string

// Run statuses.
const (
	StatusPlanning    Status = "planning"
	StatusResearching Status = "researching"
	StatusCritiquing  Status = "critiquing"
	StatusRefining    Status = "refining"
	StatusFinished    Status = "finished"
	StatusFailed      Status = "failed"
)

// Terminal reports whether the run will not change status any more.
func (s Status) Terminal() bool { return s == StatusFinished || s == StatusFailed }

// Step is the step a run executes next.
type Step string

// Steps. StepFinish writes the report; StepDone means nothing is left.
const (
	StepPlan     Step = "plan"
	StepResearch Step = "research"
	StepCritique Step = "critique"
	StepRefine   Step = "refine"
	StepFinish   Step = "finish"
	StepDone     Step = "done"
)

// status is what callers see while step is next: the finish step still
// shows the critique that decided to finish.
func (s Step) status() Status {
	switch s {
	case StepPlan:
		return StatusPlanning
	case StepResearch:
		return StatusResearching
	case StepCritique, StepFinish:
		return StatusCritiquing
	case StepRefine:
		return StatusRefining
	default:
		return StatusFinished
	}
}

// Run is one research run.
type Run struct {
	ID         string `json:"id"`
	Topic      string `json:"topic"`
	UserID     string `json:"user_id"`
	Collection string `json:"collection,omitempty"`
	Status     Status `json:"status"`
	// Step is the step to execute next and Seq the number of steps
	// committed so far; a job queued for another Seq is stale.
	Step             Step     `json:"step"`
	Seq              int      `json:"seq"`
	IterationCount   int      `json:"iteration_count"`
	MaxIterations    int      `json:"max_iterations"`
	QualityThreshold float64  `json:"quality_threshold"`
	QualityScore     *float64 `json:"quality_score,omitempty"`
	// Plan is the current sub-questions; Pending those the next research
	// step looks up (all of them after planning, the sharpened ones after a
	// refinement).
	Plan    []string `json:"plan"`
	Pending []string `json:"pending,omitempty"`
	// Sharpened counts how often each template kind was sharpened, so the
	// next refinement picks a different phrasing.
	Sharpened map[string]int `json:"sharpened,omitempty"`
	Sources   []Source       `json:"sources"`
	Critique  *Critique      `json:"critique,omitempty"`
	// RefinedAnswer is the draft answer the last refine step wrote from
	// the evidence so far; empty until a run refines.
	RefinedAnswer string `json:"refined_answer,omitempty"`
	// Requested are the actions the run was started with; empty means the
	// default send_summary to the configured chat.
	Requested []ActionRequest `json:"requested,omitempty"`
	Actions   []Action        `json:"actions,omitempty"`
	Report    *Report         `json:"report,omitempty"`
	// Error says why the run failed, in words fit for the caller.
	Error     string    `json:"error,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Source is one piece of evidence.
type Source struct {
	Title       string    `json:"title"`
	URL         string    `json:"url"`
	Snippet     string    `json:"snippet"`
	RetrievedAt time.Time `json:"retrieved_at"`
	// SubQuestion is the sub-question whose search found it.
	SubQuestion string `json:"sub_question,omitempty"`
	// Text is the document's text when search returned it, read (as
	// enrichment reads it) to judge the source's relevance: a runbook
	// quotes the error message further down than its snippet reaches.
	// Reports do not carry it.
	Text string `json:"text,omitempty"`
}

// Critique scores the evidence of a run.
type Critique struct {
	// Score is the quality in [0,1].
	Score   float64  `json:"score"`
	Reasons []string `json:"reasons"`
	// Gaps are the sub-questions with too little evidence.
	Gaps []string `json:"gaps,omitempty"`
}

// RiskLevel says whether an action needs a person's approval.
type RiskLevel string

// Risk levels.
const (
	// Reversible actions can be undone at once and run without approval.
	Reversible RiskLevel = "reversible"
	// ReversibleWithDelay actions can be undone, but not before people may
	// have seen their effect; they need approval.
	ReversibleWithDelay RiskLevel = "reversible_with_delay"
	// Irreversible actions cannot be undone; they need approval.
	Irreversible RiskLevel = "irreversible"
)

// NeedsApproval reports whether an action of this risk waits for a person.
func (r RiskLevel) NeedsApproval() bool { return r != Reversible }

// ParseRiskLevel accepts the names above.
func ParseRiskLevel(s string) (RiskLevel, error) {
	switch r := RiskLevel(s); r {
	case Reversible, ReversibleWithDelay, Irreversible:
		return r, nil
	}
	return "", fmt.Errorf("risk level %q: want reversible, reversible_with_delay or irreversible", s)
}

// ActionStatus is where a planned action stands.
type ActionStatus string

// Action statuses.
const (
	ActionAwaitingApproval ActionStatus = "awaiting_approval"
	// ActionApproved: approved, queued to run.
	ActionApproved ActionStatus = "approved"
	// ActionQueued: needs no approval, queued to run.
	ActionQueued   ActionStatus = "queued"
	ActionExecuted ActionStatus = "executed"
	ActionSkipped  ActionStatus = "skipped"
	ActionFailed   ActionStatus = "failed"
)

// Queued reports whether the action is allowed (approved, or needs no
// approval) and waiting to run.
func (s ActionStatus) Queued() bool { return s == ActionApproved || s == ActionQueued }

// ActionSendSummary posts the report's executive summary to a chat; its
// parameters name the chat (ParamChatID).
const ActionSendSummary = "send_summary"

// ParamChatID is the send_summary parameter naming the chat to post to.
const ParamChatID = "chat_id"

// ActionRequest is an action a run is asked to propose when it finishes.
type ActionRequest struct {
	Type string `json:"type"`
	// Risk is the level the caller asks for; "" means the configured level
	// of the type. A request can raise the level, never lower it below the
	// configured one, so a caller cannot skip an approval.
	Risk RiskLevel `json:"risk,omitempty"`
	// Parameters are the action's payload, e.g. {"chat_id": "-100123"}.
	Parameters map[string]any `json:"parameters,omitempty"`
}

// Action is something a finished run proposes to do.
type Action struct {
	ID          string    `json:"id"`
	Type        string    `json:"type"`
	Description string    `json:"description"`
	Risk        RiskLevel `json:"risk"`
	// Parameters are the action's payload (send_summary: its chat).
	Parameters map[string]any `json:"parameters,omitempty"`
	Status     ActionStatus   `json:"status"`
	ApprovalID string         `json:"approval_id,omitempty"`
	// Result says what happened when it ran or why it was skipped.
	Result string `json:"result,omitempty"`
}

// ApprovalStatus is where an approval request stands.
type ApprovalStatus string

// Approval statuses.
const (
	ApprovalPending   ApprovalStatus = "pending"
	ApprovalApproved  ApprovalStatus = "approved"
	ApprovalRejected  ApprovalStatus = "rejected"
	ApprovalEscalated ApprovalStatus = "escalated"
)

// ReasonApprovalTimeout is the decision reason of an approval nobody decided
// in time.
const ReasonApprovalTimeout = "approval_timeout"

// Approval asks a person to allow an action.
type Approval struct {
	ID          string         `json:"id"`
	RunID       string         `json:"run_id"`
	ActionID    string         `json:"action_id"`
	ActionType  string         `json:"action_type"`
	Description string         `json:"description"`
	Risk        RiskLevel      `json:"risk"`
	Requester   string         `json:"requester"`
	RequestedAt time.Time      `json:"requested_at"`
	TimeoutAt   time.Time      `json:"timeout_at"`
	Status      ApprovalStatus `json:"status"`
	Decision    *Decision      `json:"decision,omitempty"`
}

// Decision records how an approval request ended.
type Decision struct {
	// ApprovedBy or RejectedBy is who decided: the authenticated actor
	// when the call carried one, else the self-declared DecidedBy.
	ApprovedBy string `json:"approved_by,omitempty"`
	RejectedBy string `json:"rejected_by,omitempty"`
	// Actor is the authenticated caller (platform/actor), empty when the
	// call carried none.
	Actor string `json:"actor,omitempty"`
	// DecidedBy is the decider's self-declared name, a display note.
	DecidedBy       string    `json:"decided_by,omitempty"`
	Comment         string    `json:"comment,omitempty"`
	DurationSeconds float64   `json:"duration_seconds"`
	Reason          string    `json:"reason,omitempty"`
	DecidedAt       time.Time `json:"decided_at"`
}

// Report is a finished run's output.
type Report struct {
	ExecutiveSummary string `json:"executive_summary"`
	// FindingsMarkdown cites Sources as [n], numbered from 1.
	FindingsMarkdown string            `json:"findings_markdown"`
	Sources          []Source          `json:"sources"`
	Iterations       int               `json:"iterations"`
	GeneratedAt      time.Time         `json:"generated_at"`
	Quality          QualityIndicators `json:"quality"`
	// Sections record, per sub-question, the relevance bar and every
	// source's score against it (see RelevanceBar).
	Sections []SectionEvidence `json:"sections,omitempty"`
}

// QualityIndicators say how far to trust a report.
type QualityIndicators struct {
	Score          float64  `json:"quality_score"`
	Warnings       []string `json:"warnings,omitempty"`
	LimitedSources bool     `json:"limited_sources"`
}

// ReportMetadata is what is stored beside a report for audit and search. It
// holds no personal data: the topic and source titles pass through
// [RedactPersonalData], source URLs lose credentials, query and fragment.
type ReportMetadata struct {
	Type           string      `json:"type"`
	Topic          string      `json:"topic"`
	UserID         string      `json:"user_id"`
	Sources        []SourceRef `json:"sources"`
	IterationCount int         `json:"iteration_count"`
	Timestamp      time.Time   `json:"timestamp"`
}

// ReportMetadataType is ReportMetadata.Type.
const ReportMetadataType = "research_report"

// SourceRef names a source in report metadata.
type SourceRef struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

// ReportRecord is a report as persisted.
type ReportRecord struct {
	RunID    string
	Report   Report
	Metadata ReportMetadata
	// Content is the report as one Markdown document: title, executive
	// summary, findings with citations, sources, quality notes.
	Content string
}

// Errors callers can test for with errors.Is.
var (
	// ErrNotFound: no run or approval with that id.
	ErrNotFound = errors.New("not found")
	// ErrAlreadyDecided: the approval is no longer pending.
	ErrAlreadyDecided = errors.New("approval already decided")
	// ErrEscalated: the approval's timeout passed before the decision, so
	// it escalated and its action was skipped. It is also ErrAlreadyDecided.
	ErrEscalated = fmt.Errorf("approval escalated at its timeout: %w", ErrAlreadyDecided)
	// ErrInvalidPageToken: the page token was not issued by a list call.
	ErrInvalidPageToken = errors.New("invalid page token")
)

// InvalidError says which input is wrong and why.
type InvalidError struct {
	Field  string
	Reason string
}

// Error says which field is wrong and why.
func (e *InvalidError) Error() string { return e.Field + ": " + e.Reason }

// RefusedError is a permanent refusal of a message by the notifier (a
// chat it may not post to, a message it cannot accept): sending it again
// cannot succeed, so the action ends FAILED with Reason instead of being
// retried. Reason is written for the people reading the run.
type RefusedError struct {
	Reason string
}

// Error says the message was refused and why.
func (e *RefusedError) Error() string { return "refused: " + e.Reason }

// NotDueError is returned by [Service.HandleJob] for a job that came too
// early (an approval timeout before its time): run it again after Wait.
type NotDueError struct {
	Wait time.Duration
}

// Error says how long to wait.
func (e *NotDueError) Error() string { return fmt.Sprintf("not due for %s", e.Wait) }

// JobKind names what a job does.
type JobKind string

// Job kinds.
const (
	// JobStep executes the run's next step.
	JobStep JobKind = "step"
	// JobPostApproval posts a pending approval to the chat with buttons.
	JobPostApproval JobKind = "post_approval"
	// JobExecute runs an action that needs no approval or was approved.
	JobExecute JobKind = "execute_action"
	// JobTimeout escalates an approval nobody decided in time.
	JobTimeout JobKind = "approval_timeout"
)

// Job is a unit of durable work. The queue fills Attempt and MaxAttempts
// when it hands a job to [Service.HandleJob].
type Job struct {
	Kind       JobKind
	RunID      string
	Seq        int
	ActionID   string
	ApprovalID string
	// NotBefore delays the job; zero runs it as soon as possible.
	NotBefore time.Time

	Attempt     int
	MaxAttempts int
}

// Change is what [Store.Update] hands to its function: the run and its
// approvals as stored, locked until the change commits. The function edits
// Run and Approvals in place, may append approvals, jobs and a report, and
// everything is committed at once.
type Change struct {
	Run       *Run
	Approvals []*Approval
	// Jobs are queued when the change commits.
	Jobs []Job
	// Report is stored when set.
	Report *ReportRecord
}

// ErrNoChange, returned by an [Store.Update] function, rolls the change back
// and makes Update return nil: there was nothing to do.
var ErrNoChange = errors.New("no change")

// Page asks for one page of a list.
type Page struct {
	// Size is the most items to return; 0 means 20.
	Size int
	// Token is the previous page's next token; empty for the first page.
	Token string
}

// ApprovalFilter narrows ListApprovals; zero fields match everything.
type ApprovalFilter struct {
	Status ApprovalStatus
	RunID  string
}

// Store persists runs, approvals and reports and queues jobs. Methods return
// ErrNotFound for unknown ids and ErrInvalidPageToken for bad tokens.
type Store interface {
	// CreateRun stores a new run and queues jobs in one transaction.
	CreateRun(ctx context.Context, run *Run, jobs []Job) error
	// GetRun returns a run.
	GetRun(ctx context.Context, id string) (*Run, error)
	// ListRuns returns a user's runs (every user's when userID is empty),
	// newest first, and the next page token.
	ListRuns(ctx context.Context, userID string, page Page) ([]*Run, string, error)
	// GetApproval returns an approval.
	GetApproval(ctx context.Context, id string) (*Approval, error)
	// ListApprovals returns approvals, newest first, and the next page
	// token.
	ListApprovals(ctx context.Context, filter ApprovalFilter, page Page) ([]*Approval, string, error)
	// GetReport returns a finished run's stored report and metadata.
	GetReport(ctx context.Context, runID string) (*ReportRecord, error)
	// Update locks the run and its approvals, calls fn, and commits what fn
	// left in the change (run, approvals, jobs, report) atomically. An
	// error from fn rolls back; ErrNoChange rolls back and returns nil.
	Update(ctx context.Context, runID string, fn func(*Change) error) error
}

// Evidence is a search hit or a retrieved passage.
type Evidence struct {
	Title   string
	URL     string
	Snippet string
	// Text is the whole document when the search service returned it
	// (local results); a source keeps a digest of it (see digest).
	Text string
}

// Searcher finds evidence on the web or in the local index.
type Searcher interface {
	Search(ctx context.Context, query string, maxResults int) ([]Evidence, error)
}

// Retriever finds passages in a named document collection.
type Retriever interface {
	Retrieve(ctx context.Context, collection, query string, topK int) ([]Evidence, error)
}

// Button is an approval button under a chat message: pressing it decides
// ApprovalID. The notifier writes its callback data, so the button
// contract ("approval:<id>:approve|reject") is spelled once, on the
// notifier's side (notifier.proto's ApprovalButton).
type Button struct {
	Text       string
	ApprovalID string
	Approve    bool
}

// Message is a chat message to post.
type Message struct {
	// ChatID is where to post; empty means the notifier client's default.
	ChatID  string
	Text    string
	Buttons []Button
	// IdempotencyKey makes a retried send deliver once.
	IdempotencyKey string
}

// Notifier posts messages to the team chat and returns the delivery id.
type Notifier interface {
	Send(ctx context.Context, msg Message) (string, error)
}

// Clock tells the time; tests inject a fake one.
type Clock interface {
	Now() time.Time
}

// SystemClock is the real clock.
type SystemClock struct{}

// Now returns time.Now.
func (SystemClock) Now() time.Time { return time.Now() }

// Planner writes and sharpens sub-questions.
type Planner interface {
	// Plan returns the sub-questions for a topic.
	Plan(ctx context.Context, topic string) ([]string, error)
	// Refine returns the new plan and the sub-questions to look up next,
	// sharpening the critique's gaps; sharpened counts earlier
	// refinements and is updated in place.
	Refine(ctx context.Context, topic string, plan []string, c Critique, sharpened map[string]int) (newPlan, pending []string, err error)
}

// Critic scores a run's evidence against its plan.
type Critic interface {
	Critique(ctx context.Context, topic string, plan []string, sources []Source) (Critique, error)
}
