package vectorindex

import (
	"context"
	"errors"
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
