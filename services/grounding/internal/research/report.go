package research

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// limitedSources: fewer sources or domains than this and a reader is told
// the report leans on too little.
const (
	limitedSourceCount = 3
	limitedDomainCount = 2
)

// Limits of the offline writer: sentences per section, characters per
// section, sentences one source may give a section, sections the executive
// summary draws on; sentences longer or shorter than these are a run-on
// block or a heading, not a finding.
const (
	sectionSentences   = 3
	sectionChars       = 600
	sentencesPerSource = 2
	summarySections    = 3
	maxSentenceRunes   = 400
	minSentenceWords   = 4
)

// What a section or the summary says when no source answers it.
const (
	noEvidenceSentence = "No source in the index answers this."
	noEvidenceForTopic = "No source in the index answers this topic."
)

// A candidate sentence scores its angle match (1 for a cue word, adviceScore
// for an instruction under the practice angle, the share of a model
// question's own words) plus its share of the focus terms, plus
// sourceWeight × its source's relevance; earlier sentences of a source and
// sources further down the ranking lose a little, so ties go to what the
// source puts first and to the best source.
const (
	adviceScore     = 0.8
	sourceWeight    = 0.2
	positionPenalty = 0.01
	rankPenalty     = 0.05
)

// finding is one sentence of a section and the source it came from.
type finding struct {
	text  string
	src   int // index into the run's sources
	score float64
}

// written is a run's findings before numbering: per sub-question, the
// sentences taken from its evidence.
type written struct {
	a        assessment
	sections [][]finding
	// cited are the sources admitted for some sub-question, in the order
	// they are numbered: sub-question order, best first.
	cited []int
}

// write picks each section's sentences from the sources admitted for its
// sub-question (assess): sentences that speak to the angle, best first, at
// most sectionSentences, never a sentence an earlier section used.
func write(run *Run) written {
	a := assess(run.Topic, run.Plan, run.Sources)
	w := written{a: a, sections: make([][]finding, len(run.Plan))}
	seen := map[int]bool{}
	for _, adm := range a.admitted {
		for _, i := range adm {
			if !seen[i] {
				seen[i] = true
				w.cited = append(w.cited, i)
			}
		}
	}
	used := map[string]bool{}
	for qi, q := range run.Plan {
		w.sections[qi] = pick(run, a, qi, q, used)
	}
	return w
}

// pick chooses the sentences of sub-question q's section.
func pick(run *Run, a assessment, qi int, q string, used map[string]bool) []finding {
	k := kindOf(q, run.Topic)
	var cues []string
	if k != nil {
		cues = stems(k.cues)
	}
	var cands []finding
	for rank, i := range a.admitted[qi] {
		srcScore := scoreOf(a.sections[qi], run.Sources[i].URL)
		for pos, sent := range sentences(run.Sources[i].Snippet) {
			if utf8.RuneCountInString(sent) > maxSentenceRunes || len(strings.Fields(sent)) < minSentenceWords || used[sentenceKey(sent)] {
				continue
			}
			ts := termSet(sent)
			focus := weightedCoverage(ts, a.focus[qi], a.weights[qi])
			angle := 0.0
			switch {
			case k != nil && len(k.cues) > 0:
				switch {
				case matchesAny(ts, cues):
					angle = 1
				case k.name == kindPrevention.name && isAdvice(sent):
					angle = adviceScore
				default:
					continue
				}
			case len(a.own[qi]) > 0: // a model's question: its own words
				angle = ownShare(ts, a.own[qi])
				if angle == 0 && focus == 0 {
					continue
				}
			default: // the overview and phrase questions: about the focus
				if focus == 0 {
					continue
				}
			}
			score := angle + focus + sourceWeight*srcScore - positionPenalty*float64(pos) - rankPenalty*float64(rank)
			cands = append(cands, finding{text: sent, src: i, score: score})
		}
	}
	slices.SortStableFunc(cands, func(x, y finding) int { return -cmpFloat(x.score, y.score) })
	var (
		out    []finding
		chars  int
		perSrc = map[int]int{}
		taken  = map[string]bool{}
	)
	for _, c := range cands {
		key := sentenceKey(c.text)
		n := utf8.RuneCountInString(c.text)
		if taken[key] || perSrc[c.src] >= sentencesPerSource || (len(out) > 0 && chars+n > sectionChars) {
			continue
		}
		taken[key] = true
		perSrc[c.src]++
		chars += n
		out = append(out, c)
		if len(out) == sectionSentences {
			break
		}
	}
	for _, f := range out {
		used[sentenceKey(f.text)] = true
	}
	return out
}

// ownShare is the share of terms that text holds.
func ownShare(text map[string]bool, terms []string) float64 {
	n := 0
	for _, t := range terms {
		if text[t] {
			n++
		}
	}
	return float64(n) / float64(len(terms))
}

// cite appends the citation marker to a finding's sentence.
func cite(f finding, number map[int]int) string {
	return fmt.Sprintf("%s [%d]", f.text, number[f.src])
}

// summarize is the executive summary's sentences: the first finding of
// each of the best-supported sections (most admitted sources, then the
// best finding), at most summarySections, in plan order.
func summarize(w written, number map[int]int) []string {
	var order []int
	for qi, fs := range w.sections {
		if len(fs) > 0 {
			order = append(order, qi)
		}
	}
	slices.SortStableFunc(order, func(x, y int) int {
		if d := len(w.a.admitted[y]) - len(w.a.admitted[x]); d != 0 {
			return d
		}
		return -cmpFloat(w.sections[x][0].score, w.sections[y][0].score)
	})
	order = order[:min(len(order), summarySections)]
	slices.Sort(order)
	out := make([]string, len(order))
	for i, qi := range order {
		out[i] = cite(w.sections[qi][0], number)
	}
	return out
}

// buildReport writes the report of a run whose last critique is in run:
// one Markdown section per sub-question with the sentences of its own
// evidence and [n] citations into the report's sources (only the sources
// some sub-question admitted), "No source in the index answers this." where
// it has none, an executive summary from the best-supported findings, the
// relevance scores behind each section, and the quality indicators.
func buildReport(run *Run, now time.Time) Report {
	w := write(run)
	number := make(map[int]int, len(w.cited))
	sources := make([]Source, len(w.cited))
	domains := map[string]bool{}
	for n, i := range w.cited {
		number[i] = n + 1
		sources[n] = run.Sources[i]
		sources[n].Text = ""
		domains[domainOf(run.Sources[i].URL)] = true
	}
	subj := titleOf(run.Topic)
	score := 0.0
	if run.QualityScore != nil {
		score = *run.QualityScore
	}

	summary := strings.Join(summarize(w, number), " ")
	if summary == "" {
		summary = noEvidenceForTopic
	}
	summary += fmt.Sprintf(" (Quality score %.2f after %d %s; %d %s from %d %s.)",
		score, run.IterationCount, plural(run.IterationCount, "iteration", "iterations"),
		len(sources), plural(len(sources), "source", "sources"),
		len(domains), plural(len(domains), "domain", "domains"))

	var md strings.Builder
	fmt.Fprintf(&md, "# %s\n", headingOf(subj))
	if len(sources) == 0 {
		// Nothing in the index is about the topic: said once, not under
		// every sub-question.
		md.WriteString("\n" + noEvidenceForTopic + "\n")
	}
	for qi, q := range run.Plan {
		if len(sources) == 0 {
			break
		}
		fmt.Fprintf(&md, "\n## %s\n\n", sectionHeading(q, headingOf(subj)))
		if len(w.sections[qi]) == 0 {
			md.WriteString(noEvidenceSentence + "\n")
			continue
		}
		parts := make([]string, len(w.sections[qi]))
		for i, f := range w.sections[qi] {
			parts[i] = cite(f, number)
		}
		md.WriteString(strings.Join(parts, " ") + "\n")
	}
	if len(sources) > 0 {
		md.WriteString("\n## Sources\n\n")
		for i, s := range sources {
			fmt.Fprintf(&md, "%d. [%s](%s)\n", i+1, markdownText(s.Title), s.URL)
		}
	}

	var warnings []string
	if score < run.QualityThreshold {
		warnings = append(warnings, fmt.Sprintf("quality score %.2f is below the threshold %.2f after %d of %d iterations",
			score, run.QualityThreshold, run.IterationCount, run.MaxIterations))
	}
	limited := len(sources) < limitedSourceCount || len(domains) < limitedDomainCount
	if limited {
		warnings = append(warnings, fmt.Sprintf("only %d %s from %d %s", len(sources), plural(len(sources), "source", "sources"),
			len(domains), plural(len(domains), "domain", "domains")))
	}
	if off := len(run.Sources) - len(sources); off > 0 {
		warnings = append(warnings, fmt.Sprintf("%d of %d sources found were off topic and are not cited", off, len(run.Sources)))
	}
	if run.Critique != nil && len(run.Critique.Gaps) > 0 {
		gaps := make([]string, len(run.Critique.Gaps))
		for i, g := range run.Critique.Gaps {
			gaps[i] = sectionHeading(g, headingOf(subj))
		}
		warnings = append(warnings, "too little evidence for: "+strings.Join(gaps, "; "))
	}
	return Report{
		ExecutiveSummary: summary,
		FindingsMarkdown: md.String(),
		Sources:          sources,
		Iterations:       run.IterationCount,
		GeneratedAt:      now,
		Quality:          QualityIndicators{Score: score, Warnings: warnings, LimitedSources: limited},
		Sections:         w.a.sections,
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// markdownText keeps a title from breaking a Markdown link.
func markdownText(s string) string {
	return strings.NewReplacer("[", "(", "]", ")", "\n", " ").Replace(s)
}

// reportMetadata is the audit record of a report, free of personal data.
func reportMetadata(run *Run, r Report) ReportMetadata {
	refs := make([]SourceRef, len(r.Sources))
	for i, s := range r.Sources {
		refs[i] = SourceRef{Title: RedactPersonalData(s.Title), URL: redactURL(s.URL)}
	}
	return ReportMetadata{
		Type:           ReportMetadataType,
		Topic:          RedactPersonalData(run.Topic),
		UserID:         run.UserID,
		Sources:        refs,
		IterationCount: run.IterationCount,
		Timestamp:      r.GeneratedAt,
	}
}

// Redaction patterns. Names cannot be recognised reliably without a model;
// these catch the forms a topic usually carries them in: a title before a
// name ("Dr. Jane Doe"), a common given name followed by a capitalised word
// ("Maria Garcia"), and chat handles. Over-redacting a product name that
// happens to look like a person's is the safer mistake.
var (
	emailRe     = regexp.MustCompile(`(?i)[a-z0-9._%+\-]+@[a-z0-9.\-]+\.[a-z]{2,}`)
	handleRe    = regexp.MustCompile(`(^|[\s(])@[A-Za-z0-9_]{3,32}\b`)
	phoneRe     = regexp.MustCompile(`\+?\d[\d\s().\-]{7,}\d`)
	honorificRe = regexp.MustCompile(`\b(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Dame|Herr|Frau|Mme|Mlle|Sr|Sra)\.?\s+\p{Lu}[\p{L}'\-]+(?:\s+\p{Lu}[\p{L}'\-]+){0,2}`)
	notPhoneRe  = regexp.MustCompile(`^\d{4}\s*-\s*\d{4}$|^\d{4}-\d{2}-\d{2}$`)
	capWordRe   = regexp.MustCompile(`\p{Lu}[\p{L}'\-]*`)
)

// givenNames are common given names across languages; a capitalised word
// after one is taken for a surname.
var givenNames = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(`James John Robert Michael William David Richard Joseph Thomas Charles Christopher Daniel
		Matthew Anthony Mark Donald Steven Paul Andrew Joshua Kenneth Kevin Brian George Timothy Ronald Edward Jason Jeffrey Ryan
		Jacob Gary Nicholas Eric Jonathan Stephen Larry Justin Scott Brandon Benjamin Samuel Gregory Alexander Frank Patrick
		Raymond Jack Dennis Jerry Tyler Aaron Jose Adam Nathan Henry Peter Zachary Douglas Harold Carl Arthur Gerald Roger
		Keith Jeremy Lawrence Terry Sean Christian Albert Joe Ethan Austin Jesse Willie Billy Bryan Bruce Jordan Ralph Roy Noah
		Dylan Eugene Wayne Alan Juan Louis Russell Gabriel Randy Philip Harry Vincent Bobby Johnny Logan Tom Tim Bob Bill Mike
		Mary Patricia Jennifer Linda Elizabeth Barbara Susan Jessica Sarah Karen Lisa Nancy Betty Sandra Margaret Ashley Kimberly
		Emily Donna Michelle Carol Amanda Melissa Deborah Stephanie Dorothy Rebecca Sharon Laura Cynthia Amy Kathleen Angela
		Shirley Brenda Emma Anna Pamela Nicole Samantha Katherine Christine Helen Debra Rachel Carolyn Janet Maria Catherine
		Heather Diane Olivia Julie Joyce Victoria Ruth Virginia Lauren Kelly Christina Joan Evelyn Judith Andrea Hannah Megan
		Cheryl Jacqueline Martha Madison Teresa Gloria Sara Janice Ann Kathryn Abigail Sophia Frances Jean Alice Judy Isabella
		Julia Grace Amber Denise Danielle Marilyn Beverly Charlotte Natalie Theresa Diana Brittany Doris Kayla Alexis Lori Marie
		Jane Kate Lucy Anne Eva Elena Sofia Lena Clara Laura Ines Marta Carmen Lucia Paula Ana Pedro Carlos Luis Miguel Javier
		Antonio Manuel Francisco Jorge Pablo Diego Alejandro Fernando Ricardo Roberto Andrea Giovanni Giuseppe Marco Luca Matteo
		Francesco Alessandro Lorenzo Hans Klaus Jürgen Stefan Wolfgang Andreas Thomas Uwe Dieter Markus Sabine Petra Ursula
		Monika Claudia Anja Katrin Pierre Jean Jacques Michel Philippe Alain Nicolas François Sophie Camille Chloé Léa Manon
		Ivan Sergei Dmitri Olga Natalia Irina Tatiana Anastasia Mohammed Muhammad Ahmed Ali Omar Fatima Aisha Wei Li Ming
		Hiroshi Takashi Yuki Kenji Raj Rahul Priya Amit Anil Sunita Linus Ada Grace Alan Guido Bjarne Ken Dennis Larry Sergey
		Elon Jeff Satya Sundar Tim Bill Steve Mark Sam`) {
		m[n] = true
	}
	return m
}()

// RedactPersonalData replaces e-mail addresses with "[email]", chat handles
// with "[handle]", phone numbers with "[phone]", and names (see the
// patterns above) with "[name]". It is applied to everything a report's
// metadata takes from user input or from the web.
func RedactPersonalData(s string) string {
	s = emailRe.ReplaceAllString(s, "[email]")
	s = handleRe.ReplaceAllString(s, "$1[handle]")
	s = phoneRe.ReplaceAllStringFunc(s, func(m string) string {
		// Year ranges and dates ("2019-2024", "2024-01-15") are not phone
		// numbers; other runs of seven digits or more are.
		if notPhoneRe.MatchString(m) {
			return m
		}
		digits := 0
		for _, r := range m {
			if r >= '0' && r <= '9' {
				digits++
			}
		}
		if digits < 7 {
			return m
		}
		return "[phone]"
	})
	s = honorificRe.ReplaceAllString(s, "[name]")
	return redactNames(s)
}

// redactNames replaces a common given name followed by one or two
// capitalised words ("Maria Garcia", "John Ronald Tolkien") with "[name]".
func redactNames(s string) string {
	locs := capWordRe.FindAllStringIndex(s, -1)
	var b strings.Builder
	last := 0
	for i := 0; i < len(locs); i++ {
		start, end := locs[i][0], locs[i][1]
		if !givenNames[s[start:end]] {
			continue
		}
		j := i
		// Only words separated by plain spaces belong to the same name.
		for j+1 < len(locs) && j-i < 2 && strings.TrimSpace(s[locs[j][1]:locs[j+1][0]]) == "" && locs[j+1][0] > locs[j][1] {
			j++
		}
		if j == i {
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString("[name]")
		last = locs[j][1]
		i = j
	}
	b.WriteString(s[last:])
	return b.String()
}

// redactURL drops what can identify a person in a URL: credentials, the
// query and the fragment; e-mail addresses left in the path are redacted.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return RedactPersonalData(raw)
	}
	if u.Scheme == "mailto" {
		return "mailto:[email]"
	}
	u.User, u.RawQuery, u.Fragment, u.RawFragment = nil, "", "", ""
	u.ForceQuery = false
	out, _ := url.PathUnescape(u.String())
	if emailRe.MatchString(out) {
		return emailRe.ReplaceAllString(out, "[email]")
	}
	return u.String()
}

// summaryMessage is the chat message of the send_summary action.
func summaryMessage(run *Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Research: %s\n\n%s\n", run.Topic, run.Report.ExecutiveSummary)
	if n := len(run.Report.Sources); n > 0 {
		b.WriteString("\nSources:\n")
		for i, s := range run.Report.Sources {
			if i == 5 {
				b.WriteString("… and " + strconv.Itoa(n-5) + " more\n")
				break
			}
			fmt.Fprintf(&b, "[%d] %s — %s\n", i+1, truncateRunes(s.Title, 80), s.URL)
		}
	}
	return truncateRunes(strings.TrimSpace(b.String()), 3900)
}

// draftAnswer is the refine step's interim answer: the executive summary
// the evidence so far would give, cited by position in the run's sources.
func draftAnswer(run *Run) string {
	w := write(run)
	number := make(map[int]int, len(run.Sources))
	for i := range run.Sources {
		number[i] = i + 1
	}
	return strings.Join(summarize(w, number), " ")
}

// reportContent is the report as one Markdown document, as persisted and
// returned by GetResearchReport: the title, the executive summary, the
// findings with their sources, and the quality notes.
func reportContent(run *Run, r Report) string {
	var b strings.Builder
	findings := r.FindingsMarkdown
	title := "# " + headingOf(titleOf(run.Topic))
	if first, rest, ok := strings.Cut(findings, "\n"); ok && strings.HasPrefix(first, "# ") {
		title, findings = first, rest
	}
	b.WriteString(title + "\n\n## Executive summary\n\n" + r.ExecutiveSummary + "\n")
	b.WriteString(strings.TrimRight(findings, "\n") + "\n")
	fmt.Fprintf(&b, "\n## Quality\n\n- Score %.2f after %d %s.\n", r.Quality.Score, r.Iterations, plural(r.Iterations, "iteration", "iterations"))
	for _, w := range r.Quality.Warnings {
		b.WriteString("- " + w + "\n")
	}
	return b.String()
}

// longHeading is the length from which a report's title is not repeated
// in its sections' headings: a story told over a few sentences is read
// once, under "#", not again under every "##".
const longHeading = 80

// sectionHeading is how a sub-question heads its section under title: as
// asked, unless it repeats a long title ("What causes it when <the whole
// story>?", "<the whole story>: is the backup the cause?"), which is then
// left out ("What causes it?", "Is the backup the cause?"). The
// sub-question itself, as searched and judged, is unchanged.
func sectionHeading(q, title string) string {
	if len(title) < longHeading {
		return q
	}
	norm := func(s string) string {
		s = strings.ToLower(s)
		return strings.NewReplacer(" your ", " our ", " you ", " we ").Replace(" " + s + " ")
	}
	told := norm(title)
	repeats := func(s string) bool {
		return len(s) >= longHeading*3/4 && strings.Contains(told, strings.TrimSpace(norm(s)))
	}
	// The plan's own lead ("What causes it", "How can you tell"), not a
	// "when" the story tells ("…, right when the backup runs").
	if i := strings.Index(q, " when "); i > 0 && len(strings.Fields(q[:i])) <= 4 {
		rest, tail := strings.TrimSuffix(q[i+len(" when "):], "?"), "?"
		if r, ok := strings.CutSuffix(rest, ", and how do you prevent it"); ok {
			rest, tail = r, ", and how do you prevent it?"
		}
		if repeats(rest) {
			return q[:i] + tail
		}
	}
	if i := strings.LastIndex(q, ": "); i > 0 && repeats(q[:i]) {
		asked := q[i+len(": "):]
		r, n := utf8.DecodeRuneInString(asked)
		return string(unicode.ToUpper(r)) + asked[n:]
	}
	return q
}

// titleOf is what a report on topic is headed with: its subject, or the
// two things offered to do about a situation told, as offered ("More
// replicas or NodeLocal DNSCache", "raise the nofile limit or a leak"),
// not as two things to tell apart ("… and …").
func titleOf(topic string) string {
	f := headingForm(topic)
	if f.yesNo || f.wh != "" || f.ask != "" {
		// "Does the kubelet restart a container whose liveness probe
		// fails?": the question, not its words without their verb.
		return f.question(kindOverview, false)
	}
	if !f.offers() {
		// A story told over several sentences is titled by its first.
		return firstSentence(f.subject())
	}
	a, b := f.a, f.b
	if f.doubt {
		b = f.other
	}
	if doingRe.MatchString(a) {
		// "Kill that one or raise max_connections": a verb leads.
		r, n := utf8.DecodeRuneInString(a)
		a = string(unicode.ToUpper(r)) + a[n:]
	}
	return a + " or " + b
}

// headingOf is a subject as a report's title: a common first word starts
// upper case ("You see 'nf_conntrack: table full' on your nodes",
// "Running out of inodes"); a name stays as written ("etcd", "kubectl").
func headingOf(subj string) string {
	w, _, _ := strings.Cut(subj, " ")
	if !lowerLeadWords[w] && w != "you" && !gerund(w) {
		return subj
	}
	r, n := utf8.DecodeRuneInString(subj)
	return string(unicode.ToUpper(r)) + subj[n:]
}
