// Package relevance decides whether a source is about an alert or a
// question, so that grounding cites only what is: a runbook that merely
// shares a word or two with an alert (PgBouncer advice for a Redis memory
// alert) is not evidence for it, and an alert nothing is about gets no
// citation at all.
//
// # The score
//
// An alert's text (as the notifier renders it: "[FIRING] <alertname>
// (<severity>): <summary>", the description, the key labels as
// name=value) is parsed into its alert name, split into words (camelCase
// and snake_case), and weighted terms: the alert name's words weigh most,
// then the summary's, then the description's and the labels'. Free text
// (a log line, a question, a generic alert) is all summary. In running
// text, names of things (paths, host names, addresses, pods such as
// web-3) and asides in parentheses say where, not what: they weigh as
// labels. Words are lower-cased, stemmed and mapped to one term per
// synonym group (PostgreSQL and pg are postgres, filesystem is disk, x509
// is certificate, issuer is ca), phrases tools print to the term they mean
// ("no such host" is dns, "Bad Gateway" 5xx, "df -i" inode), and a
// certificate implies TLS; words that say that something is wrong or
// where, but not what ("high", "error", "node", "unable", "offline"),
// weigh a third, and the alerting tool that sent a line (Datadog,
// "[Triggered]") not at all.
//
// A source (its title and text, a runbook) scores in [0, 1]:
//
//   - 1 when it names the alert itself (the alert name as one of the
//     identifiers it lists: "Alert: `KubePodCrashLooping` fires when…",
//     a list under an "Alerts" heading or a table of alerts);
//   - otherwise titleWeight × the title match (the weighted share of the
//     title's terms the alert mentions; or of the alert's terms, or of
//     its name's, the title holds, when higher) + nameWeight × the best
//     share of one of its listed alert names' words the alert holds +
//     textWeight × the weighted share of the alert's terms the source
//     holds, + phraseWeight when two adjacent words of the alert appear
//     adjacent in the title, + quoteWeight when three words in a row of
//     its summary or description appear in a row in the source (an error
//     message the runbook quotes). For free text the title match is at
//     least the share of its terms one line of the runbook holds (three
//     specific ones at least: the symptom line that says what the log
//     line says). A missing signal is not a mismatch: a runbook that lists
//     no alert names, or free text that has no alert name, is judged by
//     title and text alone, scaled to the same range.
//
// The score halves for a runbook about another system (the alert's name
// starts with a system the runbook never mentions, and the runbook's
// title with one the alert never mentions) or about another problem on
// the same system (its title shares only the system with the alert's
// name and names a problem the alert does not), and shrinks in
// proportion below [TextBar] text match.
//
// A source is relevant when its score reaches [Bar] and, beside a better
// one, [NearShare] of its score ([NearBest] beside one that names the
// alert, unless it quotes the alert's message and its title names more of
// it). Titles decide between near topics: beside the best, a source whose
// title names nothing the alert says (when the best's names two of its
// terms) is left out, and of two on one subject, the one whose title adds
// only a word the alert never says (inode beside disk) when the other's
// names all it says of the alert and nothing unsaid (see [Select]). The
// weights and the bar were calibrated on the labelled evaluation sets
// (eval/; docs/evaluation.md), each held-out part run once blind before it
// became tuning material.
package relevance

import (
	"cmp"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/groundcrew/groundcrew/services/grounding/internal/logrecord"
)

// Calibrated weights and bar (docs/evaluation.md).
const (
	// Bar is the score a source needs to be cited.
	Bar = 0.5
	// TextBar is the share of the alert's terms a source must hold for
	// its score to count in full; below it the score shrinks in
	// proportion.
	TextBar = 0.45
	// NearBest is the score another source needs to be cited beside one
	// that names the alert itself: a runbook on a near topic (replica
	// lag beside WAL growth) is not cited when one is plainly about the
	// alert.
	NearBest = 0.75
	// NearShare is the share of the best source's score another needs to
	// be cited beside it: a runbook plainly about the alert (0.99) keeps
	// one that merely passes the bar (0.54) out.
	NearShare = 0.6

	titleWeight  = 0.5
	nameWeight   = 0.25
	textWeight   = 0.25
	phraseWeight = 0.1
	quoteWeight  = 0.2
	// codeWeight weighs an identifier of the alert's the source quotes
	// (EADDRNOTAVAIL, startingDeadlineSeconds).
	codeWeight = 0.15
	// passageWeight weighs the best line's share of the alert's terms,
	// counted from passageTerms specific terms in one line.
	passageWeight = 0.3
	passageTerms  = 3
	// plainTitle is how many specific terms of the alert a title names
	// for it to be plainly about the alert: beside it, a source whose
	// title names none is not cited.
	plainTitle = 2
	// otherSystemFactor scales the score of a runbook about another
	// system than the alert's.
	otherSystemFactor = 0.5

	// genericWeight is the weight of a generic word ("high", "node").
	genericWeight = 1.0 / 3
	// Weights of an alert's parts.
	alertNameWeight   = 1.5
	summaryWeight     = 1.0
	descriptionWeight = 0.7
	labelWeight       = 0.5
)

// Subject is what an alert or question is about.
type Subject struct {
	// AlertName is the alert's name ("" for free text).
	AlertName string
	// Labels are the alert's name=value labels.
	Labels map[string]string
	// weights are the subject's terms and their weights.
	weights map[string]float64
	// nameTerms are the alert name's terms.
	nameTerms map[string]bool
	// pairs are adjacent term pairs of the alert name and summary;
	// triples are runs of three terms of its summary and description (a
	// quoted error message) with at least two specific ones.
	pairs   map[[2]string]bool
	triples map[[3]string]bool
	// whole are the alert name's identifiers as one term
	// ("kubepodcrashloop"): found, they tell; missing, they say nothing
	// (a runbook words the alert its own way).
	whole map[string]bool
	// codes are the identifiers its summary and description quote, as
	// code writes them (EADDRNOTAVAIL, startingDeadlineSeconds,
	// node_sockstat_TCP_tw), lower-cased: a source quoting one is
	// about what printed it.
	codes map[string]bool
}

var (
	statusPrefix = regexp.MustCompile(`^\[(?:FIRING|RESOLVED)(?::\d+)?\]\s*`)
	labelPair    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=\S+$`)
	asideRe      = regexp.MustCompile(`\([^()]*\)`)
	identifier   = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_:.-]*$`)
	// codePath is a package and class, not a host name:
	// redis.exceptions.ConnectionError, java.lang.OutOfMemoryError.
	codePath = regexp.MustCompile(`^(?:[a-z][a-z0-9_]*\.)+[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*$`)
	// codeRe is an identifier as code writes it: an errno name
	// (EADDRNOTAVAIL), a SQLSTATE-like code (HY000), a camelCase name of
	// three words or more
	// (startingDeadlineSeconds, NotTriggerScaleUp), a snake_case one of
	// three (node_sockstat_TCP_tw).
	codeRe = regexp.MustCompile(`^E(?:ADDR|CONN|NO|HOST|NET|TIMEDOUT|AGAIN|ACCES|PERM|PIPE|[MN]FILE|XIST|INVAL|BUSY|ROFS|DQUOT|STALE|IO$)[A-Z]*$|^[A-Z]{1,3}\d{3,}$|^[A-Za-z][a-z0-9]+(?:[A-Z][a-z0-9]+){2,}$|^[A-Za-z0-9]+(?:_[A-Za-z0-9]+){2,}$`)
	// A name of a thing in running text: a path, a host name of three
	// parts or more, an address, or a hyphenated or underscored name
	// with a digit (web-3, checkout-6d5f, 0042_add_index), a device
	// numbered as the kernel numbers them (eth1, bond0, sda2, nvme0n1);
	// a log record's field with a number (total-vm:14820112kB,
	// status=429) names a measure, not what is wrong; so does a host name
	// of two parts under a common domain (orders-db.internal, api.com).
	entityRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*[:=]-?\d|/|^[A-Za-z0-9-]+\.(?:internal|local|lan|corp|svc|com|net|org|io)(?::\d+)?$|^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+){2,}$|^\d+\.\d+\.\d+|^[A-Za-z0-9]*\d[A-Za-z0-9]*[-_][A-Za-z0-9_-]*$|^[a-z]{2,}\d+(?:[a-z]+\d+)*$|^[A-Za-z0-9_]*[-_][A-Za-z0-9_-]*\d`)
)

// plumbing is what a network client prints of the call that failed,
// not of what went wrong: Go's operation and network ("dial tcp", "read
// udp"), an HTTP method before the URL it was sent to ("Post
// \"https://…\"": the URL stays, a name of where). "dial tcp: lookup
// ledger on 10.96.0.10:53: no such host" is about DNS, not TCP.
var plumbing = regexp.MustCompile(`\b(?:dial|read|write) (?:tcp|udp|unix|ip)[46]?\b|\b(?:GET|POST|PUT|PATCH|DELETE|HEAD|Get|Post|Put|Patch|Delete|Head) ((?:\\?")?[a-z][a-z0-9+.-]*://)`)

// where splits running text into what it says and the names of things it
// mentions (paths, hosts, pods: where, not what), which weigh as labels.
func where(text string) (what, names string) {
	var w, n []string
	for _, f := range strings.Fields(text) {
		core := strings.Trim(f, ":,;'\"`()[]")
		if core != "" && entityRe.MatchString(core) && !codePath.MatchString(core) {
			n = append(n, core)
			// A break in the run: words on either side are not adjacent.
			w = append(w, "|")
			continue
		}
		w = append(w, f)
	}
	return strings.Join(w, " "), strings.Join(n, " ")
}

// Parse reads an alert as the notifier renders it, or any other text.
func Parse(text string) Subject {
	s := Subject{
		Labels: map[string]string{}, weights: map[string]float64{}, nameTerms: map[string]bool{},
		pairs: map[[2]string]bool{}, triples: map[[3]string]bool{}, whole: map[string]bool{},
		codes: map[string]bool{},
	}
	// A JSON or logfmt record is judged by its message and labels; what
	// a network client prints of the call that failed, by what went
	// wrong.
	flat := plumbing.ReplaceAllString(logrecord.Flatten(text), "$1")
	lines := strings.Split(strings.TrimSpace(flat), "\n")
	first := strings.TrimSpace(lines[0])
	summary := first
	if statusPrefix.MatchString(first) {
		rest := statusPrefix.ReplaceAllString(first, "")
		name, tail := rest, ""
		if i := strings.Index(rest, ": "); i >= 0 {
			name, tail = rest[:i], rest[i+2:]
		}
		if i := strings.LastIndex(name, " ("); i >= 0 && strings.HasSuffix(name, ")") {
			name = name[:i]
		}
		s.AlertName = strings.TrimSpace(name)
		summary = tail
	}
	add := func(text string, w float64) {
		for _, t := range terms(text) {
			s.weights[t] = max(s.weights[t], w*weightOf(t))
		}
		ts := runTerms(text)
		for i, t := range ts {
			if i > 0 && w >= summaryWeight {
				s.pairs[[2]string{ts[i-1], t}] = true
			}
			if i > 1 && w >= descriptionWeight && w < alertNameWeight {
				tri := [3]string{ts[i-2], ts[i-1], t}
				specific := 0
				for _, x := range tri {
					if !generic[x] {
						specific++
					}
				}
				if specific >= 2 {
					s.triples[tri] = true
				}
			}
		}
	}
	if s.AlertName != "" {
		s.addName(add)
	}
	// An aside in parentheses ("(instance worker-8)", "(etl/import-42)")
	// names where, not what: it weighs as a label.
	for _, aside := range asideRe.FindAllString(summary, -1) {
		add(aside, labelWeight)
	}
	what, names := where(asideRe.ReplaceAllString(summary, " "))
	add(names, labelWeight)
	add(what, summaryWeight)
	s.addCodes(summary)
	for _, line := range lines[1:] {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case strings.HasPrefix(line, "Runbook: "), strings.HasPrefix(line, "Value: "):
		case isLabelLine(line):
			for f := range strings.FieldsSeq(line) {
				k, v, _ := strings.Cut(f, "=")
				s.Labels[k] = v
				add(v, labelWeight)
			}
		default:
			for _, aside := range asideRe.FindAllString(line, -1) {
				add(aside, labelWeight)
			}
			what, names := where(asideRe.ReplaceAllString(line, " "))
			add(names, labelWeight)
			add(what, descriptionWeight)
			s.addCodes(line)
		}
	}
	if name := s.Labels["alertname"]; s.AlertName == "" && identifier.MatchString(name) {
		// A group's text (the notifier's GroupQuery) names the alert in
		// its labels, one per line, not in a "[FIRING] name" line.
		s.AlertName = name
		s.addName(add)
	}
	return s
}

// addCodes adds the identifiers text quotes as code writes them (not the
// alert's own name).
func (s *Subject) addCodes(text string) {
	for _, f := range strings.FieldsFunc(text, notIdentRune) {
		if codeRe.MatchString(f) && !strings.EqualFold(f, s.AlertName) {
			s.codes[strings.ToLower(f)] = true
		}
	}
}

func notIdentRune(r rune) bool { return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') }

func isLabelLine(line string) bool {
	for f := range strings.FieldsSeq(line) {
		if !labelPair.MatchString(f) {
			return false
		}
	}
	return true
}

// Empty reports whether the subject has no terms to judge by.
func (s Subject) Empty() bool { return len(s.weights) == 0 }

// Source is a piece of evidence to judge.
type Source struct {
	Title, Text string
	// read is what Score reads of it, when Prepare read it already.
	read *reading
}

// reading is what Score reads of a source whatever the subject: read
// once by Prepare, a source is scored against many subjects without
// being read again (the evaluation's whole-corpus scoring).
type reading struct {
	// title are the title's terms, titleRun its terms as written.
	title, titleRun []string
	// names are the alert names the source is for.
	names []string
	// body holds the terms of its title and text.
	body map[string]bool
	// idents are the text's identifiers, lower-cased.
	idents map[string]bool
	// run are the terms of its text as written, names of things left
	// out.
	run []string
	// lines are the terms of each line of its text.
	lines [][]string
	// disclaimers are the terms of each sentence in which it says what
	// it is not about.
	disclaimers [][]string
}

// Prepare reads src once for Score: a source scored against many
// subjects need not be read again for each.
func Prepare(src Source) Source {
	if src.read == nil {
		src.read = read(src)
	}
	return src
}

func read(src Source) *reading {
	r := &reading{
		title:    terms(src.Title),
		titleRun: runTerms(src.Title),
		names:    ownNames(src.Title, src.Text),
		body:     map[string]bool{},
		idents:   map[string]bool{},
	}
	for _, t := range r.title {
		r.body[t] = true
	}
	for _, t := range terms(src.Text) {
		r.body[t] = true
	}
	for _, f := range strings.FieldsFunc(src.Text, notIdentRune) {
		r.idents[strings.ToLower(f)] = true
	}
	srcWhat, _ := where(src.Text)
	r.run = runTerms(srcWhat)
	for line := range strings.SplitSeq(unwrap(src.Text), "\n") {
		r.lines = append(r.lines, terms(line))
	}
	for _, sentence := range sentenceEnd.Split(src.Text, -1) {
		if disclaimerRe.MatchString(sentence) {
			r.disclaimers = append(r.disclaimers, terms(sentence))
		}
	}
	return r
}

// Score is a source's relevance and how it came about.
type Score struct {
	// Value is in [0, 1].
	Value float64
	// Named: the source names the alert itself.
	Named bool
	// Title, Name, Text, Phrase and Quote are the components (before
	// weighting).
	Title, Name, Text, Phrase, Quote float64
	// Passage is the weighted share of the alert's terms one line of the
	// source holds (a symptom or error line of its Diagnose section).
	Passage float64
	// Code is 1 when the source quotes an identifier the alert quotes
	// as code writes it (an errno name, a setting, a metric).
	Code float64
	// topic are the specific terms of the source's title; said, those of
	// them the alert says. Select compares them between sources.
	topic, said map[string]bool
}

// Relevant reports whether the score reaches the bar.
func (sc Score) Relevant() bool { return sc.Value >= Bar }

// Score judges how much src is about the subject.
func (s Subject) Score(src Source) Score {
	var sc Score
	if s.Empty() {
		return sc
	}
	rd := Prepare(src).read
	title := rd.title
	sc.topic, sc.said = map[string]bool{}, map[string]bool{}
	for _, t := range title {
		if !generic[t] {
			sc.topic[t] = true
			if s.weights[t] > 0 {
				sc.said[t] = true
			}
		}
	}
	names := rd.names
	if s.AlertName != "" {
		// "[FIRING:1] PostgresTooManyConnections db-prod-1: …" names the
		// alert with its first word.
		first, _, _ := strings.Cut(s.AlertName, " ")
		for _, n := range names {
			if strings.EqualFold(n, s.AlertName) || strings.EqualFold(n, first) {
				sc.Named, sc.Value = true, 1
				return sc
			}
		}
	}

	var num, den float64
	seen := map[string]bool{}
	for _, t := range title {
		if seen[t] {
			continue
		}
		seen[t] = true
		w := weightOf(t)
		den += w
		if s.weights[t] > 0 {
			num += w
		}
	}
	if den > 0 {
		sc.Title = num / den
	}
	// The other way round: how much of what a short question or alert
	// says the title says ("connection limits" and "PostgreSQL:
	// max_connections").
	var said, all float64
	for t, w := range s.weights {
		if s.whole[t] && !seen[t] {
			continue
		}
		all += w
		if seen[t] {
			said += w
		}
	}
	if all > 0 {
		sc.Title = max(sc.Title, said/all)
	}
	// And the alert's name alone: a title holding every specific word of
	// the name ("HostConntrackLimit" and "Node — conntrack table full") is
	// about what the alert names.
	var named, nameAll float64
	for t := range s.nameTerms {
		if s.whole[t] {
			continue
		}
		w := weightOf(t)
		nameAll += w
		if seen[t] {
			named += w
		}
	}
	if nameAll > 0 {
		sc.Title = max(sc.Title, named/nameAll)
	}

	for _, n := range names {
		nt := terms(n)
		if len(nt) < 2 {
			continue
		}
		// The name as one word ("jvmgcpausetimehigh") is found only
		// when the alert is that one, which names it; for another it
		// is no word missing.
		joined := term(strings.ToLower(n))
		var hit, all float64
		for _, t := range unique(nt) {
			if t == joined && len(splitCamel([]rune(n))) > 1 && !s.nameTerms[t] && s.weights[t] == 0 {
				continue
			}
			w := weightOf(t)
			all += w
			if s.nameTerms[t] || s.weights[t] > 0 {
				hit += w
			}
		}
		sc.Name = max(sc.Name, hit/all)
	}

	body := rd.body
	// The alert's name quoted whole (a list of symptoms, "the alert that
	// usually pages is X"): the source speaks of this alert even where
	// it does not say that the alert fires, so it is not about another
	// system or another problem whatever its title says.
	mentioned := false
	for t := range s.whole {
		mentioned = mentioned || body[t]
	}
	if len(s.codes) > 0 {
		for c := range s.codes {
			if rd.idents[c] {
				sc.Code = 1
				break
			}
		}
	}
	// The alert's own words, three in a row, in the source: an error
	// message the runbook quotes ("x509: certificate signed by unknown
	// authority", "No space left on device").
	// Names of things in the runbook's quoted message (filer-1 in "nfs:
	// server filer-1 not responding") are not the alert's, as the
	// alert's own are not part of its run.
	run := rd.run
	for i := 2; i < len(run); i++ {
		if s.triples[[3]string{run[i-2], run[i-1], run[i]}] {
			sc.Quote = 1
			break
		}
	}
	var have, want float64
	for t, w := range s.weights {
		if s.whole[t] && !body[t] {
			continue
		}
		want += w
		if body[t] {
			have += w
		}
	}
	if want > 0 {
		sc.Text = have / want
		for _, line := range rd.lines {
			var got float64
			specific := 0
			counted := map[string]bool{}
			for _, t := range line {
				w := s.weights[t]
				if w == 0 || counted[t] || s.whole[t] && !body[t] {
					continue
				}
				counted[t] = true
				got += w
				if !generic[t] {
					specific++
				}
			}
			if specific >= passageTerms {
				sc.Passage = max(sc.Passage, got/want)
			}
		}
	}

	titleRun := rd.titleRun
	for i := 1; i < len(titleRun); i++ {
		if p := [2]string{titleRun[i-1], titleRun[i]}; s.pairs[p] && (!generic[p[0]] || !generic[p[1]]) {
			sc.Phrase = 1
			break
		}
	}
	titleMatch := sc.Title
	if s.AlertName == "" {
		// Free text (a log line, an error) says what is wrong as the
		// runbook's symptom lines do, not as its title: a line holding
		// much of it counts as the title would.
		titleMatch = max(titleMatch, sc.Passage)
	}
	v := titleWeight*titleMatch + nameWeight*sc.Name + textWeight*sc.Text
	if len(names) == 0 {
		// A runbook that lists no alert names is judged by its title and
		// text alone: the missing signal is not a mismatch.
		v /= titleWeight + textWeight
	} else if s.AlertName == "" {
		// Nor is it for free text, which has no alert name to match a
		// runbook's; its words may still name one (vault ... sealed).
		v = max(v, (titleWeight*titleMatch+textWeight*sc.Text)/(titleWeight+textWeight))
	}
	v += phraseWeight*sc.Phrase + quoteWeight*sc.Quote + codeWeight*sc.Code
	if !mentioned && (s.otherSystem(title, body) || s.otherProblem(rd.titleRun, names, rd.lines) || s.disclaimed(title, rd.disclaimers)) {
		// The alert names its system (MongodbReplicationLag) and the
		// runbook another (Postgres — replica lag high): the same kind of
		// problem on something else.
		v *= otherSystemFactor
	}
	if sc.Text < TextBar {
		// A source holding little of what the alert says is about
		// something else that shares the alert's kind of words (a
		// Postgres replica runbook for a MongoDB replica alert).
		v *= sc.Text / TextBar
	}
	sc.Value = math.Round(min(v, 1)*1000) / 1000
	return sc
}

// AlertLike reports whether the identifier w is written as Prometheus
// rules name alerts: three camel-case words or more, an acronym among
// them or first (KubePodCrashLooping, APIHighLatency,
// etcdHighNumberOfFailedGRPCRequests), not a product name of two
// (MongoDB, RabbitMQ, PeerAuthentication) nor an acronym's plural
// (CephOSDs).
func AlertLike(w string) bool { return CamelWords(w) >= 3 }

// CamelWords is how many camel-case words the identifier w is written in
// (TargetDown: 2, APIHighLatency: 3, CephOSDs: 1).
func CamelWords(w string) int { return len(splitCamel([]rune(w))) }

// ownNames are the alert names a source is for: the identifiers in its
// title and in its sentences that say an alert fires or list alerts
// ("Alert: `KubePodCrashLooping` fires when…", "Alerts: …"), not the ones
// it merely mentions.
//
// In a title, only an identifier of three words or more is an alert name:
// "MongoDB" or "RabbitMQ" names a product. Under a heading "Alerts", each
// line's first identifier is one.
func ownNames(title, text string) []string {
	var names []string
	for _, n := range listedNames(title) {
		if AlertLike(n) || strings.Count(n, "_") >= 2 {
			names = append(names, n)
		}
	}
	for _, sentence := range sentenceEnd.Split(unwrap(text), -1) {
		if disclaimerRe.MatchString(sentence) {
			continue
		}
		listed := listedNames(sentence)
		if firesRe.MatchString(sentence) || len(listed) >= 2 && alertsRe.MatchString(sentence) {
			names = append(names, listed...)
		}
	}
	under := false
	for line := range strings.SplitSeq(text, "\n") {
		switch {
		case alertsHeading.MatchString(line):
			under = true
		case under:
			first := listedNames(line)
			if strings.Trim(line, " |-:") == "" {
				// A table's rule under its header.
				continue
			}
			lead := strings.TrimLeft(line, " \t-*+0123456789.)`|")
			if len(first) == 0 || !strings.HasPrefix(lead, first[0]) {
				under = false
				continue
			}
			names = append(names, first[0])
		}
	}
	return names
}

// unwrap joins the lines of a sentence wrapped at a width ("Alerts:
// `ArgoCdAppOutOfSync` (…),⏎`ArgoCdAppUnhealthy` (…)" is one sentence):
// a line continues the one before unless that one ends a sentence or is
// blank, or the line is blank or starts a block of its own (a list
// item, a table row, a heading, an indented line). Text whose lines are
// blocks already (the search service's) stays as it is.
func unwrap(text string) string {
	lines := strings.Split(text, "\n")
	var b strings.Builder
	for i, line := range lines {
		if i > 0 {
			prev := strings.TrimSpace(lines[i-1])
			if prev == "" || strings.TrimSpace(line) == "" || blockStart.MatchString(line) || strings.ContainsAny(prev[len(prev)-1:], ".!?:;") {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(line)
	}
	return b.String()
}

// blockStart is a line that starts a block of its own: a list item, a
// table row, a heading, an indented (code) line.
var blockStart = regexp.MustCompile(`^(?:\s*(?:[-*+|#>]|\d+[.)])|\s{4}|\t)`)

var (
	sentenceEnd = regexp.MustCompile(`[.!?]\s+|\n+`)
	// firesRe is a sentence that says which alerts a source is for: one
	// fires, is triggered, or is listed after "Alerts:".
	firesRe = regexp.MustCompile(`(?i)\bfires?\b|^\s*alerts?\s*:|\btrigger(?:s|ed)? (?:by|when)\b|\balertname\b`)
	// alertsRe is a sentence that speaks of alerts: one that also names
	// two or more lists them ("Covers the node_exporter alerts X, Y",
	// "The Prometheus alerts come from … X, Y, Z").
	alertsRe = regexp.MustCompile(`(?i)\balerts\b`)
	// alertsHeading is a heading over a list of alerts ("## Alerts",
	// "Related alerts:"), or a table's header row whose first column is
	// the alert ("| Alert | Severity |", "Alert name; Severity.").
	alertsHeading = regexp.MustCompile(`(?i)^[\s#*|]*(?:related |firing |prometheus )?(?:alerts?|alert ?names?)[\s:.*|]*(?:[;|][^;|]*)*$`)
)

// listedNames are the identifiers in text that look like alert names:
// words of letters and digits with at least two capitalised parts
// (RedisDown, KubePodCrashLooping, etcdNoLeader), or snake_case names with
// three parts or more.
func listedNames(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range strings.FieldsFunc(text, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_')
	}) {
		if seen[f] || !identifier.MatchString(f) {
			continue
		}
		if len(splitCamel([]rune(f))) >= 2 || strings.Count(f, "_") >= 2 {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

func unique(ts []string) []string {
	seen := map[string]bool{}
	out := ts[:0:0]
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// Select returns the indexes of the relevant scores, best first (in their
// order on a tie); when a source names the alert itself, others need
// NearBest, unless they quote the alert's own message and their title
// names something the alert says that the named one's does not (the
// admission webhook a rollout's events name). A source on a near topic of
// another is left out when its title adds nothing the alert says and
// names something it never does, while the other's names nothing unsaid
// (the inode runbook beside the disk one for an alert that never says
// inode: see closer).
func Select(scores []Score) []int {
	named := slices.ContainsFunc(scores, func(sc Score) bool { return sc.Named })
	best, top := 0.0, -1
	for i, sc := range scores {
		if sc.Value > best {
			best, top = sc.Value, i
		}
	}
	var out []int
	for i, sc := range scores {
		if !sc.Relevant() || sc.Value < NearShare*best {
			continue
		}
		if i != top && top >= 0 && !sc.Named {
			b := scores[top]
			if named && sc.Value < NearBest && !(sc.Quote > 0 && addsSaid(sc, b)) {
				continue
			}
			if b.Code > 0 && sc.Code == 0 && unsaidBeyond(sc, b) {
				// The best quotes the alert's code (ERROR 1040 (HY000) in
				// MySQL's runbook) and this one names in its title what the
				// alert never says (Postgres): the same words, another
				// system.
				continue
			}
			if len(b.said) >= plainTitle && len(sc.said) == 0 {
				// Its title names nothing the alert says, beside one whose
				// title plainly does: it only mentions the alert's symptom.
				continue
			}
		}
		if !sc.Named && slices.ContainsFunc(scores, func(k Score) bool {
			return k.Relevant() && k.Value >= NearShare*best && closer(k, sc)
		}) {
			continue
		}
		out = append(out, i)
	}
	slices.SortStableFunc(out, func(a, b int) int { return cmp.Compare(scores[b].Value, scores[a].Value) })
	return out
}

// addsSaid reports whether sc's title names something the alert says that
// best's title does not.
func addsSaid(sc, best Score) bool {
	for t := range sc.said {
		if !best.topic[t] {
			return true
		}
	}
	return false
}

// closer reports whether k is a source on the same subject as sc that
// is closer to what the alert says: their titles share a specific term,
// k's title names all that sc's title says of the alert, and sc's title
// names something specific the alert never says and k's does not (the
// near topic's own word: inode beside disk, PgBouncer beside Postgres),
// while k's names nothing unsaid that sc's lacks.
func closer(k, sc Score) bool {
	return !addsSaid(sc, k) && unsaidBeyond(sc, k) && !unsaidBeyond(k, sc) && sharesTopic(sc, k)
}

// sharesTopic reports whether two titles share a specific term.
func sharesTopic(a, b Score) bool {
	for t := range a.topic {
		if b.topic[t] {
			return true
		}
	}
	return false
}

// unsaidBeyond reports whether a's title names a specific term the alert
// never says and b's title does not hold.
func unsaidBeyond(a, b Score) bool {
	for t := range a.topic {
		if !a.said[t] && !b.topic[t] {
			return true
		}
	}
	return false
}

// Groundcrew reports whether the subject is one of groundcrew's own alerts:
// its alert name starts with "Groundcrew", or it has the label
// service=groundcrew. Only those are answered from groundcrew's own
// runbooks.
func (s Subject) Groundcrew() bool {
	return strings.HasPrefix(strings.ToLower(s.AlertName), "groundcrew") || strings.EqualFold(s.Labels["service"], "groundcrew")
}

// Systems are the systems a source's title says it is for: the name
// before its separator ("Postgres — replica lag high": postgres; "NATS /
// JetStream — slow consumers": nats and jetstream; "ingress-nginx:
// reload failing": nginx), as index terms. A layer everything runs on
// (Kubernetes, a node, a container, the kernel, the network, the cloud,
// ingress), a resource (disk, memory, CPU), a practice (SLO) and a
// generic word are no system: the kernel's hung-task runbook is about a
// Postgres host's hangs too. A title without a separator says none.
func Systems(title string) []string {
	head, ok := "", false
	for _, sep := range []string{" — ", " – ", ": ", " - "} {
		if h, _, found := strings.Cut(title, sep); found && (!ok || len(h) < len(head)) {
			head, ok = h, true
		}
	}
	if !ok {
		return nil
	}
	var out []string
	for alt := range strings.SplitSeq(head, "/") {
		first, _, _ := strings.Cut(strings.TrimSpace(alt), " ")
		for part := range strings.SplitSeq(strings.Trim(first, "\"'`"), "-") {
			// The name as one word ("MongoDB" is mongodb, not also db).
			t := term(strings.ToLower(part))
			if t != "" && !generic[t] && !layers[t] && !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// layers are what systems run on or are held to, not systems of their own.
var layers = set("kernel", "cloud", "ingress", "network", "hardware", "object", "linux", "process", "slo", "disk", "memory", "cpu")

// Says reports whether the subject holds the index term t.
func (s Subject) Says(t string) bool { return s.weights[t] > 0 }

// Mentions reports whether the source's title or text holds the index
// term t.
func Mentions(src Source, t string) bool { return Prepare(src).read.body[t] }

// Unexplained is what text says that none of the sources holds: its
// words, in their order, none of whose terms is in any source's title
// or text. Beside the runbook for a drain blocked by a PDB, "… drain
// loops on `Cannot evict pod` for vault-2 … `vault status` on it says
// `Sealed: true`" leaves "vault-2 … vault … Sealed: true": what the
// story tells beyond the runbooks found for it.
func Unexplained(text string, by []Source) string {
	bodies := make([]map[string]bool, len(by))
	for i, src := range by {
		bodies[i] = Prepare(src).read.body
	}
	var rest []string
	for _, w := range strings.Fields(text) {
		ts := terms(w)
		if len(ts) == 0 {
			continue
		}
		said := slices.ContainsFunc(bodies, func(body map[string]bool) bool {
			return slices.ContainsFunc(ts, func(t string) bool { return body[t] })
		})
		if !said {
			rest = append(rest, w)
		}
	}
	return strings.Join(rest, " ")
}

// otherSystem reports whether the alert's name starts with a specific
// system word the source never mentions while the source's title starts
// with a specific one the alert never mentions.
func (s Subject) otherSystem(title []string, body map[string]bool) bool {
	first, _, _ := strings.Cut(s.AlertName, " ")
	parts := splitCamel([]rune(first))
	if len(parts) < 2 || len(title) == 0 {
		return false
	}
	sys := term(parts[0])
	if sys == "" || generic[sys] || body[sys] {
		return false
	}
	return !generic[title[0]] && s.weights[title[0]] == 0
}

// otherProblem reports whether the source's title shares only the
// alert's system with it (the first word of its name: Cassandra in
// CassandraNodeDown) while naming a specific problem the alert does not
// ("Cassandra pending compactions"), and none of the alert names it lists
// shares another specific word with the alert either, nor does one line
// of its text hold two of the name's other specific words (the metric
// ApproximateAgeOfOldestMessage for SQSOldestMessageAgeHigh): another
// problem on the same system.
func (s Subject) otherProblem(title []string, names []string, lines [][]string) bool {
	first, _, _ := strings.Cut(s.AlertName, " ")
	parts := splitCamel([]rune(first))
	if len(parts) < 2 {
		parts = strings.Fields(s.AlertName)
	}
	if len(parts) < 2 {
		return false
	}
	sys := term(strings.ToLower(parts[0]))
	if sys == "" || generic[sys] {
		return false
	}
	shared, other := false, false
	for _, t := range title {
		switch {
		case generic[t] || t == sys:
		case s.weights[t] > 0:
			shared = true
		default:
			other = true
		}
	}
	if shared || !other || !slices.Contains(title, sys) {
		return false
	}
	for _, n := range names {
		for _, t := range terms(n) {
			if t != sys && !generic[t] && s.weights[t] > 0 {
				return false
			}
		}
	}
	for _, line := range lines {
		held := map[string]bool{}
		for _, t := range line {
			if t != sys && !generic[t] && s.nameTerms[t] && !s.whole[t] {
				held[t] = true
			}
		}
		if len(held) >= 2 {
			return false
		}
	}
	return true
}

// disclaimerRe opens a sentence in which a runbook says what it is not
// about ("Not this page: queries timing out → Loki query runbook", "This
// is not the conntrack table").
var disclaimerRe = regexp.MustCompile(`(?i)^\W*(?:not this (?:page|runbook)|this is not\b|this (?:page|runbook) is not\b|not for\b)|\bthis is not the (?:page|runbook)\b`)

// disclaimed reports whether the source says it is not about what the
// alert says: one of its sentences that says what the page is not holds
// a specific term of the alert's name or summary its title does not.
func (s Subject) disclaimed(title []string, disclaimers [][]string) bool {
	own := map[string]bool{}
	for _, t := range title {
		own[t] = true
	}
	for _, sentence := range disclaimers {
		for _, t := range sentence {
			if !own[t] && !generic[t] && s.weights[t] >= summaryWeight {
				return true
			}
		}
	}
	return false
}

// Specific counts the subject's terms that are not generic words.
func (s Subject) Specific() int {
	n := 0
	for t := range s.weights {
		if !generic[t] {
			n++
		}
	}
	return n
}

// addName adds the alert name's terms: its identifiers whole, and their
// words at the alert name's weight.
func (s *Subject) addName(add func(string, float64)) {
	for _, w := range strings.Fields(s.AlertName) {
		if len(splitCamel([]rune(w))) > 1 {
			if t := term(strings.ToLower(strings.Trim(w, "()[].,:;"))); t != "" {
				s.whole[t] = true
			}
		}
	}
	for _, t := range terms(s.AlertName) {
		s.nameTerms[t] = true
	}
	add(s.AlertName, alertNameWeight)
}

// maxKeywords bounds Keywords: past a dozen words a search engine's
// match of any one of them counts for little.
const maxKeywords = 12

// Keywords are the words of text (as written) that say what the subject
// is about: the alert name's words (split from camelCase and snake_case)
// and the specific words of its summary and description, once each, in
// their order, at most maxKeywords. Names of things, labels and words
// that only say something is wrong are left out. They are a search query
// of their own when the derived one found nothing about the subject: a
// query keeps an alert name whole ("IstioHighRequestFailures"), which
// a runbook titled "Istio / Envoy: 503s…" never says, and a log line's
// first words, not its most telling ones.
func (s Subject) Keywords(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range splitWords(text, true) {
		t := term(w)
		if t == "" || seen[t] {
			continue
		}
		if !s.nameTerms[t] && (generic[t] || s.weights[t] < descriptionWeight) || s.whole[t] {
			continue
		}
		seen[t] = true
		out = append(out, w)
		if len(out) == maxKeywords {
			break
		}
	}
	return out
}

// OnlySystem reports whether the source shares nothing with the subject
// but its system: of the subject's specific terms it holds only the
// systems its title says it is for (Systems), while the subject names
// more than systems (others: those other sources are for). "redis
// streams" is not answered by the Redis-down runbook, which never
// mentions streams, however plainly it is about Redis; "Memcached vs
// Redis" names two systems and nothing more.
func (s Subject) OnlySystem(src Source, others []string) bool {
	sys := Systems(src.Title)
	if !slices.ContainsFunc(sys, s.Says) {
		return false
	}
	body := Prepare(src).read.body
	more := false
	for t := range s.weights {
		if generic[t] || slices.Contains(sys, t) || slices.Contains(others, t) {
			continue
		}
		if body[t] {
			return false
		}
		more = true
	}
	return more
}
