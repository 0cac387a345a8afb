package library

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/services/rag/internal/chunker"
	"github.com/groundcrew/groundcrew/services/rag/internal/embedder"
	"github.com/groundcrew/groundcrew/services/rag/internal/rag"
	"github.com/groundcrew/groundcrew/services/rag/internal/vectorindex"
)

func openStore(t *testing.T, dir string) *vectorindex.Store {
	t.Helper()
	s, err := vectorindex.Open(dir, embedder.NewHashing(0), vectorindex.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// corpus returns n documents about distinct topics, enough to calibrate.
func corpus(n int) []Document {
	topics := []string{"channels", "goroutines", "interfaces", "slices", "maps", "closures", "generics", "errors", "packages", "constants"}
	var docs []Document
	for i := range n {
		tp := topics[i%len(topics)]
		docs = append(docs, Document{
			URL:    "https://example.com/" + tp + "/" + string(rune('a'+i%26)),
			Format: chunker.FormatMarkdown,
			Content: "# " + tp + "\n\nThis section explains " + tp + " in depth with several sentences about " + tp +
				" and how programs use " + tp + " to structure concurrent code safely.\n\nAnother paragraph describes common mistakes with " + tp + " and their fixes.",
		})
	}
	return docs
}

func TestIngestCalibratesInBackground(t *testing.T) {
	lib := New(openStore(t, t.TempDir()), Options{})
	t.Cleanup(lib.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := lib.Ingest(ctx, "book", corpus(40))
	if err != nil {
		t.Fatal(err)
	}
	if res.Documents != 40 || res.Collection.Stats.Chunks != res.Chunks {
		t.Fatalf("Ingest = %+v, want 40 documents", res)
	}
	if err := lib.WaitCalibrated(ctx, "book"); err != nil {
		t.Fatal(err)
	}
	info, err := lib.Info("book")
	if err != nil {
		t.Fatal(err)
	}
	if info.Settings.CalibratedChunks != res.Chunks || info.ScopeThreshold != info.Settings.CalibratedThreshold {
		t.Errorf("Info = %+v, want a calibration over %d chunks in force", info, res.Chunks)
	}
}

// TestRecalibratesOnOpen: content stored without a calibration (the
// process died first) is calibrated when the library opens.
func TestRecalibratesOnOpen(t *testing.T) {
	store := openStore(t, t.TempDir())
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var vdocs []rag.Document
	l0 := &Library{}
	for _, d := range corpus(30) {
		vd, err := l0.prepare(d)
		if err != nil {
			t.Fatal(err)
		}
		vdocs = append(vdocs, vd)
	}
	if _, err := store.Upsert(ctx, "book", vdocs...); err != nil {
		t.Fatal(err)
	}
	lib := New(store, Options{})
	t.Cleanup(lib.Close)
	if err := lib.WaitCalibrated(ctx, "book"); err != nil {
		t.Fatal(err)
	}
	s, _ := store.Settings("book")
	st, _ := store.Stats("book")
	if s.CalibratedChunks != st.Chunks || s.CalibratedThreshold <= 0 {
		t.Errorf("settings %+v, want calibrated on %d chunks", s, st.Chunks)
	}
}

func TestCreateKeepsCalibration(t *testing.T) {
	store := openStore(t, t.TempDir())
	lib := New(store, Options{})
	t.Cleanup(lib.Close)
	ctx := t.Context()
	if err := store.PutSettings("book", rag.Settings{CalibratedThreshold: 0.2, CalibratedChunks: 7}); err != nil {
		t.Fatal(err)
	}
	info, err := lib.Create(ctx, "book", rag.Settings{Description: "d", OutOfScopeAnswer: "no", CalibratedThreshold: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	s := info.Settings
	if s.Description != "d" || s.OutOfScopeAnswer != "no" || s.CalibratedThreshold != 0.2 || s.CalibratedChunks != 7 || info.ScopeThreshold != 0.2 {
		t.Errorf("Create = %+v, want new texts and the calibration kept", info)
	}
	if _, err := lib.Info("nope"); !errors.Is(err, rag.ErrNotFound) {
		t.Errorf("Info(nope) = %v, want ErrNotFound", err)
	}
}

func TestInvalidDocument(t *testing.T) {
	lib := New(openStore(t, t.TempDir()), Options{})
	t.Cleanup(lib.Close)
	_, err := lib.Ingest(t.Context(), "book", []Document{corpus(1)[0], {URL: " ", Content: "x"}})
	var de *DocumentError
	if !errors.As(err, &de) || de.Index != 1 || !errors.Is(err, ErrInvalidDocument) {
		t.Fatalf("Ingest = %v, want a DocumentError for documents[1]", err)
	}
	if got := lib.List(); len(got) != 0 {
		t.Errorf("List = %v, want nothing stored", got)
	}
}
