package answer

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/groundcrew/groundcrew/services/rag/internal/chunker"
	"github.com/groundcrew/groundcrew/services/rag/internal/embedder"
	"github.com/groundcrew/groundcrew/services/rag/internal/rag"
	"github.com/groundcrew/groundcrew/services/rag/internal/vectorindex"
)

func TestExpand(t *testing.T) {
	tests := []struct {
		question string
		want     []string // each is in the expansion
	}{
		{"How do I write a hex float?", []string{"hexadecimal", "floating-point"}},
		{"What does the underscore mean in a for loop?", []string{"blank identifier"}},
		{"what happens if I dereference a nil ptr", []string{"pointer indirection", "pointer"}},
		{"Is x += 2 allowed?", []string{"assignment operation"}},
		{"Does && short-circuit?", []string{"conditionally evaluated"}},
		{"Can I leave out the type?", []string{"omitted"}},
		{"How many entries does a map have?", []string{"elements", "length"}},
		{"Are Go strings mutable?", []string{"immutable"}},
		{"Which identifiers are visible from another package?", []string{"exported"}},
		{"Does a switch case fall through?", []string{"fallthrough"}},
		{"How do I write a function with a variable number of arguments?", []string{"variadic"}},
		{"What is the default value of a struct field?", []string{"zero value"}},
		{"What does the any type stand for?", []string{"empty interface"}},
	}
	for _, tt := range tests {
		got := Expand(tt.question)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("Expand(%q) = %q, want it to contain %q", tt.question, got, w)
			}
		}
	}
	// len is the specification's own name for the built-in: mapped to
	// "length" it sent "a builtin like len" to the section on lengths.
	for _, q := range []string{"What is a type assertion?", "How does the select statement choose a case?", "Can I pass len as a function value?"} {
		if got := Expand(q); got != "" {
			t.Errorf("Expand(%q) = %q; the question already speaks the specification's words", q, got)
		}
	}
}

// TestForeignExpansion: only a phrase using a word the collection never
// uses may change the scope check's verdict.
func TestForeignExpansion(t *testing.T) {
	df := func(t string) int {
		switch t {
		case "mutabl", "tild":
			return 0
		}
		return 3
	}
	tests := []struct{ question, want string }{
		{"Are Go strings mutable?", "immutable"},
		{"What does the tilde mean?", "underlying type ~T"},
		// "capital" and "recover" are words of the collection, in
		// another sense than these questions'.
		{"What is the capital of Australia?", ""},
		{"How do I recover a deleted photo?", ""},
	}
	for _, tt := range tests {
		if got := foreignExpansion(tt.question, df); got != tt.want {
			t.Errorf("foreignExpansion(%q) = %q, want %q", tt.question, got, tt.want)
		}
	}
}

// TestAskInTheProgrammersWords: questions in a programmer's words, not the
// specification's, are answered with the rule the specification states
// in its own (these phrasings are in none of the evaluation sets).
func TestAskInTheProgrammersWords(t *testing.T) {
	st := goSpec(t)
	a := NewAsker(st, Options{})
	tests := []struct {
		question string
		want     string // the answer contains it
	}{
		{"Is a Go string mutable?", "immutable"},
		{"What is the underscore for on the left of an assignment?", "blank identifier"},
		{"What happens if you dereference a nil pointer?", "run-time panic"},
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
			if !strings.Contains(r.Answer, tt.want) {
				t.Errorf("answer %q does not contain %q", r.Answer, tt.want)
			}
			if HasRepeats(r.Answer) {
				t.Errorf("answer states a fact twice: %s", r.Answer)
			}
		})
	}
}

func TestUnits(t *testing.T) {
	text := "The predeclared type error is defined as\n\n```\ntype error interface {\n\tError() string\n}\n```\n\nIt is the conventional interface. A function might be defined:\n\n```\n" +
		strings.Repeat("func Read(f *File, b []byte) (n int, err error)\n", 5) + "```\n\n" +
		"For struct literals with keys the following rules apply:\n\n- Every element must have a key.\n\n- The list may be short. Omitted fields get the zero value.\n\nGiven the declarations\n\none may write x."
	got := units(text)
	want := []unit{
		{text: "The predeclared type error is defined as type error interface { Error() string }", code: true},
		{text: "It is the conventional interface."},
		// Code longer than maxQuotedCode is not quoted.
		{text: "A function might be defined:"},
		{text: "For struct literals with keys the following rules apply:"},
		{text: "- Every element must have a key.", intro: "For struct literals with keys the following rules apply:"},
		{text: "- The list may be short.", intro: "For struct literals with keys the following rules apply:"},
		{text: "Omitted fields get the zero value.", intro: "For struct literals with keys the following rules apply:"},
		{text: "Given the declarations"},
		{text: "one may write x."},
	}
	if len(got) != len(want) {
		t.Fatalf("units = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("unit %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestOrderShare(t *testing.T) {
	q := []string{"convert", "string", "slice", "rune"}
	if got := orderShare(q, []string{"convert", "valu", "string", "type", "slice", "rune"}); got != 1 {
		t.Errorf("same order: %v, want 1", got)
	}
	if got := orderShare(q, []string{"convert", "slice", "rune", "string"}); got != 0.75 {
		t.Errorf("reversed conversion: %v, want 0.75", got)
	}
}

// TestExtractiveWordOrderAndLists: of two sentences with the same words,
// the one saying them in the question's order leads ("string to slice",
// not "slice to string"); a list item is credited with the words of the
// sentence introducing its list.
func TestExtractiveWordOrderAndLists(t *testing.T) {
	e := &Extractive{MaxSentences: 1}
	chunks := []rag.Hit{{Text: "Converting values: a slice of runes becomes a string.\n\n" +
		"Converting values: a string becomes a slice of runes."}}
	d, err := e.Generate(t.Context(), "Can I convert a string to a slice of runes?", chunks)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.Text, "Converting values: a string becomes") {
		t.Errorf("answer %q; want the conversion from string to slice", d.Text)
	}

	e = &Extractive{MaxSentences: 2}
	chunks = []rag.Hit{{Text: "A key of a map literal must be a constant.\n\n" +
		"For struct literals with keys the following rules apply:\n\n- Every element must have a key."}}
	d, err = e.Generate(t.Context(), "Which rules apply to struct literals with keys?", chunks)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Text, "- Every element must have a key.") {
		t.Errorf("answer %q; want the list item the question's rules introduce", d.Text)
	}
}

// TestExtractiveNamedSection: a chunk whose section heading the question
// names ranks with retrieval's first, so its sentence can lead although
// retrieval ranked it lower.
func TestExtractiveNamedSection(t *testing.T) {
	chunks := []rag.Hit{
		{HeadingPath: []string{"Statements", "Loops"}, Text: "The arguments are evaluated before each loop iteration."},
		{HeadingPath: []string{"Statements", "Go statements"}, Text: "The function value and parameters are evaluated as usual in the calling goroutine."},
	}
	if namedShare(distinct(embedder.Analyze("When are the arguments of a go statement evaluated?")), chunks[1].HeadingPath) != 1 {
		t.Fatal("the question names the section Go statements")
	}
	d, err := (&Extractive{MaxSentences: 1}).Generate(t.Context(), "When are the arguments of a go statement evaluated?", chunks)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.Text, "The function value and parameters are evaluated") || d.Primary != 1 {
		t.Errorf("answer %q (primary chunk %d); want the Go statements sentence", d.Text, d.Primary)
	}
}

func TestAnswerCuesHowManyTimes(t *testing.T) {
	if got := answerCues("How many times is the switch expression evaluated?"); !got["once"] {
		t.Errorf("answerCues = %v; want once among them", got)
	}
}

// recordingStore records the queries an Asker retrieves with.
type recordingStore struct {
	*vectorindex.Store
	mu      sync.Mutex
	queries []string
}

func (s *recordingStore) Search(ctx context.Context, collection string, q rag.Query) ([]rag.Hit, error) {
	s.mu.Lock()
	s.queries = append(s.queries, q.Text)
	s.mu.Unlock()
	return s.Store.Search(ctx, collection, q)
}

// TestVocabularyOnlyForGo: the programmer-to-specification vocabulary is
// the Go specification's. A question to a collection of runbooks ("this",
// "count", "remove" are its own words there) is retrieved as asked, and
// answered from the runbook it is about; a question to the specification
// is retrieved again with the vocabulary's words.
func TestVocabularyOnlyForGo(t *testing.T) {
	st, err := vectorindex.Open(t.TempDir(), embedder.NewHashing(0), vectorindex.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for _, d := range []rag.Document{
		{URL: "https://runbooks.example/queue", Title: "Queue backlog", Chunks: []chunker.Chunk{{Text: "When this alert fires, count the messages waiting in the queue with rabbitmqctl list_queues. Remove stuck consumers and scale the workers."}}},
		{URL: "https://runbooks.example/alertmanager", Title: "Alertmanager receiver failing", Chunks: []chunker.Chunk{{Text: "A receiver is where Alertmanager sends notifications. When a receiver fails, check its webhook URL and the length of its retry queue."}}},
	} {
		if _, err := st.Upsert(t.Context(), "runbooks", d); err != nil {
			t.Fatal(err)
		}
	}
	rec := &recordingStore{Store: st}
	q := "How do I count the messages waiting in this queue?"
	if Expand(q) == "" {
		t.Fatalf("Expand(%q) is empty: the test needs a question the vocabulary has words for", q)
	}
	r, err := NewAsker(rec, Options{}).Ask(t.Context(), Request{Collection: "runbooks", Question: q})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.queries) != 1 || rec.queries[0] != q {
		t.Errorf("a runbook collection was searched with %q; want the question as asked, once", rec.queries)
	}
	if r.IsOutOfScope || !strings.Contains(r.Answer, "rabbitmqctl") {
		t.Errorf("answer %q (out of scope %v: %s); want the queue runbook's step", r.Answer, r.IsOutOfScope, r.OutOfScopeReason)
	}

	spec := &recordingStore{Store: goSpec(t)}
	if _, err := NewAsker(spec, Options{}).Ask(t.Context(), Request{Collection: "gospec", Question: "Is a Go string mutable?"}); err != nil {
		t.Fatal(err)
	}
	if len(spec.queries) != 2 || !strings.Contains(spec.queries[1], "immutable") {
		t.Errorf("the specification was searched with %q; want the question, then with the vocabulary's words", spec.queries)
	}
}
