package research

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/groundcrew/groundcrew/services/grounding/internal/runbooktest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// runbookIndex is the example runbooks as the search service's local
// engine returns them: a result's snippet is at most 990 bytes of the
// indexed text.
type runbookIndex []Evidence

func loadRunbookIndex(t *testing.T) runbookIndex {
	t.Helper()
	var idx runbookIndex
	for _, d := range runbooktest.Load(t) {
		text := d.Text
		if len(text) > 990 {
			text = text[:strings.LastIndexByte(text[:990], ' ')] + " …"
		}
		idx = append(idx, Evidence{Title: d.Title, URL: d.URL, Snippet: text})
	}
	return idx
}

// Search ranks runbooks like a lenient full-text engine: by how many of
// the query's words (longer than two letters) they contain, so a query
// about Postgres pooling also finds every runbook that says "connection"
// or "practice". That is the evidence the report writer must sort out.
func (idx runbookIndex) Search(_ context.Context, query string, n int) ([]Evidence, error) {
	type hit struct {
		ev    Evidence
		score int
	}
	var hits []hit
	for _, ev := range idx {
		doc := termSet(ev.Title + " " + ev.Snippet)
		score := 0
		for _, w := range words(query) {
			if len(w) > 2 && !stopwords[w] && doc[stem(w)] {
				score++
			}
		}
		if score > 0 {
			hits = append(hits, hit{ev, score})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return cmp.Compare(b.score, a.score) })
	out := make([]Evidence, 0, n)
	for _, h := range hits[:min(len(hits), n)] {
		out = append(out, h.ev)
	}
	return out, nil
}

// runOnRunbooks runs a whole offline run over the runbook index.
func runOnRunbooks(t *testing.T, idx runbookIndex, topic string) *Run {
	t.Helper()
	h := newHarness(t, Config{}, func(q string, n int) ([]Evidence, error) { return idx.Search(t.Context(), q, n) })
	run := h.run(t, StartParams{Topic: topic})
	if run.Status != StatusFinished || run.Report == nil {
		t.Fatalf("run %q: status %s (%s)", topic, run.Status, run.Error)
	}
	return run
}

// TestReportGoldenRunbooks: the offline report over the example runbooks
// for a topic they cover well, one they cover in part and one they do not
// cover at all. The golden files are for reading: each section quotes only
// its own evidence, nothing repeats, off-topic runbooks are dropped and
// named in the critique.
func TestReportGoldenRunbooks(t *testing.T) {
	idx := loadRunbookIndex(t)
	tests := []struct {
		name, topic string
		// onlyURLs are the only sources the report may list.
		onlyURLs []string
	}{
		{"well_covered", "Kafka consumer lag", []string{"https://runbooks.groundcrew.example/kafka-consumer-lag"}},
		{"partly_covered", "Postgres connection pooling", []string{"https://runbooks.groundcrew.example/postgres-too-many-connections"}},
		{"not_covered", "Quantum error correction codes", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := runOnRunbooks(t, idx, tt.topic)
			r := run.Report
			for _, s := range r.Sources {
				if !slices.Contains(tt.onlyURLs, s.URL) {
					t.Errorf("report lists %s (%s); want only %q", s.URL, s.Title, tt.onlyURLs)
				}
			}
			if len(tt.onlyURLs) == 0 {
				if len(r.Sources) != 0 || !strings.HasPrefix(r.ExecutiveSummary, noEvidenceForTopic) {
					t.Errorf("uncovered topic: %d sources, summary %q", len(r.Sources), r.ExecutiveSummary)
				}
				// Said once for the topic, not under every sub-question.
				if n := strings.Count(r.FindingsMarkdown, "No source in the index answers"); n != 1 || !strings.Contains(r.FindingsMarkdown, noEvidenceForTopic) {
					t.Errorf("findings say nothing answers %d times, want once: %q", n, r.FindingsMarkdown)
				}
			}
			if off := len(run.Sources) - len(r.Sources); off > 0 && off <= maxDroppedNamed {
				dropped := run.Critique.Reasons[len(run.Critique.Reasons)-1]
				for _, s := range run.Sources {
					if !slices.ContainsFunc(r.Sources, func(c Source) bool { return c.URL == s.URL }) && !strings.Contains(dropped, s.URL) {
						t.Errorf("critique reason %q does not name the dropped source %s", dropped, s.URL)
					}
				}
			}
			checkReportProperties(t, run)

			var got strings.Builder
			fmt.Fprintf(&got, "topic: %s\nquality score: %.3f after %d iterations\n\ncritique:\n", tt.topic, r.Quality.Score, r.Iterations)
			for _, reason := range run.Critique.Reasons {
				got.WriteString("- " + reason + "\n")
			}
			got.WriteString("\nwarnings:\n")
			for _, w := range r.Quality.Warnings {
				got.WriteString("- " + w + "\n")
			}
			got.WriteString("\nexecutive summary:\n" + r.ExecutiveSummary + "\n\n" + r.FindingsMarkdown)
			golden := filepath.Join("testdata", "report_"+tt.name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got.String() != string(want) {
				t.Errorf("report differs from %s (run with -update and read the diff):\n%s", golden, got.String())
			}
		})
	}
}

// TestReportProperties checks the writer's rules on every runbook's own
// topic, mixed topics and topics the index cannot answer.
func TestReportProperties(t *testing.T) {
	idx := loadRunbookIndex(t)
	topics := []string{
		"Postgres connection pooling", "Kafka consumer lag", "DNS resolution failures in Kubernetes",
		"TLS certificate renewal", "API latency above SLO", "node disk full", "checkout API 5xx errors",
		"Kubernetes pods and Postgres connections", "What are best practices for log rotation?",
		"memory limits", "Rust borrow checker", "Kafka consumer lag and Redis eviction", "Kubernetes pod CrashLoopBackOff",
	}
	for _, e := range idx {
		topics = append(topics, e.Title)
	}
	for _, topic := range topics {
		t.Run(topic, func(t *testing.T) {
			checkReportProperties(t, runOnRunbooks(t, idx, topic))
		})
	}
}

var citedSentence = regexp.MustCompile(`(.+?) \[(\d+)\](?: |$)`)

// checkReportProperties: no sentence in two sections, every citation
// number resolves to a listed source, every cited source is in its
// section's admitted evidence, every listed source supports a section,
// and the executive summary cites every sentence.
func checkReportProperties(t *testing.T, run *Run) {
	t.Helper()
	r := run.Report
	for _, s := range r.Sources {
		if s.Text != "" {
			t.Errorf("the report's source %s carries its document's text", s.URL)
		}
	}
	admitted := map[string]map[string]bool{}
	for _, sec := range r.Sections {
		admitted[sec.Question] = map[string]bool{}
		for _, s := range sec.Scores {
			if s.Admitted != (s.Score >= sec.Bar) {
				t.Errorf("%q: %s scored %.3f against bar %.2f but admitted=%v", sec.Question, s.URL, s.Score, sec.Bar, s.Admitted)
			}
			if s.Admitted {
				admitted[sec.Question][s.URL] = true
			}
		}
	}
	resolve := func(where, num string) string {
		n, _ := strconv.Atoi(num)
		if n < 1 || n > len(r.Sources) {
			t.Errorf("%s cites [%s]; the report has %d sources", where, num, len(r.Sources))
			return ""
		}
		return r.Sources[n-1].URL
	}
	seen := map[string]string{}
	body, _, _ := strings.Cut(r.FindingsMarkdown, "\n## Sources\n")
	for _, sec := range strings.Split(body, "\n## ")[1:] {
		q, text, _ := strings.Cut(sec, "\n\n")
		text = strings.TrimSpace(text)
		if text == noEvidenceSentence {
			continue
		}
		ms := citedSentence.FindAllStringSubmatch(text, -1)
		if len(ms) == 0 {
			t.Errorf("section %q has no cited sentence: %q", q, text)
		}
		for _, m := range ms {
			key := sentenceKey(m[1])
			if other, dup := seen[key]; dup {
				t.Errorf("sentence %q appears under %q and %q", m[1], other, q)
			}
			seen[key] = q
			if url := resolve("section "+q, m[2]); url != "" && !admitted[q][url] {
				t.Errorf("section %q cites %s, which is not in its evidence", q, url)
			}
		}
	}
	for _, s := range r.Sources {
		if !slices.ContainsFunc(r.Sections, func(sec SectionEvidence) bool { return admitted[sec.Question][s.URL] }) {
			t.Errorf("source %s is listed but supports no sub-question", s.URL)
		}
	}
	summary, _, _ := strings.Cut(r.ExecutiveSummary, " (Quality score")
	if summary != noEvidenceForTopic {
		for _, m := range citedSentence.FindAllStringSubmatch(summary, -1) {
			resolve("the executive summary", m[2])
			if _, ok := seen[sentenceKey(m[1])]; !ok {
				t.Errorf("summary sentence %q is not a finding", m[1])
			}
		}
		if rest := citedSentence.ReplaceAllString(summary, ""); strings.TrimSpace(rest) != "" {
			t.Errorf("summary has uncited text %q", rest)
		}
	}
}

// modelPlanner plans like a model would: questions no template wrote.
type modelPlanner struct{ OfflinePlanner }

func (modelPlanner) Plan(context.Context, string) ([]string, error) {
	return []string{
		"Why does PgBouncer transaction pooling reduce Postgres connection memory?",
		"Which per-replica pool size keeps Postgres below max_connections?",
		"How do TLS certificates get renewed by cert-manager?",
	}, nil
}

// TestReportModelQuestions: a model's sub-questions are held to the topic
// and to their own words; a question off the topic gets no evidence even
// though a runbook answers it.
func TestReportModelQuestions(t *testing.T) {
	idx := loadRunbookIndex(t)
	st, clock := newMemStore(), newFakeClock()
	svc, err := New(Deps{Store: st, Searcher: idx, Planner: modelPlanner{}, Notifier: &fakeNotifier{}, Clock: clock}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	started, err := svc.Start(t.Context(), StartParams{Topic: "Postgres connection pooling", UserID: userID, MaxIterations: ptr(1)})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, svc, st, clock)
	run, _ := svc.Get(t.Context(), started.ID)
	checkReportProperties(t, run)
	for _, s := range run.Report.Sources {
		if s.URL != "https://runbooks.groundcrew.example/postgres-too-many-connections" {
			t.Errorf("report lists %s", s.URL)
		}
	}
	sections := strings.Split(run.Report.FindingsMarkdown, "\n## ")
	if !strings.Contains(sections[1], "PgBouncer") || !strings.Contains(sections[2], "pool size") {
		t.Errorf("the Postgres questions are not answered from the Postgres runbook:\n%s", run.Report.FindingsMarkdown)
	}
	if !strings.Contains(sections[3], noEvidenceSentence) {
		t.Errorf("the TLS question, off the topic, is answered:\n%s", sections[3])
	}
}

// TestHeadingOf: a report's title starts upper case unless it starts with
// a name written in lower case.
func TestHeadingOf(t *testing.T) {
	for in, want := range map[string]string{
		"you see 'nf_conntrack: table full' on your nodes": "You see 'nf_conntrack: table full' on your nodes",
		"running out of inodes on build servers":           "Running out of inodes on build servers",
		"the disk on db-1 keeps filling up":                "The disk on db-1 keeps filling up",
		"etcd backup and restore":                          "etcd backup and restore",
		"Kafka consumer lag":                               "Kafka consumer lag",
	} {
		if got := headingOf(in); got != want {
			t.Errorf("headingOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLongStoryHeadings: a story told over a few sentences heads the
// report once; its sections are headed by what each asks, not by the
// story pasted again ("What causes it?", "Is the backup the cause?"),
// while a short topic's sections keep it ("What causes Kafka consumer
// lag?").
func TestLongStoryHeadings(t *testing.T) {
	idx := loadRunbookIndex(t)
	story := "node w-9 goes NotReady every night around 01:30, right when the backup job runs, and iostat shows sdb at 99% util with await around 600ms. is the backup the cause?"
	run := runOnRunbooks(t, idx, story)
	var headings []string
	for line := range strings.SplitSeq(run.Report.FindingsMarkdown, "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok && h != "Sources" {
			headings = append(headings, h)
		}
	}
	if len(headings) == 0 {
		t.Fatalf("no section headings in %q", run.Report.FindingsMarkdown)
	}
	for _, h := range headings {
		if strings.Contains(strings.ToLower(h), "iostat shows sdb") {
			t.Errorf("section heading %q repeats the story", h)
		}
	}
	for _, w := range run.Report.Quality.Warnings {
		if strings.Contains(strings.ToLower(w), "iostat shows sdb") {
			t.Errorf("quality warning %q repeats the story", w)
		}
	}
	if !slices.Contains(headings, "Is the backup the cause?") {
		t.Errorf("headings %q: want the story's own question, %q", headings, "Is the backup the cause?")
	}
	for q, want := range map[string]string{
		"What causes Kafka consumer lag?":                                                             "What causes Kafka consumer lag?",
		"What causes it when " + story[:strings.Index(story, ". ")] + "?":                             "What causes it?",
		"What can you do when " + story[:strings.Index(story, ". ")] + ", and how do you prevent it?": "What can you do, and how do you prevent it?",
	} {
		if got := sectionHeading(q, headingOf(titleOf(story))); got != want {
			t.Errorf("sectionHeading(%q) = %q, want %q", q, got, want)
		}
	}
}
