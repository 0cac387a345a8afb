package extractive

import (
	"cmp"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Runbook section headings: where the diagnostic steps and where the
// mitigations start. A heading is a short line of its own ("Diagnose.",
// "## Mitigation", "How to fix:"), as the search service's Markdown
// reduction or the Markdown itself writes it.
//
// A runbook written as labelled paragraphs ("Diagnosis: run …", "**Do**:
// stop …") gives the text after its label.
const (
	diagnoseWords = `diagnos[a-z]*|investigat[a-z]*|triage|troubleshoot[a-z]*|debug[a-z]*|checks?|checklist|confirm|look|how to (?:diagnose|investigate|check|confirm)|first steps?|what to (?:check|look at)|runbook steps|steps`
	mitigateWords = `mitigat[a-z]*|remediat[a-z]*|fix(?:es)?|resolution|resolve|recover[a-z]*|workarounds?|actions?|act|do|what to do|how to (?:fix|mitigate|resolve|recover)`
)

var (
	diagnoseHeading = regexp.MustCompile(`(?i)^(?:` + diagnoseWords + `)$`)
	mitigateHeading = regexp.MustCompile(`(?i)^(?:` + mitigateWords + `)$`)
	// A label and its paragraph on one line: "Diagnosis: mount | grep nfs".
	diagnoseLabel = regexp.MustCompile(`(?i)^\**(?:` + diagnoseWords + `)\**\s*[:.]\**\s+(\S.*)$`)
	mitigateLabel = regexp.MustCompile(`(?i)^\**(?:` + mitigateWords + `)\**\s*[:.]\**\s+(\S.*)$`)
	headingMarks  = regexp.MustCompile(`^\s*#{1,6}\s*|\*\*|[\s.:!=*-]+$`)
	itemMarks     = regexp.MustCompile(`^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?`)
)

// maxHeadingWords: a line with more words is prose, not a heading.
const maxHeadingWords = 4

// RunbookSteps finds a runbook's first diagnostic step and its first
// mitigation: the first block under a heading such as "Diagnose" and the
// first under one such as "Mitigate", as written (list markers removed).
// Either is empty when the runbook has no such section.
func RunbookSteps(text string) (diagnose, mitigate string) {
	var section *string
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if m := diagnoseLabel.FindStringSubmatch(line); m != nil && diagnose == "" {
			diagnose, section = strings.TrimSpace(m[1]), nil
			continue
		}
		if m := mitigateLabel.FindStringSubmatch(line); m != nil && mitigate == "" {
			mitigate, section = strings.TrimSpace(m[1]), nil
			continue
		}
		if h := headingMarks.ReplaceAllString(line, ""); len(strings.Fields(h)) <= maxHeadingWords {
			switch {
			case h == "":
				// A setext heading's underline or a rule.
				continue
			case diagnoseHeading.MatchString(h):
				section = &diagnose
				continue
			case mitigateHeading.MatchString(h):
				section = &mitigate
				continue
			case strings.HasPrefix(line, "#") || !strings.ContainsAny(h, " "):
				// Another heading ends the section.
				section = nil
				continue
			}
		}
		if section != nil && *section == "" {
			*section = strings.TrimSpace(itemMarks.ReplaceAllString(line, ""))
			section = nil
		}
		if diagnose != "" && mitigate != "" {
			break
		}
	}
	return ensureTerminal(diagnose), ensureTerminal(mitigate)
}

// RunbookSummary is a runbook's first diagnostic step and its first
// mitigation, in that order, within maxChars characters: what an on-call
// engineer does first, then what fixes it. Each part is cut at a word
// boundary when both do not fit; it is empty when the runbook lacks
// either section.
func RunbookSummary(text string, maxChars int) string {
	d, m := RunbookSteps(text)
	if d == "" || m == "" {
		return ""
	}
	room := maxChars - 1 // the space between
	nd, nm := utf8.RuneCountInString(d), utf8.RuneCountInString(m)
	if nd+nm <= room {
		return d + " " + m
	}
	// Keep as much of the mitigation as of the diagnosis where both are
	// long; a short one leaves its room to the other.
	half := room / 2
	switch {
	case nm <= half:
		d = TrimSummary(d, room-nm, 0)
	case nd <= half:
		m = TrimSummary(m, room-nd, 0)
	default:
		d = TrimSummary(d, half, 0)
		m = TrimSummary(m, room-utf8.RuneCountInString(d), 0)
	}
	return d + " " + m
}

// openingSentences is how many of a runbook's first sentences RunbookLead
// gives when the runbook has no diagnostic or mitigation section.
const openingSentences = 2

// RunbookLead is what an answer quotes from a runbook when the summariser
// found none of its sentences to quote although the runbook is about the
// question: RunbookSummary (its first diagnostic step, then its first
// mitigation) when it has both sections, the first step of the one it has
// otherwise, and its opening sentences (headings left out) when it has
// neither, within maxChars characters. It is empty only when text says
// nothing.
func RunbookLead(text string, maxChars int) string {
	if s := RunbookSummary(text, maxChars); s != "" {
		return s
	}
	if s := cmp.Or(RunbookSteps(text)); s != "" {
		// One of the two sections: its first step.
		return TrimSummary(s, maxChars, 0)
	}
	return TrimSummary(opening(text), maxChars, openingSentences)
}

// opening is text without its headings and list markers, its blocks
// joined into one paragraph.
func opening(text string) string {
	var blocks []string
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		h := headingMarks.ReplaceAllString(line, "")
		// A Markdown heading, a rule, or one word alone ("Overview.") is
		// a heading, not an opening sentence.
		if h == "" || strings.HasPrefix(line, "#") || !strings.ContainsAny(h, " ") {
			continue
		}
		blocks = append(blocks, ensureTerminal(strings.TrimSpace(itemMarks.ReplaceAllString(line, ""))))
	}
	return strings.Join(blocks, " ")
}
