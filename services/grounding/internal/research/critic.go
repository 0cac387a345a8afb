package research

import (
	"context"
	"fmt"
	"math"
)

// Targets and weights of the offline critique. A sub-question is covered
// when two passages address it (one could be wrong); eight sources from four
// domains is what a short report needs to not lean on one site. Coverage
// weighs most because a report that skips an angle is incomplete however
// many sources it has.
const (
	sourcesPerQuestion = 2
	targetSources      = 8
	targetDomains      = 4

	weightCoverage  = 0.45
	weightSources   = 0.20
	weightDiversity = 0.15
	weightAgreement = 0.20
)

// OfflineCritic scores evidence by what can be counted:
//
//	score = 0.45 × coverage + 0.20 × min(sources/8, 1)
//	      + 0.15 × min(domains/4, 1) + 0.20 × agreement
//
// coverage is the mean over sub-questions of min(matching passages/2, 1),
// agreement the share of sub-questions whose matching passages come from at
// least two domains (independent sites saying the same thing). A passage
// matches a sub-question when it mentions at least half of the subject's
// terms and, for angles such as "risks", one of the angle's cue words (or,
// for other questions, half of the question's own terms). Gaps are the
// sub-questions with fewer than two matching passages. The score is rounded
// to three decimals; it is deterministic.
type OfflineCritic struct{}

var _ Critic = OfflineCritic{}

// Critique scores sources against plan.
func (OfflineCritic) Critique(_ context.Context, topic string, plan []string, sources []Source) (Critique, error) {
	subjTerms := contentTerms(subject(topic))
	texts := make([]map[string]bool, len(sources))
	domains := map[string]bool{}
	for i, s := range sources {
		texts[i] = termSet(s.Title + " " + s.Snippet)
		if d := domainOf(s.URL); d != "" {
			domains[d] = true
		}
	}

	var (
		coverage    float64
		covered     int
		corroborate int
		gaps        []string
	)
	for _, q := range plan {
		need, cues := questionTerms(q, topic, subjTerms)
		matched := 0
		qDomains := map[string]bool{}
		for i, t := range texts {
			if matchesHalf(t, need) && (len(cues) == 0 || matchesAny(t, cues)) {
				matched++
				qDomains[domainOf(sources[i].URL)] = true
			}
		}
		coverage += math.Min(float64(matched)/sourcesPerQuestion, 1)
		if matched >= sourcesPerQuestion {
			covered++
		} else {
			gaps = append(gaps, q)
		}
		if len(qDomains) >= 2 {
			corroborate++
		}
	}
	n := float64(max(len(plan), 1))
	coverage /= n
	agreement := float64(corroborate) / n
	sourceScore := math.Min(float64(len(sources))/targetSources, 1)
	diversity := math.Min(float64(len(domains))/targetDomains, 1)
	score := weightCoverage*coverage + weightSources*sourceScore + weightDiversity*diversity + weightAgreement*agreement
	score = math.Round(score*1000) / 1000

	return Critique{
		Score: score,
		Reasons: []string{
			fmt.Sprintf("coverage: %d of %d sub-questions have at least %d matching sources", covered, len(plan), sourcesPerQuestion),
			fmt.Sprintf("sources: %d (target %d)", len(sources), targetSources),
			fmt.Sprintf("diversity: %d distinct domains (target %d)", len(domains), targetDomains),
			fmt.Sprintf("agreement: %d of %d sub-questions corroborated by sources from 2 or more domains", corroborate, len(plan)),
		},
		Gaps: gaps,
	}, nil
}

// questionTerms returns the terms a passage must half-match and the cue
// words of which it must hold one for sub-question q.
func questionTerms(q, topic string, subjTerms []string) (need, cues []string) {
	if k := kindOf(q, topic); k != nil {
		for _, c := range k.cues {
			cues = append(cues, stem(c))
		}
		return subjTerms, cues
	}
	return contentTerms(q), nil
}

// matchesHalf reports whether text holds at least half of terms (all of
// them when there are one or two).
func matchesHalf(text map[string]bool, terms []string) bool {
	if len(terms) == 0 {
		return true
	}
	hit := 0
	for _, t := range terms {
		if text[t] {
			hit++
		}
	}
	need := (len(terms) + 1) / 2
	if len(terms) <= 2 {
		need = len(terms)
	}
	return hit >= need
}

func matchesAny(text map[string]bool, terms []string) bool {
	for _, t := range terms {
		if text[t] {
			return true
		}
	}
	return false
}
