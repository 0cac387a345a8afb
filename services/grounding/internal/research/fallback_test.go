package research

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// scriptedModel is a planner and critic answering fixed values.
type scriptedModel struct {
	plan, pending []string
	critique      Critique
	err           error
}

func (m scriptedModel) Plan(context.Context, string) ([]string, error) { return m.plan, m.err }

func (m scriptedModel) Refine(_ context.Context, _ string, _ []string, _ Critique, sharpened map[string]int) ([]string, []string, error) {
	sharpened["model"]++
	return m.plan, m.pending, m.err
}

func (m scriptedModel) Critique(context.Context, string, []string, []Source) (Critique, error) {
	return m.critique, m.err
}

var quiet = slog.New(slog.DiscardHandler)

func TestFallbackPlanner(t *testing.T) {
	const topic = "write-ahead logging"
	offline, _ := OfflinePlanner{}.Plan(t.Context(), topic)
	long := strings.Repeat("word ", 100) + "?"
	many := make([]string, 12)
	for i := range many {
		many[i] = "Question " + string(rune('a'+i)) + "?"
	}
	tests := []struct {
		name  string
		model scriptedModel
		want  []string
	}{
		{"cleaned", scriptedModel{plan: []string{" What is  WAL? ", "", "what is wal?", "Why fsync?"}}, []string{"What is WAL?", "Why fsync?"}},
		{"capped", scriptedModel{plan: many}, many[:MaxSubQuestions]},
		{"error", scriptedModel{err: errors.New("boom")}, offline},
		{"nothing usable", scriptedModel{plan: []string{" ", "\n"}}, offline},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FallbackPlanner{Primary: tt.model, Logger: quiet}.Plan(t.Context(), topic)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Plan (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("long question cut", func(t *testing.T) {
		got, _ := FallbackPlanner{Primary: scriptedModel{plan: []string{long}}, Logger: quiet}.Plan(t.Context(), topic)
		if len(got) != 1 || len([]rune(got[0])) > MaxSubQuestionChars {
			t.Errorf("Plan = %q, want one question of at most %d characters", got, MaxSubQuestionChars)
		}
	})
}

func TestFallbackPlannerRefine(t *testing.T) {
	const topic = "write-ahead logging"
	plan, _ := OfflinePlanner{}.Plan(t.Context(), topic)
	crit := Critique{Score: 0.3, Reasons: []string{"thin"}, Gaps: plan[:1]}

	sharpened := map[string]int{}
	got, pending, err := FallbackPlanner{Primary: scriptedModel{plan: []string{"A?", "B?"}, pending: []string{"B?", "not in plan?"}}, Logger: quiet}.
		Refine(t.Context(), topic, plan, crit, sharpened)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"A?", "B?"}, got); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"B?"}, pending); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"model": 1}, sharpened); diff != "" {
		t.Errorf("sharpened (-want +got):\n%s", diff)
	}

	// Nothing to research: the offline refinement, with no trace of the
	// model in sharpened.
	sharpened = map[string]int{}
	got, pending, err = FallbackPlanner{Primary: scriptedModel{plan: []string{"A?"}, pending: []string{"Z?"}}, Logger: quiet}.
		Refine(t.Context(), topic, plan, crit, sharpened)
	if err != nil {
		t.Fatal(err)
	}
	wantSharp := map[string]int{}
	wantPlan, wantPending, _ := OfflinePlanner{}.Refine(t.Context(), topic, plan, crit, wantSharp)
	if diff := cmp.Diff(wantPlan, got); diff != "" {
		t.Errorf("fallback plan (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantPending, pending); diff != "" {
		t.Errorf("fallback pending (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantSharp, sharpened); diff != "" {
		t.Errorf("fallback sharpened (-want +got):\n%s", diff)
	}
}

func TestFallbackCritic(t *testing.T) {
	const topic = "write-ahead logging"
	plan := []string{"What is WAL?", "Why fsync?"}
	sources := []Source{{Title: "WAL", URL: "https://postgresql.org/docs/wal", Snippet: "Write-ahead logging is a standard method."}}
	offline, _ := OfflineCritic{}.Critique(t.Context(), topic, plan, sources)
	tests := []struct {
		name  string
		model scriptedModel
		want  Critique
	}{
		{"clamped high", scriptedModel{critique: Critique{Score: 3, Reasons: []string{" good ", ""}, Gaps: []string{"Why fsync?", "Unknown?"}}},
			Critique{Score: 1, Reasons: []string{"good"}, Gaps: []string{"Why fsync?"}}},
		{"clamped low and rounded", scriptedModel{critique: Critique{Score: -0.5, Reasons: []string{"bad"}}}, Critique{Score: 0, Reasons: []string{"bad"}}},
		{"rounded", scriptedModel{critique: Critique{Score: 0.66666, Reasons: []string{"ok"}}}, Critique{Score: 0.667, Reasons: []string{"ok"}}},
		{"NaN", scriptedModel{critique: Critique{Score: math.NaN(), Reasons: []string{"ok"}}}, offline},
		{"no reasons", scriptedModel{critique: Critique{Score: 0.9, Reasons: []string{" "}}}, offline},
		{"error", scriptedModel{err: errors.New("boom")}, offline},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FallbackCritic{Primary: tt.model, Logger: quiet}.Critique(t.Context(), topic, plan, sources)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Critique (-want +got):\n%s", diff)
			}
		})
	}
}

func TestActionStatusQueued(t *testing.T) {
	for s, want := range map[ActionStatus]bool{
		ActionAwaitingApproval: false, ActionApproved: true, ActionQueued: true,
		ActionExecuted: false, ActionSkipped: false, ActionFailed: false,
	} {
		if got := s.Queued(); got != want {
			t.Errorf("%q.Queued() = %t, want %t", s, got, want)
		}
	}
}
