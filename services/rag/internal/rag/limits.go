package rag

import "fmt"

// Limits bound what one rag instance holds, so that a flood of ingests
// is refused with a clear error ([ErrQuota]) instead of exhausting memory
// or disk. Zero fields mean unlimited. The server reads them from
// RAG_MAX_COLLECTIONS, RAG_MAX_DOCUMENTS_PER_COLLECTION and RAG_MAX_CHUNKS.
type Limits struct {
	// MaxCollections bounds the collections of the instance.
	MaxCollections int
	// MaxCollectionsPerKey bounds the collections one caller (API key
	// name) may create, so that no single writer fills MaxCollections;
	// the library enforces it (RAG_MAX_COLLECTIONS_PER_KEY).
	MaxCollectionsPerKey int
	// MaxDocuments bounds the documents of one collection.
	MaxDocuments int
	// MaxChunks bounds the chunks held in memory, over every collection
	// of the instance (the embedded store keeps every chunk's text,
	// postings and vector in memory: about 1.6 kB a chunk with the local
	// embedder, 164 MB at 100,000 chunks in BENCHMARKS.md).
	MaxChunks int
}

// QuotaError says which limit a write would exceed. Its message is about
// the caller's request and safe to show.
type QuotaError struct {
	// Limit names the quota: "collections", "collections per key",
	// "documents" or "chunks".
	Limit string
	// Max is the configured bound, Want what the write would reach.
	Max, Want int
	// Collection is the collection written to.
	Collection string
}

// Error implements error.
func (e *QuotaError) Error() string {
	switch e.Limit {
	case "collections":
		return fmt.Sprintf("%v: creating collection %q would make %d collections, this instance allows %d", ErrQuota, e.Collection, e.Want, e.Max)
	case "documents":
		return fmt.Sprintf("%v: collection %q would hold %d documents, at most %d are allowed per collection", ErrQuota, e.Collection, e.Want, e.Max)
	case "collections per key":
		return fmt.Sprintf("%v: creating collection %q would make %d collections created by this key, at most %d are allowed", ErrQuota, e.Collection, e.Want, e.Max)
	}
	return fmt.Sprintf("%v: this instance would hold %d chunks in memory, at most %d are allowed", ErrQuota, e.Want, e.Max)
}

// Unwrap makes errors.Is(err, ErrQuota) hold.
func (e *QuotaError) Unwrap() error { return ErrQuota }

// Public is the message for the caller, without the sentinel's text.
func (e *QuotaError) Public() string {
	switch e.Limit {
	case "collections":
		return fmt.Sprintf("this instance holds at most %d collections", e.Max)
	case "documents":
		return fmt.Sprintf("a collection holds at most %d documents; collection %q would hold %d", e.Max, e.Collection, e.Want)
	case "collections per key":
		return fmt.Sprintf("an API key may create at most %d collections; delete one (admin) to create another", e.Max)
	}
	return fmt.Sprintf("this instance holds at most %d chunks in memory; the ingest would make %d", e.Max, e.Want)
}

// CheckCollections returns a [*QuotaError] when creating one more
// collection next to existing ones exceeds l.
func (l Limits) CheckCollections(name string, existing int) error {
	if l.MaxCollections > 0 && existing+1 > l.MaxCollections {
		return &QuotaError{Limit: "collections", Max: l.MaxCollections, Want: existing + 1, Collection: name}
	}
	return nil
}

// CheckDocuments returns a [*QuotaError] when a collection would hold
// more than l's documents.
func (l Limits) CheckDocuments(name string, want int) error {
	if l.MaxDocuments > 0 && want > l.MaxDocuments {
		return &QuotaError{Limit: "documents", Max: l.MaxDocuments, Want: want, Collection: name}
	}
	return nil
}

// CheckChunks returns a [*QuotaError] when the instance would hold more
// than l's chunks.
func (l Limits) CheckChunks(name string, want int) error {
	if l.MaxChunks > 0 && want > l.MaxChunks {
		return &QuotaError{Limit: "chunks", Max: l.MaxChunks, Want: want, Collection: name}
	}
	return nil
}
