package enricheval

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// AlertFigures are the enrichment figures of one set.
type AlertFigures struct {
	Alerts, Covered, Uncovered int
	// Cited counts citations, Relevant those labelled relevant or
	// acceptable for their alert.
	Cited, Relevant int
	// Wanted counts (alert, required runbook) pairs, Found those cited.
	Wanted, Found int
	// Abstained counts uncovered alerts answered without citations and
	// NEEDS_REVIEW.
	Abstained int
	// Misses lists what went wrong, one line each.
	Misses []string
}

// Precision is Relevant/Cited (1 when nothing was cited).
func (f AlertFigures) Precision() float64 { return ratio(f.Relevant, f.Cited) }

// Recall is Found/Wanted.
func (f AlertFigures) Recall() float64 { return ratio(f.Found, f.Wanted) }

// Abstention is Abstained/Uncovered.
func (f AlertFigures) Abstention() float64 { return ratio(f.Abstained, f.Uncovered) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// ScoreAlerts computes the figures of a set's outcomes.
func ScoreAlerts(outs []Outcome) AlertFigures {
	var f AlertFigures
	for _, o := range outs {
		a := o.Alert
		f.Alerts++
		if len(a.Runbooks) == 0 {
			f.Uncovered++
			if len(o.Cited) == 0 && o.Status == "NEEDS_REVIEW" {
				f.Abstained++
			} else {
				f.Misses = append(f.Misses, fmt.Sprintf("%s: no runbook is about it, yet %s cites %v", a.ID, o.Status, o.Cited))
			}
		} else {
			f.Covered++
		}
		for _, r := range a.Runbooks {
			f.Wanted++
			if slices.Contains(o.Cited, r) {
				f.Found++
			} else {
				f.Misses = append(f.Misses, fmt.Sprintf("%s: %s not cited (cited %v, %s %q; %s)", a.ID, r, o.Cited, o.Status, o.Error, retrieval(o, r)))
			}
		}
		on, off := onLabel(o.Cited, a.Runbooks, a.Acceptable)
		f.Cited += len(o.Cited)
		f.Relevant += on
		for _, c := range off {
			if len(a.Runbooks) > 0 { // an uncovered one's citations are its own miss
				f.Misses = append(f.Misses, fmt.Sprintf("%s: cites %s, not about it", a.ID, c))
			}
		}
	}
	return f
}

// onLabel counts the cited names a label lists (must or may be cited)
// and returns the others.
func onLabel(cited, runbooks, acceptable []string) (on int, off []string) {
	for _, c := range cited {
		if slices.Contains(runbooks, c) || slices.Contains(acceptable, c) {
			on++
		} else {
			off = append(off, c)
		}
	}
	return on, off
}

// retrieval says whether the search service returned runbook r at all.
// Returned and not cited, relevance left it out or the offline summary
// quoted nothing of it: the outcome cannot tell which.
func retrieval(o Outcome, r string) string {
	if o.Retrieved == nil {
		return "search not recorded"
	}
	if i := slices.Index(o.Retrieved, r); i >= 0 {
		return fmt.Sprintf("search returned it at %d of %d: relevance or the summary left it out", i+1, len(o.Retrieved))
	}
	return fmt.Sprintf("search did not return it (returned %v): a retrieval miss", o.Retrieved)
}

// TopicFigures are the research figures of one set.
type TopicFigures struct {
	Covered, Uncovered int
	// CitesRunbooks counts covered topics citing every runbook they must;
	// HalfAnswered those answering at least half their sections; Both
	// those doing both (the target).
	CitesRunbooks, HalfAnswered, Both int
	// Sections and Answered sum the covered topics' sections.
	Sections, Answered int
	// SaidOnce counts uncovered topics citing nothing and saying so
	// exactly once.
	SaidOnce int
	// Citations counts every report's cited runbooks; OnLabel those a
	// topic's labels name (runbooks or acceptable). A part whose topics
	// list nothing acceptable counts every near topic as off the label.
	Citations, OnLabel int
	Misses             []string
}

// CitationPrecision is the share of cited runbooks on their topic's
// labels (1 when nothing was cited).
func (f TopicFigures) CitationPrecision() float64 {
	if f.Citations == 0 {
		return 1
	}
	return float64(f.OnLabel) / float64(f.Citations)
}

// ScoreTopics computes the figures of a research set's outcomes.
func ScoreTopics(outs []TopicOutcome) TopicFigures {
	var f TopicFigures
	for _, o := range outs {
		t := o.Topic
		on, off := onLabel(o.Cited, t.Runbooks, t.Acceptable)
		f.Citations += len(o.Cited)
		f.OnLabel += on
		for _, c := range off {
			if len(t.Runbooks) > 0 { // an uncovered one's citations are its own miss
				f.Misses = append(f.Misses, fmt.Sprintf("%s: cites %s, off its labels", t.ID, c))
			}
		}
		if len(t.Runbooks) == 0 {
			f.Uncovered++
			if len(o.Cited) == 0 && o.NoEvidenceNotes == 1 {
				f.SaidOnce++
			} else {
				f.Misses = append(f.Misses, fmt.Sprintf("%s: uncovered, yet cites %v and says so %d times", t.ID, o.Cited, o.NoEvidenceNotes))
			}
			continue
		}
		f.Covered++
		f.Sections += o.Sections
		f.Answered += o.Answered
		cites := true
		for _, r := range t.Runbooks {
			if !slices.Contains(o.Cited, r) {
				cites = false
			}
		}
		half := o.Sections > 0 && 2*o.Answered >= o.Sections
		if cites {
			f.CitesRunbooks++
		}
		if half {
			f.HalfAnswered++
		}
		if cites && half {
			f.Both++
		} else {
			f.Misses = append(f.Misses, fmt.Sprintf("%s: cites %v (wants %v), answers %d of %d sections", t.ID, o.Cited, t.Runbooks, o.Answered, o.Sections))
		}
	}
	return f
}

// PrintAlerts writes a set's figures.
func PrintAlerts(w io.Writer, part string, f AlertFigures, verbose bool) {
	fmt.Fprintf(w, "enrichment %-8s %3d alerts (%d with a runbook, %d without): precision %.3f (%d/%d)  recall %.3f (%d/%d)  abstention %.3f (%d/%d)\n",
		part, f.Alerts, f.Covered, f.Uncovered, f.Precision(), f.Relevant, f.Cited, f.Recall(), f.Found, f.Wanted, f.Abstention(), f.Abstained, f.Uncovered)
	if verbose {
		for _, m := range f.Misses {
			fmt.Fprintln(w, "  miss", m)
		}
	}
}

// PrintTopics writes a research set's figures.
func PrintTopics(w io.Writer, part string, f TopicFigures, verbose bool) {
	fmt.Fprintf(w, "research   %-8s %3d topics (%d covered, %d not): covered topics citing their runbooks %d/%d, answering at least half their sections %d/%d (sections answered %d/%d), both %d/%d; uncovered saying so once %d/%d; citations on their topic's labels %.3f (%d/%d)\n",
		part, f.Covered+f.Uncovered, f.Covered, f.Uncovered, f.CitesRunbooks, f.Covered, f.HalfAnswered, f.Covered, f.Answered, f.Sections, f.Both, f.Covered, f.SaidOnce, f.Uncovered, f.CitationPrecision(), f.OnLabel, f.Citations)
	if verbose {
		for _, m := range f.Misses {
			fmt.Fprintln(w, "  miss", m)
		}
	}
}

// Describe is one outcome as a line, for -v.
func Describe(o Outcome) string {
	return fmt.Sprintf("%s %-12s cites %-40s %s | %s", o.Alert.ID, o.Status, strings.Join(o.Cited, ","), o.Error, o.Summary)
}
