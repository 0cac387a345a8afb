package vectorindex

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/groundcrew/groundcrew/services/rag/internal/embedder"
	"github.com/groundcrew/groundcrew/services/rag/internal/rag"
)

// TestQuotas checks issue 13's limits on the embedded store: collections
// per instance, documents per collection and chunks in memory are refused
// with a QuotaError naming the limit, replacing and deleting stay allowed,
// and the chunk count survives a reopen.
func TestQuotas(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	limits := rag.Limits{MaxCollections: 2, MaxDocuments: 2, MaxChunks: 5}
	st, err := Open(dir, embedder.NewHashing(0), Options{NoSync: true, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name   string
		do     func() error
		limit  string // the quota refused, "" for success
		chunks int    // ChunksInMemory afterwards
	}{
		{"first collection", func() error {
			_, err := st.Upsert(ctx, "a", testDoc("https://a/1", "one", "two"))
			return err
		}, "", 2},
		{"second collection", func() error { return st.PutSettings("b", rag.Settings{}) }, "", 2},
		{"third collection", func() error { return st.PutSettings("c", rag.Settings{}) }, "collections", 2},
		{"third collection by ingest", func() error {
			_, err := st.Upsert(ctx, "c", testDoc("https://c/1", "x"))
			return err
		}, "collections", 2},
		{"second document", func() error {
			_, err := st.Upsert(ctx, "a", testDoc("https://a/2", "three"))
			return err
		}, "", 3},
		{"third document", func() error {
			_, err := st.Upsert(ctx, "a", testDoc("https://a/3", "four"))
			return err
		}, "documents", 3},
		{"replacing a document at the limit", func() error {
			_, err := st.Upsert(ctx, "a", testDoc("https://a/2", "three", "three and a half"))
			return err
		}, "", 4},
		{"chunks past the limit in another collection", func() error {
			_, err := st.Upsert(ctx, "b", testDoc("https://b/1", "five", "six"))
			return err
		}, "chunks", 4},
		{"deleting frees chunks", func() error { return st.Delete(ctx, "a", "https://a/1") }, "", 2},
		{"now they fit", func() error {
			_, err := st.Upsert(ctx, "b", testDoc("https://b/1", "five", "six"))
			return err
		}, "", 4},
		{"dropping frees a collection and its chunks", func() error { return st.Drop("b") }, "", 2},
		{"a new collection fits", func() error {
			_, err := st.Upsert(ctx, "c", testDoc("https://c/1", "x"))
			return err
		}, "", 3},
	}
	for _, s := range steps {
		err := s.do()
		var qe *rag.QuotaError
		switch {
		case s.limit == "" && err != nil:
			t.Fatalf("%s: %v", s.name, err)
		case s.limit != "" && (!errors.As(err, &qe) || qe.Limit != s.limit || !errors.Is(err, rag.ErrQuota)):
			t.Fatalf("%s: error %v, want a %s quota error", s.name, err, s.limit)
		}
		if got := st.ChunksInMemory(); got != s.chunks {
			t.Fatalf("%s: %d chunks in memory, want %d", s.name, got, s.chunks)
		}
	}
	if got := st.Collections(); len(got) != 2 {
		t.Errorf("collections %v, want a and c only", got)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = Open(dir, embedder.NewHashing(0), Options{NoSync: true, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got := st.ChunksInMemory(); got != 3 {
		t.Errorf("after reopening: %d chunks in memory, want 3", got)
	}
}

// countingEmbedder counts the texts it embeds.
type countingEmbedder struct {
	rag.Embedder
	texts atomic.Int64
}

func (e *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.texts.Add(int64(len(texts)))
	return e.Embedder.Embed(ctx, texts)
}

// TestQuotaBeforeEmbedding checks that an ingest past a quota is refused
// before its chunks are embedded (a remote embedder costs money), and
// that a URL given twice in one batch counts once.
func TestQuotaBeforeEmbedding(t *testing.T) {
	ctx := context.Background()
	emb := &countingEmbedder{Embedder: embedder.NewHashing(0)}
	st, err := Open(t.TempDir(), emb, Options{NoSync: true, Limits: rag.Limits{MaxChunks: 3}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Upsert(ctx, "a", testDoc("https://a/1", "one", "two", "three", "four")); !errors.Is(err, rag.ErrQuota) {
		t.Fatalf("Upsert of 4 chunks = %v, want a quota error", err)
	}
	if n := emb.texts.Load(); n != 0 {
		t.Errorf("%d texts embedded for a refused ingest, want 0", n)
	}
	// The later copy of a URL wins: 3 chunks, not 2 + 3.
	if _, err := st.Upsert(ctx, "a", testDoc("https://a/1", "one", "two"), testDoc("https://a/1", "uno", "dos", "tres")); err != nil {
		t.Fatalf("Upsert with a URL twice: %v", err)
	}
	if got, stats := st.ChunksInMemory(), mustStats(t, st, "a"); got != 3 || stats.Chunks != 3 || stats.Documents != 1 {
		t.Errorf("chunks in memory %d, stats %+v; want 3 chunks of 1 document", got, stats)
	}
}

func mustStats(t *testing.T, st *Store, name string) rag.Stats {
	t.Helper()
	s, err := st.Stats(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestQuotaConcurrent checks that concurrent ingests into different
// collections never take the chunks in memory past the limit together.
func TestQuotaConcurrent(t *testing.T) {
	ctx := context.Background()
	st, err := Open(t.TempDir(), embedder.NewHashing(0), Options{NoSync: true, Limits: rag.Limits{MaxChunks: 10}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const writers = 8
	var wg sync.WaitGroup
	var stored, refused atomic.Int64
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				_, err := st.Upsert(ctx, fmt.Sprintf("c%d", w), testDoc(fmt.Sprintf("https://x/%d/%d", w, i), "a chunk"))
				switch {
				case err == nil:
					stored.Add(1)
				case errors.Is(err, rag.ErrQuota):
					refused.Add(1)
				default:
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if got := st.ChunksInMemory(); got != 10 || stored.Load() != 10 || refused.Load() != writers*5-10 {
		t.Errorf("chunks in memory %d, stored %d, refused %d; want 10, 10, %d", got, stored.Load(), refused.Load(), writers*5-10)
	}
	total := 0
	for _, c := range st.Collections() {
		total += mustStats(t, st, c).Chunks
	}
	if total != 10 {
		t.Errorf("collections hold %d chunks, want 10", total)
	}
}
