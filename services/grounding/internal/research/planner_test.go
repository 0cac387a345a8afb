package research

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPlan(t *testing.T) {
	tests := []struct {
		topic string
		want  []string
	}{
		{
			topic: "Kubernetes operators",
			want: []string{
				"What is Kubernetes operators?",
				"How does Kubernetes operators work?",
				"What are the benefits of Kubernetes operators?",
				"What are the risks and limitations of Kubernetes operators?",
				"What are current best practices for Kubernetes operators?",
			},
		},
		{
			topic: "  What is the impact of large language models on software testing? ",
			want: []string{
				"What is impact of large language models on software testing?",
				"How does impact of large language models on software testing work?",
				"What are the benefits of impact of large language models on software testing?",
				"What are the risks and limitations of impact of large language models on software testing?",
				"What are current best practices for impact of large language models on software testing?",
				"What does large language models mean in the context of impact of large language models on software testing?",
				"What does software testing mean in the context of impact of large language models on software testing?",
			},
		},
	}
	for _, tt := range tests {
		got, err := OfflinePlanner{}.Plan(t.Context(), tt.topic)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Plan(%q) (-want +got):\n%s", tt.topic, diff)
		}
	}
}

func TestRefineSharpensGapsOnly(t *testing.T) {
	p := OfflinePlanner{}
	topic := "Kubernetes operators"
	plan, _ := p.Plan(t.Context(), topic)
	sharpened := map[string]int{}
	gap := plan[3] // risks
	newPlan, pending, err := p.Refine(t.Context(), topic, plan, Critique{Gaps: []string{gap}}, sharpened)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"What problems, drawbacks or failures are reported with Kubernetes operators?"}
	if diff := cmp.Diff(want, pending); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	wantPlan := append(append(append([]string{}, plan[:3]...), want...), plan[4])
	if diff := cmp.Diff(wantPlan, newPlan); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	// The same gap again gets the next phrasing, not the same words.
	_, pending2, _ := p.Refine(t.Context(), topic, newPlan, Critique{Gaps: pending}, sharpened)
	if diff := cmp.Diff([]string{"What challenges and trade-offs does Kubernetes operators involve?"}, pending2); diff != "" {
		t.Errorf("second refinement (-want +got):\n%s", diff)
	}
	// No gaps named: every question is sharpened.
	_, all, _ := p.Refine(t.Context(), topic, plan, Critique{}, map[string]int{})
	if len(all) != len(plan) {
		t.Errorf("refine without gaps sharpened %d questions, want %d", len(all), len(plan))
	}
}

func TestKeyPhrasesAndQuery(t *testing.T) {
	if diff := cmp.Diff([]string{"impact", "large language models", "software testing"},
		keyPhrases("impact of large language models on software testing")); diff != "" {
		t.Errorf("keyPhrases (-want +got):\n%s", diff)
	}
	for topic, want := range map[string]string{
		"How do Kubernetes operators work?": "Kubernetes operators",
		"Explain the CAP theorem.":          "CAP theorem",
		"rust async runtimes":               "rust async runtimes",
	} {
		if got := subject(topic); got != want {
			t.Errorf("subject(%q) = %q, want %q", topic, got, want)
		}
	}
	if got, want := searchQuery("What are the risks and limitations of Node.js streams?"), "risks limitations node.js streams"; got != want {
		t.Errorf("searchQuery = %q, want %q", got, want)
	}
	if got, want := searchQuery("What is Kubernetes operators, asked by jane.doe@example.com and @jdoe?"), "kubernetes operators asked"; got != want {
		t.Errorf("searchQuery = %q, want %q (no e-mail address or handle)", got, want)
	}
	if got := keyPhrases("Kubernetes operators, asked by jane.doe@example.com"); slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, "jane") }) {
		t.Errorf("keyPhrases = %q, want no phrase from the e-mail address", got)
	}
}

func TestCritique(t *testing.T) {
	topic := "Kubernetes operators"
	plan, _ := OfflinePlanner{}.Plan(t.Context(), topic)
	ev, _ := richEvidence("x", 10)
	var rich []Source
	for _, e := range ev {
		rich = append(rich, Source{Title: e.Title, URL: e.URL, Snippet: e.Snippet})
	}
	tests := []struct {
		name    string
		sources []Source
		want    Critique
	}{
		{
			name:    "no evidence",
			sources: nil,
			want: Critique{
				Score: 0,
				Reasons: []string{
					"coverage: 0 of 5 sub-questions have at least 2 sources above the relevance bar 0.75",
					"sources: 0 on topic (target 8)",
					"diversity: 0 distinct domains (target 4)",
					"agreement: 0 of 5 sub-questions corroborated by sources from 2 or more domains",
				},
				Gaps: plan,
			},
		},
		{
			// An off-topic source counts for nothing and is named.
			name:    "one off-topic source",
			sources: []Source{{Title: "Cooking pasta", URL: "https://food.example/pasta", Snippet: "Boil water and add salt."}},
			want: Critique{
				Score: 0,
				Reasons: []string{
					"coverage: 0 of 5 sub-questions have at least 2 sources above the relevance bar 0.75",
					"sources: 0 on topic (target 8)",
					"diversity: 0 distinct domains (target 4)",
					"agreement: 0 of 5 sub-questions corroborated by sources from 2 or more domains",
					"dropped 1 off-topic source: Cooking pasta (https://food.example/pasta)",
				},
				Gaps: plan,
			},
		},
		{
			name:    "every angle covered by several domains",
			sources: rich,
			want: Critique{
				Score: 1,
				Reasons: []string{
					"coverage: 5 of 5 sub-questions have at least 2 sources above the relevance bar 0.75",
					"sources: 8 on topic (target 8)",
					"diversity: 7 distinct domains (target 4)",
					"agreement: 5 of 5 sub-questions corroborated by sources from 2 or more domains",
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := OfflineCritic{}.Critique(t.Context(), topic, plan, tt.sources)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Critique (-want +got):\n%s", diff)
			}
		})
	}
}
