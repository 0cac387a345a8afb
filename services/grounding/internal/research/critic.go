package research

import (
	"context"
	"fmt"
	"math"
	"strings"
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

// OfflineCritic scores evidence by what can be counted, over the on-topic
// sources only:
//
//	score = 0.45 × coverage + 0.20 × min(sources/8, 1)
//	      + 0.15 × min(domains/4, 1) + 0.20 × agreement
//
// A source is on topic when it clears RelevanceBar for at least one
// sub-question (see assess); the others are dropped, and the reasons name
// them. coverage is the mean over sub-questions of min(admitted sources/2,
// 1), agreement the share of sub-questions whose admitted sources come from
// at least two domains (independent sites saying the same thing); sources
// and domains count the on-topic sources. Gaps are the sub-questions with
// fewer than two admitted sources. The score is rounded to three decimals;
// it is deterministic.
type OfflineCritic struct{}

var _ Critic = OfflineCritic{}

// maxDroppedNamed bounds the off-topic sources a reason names one by one.
const maxDroppedNamed = 8

// Critique scores sources against plan.
func (OfflineCritic) Critique(_ context.Context, topic string, plan []string, sources []Source) (Critique, error) {
	a := assess(topic, plan, sources)
	domains := map[string]bool{}
	onTopic := 0
	var dropped []string
	for i, s := range sources {
		if !a.onTopic[i] {
			dropped = append(dropped, fmt.Sprintf("%s (%s)", s.Title, s.URL))
			continue
		}
		onTopic++
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
	for qi, q := range plan {
		matched := len(a.admitted[qi])
		qDomains := map[string]bool{}
		for _, i := range a.admitted[qi] {
			qDomains[domainOf(sources[i].URL)] = true
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
	sourceScore := math.Min(float64(onTopic)/targetSources, 1)
	diversity := math.Min(float64(len(domains))/targetDomains, 1)
	score := weightCoverage*coverage + weightSources*sourceScore + weightDiversity*diversity + weightAgreement*agreement
	score = math.Round(score*1000) / 1000

	reasons := []string{
		fmt.Sprintf("coverage: %d of %d sub-questions have at least %d sources above the relevance bar %.2f", covered, len(plan), sourcesPerQuestion, RelevanceBar),
		fmt.Sprintf("sources: %d on topic (target %d)", onTopic, targetSources),
		fmt.Sprintf("diversity: %d distinct domains (target %d)", len(domains), targetDomains),
		fmt.Sprintf("agreement: %d of %d sub-questions corroborated by sources from 2 or more domains", corroborate, len(plan)),
	}
	if len(dropped) > 0 {
		named := dropped[:min(len(dropped), maxDroppedNamed)]
		r := fmt.Sprintf("dropped %d off-topic %s: %s", len(dropped), plural(len(dropped), "source", "sources"), strings.Join(named, "; "))
		if len(dropped) > len(named) {
			r += fmt.Sprintf("; and %d more", len(dropped)-len(named))
		}
		reasons = append(reasons, r)
	}
	return Critique{Score: score, Reasons: reasons, Gaps: gaps}, nil
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
