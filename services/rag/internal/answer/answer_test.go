package answer

import (
	"context"
	"errors"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/services/rag/internal/chunker"
	"github.com/groundcrew/groundcrew/services/rag/internal/embedder"
	"github.com/groundcrew/groundcrew/services/rag/internal/rag"
	"github.com/groundcrew/groundcrew/services/rag/internal/vectorindex"
)

const specURL = "https://go.dev/ref/spec"

// specStore is a store holding the Go specification, calibrated, shared
// by the tests of this package (read-only).
var specStore struct {
	once sync.Once
	dir  string
	st   *vectorindex.Store
	cal  Calibration
	err  error
}

func goSpec(t *testing.T) *vectorindex.Store {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "doc", "go_spec.html"))
	if err != nil {
		t.Skipf("Go specification not available: %v", err)
	}
	s := &specStore
	s.once.Do(func() {
		ctx := context.Background()
		cs, err := chunker.HTML(string(b), chunker.Options{})
		if err != nil {
			s.err = err
			return
		}
		if s.dir, s.err = os.MkdirTemp("", "answer-test-*"); s.err != nil {
			return
		}
		st, err := vectorindex.Open(s.dir, embedder.NewHashing(0), vectorindex.Options{NoSync: true})
		if err != nil {
			s.err = err
			return
		}
		if _, err := st.Upsert(ctx, "gospec", rag.Document{URL: specURL, Title: "The Go Programming Language Specification", Chunks: cs}); err != nil {
			s.err = err
			return
		}
		if s.cal, s.err = Calibrate(ctx, st, "gospec"); s.err != nil {
			return
		}
		s.err = st.PutSettings("gospec", rag.Settings{CalibratedThreshold: s.cal.Threshold})
		s.st = st
	})
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.st
}

func TestMain(m *testing.M) {
	code := m.Run()
	if specStore.st != nil {
		specStore.st.Close()
	}
	if specStore.dir != "" {
		os.RemoveAll(specStore.dir)
	}
	os.Exit(code)
}

func TestCalibrate(t *testing.T) {
	goSpec(t)
	cal := specStore.cal
	if cal.Questions < minCalibration || cal.Threshold <= 0 || cal.Threshold >= cal.P10 || cal.P10 > cal.Median {
		t.Errorf("Calibrate() = %+v, want a positive threshold below the 10th percentile", cal)
	}
	again, err := Calibrate(context.Background(), specStore.st, "gospec")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cal, again); diff != "" {
		t.Errorf("Calibrate() is not deterministic (-first +second):\n%s", diff)
	}
}

func TestAskOutOfScope(t *testing.T) {
	st := goSpec(t)
	a := NewAsker(st, Options{})
	for _, q := range []string{
		"How do I bake sourdough bread?",
		"Who won the FIFA World Cup in 2018?",
		"What are the symptoms of the flu?",
		"How do I knit a scarf as a beginner?",
		"What is this?",
	} {
		t.Run(q, func(t *testing.T) {
			r, err := a.Ask(context.Background(), Request{Collection: "gospec", Question: q})
			if err != nil {
				t.Fatal(err)
			}
			want := Result{Answer: rag.DefaultOutOfScopeAnswer, IsOutOfScope: true, Success: true}
			got := Result{Answer: r.Answer, IsOutOfScope: r.IsOutOfScope, Success: r.Success, PrimarySource: r.PrimarySource, Sources: r.Sources}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Ask() mismatch (-want +got):\n%s", diff)
			}
			if r.OutOfScopeReason == "" {
				t.Error("out of scope without a reason")
			}
		})
	}
}

func TestAskCustomOutOfScopeAnswer(t *testing.T) {
	ctx := context.Background()
	st, err := vectorindex.Open(t.TempDir(), embedder.NewHashing(0), vectorindex.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.PutSettings("zoo", rag.Settings{OutOfScopeAnswer: "Ask me about penguins."}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Upsert(ctx, "zoo", rag.Document{URL: "https://zoo", Title: "Zoo", Chunks: []chunker.Chunk{{Text: "Penguins live in Antarctica and eat krill."}}}); err != nil {
		t.Fatal(err)
	}
	r, err := NewAsker(st, Options{}).Ask(ctx, Request{Collection: "zoo", Question: "How do I tune a guitar?"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([2]any{true, "Ask me about penguins."}, [2]any{r.IsOutOfScope, r.Answer}); diff != "" {
		t.Errorf("Ask() mismatch (-want +got):\n%s", diff)
	}
}

var citation = regexp.MustCompile(`\[(\d+)\]`)

func TestAskInScope(t *testing.T) {
	st := goSpec(t)
	tick := time.Unix(0, 0)
	a := NewAsker(st, Options{Now: func() time.Time { tick = tick.Add(time.Millisecond); return tick }})
	var stages []Stage
	r, err := a.Ask(context.Background(), Request{
		Collection: "gospec",
		Question:   "What happens when you send on a closed channel?",
		Progress:   func(s Stage) { stages = append(stages, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.IsOutOfScope || !r.Success {
		t.Fatalf("Ask() = out of scope %v (%s), success %v; want an answer", r.IsOutOfScope, r.OutOfScopeReason, r.Success)
	}
	if diff := cmp.Diff([]Stage{StageRetrieving, StageScopeCheck, StageAnswering}, stages); diff != "" {
		t.Errorf("stages mismatch (-want +got):\n%s", diff)
	}
	if r.QueryTime <= 0 || r.Model != ExtractiveModel {
		t.Errorf("QueryTime = %v, Model = %q; want a positive duration and %q", r.QueryTime, r.Model, ExtractiveModel)
	}
	wantPrimary := "Source: Document " + strconv.Itoa(r.Primary+1) + ": [The Go Programming Language Specification] (https://go.dev/ref/spec)"
	if r.PrimarySource != wantPrimary {
		t.Errorf("PrimarySource = %q, want %q", r.PrimarySource, wantPrimary)
	}
	if !strings.Contains(r.Answer, "closed channel") || !strings.Contains(r.Answer, "panic") {
		t.Errorf("Answer = %q, want the closed-channel panic rule", r.Answer)
	}
	primary := chunkOf(t, r, r.Sources[r.Primary])
	if got := primary.HeadingPath[len(primary.HeadingPath)-1]; got != "Send statements" && got != "Close" {
		t.Errorf("primary chunk is under %q, want Send statements or Close", primary.HeadingPath)
	}
}

// chunkOf finds the matched chunk of a source.
func chunkOf(t *testing.T, r Result, s Source) rag.Hit {
	t.Helper()
	for _, h := range r.MatchedChunks {
		if h.URL == s.URL && h.ChunkIndex == s.ChunkIndex {
			return h
		}
	}
	t.Fatalf("source %+v is not among the matched chunks", s)
	return rag.Hit{}
}

// TestExtractiveCitesItsChunks checks that every quoted sentence comes
// verbatim from the chunk its citation names.
func TestExtractiveCitesItsChunks(t *testing.T) {
	st := goSpec(t)
	a := NewAsker(st, Options{})
	for _, q := range []string{
		"In what order do deferred calls run when a function returns?",
		"How do I remove an entry from a map?",
		"What does append do when the slice is out of capacity?",
		"Which case runs if several channels are ready in a select?",
	} {
		t.Run(q, func(t *testing.T) {
			r, err := a.Ask(context.Background(), Request{Collection: "gospec", Question: q})
			if err != nil {
				t.Fatal(err)
			}
			if r.IsOutOfScope {
				t.Fatalf("out of scope: %s", r.OutOfScopeReason)
			}
			// The answer is groups of sentences, each closed by [n].
			rest := r.Answer
			groups := 0
			for rest != "" {
				loc := citation.FindStringSubmatchIndex(rest)
				if loc == nil {
					t.Fatalf("answer text %q after the last citation", rest)
				}
				quoted := strings.TrimSpace(rest[:loc[0]])
				n, _ := strconv.Atoi(rest[loc[2]:loc[3]])
				rest = strings.TrimSpace(rest[loc[1]:])
				groups++
				if n < 1 || n > len(r.Sources) {
					t.Fatalf("citation [%d] with %d sources", n, len(r.Sources))
				}
				text := chunkOf(t, r, r.Sources[n-1]).Text
				if !madeOf(quoted, sentences(text)) {
					t.Errorf("%q cited as [%d] is not made of that chunk's sentences:\n%s", quoted, n, text)
				}
			}
			// The lead sentence's chunk may be cited again after the
			// others, so there can be more groups than sources.
			if groups < len(r.Sources) || !citesAll(r.Answer, len(r.Sources)) {
				t.Errorf("%d citation groups for %d sources; every source must be cited", groups, len(r.Sources))
			}
		})
	}
}

// citesAll says whether every number 1..n is cited in the answer.
func citesAll(answer string, n int) bool {
	for i := 1; i <= n; i++ {
		if !strings.Contains(answer, "["+strconv.Itoa(i)+"]") {
			return false
		}
	}
	return true
}

// TestExtractiveAnswersFirst: the offline answer leads with the sentence
// that answers the question and never states a fact twice (issue 24),
// on questions it used to miss (comparing slices, writing to a nil map)
// and on one the spec answers twice in nearly the same words.
func TestExtractiveAnswersFirst(t *testing.T) {
	st := goSpec(t)
	a := NewAsker(st, Options{})
	tests := []struct {
		question string
		lead     string // the first sentence contains it
	}{
		{"Is it legal to compare two slices with ==?", "Slice, map, and function types are not comparable"},
		{"What happens if I write to a nil map?", "Assigning to an element of a nil map causes a run-time panic"},
		{"What happens when you send on a closed channel?", "panic"},
	}
	for _, tt := range tests {
		t.Run(tt.question, func(t *testing.T) {
			r, err := a.Ask(t.Context(), Request{Collection: "gospec", Question: tt.question})
			if err != nil {
				t.Fatal(err)
			}
			if r.IsOutOfScope {
				t.Fatalf("out of scope: %s", r.OutOfScopeReason)
			}
			first := sentences(markerRE.ReplaceAllString(r.Answer, ""))[0]
			if !strings.Contains(first, tt.lead) {
				t.Errorf("answer leads with %q, want a sentence with %q; answer: %s", first, tt.lead, r.Answer)
			}
			if HasRepeats(r.Answer) {
				t.Errorf("answer states a fact twice: %s", r.Answer)
			}
		})
	}
}

// TestHasRepeats checks the near-duplicate measure on sentences the spec
// has in two places.
func TestHasRepeats(t *testing.T) {
	tests := []struct {
		answer string
		want   bool
	}{
		{"Sending to or closing a closed channel causes a run-time panic. [1] A send on a closed channel proceeds by causing a run-time panic. [2]", true},
		{"The non-blank variable names on the left side of := must be unique. [1] The non-blank variable names on the left side of := must be unique. [2]", true},
		{"Sending to or closing a closed channel causes a run-time panic. [1] Receiving from a nil channel blocks forever. [2]", false},
		// The same words, opposite rules: what is forbidden and what is
		// allowed, what happens and that it happens only once.
		{"In an alias declaration the given type cannot be a type parameter declared in the same declaration. [1] An alias declaration may declare type parameters. [2]", false},
		{"If a package has imports, the imported packages are initialized before initializing the package itself. If multiple packages import a package, the imported package will be initialized only once. [1]", false},
		{"Short variable declarations may appear only inside functions. [1] Short variable declarations may appear only inside functions. [2]", true},
	}
	for _, tt := range tests {
		if got := HasRepeats(tt.answer); got != tt.want {
			t.Errorf("HasRepeats(%q) = %v, want %v", tt.answer, got, tt.want)
		}
	}
}

// madeOf reports whether s is a sequence of the given sentences joined
// by single spaces.
func madeOf(s string, sentences []string) bool {
	for s != "" {
		best := ""
		for _, c := range sentences {
			if strings.HasPrefix(s, c) && len(c) > len(best) {
				best = c
			}
		}
		if best == "" {
			return false
		}
		s = strings.TrimPrefix(strings.TrimPrefix(s, best), " ")
	}
	return true
}

func TestCheckScope(t *testing.T) {
	hits := []rag.Hit{
		{HeadingPath: []string{"Channels"}, Text: "A send on a closed channel panics.", Score: 0.4},
		{Text: "Receiving from a nil channel blocks forever.", Score: 0.2},
	}
	tests := []struct {
		name     string
		question string
		hits     []rag.Hit
		in       bool
		reason   string
	}{
		{"covered and similar", "send on closed channel", hits, true, ""},
		{"terms across chunks count", "nil channel send", hits, true, ""},
		{"no content words", "what is it?", hits, false, "no content words"},
		{"nothing retrieved", "send", nil, false, "no chunk"},
		{"mostly missing terms", "bake bread in a closed oven", hits, false, "4 terms"},
		{"below threshold", "channel", []rag.Hit{{Text: "channel", Score: 0.05}}, false, "below the collection's threshold 0.100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := CheckScope(tt.question, tt.hits, 0.1, DefaultMinCoverage)
			if v.InScope != tt.in || !strings.Contains(v.Reason, tt.reason) {
				t.Errorf("CheckScope(%q) = %+v, want in scope %v with a reason containing %q", tt.question, v, tt.in, tt.reason)
			}
		})
	}
}

func TestValidateQuestion(t *testing.T) {
	tests := []struct {
		q    string
		want error
	}{
		{"ok?", nil},
		{" \t\n", ErrInvalidQuestion},
		{strings.Repeat("é", MaxQuestionLength), nil},
		{strings.Repeat("a", MaxQuestionLength+1), ErrInvalidQuestion},
	}
	for _, tt := range tests {
		if err := ValidateQuestion(tt.q); !errors.Is(err, tt.want) {
			t.Errorf("ValidateQuestion(%.20q…) = %v, want %v", tt.q, err, tt.want)
		}
	}
}

func TestAskErrors(t *testing.T) {
	st := goSpec(t)
	a := NewAsker(st, Options{})
	ctx := context.Background()
	if _, err := a.Ask(ctx, Request{Collection: "nope", Question: "x"}); !errors.Is(err, rag.ErrNotFound) {
		t.Errorf("Ask(unknown collection) error = %v, want %v", err, rag.ErrNotFound)
	}
	if _, err := a.Ask(ctx, Request{Collection: "gospec", Question: "x", TopK: 51}); !errors.Is(err, ErrInvalidQuestion) {
		t.Errorf("Ask(top_k 51) error = %v, want %v", err, ErrInvalidQuestion)
	}
}

func TestFormatSource(t *testing.T) {
	tests := []struct {
		x    int
		s    Source
		want string
	}{
		{1, Source{URL: "https://go.dev/ref/spec", Title: "The Go Spec"}, "Source: Document 1: [The Go Spec] (https://go.dev/ref/spec)"},
		{3, Source{URL: "https://x"}, "Source: Document 3: [https://x] (https://x)"},
	}
	for _, tt := range tests {
		if got := FormatSource(tt.x, tt.s); got != tt.want {
			t.Errorf("FormatSource(%d, %+v) = %q, want %q", tt.x, tt.s, got, tt.want)
		}
	}
}

// fakeGenerator declares everything out of scope, like a model that finds
// no answer in the chunks.
type fakeGenerator struct{}

func (fakeGenerator) Generate(context.Context, string, []rag.Hit) (Draft, error) {
	return Draft{OutOfScope: true, Reason: "not in the text"}, nil
}

func TestGeneratorOutOfScope(t *testing.T) {
	st := goSpec(t)
	r, err := NewAsker(st, Options{Generator: fakeGenerator{}}).Ask(context.Background(), Request{Collection: "gospec", Question: "How do I create a buffered channel?"})
	if err != nil {
		t.Fatal(err)
	}
	if !r.IsOutOfScope || !strings.Contains(r.OutOfScopeReason, "not in the text") {
		t.Errorf("Ask() = out of scope %v, reason %q; want the generator's verdict", r.IsOutOfScope, r.OutOfScopeReason)
	}
}

// TestScopeWeights checks the lexical guard's weighting (issue 17): a
// question sharing one common word with the collection is out of scope
// once the words are weighed by IDF, a word of the description counts as
// covered, and question filler counts neither way.
func TestScopeWeights(t *testing.T) {
	hits := []rag.Hit{
		{HeadingPath: []string{"Interface types"}, Text: "An interface type defines a type set. A variable of interface type can store a value of any type in the type set.", Score: 0.3},
		{HeadingPath: []string{"Channel types"}, Text: "A channel provides a mechanism for concurrently executing functions to communicate.", Score: 0.2},
	}
	// 100 chunks: "interface", "type" and "channel" are common, "usb" and
	// "charger" absent.
	stats := rag.TermStats{Chunks: 100, DF: map[string]int{"interfac": 30, "type": 80, "channel": 20, "store": 10, "valu": 40}}
	tests := []struct {
		name        string
		question    string
		stats       rag.TermStats
		description string
		in          bool
	}{
		{"one shared word, weighted", "What interface does a USB charger have?", stats, "", false},
		{"same question, description names the missing words", "What interface does a USB charger have?", stats, "USB charger interfaces", true},
		{"content words covered", "Can an interface variable store any value?", stats, "", true},
		{"filler is not content", "What is a good way to use a channel?", stats, "", true},
		{"only filler", "What is the best way?", stats, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Scope(ScopeInput{Question: tt.question, Hits: hits, Threshold: 0.1, MinEvidence: DefaultMinEvidence, MinCoverage: DefaultMinCoverage, Terms: tt.stats, Description: tt.description})
			if v.InScope != tt.in {
				t.Errorf("Scope(%q) = %+v, want in scope %v", tt.question, v, tt.in)
			}
			if !tt.in && v.Reason == "" {
				t.Errorf("Scope(%q) has no reason", tt.question)
			}
		})
	}
}

func TestQuestionPairs(t *testing.T) {
	tests := []struct {
		question string
		want     [][2]string
	}{
		{"What happens after a type assertion fails?", [][2]string{{"assert", "fail"}, {"assert", "type"}}},
		// Stop words and filler between two terms do not separate them;
		// order does not matter.
		{"Is a good assertion of the type safe?", [][2]string{{"assert", "type"}, {"safe", "type"}}},
		{"channel channel", [][2]string{}},
		{"slices", [][2]string{}},
	}
	for _, tt := range tests {
		if got := questionPairs(tt.question); !slices.Equal(got, tt.want) {
			t.Errorf("questionPairs(%q) = %v, want %v", tt.question, got, tt.want)
		}
	}
}

// TestScopePhrasesAndScarceTerms checks the round-3 evidence (issue 17):
// two terms next to each other in the question and in a chunk (a phrase of
// the collection) count for the question, and a term the collection uses
// in one chunk only earns half its weight, so one shared word plus a word
// the collection uses once is not enough.
func TestScopePhrasesAndScarceTerms(t *testing.T) {
	hits := []rag.Hit{
		{HeadingPath: []string{"Package clause"}, Text: "A package clause begins each source file. The result of wrapping a value is a package level variable.", Score: 0.3},
		{HeadingPath: []string{"Type assertions"}, Text: "A type assertion asserts that the dynamic type of x is T. If the assertion fails, a run-time panic occurs.", Score: 0.3},
	}
	stats := rag.TermStats{Chunks: 100, DF: map[string]int{"packag": 20, "wrap": 1, "type": 80, "assert": 3, "fail": 5, "dynam": 4, "panic": 10, "claus": 2}}
	evidence := func(question string) Verdict {
		return Scope(ScopeInput{Question: question, Hits: hits, Threshold: 0.1, MinEvidence: DefaultMinEvidence, MinCoverage: DefaultMinCoverage, Terms: stats})
	}
	if v := evidence("How do I wrap a package for Christmas?"); v.InScope {
		t.Errorf("one shared word and a word used once: %+v, want out of scope", v)
	}
	// The same question against a chunk with the same words, apart.
	together := evidence("What happens when a type assertion fails?")
	apartHits := slices.Clone(hits)
	apartHits[1] = rag.Hit{HeadingPath: []string{"Assertions on a dynamic type"}, Text: "Assertions check the dynamic kind of x: its type is T, and when that fails a run-time panic occurs.", Score: 0.3}
	apart := Scope(ScopeInput{Question: "What happens when a type assertion fails?", Hits: apartHits, Threshold: 0.1, MinEvidence: DefaultMinEvidence, Terms: stats})
	if !together.InScope {
		t.Errorf("a phrase of the collection: %+v, want in scope", together)
	}
	if together.Coverage <= apart.Coverage {
		t.Errorf("evidence with the phrase %.3f, without %.3f; want more with it", together.Coverage, apart.Coverage)
	}
	scarce := stats
	scarce.DF = maps.Clone(stats.DF)
	scarce.DF["wrap"] = 2
	full := Scope(ScopeInput{Question: "How do I wrap a package?", Hits: hits, Threshold: 0.1, MinEvidence: DefaultMinEvidence, Terms: scarce})
	half := Scope(ScopeInput{Question: "How do I wrap a package?", Hits: hits, Threshold: 0.1, MinEvidence: DefaultMinEvidence, Terms: stats})
	if half.Coverage >= full.Coverage {
		t.Errorf("a term in one chunk gives evidence %.3f, in two %.3f; want less for one", half.Coverage, full.Coverage)
	}
	// In a small collection one chunk is a large part of it: a word in one
	// chunk counts in full. One chunk has both words, apart and not in
	// its heading, so the evidence is the share of the question found.
	apartChunk := []rag.Hit{{HeadingPath: []string{"Values"}, Text: "Wrap the value, then package it.", Score: 0.3}}
	share := func(chunks int) float64 {
		ts := rag.TermStats{Chunks: chunks, DF: map[string]int{"packag": 4, "wrap": 1}}
		return Scope(ScopeInput{Question: "How do I wrap a package?", Hits: apartChunk, Threshold: 0.1, MinEvidence: DefaultMinEvidence, Terms: ts}).Coverage
	}
	if small, large := share(10), share(200); math.Abs(small-1) > 1e-9 || large >= 1 {
		t.Errorf("a term in one chunk: evidence %.3f of 10 chunks, %.3f of 200; want 1 and less", small, large)
	}
}

// TestScopeKnownWordsTogether checks that a question whose words the
// collection uses stand together in one chunk, four or more of them, is
// covered whatever its everyday words the collection never uses weigh,
// while one sharing fewer words with the collection is not.
func TestScopeKnownWordsTogether(t *testing.T) {
	hits := []rag.Hit{
		{HeadingPath: []string{"Index expressions"}, Text: "For a map a, the index expression a[x] is the value with key x. If the map does not contain such an entry, a[x] is the zero value for the element type of the map.", Score: 0.3},
	}
	stats := rag.TermStats{Chunks: 300, DF: map[string]int{"key": 17, "map": 38, "valu": 153, "zero": 40, "lookup": 1, "leather": 0, "boot": 0, "pair": 0, "break": 20, "new": 30, "take": 6}}
	tests := []struct {
		question string
		in       bool
	}{
		{"How do I tell whether a key is really in a map or the lookup just gave me the zero value?", true},
		// Three words of the collection ("break", "new", "take"), none
		// about it.
		{"How long does it take to break in a new pair of leather boots?", false},
	}
	for _, tt := range tests {
		v := Scope(ScopeInput{Question: tt.question, Hits: hits, Threshold: 0.1, MinEvidence: DefaultMinEvidence, Terms: stats})
		if v.InScope != tt.in {
			t.Errorf("Scope(%q) = %+v, want in scope %v", tt.question, v, tt.in)
		}
	}
	// Without the fourth word the key question is judged on its
	// evidence alone, as before.
	few := Scope(ScopeInput{Question: "Is the lookup really gave zero?", Hits: hits, Threshold: 0.1, MinEvidence: DefaultMinEvidence, Terms: stats})
	if few.InScope {
		t.Errorf("two words of the collection among foreign ones: %+v, want out of scope", few)
	}
}

// briefedWriter records the briefing it was given and answers
// extractively.
type briefedWriter struct {
	Extractive
	got *Briefing
}

func (w *briefedWriter) Briefed(b Briefing) Generator {
	*w.got = b
	return &Extractive{}
}

// TestAskBriefsWriter checks that the Asker gives the collection's
// description to a writer that takes one (issue 19), and echoes the
// request's metadata with the time it received the question.
func TestAskBriefsWriter(t *testing.T) {
	ctx := context.Background()
	st, err := vectorindex.Open(t.TempDir(), embedder.NewHashing(0), vectorindex.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const desc = "Where the zoo's animals live and what they eat."
	if err := st.PutSettings("zoo", rag.Settings{Description: desc}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Upsert(ctx, "zoo", rag.Document{URL: "https://zoo", Title: "Zoo", Chunks: []chunker.Chunk{{Text: "Penguins live in Antarctica and eat krill."}}}); err != nil {
		t.Fatal(err)
	}
	var got Briefing
	now := time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC)
	asker := NewAsker(st, Options{Generator: &briefedWriter{got: &got}, Now: func() time.Time { return now }})
	r, err := asker.Ask(ctx, Request{Collection: "zoo", Question: "What do penguins eat?", Metadata: map[string]string{"user": "u1"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Briefing{Collection: "zoo", Description: desc}, got); diff != "" {
		t.Errorf("briefing (-want +got):\n%s", diff)
	}
	if r.IsOutOfScope || r.Metadata["user"] != "u1" || !r.Received.Equal(now) {
		t.Errorf("Ask = %+v, want an answer echoing the metadata, received at %v", r, now)
	}
}
