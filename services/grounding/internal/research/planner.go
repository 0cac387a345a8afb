package research

import (
	"context"
	"fmt"
	"strings"
)

// questionKind is one angle on a topic: a question template, sharper
// alternatives for when the evidence for it falls short, and the cue words
// that show a passage addresses it.
type questionKind struct {
	name     string
	template string
	sharper  []string
	cues     []string
}

// kinds are the angles every plan covers, in plan order. A report that
// answers them tells a reader what the subject is, how it works, what it is
// good for, what can go wrong and what to do.
var kinds = []questionKind{
	{
		name:     "overview",
		template: "What is %s?",
		sharper:  []string{"How is %s defined, and what are its main components?", "What is %s, explained with examples?"},
	},
	{
		name:     "mechanism",
		template: "How does %s work?",
		sharper:  []string{"What are the architecture and main steps of %s?", "What happens internally in %s?"},
		cues:     []string{"work", "process", "architecture", "mechanism", "step", "internal", "internally", "operate", "design", "implement", "implementation", "how", "component", "pipeline"},
	},
	{
		name:     "benefits",
		template: "What are the benefits of %s?",
		sharper:  []string{"What advantages and use cases of %s are reported?", "What measurable results has %s achieved?"},
		cues:     []string{"benefit", "advantage", "improve", "improvement", "use", "result", "gain", "help", "enable", "faster", "better", "efficient", "efficiency", "reduce", "increase", "value"},
	},
	{
		name:     "risks",
		template: "What are the risks and limitations of %s?",
		sharper:  []string{"What problems, drawbacks or failures are reported with %s?", "What challenges and trade-offs does %s involve?"},
		cues:     []string{"risk", "limitation", "drawback", "problem", "challenge", "failure", "fail", "issue", "concern", "downside", "trade-off", "tradeoff", "vulnerability", "cost", "error", "however", "but"},
	},
	{
		name:     "practice",
		template: "What are current best practices for %s?",
		sharper:  []string{"What recommendations and guidelines exist for %s?", "How do practitioners adopt %s in production?"},
		cues:     []string{"practice", "recommend", "recommendation", "guideline", "should", "tip", "pattern", "approach", "strategy", "adopt", "production", "guide"},
	},
}

// Phrase questions ask about one key phrase of a topic with several.
const (
	phraseTemplate = "What does %s mean in the context of %s?"
	phraseSharper  = "What examples of %s relate to %s?"
	maxPhraseQs    = 2
)

// OfflinePlanner writes sub-questions without a model: the topic's subject
// in five question templates (overview, mechanism, benefits, risks,
// practice), plus one question per extra key phrase of a compound topic.
// Refinement swaps a gap's question for a sharper phrasing of the same
// angle, so the next search uses different words. It is deterministic.
type OfflinePlanner struct{}

var _ Planner = OfflinePlanner{}

// Plan returns the sub-questions for topic.
func (OfflinePlanner) Plan(_ context.Context, topic string) ([]string, error) {
	subj := subject(topic)
	plan := make([]string, 0, len(kinds)+maxPhraseQs)
	for _, k := range kinds {
		plan = append(plan, fmt.Sprintf(k.template, subj))
	}
	for _, p := range extraPhrases(topic, subj) {
		plan = append(plan, fmt.Sprintf(phraseTemplate, p, subj))
	}
	return plan, nil
}

// Refine replaces each gap (or, when the critique named none, every
// question: the evidence is thin overall) with a sharper phrasing.
func (OfflinePlanner) Refine(_ context.Context, topic string, plan []string, c Critique, sharpened map[string]int) ([]string, []string, error) {
	subj := subject(topic)
	targets := map[string]bool{}
	for _, g := range c.Gaps {
		targets[g] = true
	}
	all := len(targets) == 0
	newPlan := make([]string, 0, len(plan))
	var pending []string
	for _, q := range plan {
		if !all && !targets[q] {
			newPlan = append(newPlan, q)
			continue
		}
		key, alts := alternatives(q, topic, subj)
		if len(alts) == 0 {
			newPlan = append(newPlan, q)
			pending = append(pending, q)
			continue
		}
		n := sharpened[key]
		sharpened[key] = n + 1
		sharp := alts[n%len(alts)]
		if sharp == q {
			sharp = alts[(n+1)%len(alts)]
		}
		newPlan = append(newPlan, sharp)
		pending = append(pending, sharp)
	}
	return newPlan, pending, nil
}

// alternatives finds which angle q asks about and returns a key for it and
// its sharper phrasings.
func alternatives(q, topic, subj string) (string, []string) {
	for _, k := range kinds {
		if q == fmt.Sprintf(k.template, subj) || containsFormatted(k.sharper, q, subj) {
			alts := make([]string, len(k.sharper))
			for i, s := range k.sharper {
				alts[i] = fmt.Sprintf(s, subj)
			}
			return k.name, alts
		}
	}
	for _, p := range extraPhrases(topic, subj) {
		base, sharp := fmt.Sprintf(phraseTemplate, p, subj), fmt.Sprintf(phraseSharper, p, subj)
		if q == base || q == sharp {
			return "phrase:" + p, []string{sharp, base}
		}
	}
	return "", nil
}

func containsFormatted(templates []string, q, subj string) bool {
	for _, t := range templates {
		if fmt.Sprintf(t, subj) == q {
			return true
		}
	}
	return false
}

// kindOf returns the angle a sub-question asks about, or nil for a
// question no template wrote (one from a model planner, say).
func kindOf(q, topic string) *questionKind {
	subj := subject(topic)
	for i := range kinds {
		k := &kinds[i]
		if q == fmt.Sprintf(k.template, subj) || containsFormatted(k.sharper, q, subj) {
			return k
		}
	}
	return nil
}

// questionLeads are openings that say "tell me about" rather than what
// about; the subject starts after them.
var questionLeads = []string{
	"what is", "what are", "what's", "how does", "how do", "how can", "how to", "why does", "why do", "why is",
	"why are", "explain", "describe", "research", "tell me about", "overview of", "an overview of", "the",
}

// subject is the topic reduced to what the questions are about: without a
// leading question phrase, trailing punctuation and surrounding space, and
// shortened to its key phrases when it is long.
func subject(topic string) string {
	s := strings.Join(strings.Fields(topic), " ")
	s = strings.TrimRight(s, "?.!;: ")
	for changed := true; changed; {
		changed = false
		lower := strings.ToLower(s)
		for _, lead := range questionLeads {
			if strings.HasPrefix(lower, lead+" ") {
				s = strings.TrimSpace(s[len(lead):])
				changed = true
				// "How do X work" asks about X; the templates add the verb.
				if strings.HasPrefix(lead, "how do") {
					for _, verb := range []string{" work", " works", " function", " functions"} {
						if strings.HasSuffix(strings.ToLower(s), verb) && len(s) > len(verb) {
							s = s[:len(s)-len(verb)]
							break
						}
					}
				}
				break
			}
		}
	}
	if len(strings.Fields(s)) > 12 {
		phrases := keyPhrases(s)
		var kept []string
		n := 0
		for _, p := range phrases {
			w := len(strings.Fields(p))
			if n+w > 10 {
				break
			}
			kept = append(kept, p)
			n += w
		}
		if len(kept) > 0 {
			s = strings.Join(kept, ", ")
		}
	}
	if s == "" {
		return strings.TrimSpace(topic)
	}
	return s
}

// extraPhrases are the multi-word key phrases of a compound subject, which
// deserve a question of their own.
func extraPhrases(topic, subj string) []string {
	phrases := keyPhrases(subject(topic))
	if len(phrases) < 2 {
		return nil
	}
	var out []string
	for _, p := range phrases {
		if len(strings.Fields(p)) < 2 || p == strings.ToLower(subj) {
			continue
		}
		out = append(out, p)
		if len(out) == maxPhraseQs {
			break
		}
	}
	return out
}
