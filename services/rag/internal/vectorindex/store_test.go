package vectorindex

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/groundcrew/groundcrew/services/rag/internal/chunker"
	"github.com/groundcrew/groundcrew/services/rag/internal/embedder"
	"github.com/groundcrew/groundcrew/services/rag/internal/rag"
)

func openStore(t *testing.T, dir string) *Store {
	t.Helper()
	st, err := Open(dir, embedder.NewHashing(0), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func testDoc(url string, texts ...string) rag.Document {
	d := rag.Document{URL: url, Title: "Title of " + url}
	for i, t := range texts {
		d.Chunks = append(d.Chunks, chunker.Chunk{Text: t, HeadingPath: []string{"Section " + url}, Index: i})
	}
	return d
}

// ids identifies hits as "url#chunk".
func ids(hits []rag.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s#%d", h.URL, h.ChunkIndex))
	}
	return out
}

func search(t *testing.T, st *Store, q rag.Query) []rag.Hit {
	t.Helper()
	hits, err := st.Search(context.Background(), "c", q)
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

func TestUpsertReplaces(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	if _, err := st.Upsert(ctx, "c",
		testDoc("https://a", "penguins live in antarctica", "penguins eat krill and fish", "penguins cannot fly"),
		testDoc("https://b", "volcanoes erupt lava")); err != nil {
		t.Fatal(err)
	}
	res, err := st.Upsert(ctx, "c", testDoc("https://a", "giraffes have long necks"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rag.UpsertResult{Documents: 1, Chunks: 1, ReplacedChunks: 3, Replaced: []string{"https://a"}}, res); diff != "" {
		t.Errorf("Upsert() result mismatch (-want +got):\n%s", diff)
	}
	for _, mode := range []rag.Mode{rag.ModeHybrid, rag.ModeDense, rag.ModeBM25} {
		if got := ids(search(t, st, rag.Query{Text: "penguins", Mode: mode, TopK: 50})); slices.Contains(got, "https://a#1") || slices.Contains(got, "https://a#2") {
			t.Errorf("%v search still returns replaced chunks: %v", mode, got)
		}
		got := ids(search(t, st, rag.Query{Text: "giraffes necks", Mode: mode, TopK: 1}))
		if diff := cmp.Diff([]string{"https://a#0"}, got); diff != "" {
			t.Errorf("%v search for the new text mismatch (-want +got):\n%s", mode, diff)
		}
	}
	stats, err := st.Stats("c")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := [2]int{stats.Documents, stats.Chunks}, [2]int{2, 2}; got != want {
		t.Errorf("Stats() documents, chunks = %v, want %v", got, want)
	}
}

func TestDelete(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	if _, err := st.Upsert(ctx, "c", testDoc("https://a", "penguins live in antarctica"), testDoc("https://b", "penguins in zoos")); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, "c", "https://a"); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, "c", "https://unknown"); err != nil {
		t.Errorf("Delete(unknown URL) = %v, want nil", err)
	}
	if diff := cmp.Diff([]string{"https://b#0"}, ids(search(t, st, rag.Query{Text: "penguins"}))); diff != "" {
		t.Errorf("search after delete mismatch (-want +got):\n%s", diff)
	}
	// An upsert without chunks deletes too.
	if _, err := st.Upsert(ctx, "c", rag.Document{URL: "https://b"}); err != nil {
		t.Fatal(err)
	}
	if got := search(t, st, rag.Query{Text: "penguins"}); len(got) != 0 {
		t.Errorf("search after emptying every document = %v, want nothing", ids(got))
	}
}

// randomText draws words from a small vocabulary, so that documents
// overlap lexically as real ones do.
func randomText(rng *rand.Rand, n int) string {
	vocab := strings.Fields("channel send receive close buffer goroutine select map key value slice array append copy len cap struct field method interface type constant iota variable pointer nil panic recover defer return loop range label break")
	w := make([]string, n)
	for i := range w {
		w[i] = vocab[rng.IntN(len(vocab))]
	}
	return strings.Join(w, " ")
}

func TestPersistence(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(dir, embedder.NewHashing(0), Options{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for d := range 30 {
		var texts []string
		for range 5 {
			texts = append(texts, randomText(rng, 40))
		}
		if _, err := st.Upsert(ctx, "c", testDoc(fmt.Sprintf("https://d/%d", d), texts...)); err != nil {
			t.Fatal(err)
		}
	}
	// Replace and delete some, so the log holds superseded records.
	for d := range 10 {
		if _, err := st.Upsert(ctx, "c", testDoc(fmt.Sprintf("https://d/%d", d), randomText(rng, 40))); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Delete(ctx, "c", "https://d/20"); err != nil {
		t.Fatal(err)
	}
	settings := rag.Settings{Description: "test book", OutOfScopeAnswer: "no", CalibratedThreshold: 0.2}
	if err := st.PutSettings("c", settings); err != nil {
		t.Fatal(err)
	}
	queries := []rag.Query{
		{Text: "close a channel and receive", TopK: 10},
		{Text: "append to a slice", TopK: 10, Mode: rag.ModeDense},
		{Text: "panic recover defer", TopK: 10, Mode: rag.ModeBM25},
		{Text: "map key", TopK: 10, Filter: rag.Filter{URLPrefix: "https://d/1"}},
	}
	var before [][]rag.Hit
	for _, q := range queries {
		before = append(before, search(t, st, q))
	}
	wantSettings, err := st.Settings("c")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	re := openStore(t, dir)
	for i, q := range queries {
		if diff := cmp.Diff(before[i], search(t, re, q)); diff != "" {
			t.Errorf("query %q after reopening mismatch (-before +after):\n%s", q.Text, diff)
		}
	}
	got, err := re.Settings("c")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantSettings, got); diff != "" {
		t.Errorf("Settings() after reopening mismatch (-before +after):\n%s", diff)
	}
	if got.EmbeddingModel != "local-hash-v1-384" || got.Description != "test book" || got.Created.IsZero() {
		t.Errorf("Settings() = %+v, want the model, description and creation time kept", got)
	}
}

func TestTornTailIsCut(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openStore(t, dir)
	if _, err := st.Upsert(ctx, "c", testDoc("https://a", "penguins live in antarctica")); err != nil {
		t.Fatal(err)
	}
	st.Close()
	// A crash in the middle of an append leaves half a frame.
	path := filepath.Join(dir, "c"+logExt)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte{200, 0, 0, 0, 1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	f.Close()

	re := openStore(t, dir)
	if diff := cmp.Diff([]string{"https://a#0"}, ids(search(t, re, rag.Query{Text: "penguins"}))); diff != "" {
		t.Errorf("search after a torn write mismatch (-want +got):\n%s", diff)
	}
	// Writes after recovery must be readable on the next open.
	if _, err := re.Upsert(ctx, "c", testDoc("https://b", "penguins swim")); err != nil {
		t.Fatal(err)
	}
	re.Close()
	again := openStore(t, dir)
	got := ids(search(t, again, rag.Query{Text: "penguins"}))
	slices.Sort(got)
	if diff := cmp.Diff([]string{"https://a#0", "https://b#0"}, got); diff != "" {
		t.Errorf("search after recovery and a new write mismatch (-want +got):\n%s", diff)
	}
}

func TestCompaction(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openStore(t, dir)
	rng := rand.New(rand.NewPCG(1, 9))
	big := strings.Repeat(randomText(rng, 200)+" ", 40) // ~55 KB
	// Rewrite the same documents until superseded records dominate the
	// log, which must trigger both in-memory compaction and the file
	// rewrite.
	for round := range 12 {
		var docs []rag.Document
		for d := range 20 {
			docs = append(docs, testDoc(fmt.Sprintf("https://d/%d", d), big, fmt.Sprintf("round%d marker%d", round, d)))
		}
		if _, err := st.Upsert(ctx, "c", docs...); err != nil {
			t.Fatal(err)
		}
	}
	stats, err := st.Stats("c")
	if err != nil {
		t.Fatal(err)
	}
	// 12 rounds × 20 documents × 55 KB were written: 13 MB.
	if stats.LogBytes > 2*rewriteMinBytes {
		t.Errorf("log is %d bytes after 13 MB of rewrites of 1 MB of live data, want it compacted", stats.LogBytes)
	}
	h, _ := st.get("c")
	if dead := len(h.col.rows) - h.col.live; dead*4 > len(h.col.rows) {
		t.Errorf("%d of %d rows are dead, want them compacted", dead, len(h.col.rows))
	}
	check := func(st *Store) {
		t.Helper()
		if diff := cmp.Diff([]string{"https://d/7#1"}, ids(search(t, st, rag.Query{Text: "round11 marker7", Mode: rag.ModeBM25, TopK: 1}))); diff != "" {
			t.Errorf("latest version not found (-want +got):\n%s", diff)
		}
		if got := search(t, st, rag.Query{Text: "round3", Mode: rag.ModeBM25}); len(got) != 0 {
			t.Errorf("stale chunks found: %v", ids(got))
		}
	}
	check(st)
	st.Close()
	check(openStore(t, dir))
}

func TestFilters(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	a, b, c := testDoc("https://x/a", "channel send"), testDoc("https://x/b", "channel close"), testDoc("https://y/c", "channel receive")
	a.Metadata = map[string]string{"lang": "en", "team": "core"}
	b.Metadata = map[string]string{"lang": "en"}
	c.Metadata = map[string]string{"lang": "fr"}
	if _, err := st.Upsert(ctx, "c", a, b, c); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		filter rag.Filter
		want   []string
	}{
		{"none", rag.Filter{}, []string{"https://x/a#0", "https://x/b#0", "https://y/c#0"}},
		{"metadata", rag.Filter{Metadata: map[string]string{"lang": "en"}}, []string{"https://x/a#0", "https://x/b#0"}},
		{"two labels", rag.Filter{Metadata: map[string]string{"lang": "en", "team": "core"}}, []string{"https://x/a#0"}},
		{"url prefix", rag.Filter{URLPrefix: "https://y/"}, []string{"https://y/c#0"}},
		{"urls", rag.Filter{URLs: []string{"https://x/b", "https://nope"}}, []string{"https://x/b#0"}},
		{"nothing matches", rag.Filter{Metadata: map[string]string{"lang": "de"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, mode := range []rag.Mode{rag.ModeHybrid, rag.ModeDense, rag.ModeBM25} {
				got := ids(search(t, st, rag.Query{Text: "channel", Filter: tt.filter, Mode: mode}))
				slices.Sort(got)
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("%v mismatch (-want +got):\n%s", mode, diff)
				}
			}
		})
	}
}

func TestSearchScores(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	if _, err := st.Upsert(ctx, "c", testDoc("https://a", "penguins live in antarctica", "volcanoes erupt lava")); err != nil {
		t.Fatal(err)
	}
	hits := search(t, st, rag.Query{Text: "where do penguins live", TopK: 5})
	if len(hits) == 0 || hits[0].ChunkIndex != 0 {
		t.Fatalf("got %v, want the penguin chunk first", ids(hits))
	}
	for _, h := range hits {
		if h.Score < 0 || h.Score > 1 || h.Score != min(max(h.Cosine, 0), 1) {
			t.Errorf("hit %s: Score %v, Cosine %v; want Score = cosine clamped to [0,1]", ids([]rag.Hit{h}), h.Score, h.Cosine)
		}
	}
	if hits[0].BM25 <= 0 {
		t.Errorf("BM25 of a lexical match = %v, want > 0", hits[0].BM25)
	}
	// The threshold drops weak hits.
	strong := search(t, st, rag.Query{Text: "where do penguins live", MinScore: hits[0].Score})
	if diff := cmp.Diff([]string{"https://a#0"}, ids(strong)); diff != "" {
		t.Errorf("search with MinScore mismatch (-want +got):\n%s", diff)
	}
}

func TestSearchErrors(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	if _, err := st.Upsert(ctx, "c", testDoc("https://a", "text")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		collection string
		q          rag.Query
		want       error
	}{
		{"blank", "c", rag.Query{Text: "  "}, rag.ErrInvalidArgument},
		{"top_k too big", "c", rag.Query{Text: "x", TopK: 51}, rag.ErrInvalidArgument},
		{"negative top_k", "c", rag.Query{Text: "x", TopK: -1}, rag.ErrInvalidArgument},
		{"threshold above 1", "c", rag.Query{Text: "x", MinScore: 1.5}, rag.ErrInvalidArgument},
		{"unknown mode", "c", rag.Query{Text: "x", Mode: 9}, rag.ErrInvalidArgument},
		{"unknown collection", "nope", rag.Query{Text: "x"}, rag.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := st.Search(ctx, tt.collection, tt.q)
			if !errors.Is(err, tt.want) {
				t.Errorf("Search() error = %v, want %v", err, tt.want)
			}
		})
	}
	if _, err := st.Upsert(ctx, "../evil", testDoc("https://a", "x")); !errors.Is(err, rag.ErrInvalidName) {
		t.Errorf("Upsert(\"../evil\") error = %v, want %v", err, rag.ErrInvalidName)
	}
	if _, err := st.Upsert(ctx, "c", rag.Document{Title: "no url"}); !errors.Is(err, rag.ErrInvalidArgument) {
		t.Errorf("Upsert(document without URL) error = %v, want %v", err, rag.ErrInvalidArgument)
	}
}

func TestEmbedderMismatch(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openStore(t, dir)
	if _, err := st.Upsert(ctx, "c", testDoc("https://a", "text")); err != nil {
		t.Fatal(err)
	}
	st.Close()
	other, err := Open(dir, embedder.NewHashing(128), Options{})
	if err != nil {
		t.Fatalf("Open() with another embedder = %v, want the store to open", err)
	}
	defer other.Close()
	if _, err := other.Search(ctx, "c", rag.Query{Text: "text"}); !errors.Is(err, rag.ErrEmbedderMismatch) {
		t.Errorf("Search() error = %v, want %v", err, rag.ErrEmbedderMismatch)
	}
	if err := other.Drop("c"); err != nil {
		t.Errorf("Drop() of a mismatched collection = %v, want nil", err)
	}
	if diff := cmp.Diff([]string{}, other.Collections(), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Collections() after Drop mismatch (-want +got):\n%s", diff)
	}
}

func TestConcurrentSearchAndUpsert(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	if _, err := st.Upsert(ctx, "c", testDoc("https://seed", "channel send close")); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 20 {
				if w%2 == 0 {
					if _, err := st.Upsert(ctx, "c", testDoc(fmt.Sprintf("https://w%d/%d", w, i%3), "channel receive", "select case")); err != nil {
						t.Error(err)
					}
				} else if _, err := st.Search(ctx, "c", rag.Query{Text: "channel"}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
}

func TestDotRowsKernelMatchesPortable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, dims := range []int{16, 48, 384, 768} {
		const n = 37
		q := make([]int16, dims)
		rows := make([]int8, n*dims)
		for i := range q {
			q[i] = int16(rng.IntN(2*queryScale+1) - queryScale)
		}
		for i := range rows {
			rows[i] = int8(rng.IntN(255) - 127)
		}
		got, want := make([]int32, n), make([]int32, n)
		dotRows(q, rows, dims, got)
		dotRowsGo(q, rows, dims, want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("dims %d: dotRows mismatch with the portable loop (-want +got):\n%s", dims, diff)
		}
	}
}

// TestGoSpecRetrieval checks that questions about the Go specification
// find the section that answers them.
func TestGoSpecRetrieval(t *testing.T) {
	ctx := context.Background()
	spec := loadSpec(t)
	cs, err := chunker.HTML(spec, chunker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := openStore(t, t.TempDir())
	if _, err := st.Upsert(ctx, "c", rag.Document{URL: "https://go.dev/ref/spec", Title: "The Go Programming Language Specification", Chunks: cs}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		question string
		want     []string // any of these sections in the top 3
	}{
		{"What happens when you send on a closed channel?", []string{"Send statements", "Close"}},
		{"In what order do deferred calls run when a function returns?", []string{"Defer statements"}},
		{"How does iota count up inside a const block?", []string{"Iota"}},
		{"How do I remove an entry from a map?", []string{"Deletion of map elements"}},
		{"What does fallthrough do in a switch?", []string{"Fallthrough statements", "Expression switches"}},
		{"what does the := thing do", []string{"Short variable declarations"}},
	}
	for _, tt := range tests {
		t.Run(tt.question, func(t *testing.T) {
			hits := search(t, st, rag.Query{Text: tt.question, TopK: 3})
			var got []string
			for _, h := range hits {
				got = append(got, h.HeadingPath[len(h.HeadingPath)-1])
			}
			if !slices.ContainsFunc(got, func(s string) bool { return slices.Contains(tt.want, s) }) {
				t.Errorf("top 3 sections = %q, want one of %q", got, tt.want)
			}
		})
	}
}

func TestIncompleteCollectionIsDropped(t *testing.T) {
	dir := t.TempDir()
	// A crash while creating "half" left the magic and part of the
	// settings frame; "ok" is complete.
	st := openStore(t, dir)
	if err := st.PutSettings("ok", rag.Settings{Description: "fine"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := os.WriteFile(filepath.Join(dir, "half"+logExt), []byte(logMagic+"\x10\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	re := openStore(t, dir)
	if diff := cmp.Diff([]string{"ok"}, re.Collections()); diff != "" {
		t.Errorf("Collections() mismatch (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(dir, "half"+logExt)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("incomplete collection file still there: %v", err)
	}
}

// TestDeleteCollection: a deleted collection's file is gone, its chunks
// no longer count, a reopened store does not see it, and a write through
// a handle taken before the delete fails instead of recreating it.
func TestDeleteCollection(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	ctx := t.Context()
	if _, err := st.Upsert(ctx, "c", testDoc("https://a", "one chunk of a", "two chunk of a")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Upsert(ctx, "keep", testDoc("https://k", "kept chunk")); err != nil {
		t.Fatal(err)
	}
	h, err := st.get("c")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteCollection(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteCollection(ctx, "c"); !errors.Is(err, rag.ErrNotFound) {
		t.Errorf("deleting it again = %v, want ErrNotFound", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "c"+logExt)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the collection's file is still there: %v", err)
	}
	if n := st.ChunksInMemory(); n != 1 {
		t.Errorf("%d chunks in memory, want keep's 1", n)
	}
	if err := h.write(st.opts, nil, encodeDelete("https://a")); !errors.Is(err, rag.ErrClosed) {
		t.Errorf("write through a stale handle = %v, want ErrClosed", err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	again := openStore(t, dir)
	if got := again.Collections(); !slices.Equal(got, []string{"keep"}) {
		t.Errorf("reopened store has %v, want [keep]", got)
	}
}
