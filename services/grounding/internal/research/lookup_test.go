package research

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// lookupCall is one call a research step made to its backends.
type lookupCall struct {
	Kind       string // "search" or "retrieve"
	Collection string
	Query      string
}

// scriptedBackend is a Searcher and a Retriever in one: answer says what
// each call returns and gate, when set, holds the call first (done runs as
// the call returns). It counts the calls in flight.
type scriptedBackend struct {
	answer func(lookupCall) ([]Evidence, error)
	gate   func(ctx context.Context, c lookupCall) (done func(), err error)

	mu          sync.Mutex
	arrived     []lookupCall
	inFlight    int
	maxInFlight int
}

var (
	_ Searcher  = (*scriptedBackend)(nil)
	_ Retriever = (*scriptedBackend)(nil)
)

func (b *scriptedBackend) Search(ctx context.Context, query string, _ int) ([]Evidence, error) {
	return b.do(ctx, lookupCall{Kind: "search", Query: query})
}

func (b *scriptedBackend) Retrieve(ctx context.Context, collection, query string, _ int) ([]Evidence, error) {
	return b.do(ctx, lookupCall{Kind: "retrieve", Collection: collection, Query: query})
}

func (b *scriptedBackend) do(ctx context.Context, c lookupCall) ([]Evidence, error) {
	b.mu.Lock()
	b.arrived = append(b.arrived, c)
	b.inFlight++
	b.maxInFlight = max(b.maxInFlight, b.inFlight)
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.inFlight--
		b.mu.Unlock()
	}()
	if b.gate != nil {
		done, err := b.gate(ctx, c)
		if err != nil {
			return nil, err
		}
		defer done()
	}
	return b.answer(c)
}

// stats returns the calls in arrival order and the most ever in flight.
func (b *scriptedBackend) stats() ([]lookupCall, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.arrived), b.maxInFlight
}

// barrier holds every call until n calls are in flight together, then
// lets them all go. A call whose ctx ends first fails with ctx's error, so
// an implementation that never has n calls in flight fails at the test's
// deadline instead of hanging.
type barrier struct {
	n       int
	mu      sync.Mutex
	arrived int
	open    chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, open: make(chan struct{})} }

func (br *barrier) wait(ctx context.Context, _ lookupCall) (func(), error) {
	br.mu.Lock()
	br.arrived++
	if br.arrived == br.n {
		close(br.open)
	}
	br.mu.Unlock()
	select {
	case <-br.open:
		return func() {}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// reverseOrder holds calls until n have arrived, then makes them answer in
// the reverse order of their arrival: the last to arrive answers first and,
// as it returns, lets the one that arrived before it go.
type reverseOrder struct {
	n        int
	mu       sync.Mutex
	gates    []chan struct{}
	arrived  []lookupCall
	answered []lookupCall
}

func (r *reverseOrder) wait(ctx context.Context, c lookupCall) (func(), error) {
	r.mu.Lock()
	i := len(r.gates)
	mine := make(chan struct{})
	r.gates = append(r.gates, mine)
	r.arrived = append(r.arrived, c)
	if len(r.gates) == r.n {
		close(mine)
	}
	r.mu.Unlock()
	select {
	case <-mine:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.answered = append(r.answered, c)
		if i > 0 {
			close(r.gates[i-1])
		}
	}, nil
}

// evidenceFor answers like a backend with a little of everything: search
// finds two pages per query, retrieval one passage, and the queries listed
// in fail (by kind) fail.
func evidenceFor(fail map[string][]string) func(lookupCall) ([]Evidence, error) {
	return func(c lookupCall) ([]Evidence, error) {
		if slices.Contains(fail[c.Kind], c.Query) {
			return nil, errors.New(c.Kind + " backend unavailable")
		}
		slug := strings.ReplaceAll(c.Query, " ", "-")
		if c.Kind == "retrieve" {
			return []Evidence{{Title: "Book on " + c.Query, URL: "https://book.example/" + slug, Snippet: "A passage about " + c.Query + "."}}, nil
		}
		return []Evidence{
			{Title: c.Query, URL: "https://web.example/" + slug + "/1", Snippet: "First page on " + c.Query + "."},
			{URL: "https://web.example/" + slug + "/2", Snippet: "An untitled page on " + c.Query + "."},
			{Title: "No URL, cannot be cited", Snippet: "dropped"},
		}, nil
	}
}

// newLookupService builds a Service over b; b is the Retriever too unless
// noRetriever.
func newLookupService(t *testing.T, b *scriptedBackend, noRetriever bool, cfg Config) *Service {
	t.Helper()
	deps := Deps{Store: newMemStore(), Searcher: b, Retriever: b, Clock: newFakeClock()}
	if noRetriever {
		deps.Retriever = nil
	}
	svc, err := New(deps, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// planned is the offline plan of a comparison: five sub-questions, whose
// lookups are ten with a collection.
func planned(t *testing.T) []string {
	t.Helper()
	plan, err := OfflinePlanner{}.Plan(t.Context(), "Kubernetes operators compared with Helm charts")
	if err != nil || len(plan) != 5 {
		t.Fatalf("offline plan = %q, %v; want 5 sub-questions", plan, err)
	}
	return plan
}

func TestResearchLookupsOverlap(t *testing.T) {
	tests := []struct {
		name        string
		concurrency int
		collection  string
		// inFlight calls must be in flight together before any answers.
		inFlight int
	}{
		{"every lookup at once", 10, "ops-book", 10},
		{"the default bound is reached", 0, "ops-book", DefaultLookupConcurrency},
		{"searches only", 0, "", 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			br := newBarrier(tt.inFlight)
			b := &scriptedBackend{answer: evidenceFor(nil), gate: br.wait}
			svc := newLookupService(t, b, false, Config{LookupConcurrency: tt.concurrency})
			// Not a timing assertion: the deadline only turns a sequential
			// implementation's wait at the barrier into a failure.
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			t.Cleanup(cancel)

			found, err := svc.research(ctx, &Run{ID: "r1", Pending: planned(t), Collection: tt.collection})
			if err != nil {
				t.Fatalf("research: %v; the lookups never had %d calls in flight at once", err, tt.inFlight)
			}
			calls, most := b.stats()
			wantCalls := 5
			if tt.collection != "" {
				wantCalls = 10
			}
			if len(calls) != wantCalls || most != tt.inFlight {
				t.Errorf("%d calls, at most %d in flight; want %d calls, at most %d in flight", len(calls), most, wantCalls, tt.inFlight)
			}
			if wantSources := 5*2 + (wantCalls-5)*1; len(found) != wantSources {
				t.Errorf("%d sources, want %d", len(found), wantSources)
			}
		})
	}
}

func TestResearchLookupConcurrencyOne(t *testing.T) {
	b := &scriptedBackend{
		answer: evidenceFor(nil),
		gate: func(context.Context, lookupCall) (func(), error) {
			// Hand the processor to any other runnable goroutine while this
			// call is in flight, so a second call started alongside it
			// would be counted.
			for range 100 {
				runtime.Gosched()
			}
			return func() {}, nil
		},
	}
	svc := newLookupService(t, b, false, Config{LookupConcurrency: 1})
	plan := planned(t)
	if _, err := svc.research(t.Context(), &Run{ID: "r1", Pending: plan, Collection: "ops-book"}); err != nil {
		t.Fatal(err)
	}
	calls, most := b.stats()
	if most != 1 {
		t.Errorf("%d calls in flight at once, want at most 1", most)
	}
	// One at a time, the calls come in the order of the sequential code.
	var want []lookupCall
	for _, q := range plan {
		want = append(want,
			lookupCall{Kind: "search", Query: searchQuery(q)},
			lookupCall{Kind: "retrieve", Collection: "ops-book", Query: searchQuery(q)})
	}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// TestResearchMatchesSequential runs each case twice: one lookup at a time,
// as the step used to, and all at once with answers arriving in reverse
// order. Sources, their order and the error must be the same.
func TestResearchMatchesSequential(t *testing.T) {
	pending := []string{"alpha?", "beta?", "gamma?"}
	tests := []struct {
		name        string
		collection  string
		noRetriever bool
		fail        map[string][]string
		wantURLs    []string
		wantErr     []string // substrings of the error; nil means success
	}{
		{
			name:       "every lookup answers",
			collection: "ops-book",
			wantURLs: []string{
				"https://web.example/alpha/1", "https://web.example/alpha/2", "https://book.example/alpha",
				"https://web.example/beta/1", "https://web.example/beta/2", "https://book.example/beta",
				"https://web.example/gamma/1", "https://web.example/gamma/2", "https://book.example/gamma",
			},
		},
		{
			name:       "failed lookups are skipped",
			collection: "ops-book",
			fail:       map[string][]string{"search": {"beta"}, "retrieve": {"alpha", "beta"}},
			wantURLs: []string{
				"https://web.example/alpha/1", "https://web.example/alpha/2",
				"https://web.example/gamma/1", "https://web.example/gamma/2", "https://book.example/gamma",
			},
		},
		{
			name:     "searches only",
			wantURLs: []string{"https://web.example/alpha/1", "https://web.example/alpha/2", "https://web.example/beta/1", "https://web.example/beta/2", "https://web.example/gamma/1", "https://web.example/gamma/2"},
		},
		{
			name:       "every lookup fails",
			collection: "ops-book",
			fail:       map[string][]string{"search": {"alpha", "beta", "gamma"}, "retrieve": {"alpha", "beta", "gamma"}},
			wantErr:    []string{`searching "alpha": search backend unavailable`, `retrieving "gamma" from ops-book: retrieve backend unavailable`},
		},
		{
			name:        "no retriever, searches answer",
			collection:  "ops-book",
			noRetriever: true,
			fail:        map[string][]string{"search": {"alpha"}},
			wantURLs:    []string{"https://web.example/beta/1", "https://web.example/beta/2", "https://web.example/gamma/1", "https://web.example/gamma/2"},
		},
		{
			name:        "no retriever, searches fail",
			collection:  "ops-book",
			noRetriever: true,
			fail:        map[string][]string{"search": {"alpha", "beta", "gamma"}},
			wantErr:     []string{`searching "beta"`, errNoRetriever.Error()},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := &Run{ID: "r1", Pending: pending, Collection: tt.collection}

			seq := &scriptedBackend{answer: evidenceFor(tt.fail)}
			wantFound, wantErr := newLookupService(t, seq, tt.noRetriever, Config{LookupConcurrency: 1}).research(t.Context(), run)
			seqCalls, _ := seq.stats()

			rev := &reverseOrder{n: len(seqCalls)}
			conc := &scriptedBackend{answer: evidenceFor(tt.fail), gate: rev.wait}
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a hang guard, as above
			t.Cleanup(cancel)
			found, err := newLookupService(t, conc, tt.noRetriever, Config{LookupConcurrency: 16}).research(ctx, run)

			if ctx.Err() != nil {
				t.Fatalf("the %d lookups were not all in flight at once: %v", len(seqCalls), err)
			}
			if slices.Reverse(rev.arrived); !cmp.Equal(rev.arrived, rev.answered) {
				t.Fatalf("the fake did not answer in reverse order of arrival: arrived (reversed) %v, answered %v", rev.arrived, rev.answered)
			}
			if diff := cmp.Diff(wantFound, found); diff != "" {
				t.Errorf("sources, sequential (-) vs concurrent (+):\n%s", diff)
			}
			if errString(err) != errString(wantErr) {
				t.Errorf("error = %q, sequential gave %q", errString(err), errString(wantErr))
			}
			if concCalls, _ := conc.stats(); len(concCalls) != len(seqCalls) {
				t.Errorf("%d calls, sequential made %d: every lookup runs whatever fails", len(concCalls), len(seqCalls))
			}

			var urls []string
			for _, s := range found {
				urls = append(urls, s.URL)
			}
			if diff := cmp.Diff(tt.wantURLs, urls); diff != "" {
				t.Errorf("source URLs (-want +got):\n%s", diff)
			}
			for _, w := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error = %v, want it to contain %q", err, w)
				}
			}
			if tt.wantErr == nil && err != nil {
				t.Errorf("error = %v, want none", err)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestResearchNoPendingQuestions(t *testing.T) {
	b := &scriptedBackend{answer: evidenceFor(nil)}
	found, err := newLookupService(t, b, false, Config{}).research(t.Context(), &Run{ID: "r1", Collection: "ops-book"})
	if calls, _ := b.stats(); found != nil || err != nil || len(calls) != 0 {
		t.Errorf("research with nothing pending = %v, %v after %d calls; want nothing, no error, no calls", found, err, len(calls))
	}
}

func TestResearchCanceled(t *testing.T) {
	for _, limit := range []int{1, 3} {
		t.Run("", func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			t.Cleanup(cancel)
			var (
				mu      sync.Mutex
				arrived int
			)
			b := &scriptedBackend{
				answer: evidenceFor(nil),
				gate: func(ctx context.Context, _ lookupCall) (func(), error) {
					// The step is cancelled once the first wave is in
					// flight; every call then gives up.
					mu.Lock()
					if arrived++; arrived == limit {
						cancel()
					}
					mu.Unlock()
					<-ctx.Done()
					return nil, ctx.Err()
				},
			}
			svc := newLookupService(t, b, false, Config{LookupConcurrency: limit})
			found, err := svc.research(ctx, &Run{ID: "r1", Pending: planned(t), Collection: "ops-book"})
			if !errors.Is(err, context.Canceled) || found != nil {
				t.Errorf("research = %v, %v; want context.Canceled", found, err)
			}
			// No call starts once the step is cancelled.
			if calls, _ := b.stats(); len(calls) != limit {
				t.Errorf("%d calls with concurrency %d, want %d", len(calls), limit, limit)
			}
		})
	}
}

func TestResearchLookupPanicReachesTheStep(t *testing.T) {
	errBoom := errors.New("boom")
	b := &scriptedBackend{answer: func(c lookupCall) ([]Evidence, error) {
		if c.Kind == "retrieve" && strings.HasPrefix(c.Query, "choose") {
			panic(errBoom)
		}
		return evidenceFor(nil)(c)
	}}
	svc := newLookupService(t, b, false, Config{})
	var recovered any
	func() {
		defer func() { recovered = recover() }()
		_, _ = svc.research(t.Context(), &Run{ID: "r1", Pending: planned(t), Collection: "ops-book"})
	}()
	err, ok := recovered.(error)
	if !ok || !errors.Is(err, errBoom) || !strings.Contains(err.Error(), "goroutine") {
		t.Errorf("recovered %v; want the lookup's panic, with its stack, re-raised by research", recovered)
	}
	// Every other lookup still ran to the end before the panic went on.
	if calls, _ := b.stats(); len(calls) != 10 {
		t.Errorf("%d calls, want 10", len(calls))
	}
}

// TestResearchSearchesEachSide: a sub-question naming both sides of a
// comparison is searched as asked and each side on its own, with the
// situation it was asked in, once per research step.
func TestResearchSearchesEachSide(t *testing.T) {
	b := &scriptedBackend{answer: evidenceFor(nil)}
	run := &Run{
		ID:    "r1",
		Topic: "df -h says 30% free but writes fail. how do I tell a full disk from running out of inodes?",
		Pending: []string{
			"How do you tell a full disk from running out of inodes?",
			"What causes a full disk, and what causes running out of inodes?",
		},
	}
	if _, err := newLookupService(t, b, false, Config{}).research(t.Context(), run); err != nil {
		t.Fatal(err)
	}
	calls, _ := b.stats()
	var got []string
	for _, c := range calls {
		got = append(got, c.Query)
	}
	slices.Sort(got)
	want := []string{
		searchQuery(run.Pending[0]),
		searchQuery(run.Pending[1]),
		searchQuery("full disk df -h says 30% free but writes fail"),
		searchQuery("running out of inodes df -h says 30% free but writes fail"),
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("queries %q, want %q", got, want)
	}
}

// TestSourceTextBounded: a source keeps its document's text for judging
// relevance, cut to MaxSourceTextChars, and its snippet stays a digest.
func TestSourceTextBounded(t *testing.T) {
	doc := strings.Repeat("Check the replication slot with pg_replication_slots before dropping it. ", 400)
	got := appendEvidence(nil, "q", []Evidence{{Title: "Postgres WAL", URL: "https://runbooks.example/wal", Snippet: "WAL", Text: doc}}, time.Now())
	if len(got) != 1 {
		t.Fatalf("%d sources, want 1", len(got))
	}
	if n := utf8.RuneCountInString(got[0].Text); n == 0 || n > MaxSourceTextChars {
		t.Errorf("source text is %d characters, want 1..%d", n, MaxSourceTextChars)
	}
	if n := utf8.RuneCountInString(got[0].Snippet); n > MaxSnippetChars {
		t.Errorf("snippet is %d characters, want at most %d", n, MaxSnippetChars)
	}
}
