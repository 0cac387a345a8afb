package research

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"strings"
)

// Limits on what a model planner or critic may hand the run. A model can
// answer with anything; these keep its output the size the offline planner
// writes and the report can show.
const (
	// MaxSubQuestions caps a plan.
	MaxSubQuestions = 8
	// MaxSubQuestionChars caps one sub-question in characters.
	MaxSubQuestionChars = 300
	// maxReasons and maxReasonChars cap a critique's reasons.
	maxReasons     = 8
	maxReasonChars = 300
)

// ErrInvalidOutput: a model planner or critic answered, but with nothing
// usable (no sub-questions, no score, no reasons).
var ErrInvalidOutput = errors.New("invalid model output")

// FallbackPlanner asks Primary (a model) and checks its answer: sub-questions
// are trimmed, stripped of duplicates and empties, cut to
// MaxSubQuestionChars and at most MaxSubQuestions are kept. When Primary
// fails or leaves nothing usable, it logs why and asks Fallback, so a run
// never fails because a model did.
type FallbackPlanner struct {
	Primary Planner
	// Fallback answers when Primary cannot; nil means OfflinePlanner.
	Fallback Planner
	// Logger is required.
	Logger *slog.Logger
}

var _ Planner = FallbackPlanner{}

// Plan implements Planner.
func (p FallbackPlanner) Plan(ctx context.Context, topic string) ([]string, error) {
	plan, err := p.Primary.Plan(ctx, topic)
	if err == nil {
		if plan = cleanQuestions(plan); len(plan) == 0 {
			err = fmt.Errorf("%w: no sub-questions", ErrInvalidOutput)
		}
	}
	if err == nil {
		return plan, nil
	}
	p.Logger.WarnContext(ctx, "model planner failed; planning offline", "step", StepPlan, "error", err)
	return p.fallback().Plan(ctx, topic)
}

// Refine implements Planner. The pending sub-questions must be in the new
// plan; those the plan's cap cut off are dropped.
func (p FallbackPlanner) Refine(ctx context.Context, topic string, plan []string, c Critique, sharpened map[string]int) ([]string, []string, error) {
	// The primary works on a copy so a failed answer leaves no trace in
	// sharpened for the fallback to trip over.
	mine := maps.Clone(sharpened)
	if mine == nil {
		mine = map[string]int{}
	}
	newPlan, pending, err := p.Primary.Refine(ctx, topic, plan, c, mine)
	if err == nil {
		newPlan = cleanQuestions(newPlan)
		pending = keepIn(cleanQuestions(pending), newPlan)
		if len(newPlan) == 0 || len(pending) == 0 {
			err = fmt.Errorf("%w: no sub-questions to research", ErrInvalidOutput)
		}
	}
	if err == nil {
		maps.Copy(sharpened, mine)
		return newPlan, pending, nil
	}
	p.Logger.WarnContext(ctx, "model planner failed; refining offline", "step", StepRefine, "error", err)
	return p.fallback().Refine(ctx, topic, plan, c, sharpened)
}

func (p FallbackPlanner) fallback() Planner {
	if p.Fallback == nil {
		return OfflinePlanner{}
	}
	return p.Fallback
}

// FallbackCritic asks Primary (a model) and checks its answer: the score
// must be a number and is clamped to [0,1] and rounded to three decimals,
// reasons are trimmed and capped, gaps not in the plan are dropped. When
// Primary fails or gives no score or no reason, it logs why and asks
// Fallback.
type FallbackCritic struct {
	Primary Critic
	// Fallback answers when Primary cannot; nil means OfflineCritic.
	Fallback Critic
	// Logger is required.
	Logger *slog.Logger
}

var _ Critic = FallbackCritic{}

// Critique implements Critic.
func (c FallbackCritic) Critique(ctx context.Context, topic string, plan []string, sources []Source) (Critique, error) {
	cr, err := c.Primary.Critique(ctx, topic, plan, sources)
	if err == nil {
		cr, err = cleanCritique(cr, plan)
	}
	if err == nil {
		return cr, nil
	}
	c.Logger.WarnContext(ctx, "model critic failed; critiquing offline", "step", StepCritique, "error", err)
	fb := c.Fallback
	if fb == nil {
		fb = OfflineCritic{}
	}
	return fb.Critique(ctx, topic, plan, sources)
}

// cleanCritique validates and bounds a model's critique.
func cleanCritique(cr Critique, plan []string) (Critique, error) {
	if math.IsNaN(cr.Score) || math.IsInf(cr.Score, 0) {
		return Critique{}, fmt.Errorf("%w: quality score %v", ErrInvalidOutput, cr.Score)
	}
	out := Critique{Score: math.Round(math.Max(0, math.Min(1, cr.Score))*1000) / 1000}
	for _, r := range cr.Reasons {
		if r = strings.Join(strings.Fields(r), " "); r != "" && len(out.Reasons) < maxReasons {
			out.Reasons = append(out.Reasons, truncateRunes(r, maxReasonChars))
		}
	}
	if len(out.Reasons) == 0 {
		return Critique{}, fmt.Errorf("%w: no reasons", ErrInvalidOutput)
	}
	out.Gaps = keepIn(cr.Gaps, plan)
	return out, nil
}

// cleanQuestions trims and collapses space, drops empties and
// case-insensitive duplicates, cuts each to MaxSubQuestionChars and keeps
// the first MaxSubQuestions.
func cleanQuestions(qs []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, q := range qs {
		q = truncateRunes(strings.Join(strings.Fields(q), " "), MaxSubQuestionChars)
		key := strings.ToLower(q)
		if q == "" || seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, q)
		if len(out) == MaxSubQuestions {
			break
		}
	}
	return out
}

// keepIn returns the distinct items of qs that are in set, in qs's order.
func keepIn(qs, set []string) []string {
	in := map[string]bool{}
	for _, s := range set {
		in[s] = true
	}
	var out []string
	for _, q := range qs {
		if in[q] {
			out = append(out, q)
			delete(in, q)
		}
	}
	return out
}
