package research

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Config tunes a Service; zero fields take the defaults.
type Config struct {
	// ApprovalTimeout is how long an approval waits for a decision
	// (default DefaultApprovalTimeout).
	ApprovalTimeout time.Duration
	// SummaryRisk is the risk level of send_summary (default
	// ReversibleWithDelay: a posted message can be deleted, but only after
	// the chat may have read it, so a person decides).
	SummaryRisk RiskLevel
	// SummaryChat is the chat the default send_summary and approval
	// requests post to; empty means the notifier's default chat.
	SummaryChat string
	// SummaryChats are further chats a run may be started with a
	// send_summary to; SummaryChat is always allowed.
	SummaryChats []string
	// ResultsPerQuestion is how many search results each sub-question asks
	// for (default 5).
	ResultsPerQuestion int
	// PassagesPerQuestion is how many collection passages each sub-question
	// asks for when the run names a collection (default 3).
	PassagesPerQuestion int
	// WatchPoll is how often Watch re-reads a run whose changes happen in
	// another process (default 1s).
	WatchPoll time.Duration
	// LookupConcurrency bounds the evidence calls (searches and
	// retrievals) one research step has in flight at once (default
	// DefaultLookupConcurrency). The calls are independent, so a step takes
	// about as long as its slowest call rather than their sum; the bound
	// keeps a long plan from flooding the search and rag services. 1 runs
	// them one after another.
	LookupConcurrency int
}

func (c Config) withDefaults() Config {
	if c.ApprovalTimeout <= 0 {
		c.ApprovalTimeout = DefaultApprovalTimeout
	}
	if c.SummaryRisk == "" {
		c.SummaryRisk = ReversibleWithDelay
	}
	if c.ResultsPerQuestion <= 0 {
		c.ResultsPerQuestion = 5
	}
	if c.PassagesPerQuestion <= 0 {
		c.PassagesPerQuestion = 3
	}
	if c.WatchPoll <= 0 {
		c.WatchPoll = time.Second
	}
	if c.LookupConcurrency <= 0 {
		c.LookupConcurrency = DefaultLookupConcurrency
	}
	return c
}

// Deps are what a Service works with. Retriever may be nil (runs naming a
// collection then fail at the research step); Notifier may be nil (actions
// then fail with a clear result); Planner and Critic default to the offline
// ones and Clock to the system clock.
type Deps struct {
	Store     Store
	Searcher  Searcher
	Retriever Retriever
	Notifier  Notifier
	Planner   Planner
	Critic    Critic
	Clock     Clock
	Logger    *slog.Logger
	// Metrics may be nil (nothing is counted).
	Metrics *Metrics
}

// Service runs research: it starts runs, executes their jobs, and takes
// approval decisions.
type Service struct {
	cfg  Config
	deps Deps
	log  *slog.Logger

	mu       sync.Mutex
	watchers map[string][]chan struct{}
}

// New builds a Service.
func New(deps Deps, cfg Config) (*Service, error) {
	if deps.Store == nil || deps.Searcher == nil {
		return nil, errors.New("research: a store and a searcher are required")
	}
	if deps.Planner == nil {
		deps.Planner = OfflinePlanner{}
	}
	if deps.Critic == nil {
		deps.Critic = OfflineCritic{}
	}
	if deps.Clock == nil {
		deps.Clock = SystemClock{}
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	cfg = cfg.withDefaults()
	if _, err := ParseRiskLevel(string(cfg.SummaryRisk)); err != nil {
		return nil, fmt.Errorf("research: summary action: %w", err)
	}
	return &Service{cfg: cfg, deps: deps, log: deps.Logger, watchers: map[string][]chan struct{}{}}, nil
}

// StartParams describe a run to start.
type StartParams struct {
	Topic  string
	UserID string
	// MaxIterations nil means MaxIterations; more than MaxIterations is
	// capped.
	MaxIterations *int
	// QualityThreshold nil means DefaultQualityThreshold.
	QualityThreshold *float64
	Collection       string
	// Actions are the actions to propose when the run finishes; none means
	// the default send_summary.
	Actions []ActionRequest
}

// Start validates p, stores a new run and queues its plan step. It returns
// the run as stored, before any step ran.
func (s *Service) Start(ctx context.Context, p StartParams) (*Run, error) {
	topic := strings.TrimSpace(p.Topic)
	switch n := utf8.RuneCountInString(p.Topic); {
	case topic == "":
		return nil, &InvalidError{Field: "topic", Reason: "must not be blank"}
	case n > MaxTopicChars:
		return nil, &InvalidError{Field: "topic", Reason: fmt.Sprintf("must be at most %d characters, got %d", MaxTopicChars, n)}
	}
	if u, err := uuid.Parse(p.UserID); err != nil || len(p.UserID) != 36 || u.String() != strings.ToLower(p.UserID) {
		return nil, &InvalidError{Field: "user_id", Reason: "must be a UUID"}
	}
	maxIter := MaxIterations
	if p.MaxIterations != nil {
		if *p.MaxIterations < 1 {
			return nil, &InvalidError{Field: "max_iterations", Reason: "must be at least 1"}
		}
		maxIter = min(*p.MaxIterations, MaxIterations)
	}
	threshold := DefaultQualityThreshold
	if p.QualityThreshold != nil {
		t := *p.QualityThreshold
		if math.IsNaN(t) || t < 0 || t > 1 {
			return nil, &InvalidError{Field: "quality_threshold", Reason: "must be between 0 and 1"}
		}
		threshold = t
	}
	requested, err := s.checkRequested(p.Actions)
	if err != nil {
		return nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, fmt.Errorf("making a run id: %w", err)
	}
	now := s.now()
	run := &Run{
		ID:               id.String(),
		Topic:            topic,
		UserID:           strings.ToLower(p.UserID),
		Collection:       p.Collection,
		Step:             StepPlan,
		Status:           StepPlan.status(),
		MaxIterations:    maxIter,
		QualityThreshold: threshold,
		Plan:             []string{},
		Sources:          []Source{},
		Requested:        requested,
		CreatedAt:        now,
		UpdatedAt:        now,
	}
	if err := s.deps.Store.CreateRun(ctx, run, []Job{{Kind: JobStep, RunID: run.ID, Seq: 0}}); err != nil {
		return nil, fmt.Errorf("storing new run: %w", err)
	}
	s.log.InfoContext(ctx, "research run started", "run_id", run.ID, "max_iterations", maxIter, "quality_threshold", threshold)
	return run, nil
}

// Get returns a run; approvals of it still pending after their timeout
// are escalated first, so its actions never show a stale wait.
func (s *Service) Get(ctx context.Context, id string) (*Run, error) {
	run, err := s.deps.Store.GetRun(ctx, id)
	if err != nil || !slices.ContainsFunc(run.Actions, func(a Action) bool { return a.Status == ActionAwaitingApproval }) {
		return run, err
	}
	// Read first: a write transaction on every read of a waiting run would
	// queue readers behind the database's write lock on SQLite.
	pending, _, err := s.deps.Store.ListApprovals(ctx, ApprovalFilter{RunID: id, Status: ApprovalPending}, Page{Size: maxPageSize})
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(pending, s.overdue) {
		return run, nil
	}
	if err := s.escalateOverdue(ctx, id); err != nil {
		return nil, err
	}
	return s.deps.Store.GetRun(ctx, id)
}

// GetReport returns a finished run's persisted report, its Markdown
// content and its metadata.
func (s *Service) GetReport(ctx context.Context, runID string) (*ReportRecord, error) {
	rec, err := s.deps.Store.GetReport(ctx, runID)
	if err != nil || rec.Content != "" {
		return rec, err
	}
	// Stored before reports kept their content: render it as finish would.
	run, err := s.deps.Store.GetRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	rec.Content = reportContent(run, rec.Report)
	return rec, nil
}

// List returns a user's runs (every user's when userID is empty), newest
// first, and the next page token.
func (s *Service) List(ctx context.Context, userID string, page Page) ([]*Run, string, error) {
	return s.deps.Store.ListRuns(ctx, strings.ToLower(userID), page)
}

// Watch calls fn with the run now and after each change, until the run is
// finished or failed (then it returns nil), fn fails, or ctx ends. Changes
// made in this process arrive at once; changes made by another replica's
// workers are seen within Config.WatchPoll.
func (s *Service) Watch(ctx context.Context, id string, fn func(*Run) error) error {
	ch := make(chan struct{}, 1)
	s.subscribe(id, ch)
	defer s.unsubscribe(id, ch)
	ticker := time.NewTicker(s.cfg.WatchPoll)
	defer ticker.Stop()
	lastSeq, lastStatus := -1, Status("")
	for {
		run, err := s.deps.Store.GetRun(ctx, id)
		if err != nil {
			return err
		}
		if run.Seq != lastSeq || run.Status != lastStatus {
			lastSeq, lastStatus = run.Seq, run.Status
			if err := fn(run); err != nil {
				return err
			}
		}
		if run.Status.Terminal() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		case <-ticker.C:
		}
	}
}

func (s *Service) subscribe(id string, ch chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watchers[id] = append(s.watchers[id], ch)
}

func (s *Service) unsubscribe(id string, ch chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watchers[id] = slices.DeleteFunc(s.watchers[id], func(c chan struct{}) bool { return c == ch })
	if len(s.watchers[id]) == 0 {
		delete(s.watchers, id)
	}
}

// notify wakes the run's watchers; a watcher that is busy already has a
// wake-up pending and re-reads the latest state anyway.
func (s *Service) notify(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range s.watchers[id] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (s *Service) now() time.Time { return s.deps.Clock.Now().UTC() }

// update is Store.Update followed by a wake-up of the run's watchers.
func (s *Service) update(ctx context.Context, runID string, fn func(*Change) error) error {
	if err := s.deps.Store.Update(ctx, runID, fn); err != nil {
		return err
	}
	s.notify(runID)
	return nil
}

// HandleJob executes one job. It is safe to run a job more than once: a job
// whose work is already committed does nothing. An error asks the queue to
// retry; on the last attempt the run or action is marked failed instead.
func (s *Service) HandleJob(ctx context.Context, job Job) error {
	switch job.Kind {
	case JobStep:
		return s.handleStep(ctx, job)
	case JobPostApproval:
		return s.postApproval(ctx, job)
	case JobExecute:
		return s.execute(ctx, job)
	case JobTimeout:
		return s.expire(ctx, job)
	default:
		return fmt.Errorf("research: unknown job kind %q", job.Kind)
	}
}

// lastAttempt reports whether a failing job will not be retried.
func lastAttempt(job Job) bool { return job.MaxAttempts > 0 && job.Attempt >= job.MaxAttempts }

// handleStep executes the run's next step if job was queued for it.
func (s *Service) handleStep(ctx context.Context, job Job) error {
	run, err := s.deps.Store.GetRun(ctx, job.RunID)
	if err != nil {
		return fmt.Errorf("loading run %s: %w", job.RunID, err)
	}
	if run.Status.Terminal() || run.Seq != job.Seq {
		return nil // a replay of a committed step
	}
	log := s.log.With("run_id", run.ID, "step", run.Step, "iteration", run.IterationCount)
	next, err := s.runStep(ctx, run)
	if err != nil {
		if !lastAttempt(job) || ctx.Err() != nil {
			log.WarnContext(ctx, "research step failed; will retry", "attempt", job.Attempt, "error", err)
			return fmt.Errorf("research step %s of run %s: %w", run.Step, run.ID, err)
		}
		log.ErrorContext(ctx, "research step failed for good; run failed", "error", err)
		return s.fail(ctx, job, publicStepError(run.Step))
	}
	err = s.update(ctx, run.ID, func(c *Change) error {
		if c.Run.Seq != job.Seq || c.Run.Status.Terminal() {
			return ErrNoChange // another worker committed this step meanwhile
		}
		next(c)
		c.Run.Seq++
		c.Run.Status = c.Run.Step.status()
		c.Run.UpdatedAt = s.now()
		if c.Run.Step != StepDone {
			c.Jobs = append(c.Jobs, Job{Kind: JobStep, RunID: c.Run.ID, Seq: c.Run.Seq})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("saving research step %s of run %s: %w", run.Step, run.ID, err)
	}
	log.DebugContext(ctx, "research step done")
	return nil
}

// fail marks the run failed with a reason fit for the caller.
func (s *Service) fail(ctx context.Context, job Job, reason string) error {
	return s.update(ctx, job.RunID, func(c *Change) error {
		if c.Run.Seq != job.Seq || c.Run.Status.Terminal() {
			return ErrNoChange
		}
		c.Run.Status, c.Run.Step, c.Run.Error = StatusFailed, StepDone, reason
		c.Run.Seq++
		c.Run.UpdatedAt = s.now()
		return nil
	})
}

func publicStepError(step Step) string {
	switch step {
	case StepResearch:
		return "evidence search failed repeatedly; the search service may be unavailable"
	case StepPlan, StepRefine:
		return "planning sub-questions failed"
	case StepCritique:
		return "critiquing the evidence failed"
	default:
		return "writing the report failed"
	}
}

// runStep does the step's work outside any transaction and returns how to
// apply the result to the locked run.
func (s *Service) runStep(ctx context.Context, run *Run) (func(*Change), error) {
	switch run.Step {
	case StepPlan:
		plan, err := s.deps.Planner.Plan(ctx, run.Topic)
		if err != nil {
			return nil, fmt.Errorf("planning: %w", err)
		}
		return func(c *Change) {
			c.Run.Plan, c.Run.Pending, c.Run.Step = plan, plan, StepResearch
		}, nil

	case StepResearch:
		found, err := s.research(ctx, run)
		if err != nil {
			return nil, err
		}
		return func(c *Change) {
			c.Run.Sources = mergeSources(c.Run.Sources, found)
			c.Run.Pending, c.Run.Step = nil, StepCritique
		}, nil

	case StepCritique:
		cr, err := s.deps.Critic.Critique(ctx, run.Topic, run.Plan, run.Sources)
		if err != nil {
			return nil, fmt.Errorf("critiquing: %w", err)
		}
		cr.Score = math.Max(0, math.Min(1, cr.Score))
		return func(c *Change) {
			c.Run.Critique = &cr
			score := cr.Score
			c.Run.QualityScore = &score
			// A round is research plus critique; the cap is checked here,
			// so iteration_count can never pass max_iterations.
			c.Run.IterationCount = min(c.Run.IterationCount+1, c.Run.MaxIterations)
			if score >= c.Run.QualityThreshold || c.Run.IterationCount >= c.Run.MaxIterations {
				c.Run.Step = StepFinish
			} else {
				c.Run.Step = StepRefine
			}
		}, nil

	case StepRefine:
		sharpened := map[string]int{}
		for k, v := range run.Sharpened {
			sharpened[k] = v
		}
		crit := Critique{}
		if run.Critique != nil {
			crit = *run.Critique
		}
		plan, pending, err := s.deps.Planner.Refine(ctx, run.Topic, run.Plan, crit, sharpened)
		if err != nil {
			return nil, fmt.Errorf("refining: %w", err)
		}
		draft := draftAnswer(run)
		return func(c *Change) {
			c.Run.Plan, c.Run.Pending, c.Run.Sharpened, c.Run.Step = plan, pending, sharpened, StepResearch
			c.Run.RefinedAnswer = draft
		}, nil

	case StepFinish:
		return func(c *Change) { s.finish(c) }, nil
	}
	return nil, fmt.Errorf("unknown step %q", run.Step)
}

// research collects evidence for the pending sub-questions: search always,
// the run's collection when it names one. The lookups are independent, so
// they run concurrently (at most Config.LookupConcurrency at once); their
// answers are then taken in sub-question order, search before retrieval,
// so the sources come out as if the calls had run one after another. A
// sub-question whose lookups fail is skipped with a warning; the step fails
// only when every lookup failed, since then retrying is the only way to get
// evidence.
func (s *Service) research(ctx context.Context, run *Run) ([]Source, error) {
	now := s.now()
	lookups := s.lookups(run)
	fetchAll(ctx, lookups, s.cfg.LookupConcurrency)
	var (
		found []Source
		errs  []error
	)
	for _, l := range lookups {
		if l.err != nil {
			errs = append(errs, l.failure())
			if l.warning != "" {
				s.log.WarnContext(ctx, l.warning, "run_id", run.ID, "error", l.err)
			}
			continue
		}
		found = appendEvidence(found, l.question, l.ev, now)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(lookups) > 0 && len(errs) == len(lookups) {
		return nil, errors.Join(errs...)
	}
	return found, nil
}

// lookups lists the research step's evidence calls in the order their
// answers are used: per pending sub-question, the search, then the
// collection retrieval when the run names a collection.
func (s *Service) lookups(run *Run) []lookup {
	var out []lookup
	search := func(q, query string) {
		out = append(out, lookup{
			question: q,
			call: func(ctx context.Context) ([]Evidence, error) {
				return s.deps.Searcher.Search(ctx, query, s.cfg.ResultsPerQuestion)
			},
			describe: func(err error) error { return fmt.Errorf("searching %q: %w", query, err) },
			warning:  "evidence search failed for a sub-question",
		})
	}
	f := parseForm(run.Topic)
	sides := f.sides()
	// What stands on its own is searched in the first round only: its
	// sources stay with the run, and a refine round would find them again.
	var alone []string
	if run.IterationCount == 0 {
		alone = append(quotedMessages(run.Topic), alertSearches(run.Topic)...)
		alone = append(alone, f.observations(run.Topic)...)
	}
	for _, q := range run.Pending {
		query := searchQuery(q)
		search(q, query)
		// A question naming both sides of a comparison ("What causes a
		// full disk, and what causes running out of inodes?") finds what
		// its rarer words are about, one side: each side is searched
		// on its own as well, once.
		for i, side := range sides {
			if side.name != "" && strings.Contains(strings.ToLower(q), strings.ToLower(side.name)) {
				search(q, side.query)
				sides[i].name = ""
			}
		}
		// A message the topic quotes, an alert it names and what it
		// tells it saw are searched on their own, once, as enrichment
		// searches a log line or an alert: in a long story told around
		// them, the first words of a question miss them ("pg_stat_activity
		// shows ~180 sessions waiting on a Lock" after a pasted error).
		for _, m := range alone {
			search(q, searchQuery(m))
		}
		alone = nil
		if run.Collection == "" {
			continue
		}
		if s.deps.Retriever == nil {
			// Counted as a failed lookup, so a run that can only be
			// answered from its collection fails instead of finishing
			// without evidence.
			out = append(out, lookup{question: q, err: errNoRetriever})
			continue
		}
		out = append(out, lookup{
			question: q,
			call: func(ctx context.Context) ([]Evidence, error) {
				return s.deps.Retriever.Retrieve(ctx, run.Collection, query, s.cfg.PassagesPerQuestion)
			},
			describe: func(err error) error {
				return fmt.Errorf("retrieving %q from %s: %w", query, run.Collection, err)
			},
			warning: "collection retrieval failed for a sub-question",
		})
	}
	return out
}

// appendEvidence appends ev, found for sub-question q, to found as
// sources; evidence without a URL cannot be cited and is dropped.
func appendEvidence(found []Source, q string, ev []Evidence, now time.Time) []Source {
	for _, e := range ev {
		if strings.TrimSpace(e.URL) == "" {
			continue
		}
		title := strings.TrimSpace(e.Title)
		if title == "" {
			title = domainOf(e.URL)
		}
		snippet := truncateRunes(strings.TrimSpace(e.Snippet), MaxSnippetChars)
		var text string
		if e.Text != "" {
			text = truncateRunes(strings.TrimSpace(e.Text), MaxSourceTextChars)
			// The document says more than the passage that matched the
			// query: its digest lets the sections quote what it says
			// about every angle.
			snippet = digest(e.Text, MaxSnippetChars)
		}
		found = append(found, Source{
			Title:       title,
			URL:         strings.TrimSpace(e.URL),
			Snippet:     snippet,
			RetrievedAt: now,
			SubQuestion: q,
			Text:        text,
		})
	}
	return found
}

// mergeSources appends the new sources whose URL is not known yet, in
// order, keeping the first of duplicates.
func mergeSources(have, found []Source) []Source {
	seen := make(map[string]bool, len(have)+len(found))
	out := slices.Clone(have)
	for _, s := range have {
		seen[urlKey(s.URL)] = true
	}
	for _, s := range found {
		k := urlKey(s.URL)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, s)
	}
	return out
}

// finish writes and stores the report, finishes the run and proposes its
// actions (see propose).
func (s *Service) finish(c *Change) {
	now := s.now()
	run := c.Run
	report := buildReport(run, now)
	run.Report = &report
	run.Step = StepDone
	c.Report = &ReportRecord{RunID: run.ID, Report: report, Metadata: reportMetadata(run, report), Content: reportContent(run, report)}
	s.propose(c, now)
}
