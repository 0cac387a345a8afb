package gemini_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/services/grounding/internal/gemini"
	"github.com/groundcrew/groundcrew/services/grounding/internal/research"
)

const researchTopic = "Kubernetes operators"

var researchPlan = []string{"What is a Kubernetes operator?", "What are the risks of Kubernetes operators?"}

var researchSources = []research.Source{
	{Title: "Operator pattern", URL: "https://kubernetes.io/docs/concepts/extend-kubernetes/operator/", Snippet: "Operators are software extensions that use custom resources.", RetrievedAt: time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC)},
	{Title: "Operator risks", URL: "https://cncf.io/blog/operator-risks", Snippet: "A faulty operator can cause outages.", RetrievedAt: time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC)},
}

// researchPair is the planner and critic as the server wires them: Gemini
// with the offline fallback.
func researchPair(t *testing.T, f *fakeGemini) (research.Planner, research.Critic) {
	t.Helper()
	c := newClient(t, f, &waits{}, nil)
	return research.FallbackPlanner{Primary: gemini.Planner{Client: c}, Logger: discard},
		research.FallbackCritic{Primary: gemini.Critic{Client: c, NewNonce: func() string { return testNonce }}, Logger: discard}
}

// TestResearchGolden checks the exact generateContent requests of plan,
// refine and critique against testdata/research_*.golden, and that a good
// answer is used (bounded: blank and duplicate sub-questions dropped, the
// score clamped, gap numbers mapped to sub-questions).
func TestResearchGolden(t *testing.T) {
	t.Run("plan", func(t *testing.T) {
		f := newFakeGemini(t, ok(`{"sub_questions": ["What is a Kubernetes operator?", "  ", "what is a  Kubernetes operator?", "How do operators reconcile state?"]}`, ""))
		p, _ := researchPair(t, f)
		got, err := p.Plan(t.Context(), researchTopic)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"What is a Kubernetes operator?", "How do operators reconcile state?"}, got); diff != "" {
			t.Errorf("Plan (-want +got):\n%s", diff)
		}
		checkGolden(t, "research_plan", onlyRequest(t, f))
	})
	t.Run("refine", func(t *testing.T) {
		f := newFakeGemini(t, ok(`{"sub_questions": ["What outages have Kubernetes operators caused?"]}`, ""))
		p, _ := researchPair(t, f)
		crit := research.Critique{Score: 0.4, Reasons: []string{"risks are covered by one source"}, Gaps: []string{researchPlan[1]}}
		sharpened := map[string]int{"overview": 1}
		plan, pending, err := p.Refine(t.Context(), researchTopic, researchPlan, crit, sharpened)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{researchPlan[0], "What outages have Kubernetes operators caused?"}
		if diff := cmp.Diff(want, plan); diff != "" {
			t.Errorf("Refine plan (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want[1:], pending); diff != "" {
			t.Errorf("Refine pending (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]int{"overview": 1}, sharpened); diff != "" {
			t.Errorf("sharpened changed (-want +got):\n%s", diff)
		}
		checkGolden(t, "research_refine", onlyRequest(t, f))
	})
	t.Run("critique", func(t *testing.T) {
		f := newFakeGemini(t, ok(`{"quality_score": 1.7, "reasons": ["two sources from two domains", ""], "gaps": [2, 9, 0]}`, ""))
		_, c := researchPair(t, f)
		got, err := c.Critique(t.Context(), researchTopic, researchPlan, researchSources)
		if err != nil {
			t.Fatal(err)
		}
		want := research.Critique{Score: 1, Reasons: []string{"two sources from two domains"}, Gaps: []string{researchPlan[1]}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Critique (-want +got):\n%s", diff)
		}
		checkGolden(t, "research_critique", onlyRequest(t, f))
	})
}

// TestResearchRequestShape asserts the parts of the request that make it a
// structured-output call, independent of the golden files' wording.
func TestResearchRequestShape(t *testing.T) {
	f := newFakeGemini(t, ok(`{"quality_score": 0.5, "reasons": ["ok"], "gaps": []}`, ""))
	_, c := researchPair(t, f)
	if _, err := c.Critique(t.Context(), researchTopic, researchPlan, researchSources); err != nil {
		t.Fatal(err)
	}
	var req struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"contents"`
		GenerationConfig struct {
			ResponseMIMEType string `json:"responseMimeType"`
			ResponseSchema   struct {
				Type       string                     `json:"type"`
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			} `json:"responseSchema"`
		} `json:"generationConfig"`
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(onlyRequest(t, f), &req); err != nil {
		t.Fatal(err)
	}
	gc := req.GenerationConfig
	if gc.ResponseMIMEType != "application/json" || gc.ResponseSchema.Type != "OBJECT" ||
		len(gc.ResponseSchema.Properties) != 3 || gc.ResponseSchema.Properties["quality_score"] == nil {
		t.Errorf("generationConfig = %+v, want a JSON response schema with quality_score, reasons, gaps", gc)
	}
	if diff := cmp.Diff([]string{"quality_score", "reasons", "gaps"}, gc.ResponseSchema.Required); diff != "" {
		t.Errorf("required (-want +got):\n%s", diff)
	}
	if len(req.Tools) != 0 {
		t.Errorf("tools = %s, want none (no web search for a critique)", req.Tools)
	}
	if len(req.Contents) != 1 || req.Contents[0].Role != "user" || len(req.Contents[0].Parts) != 1 ||
		!strings.Contains(req.Contents[0].Parts[0].Text, "2. What are the risks of Kubernetes operators?") ||
		!strings.Contains(req.Contents[0].Parts[0].Text, "https://cncf.io/blog/operator-risks") {
		t.Errorf("contents = %+v, want the numbered sub-questions and sources", req.Contents)
	}
}

// TestResearchFallsBackOffline: a model that fails or answers nonsense
// leaves the run with exactly what the offline planner and critic say.
func TestResearchFallsBackOffline(t *testing.T) {
	const serverError = `{"error":{"code":500,"message":"internal","status":"INTERNAL"}}`
	tests := []struct {
		name     string
		answer   reply
		attempts int
	}{
		{"invalid JSON", ok(`{"sub_questions": [`, ""), 1},
		{"not the schema", ok(`{"answer": 42}`, ""), 1},
		{"empty", ok(`{"sub_questions": [" "], "quality_score": 0.5, "reasons": []}`, ""), 1},
		{"500", reply{500, serverError}, gemini.DefaultMaxAttempts},
	}
	offlinePlan, _ := research.OfflinePlanner{}.Plan(t.Context(), researchTopic)
	offlineCrit, _ := research.OfflineCritic{}.Critique(t.Context(), researchTopic, researchPlan, researchSources)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeGemini(t, tt.answer)
			p, c := researchPair(t, f)

			plan, err := p.Plan(t.Context(), researchTopic)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(offlinePlan, plan); diff != "" {
				t.Errorf("Plan (-offline +got):\n%s", diff)
			}

			crit := research.Critique{Score: 0.2, Reasons: []string{"thin"}, Gaps: offlinePlan[:1]}
			gotPlan, gotPending, err := p.Refine(t.Context(), researchTopic, offlinePlan, crit, map[string]int{})
			if err != nil {
				t.Fatal(err)
			}
			wantPlan, wantPending, _ := research.OfflinePlanner{}.Refine(t.Context(), researchTopic, offlinePlan, crit, map[string]int{})
			if diff := cmp.Diff(wantPlan, gotPlan); diff != "" {
				t.Errorf("Refine plan (-offline +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantPending, gotPending); diff != "" {
				t.Errorf("Refine pending (-offline +got):\n%s", diff)
			}

			got, err := c.Critique(t.Context(), researchTopic, researchPlan, researchSources)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(offlineCrit, got); diff != "" {
				t.Errorf("Critique (-offline +got):\n%s", diff)
			}
			if n := len(f.requests()); n != 3*tt.attempts {
				t.Errorf("%d requests, want %d", n, 3*tt.attempts)
			}
		})
	}
}

func onlyRequest(t *testing.T, f *fakeGemini) []byte {
	t.Helper()
	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	return reqs[0]
}
