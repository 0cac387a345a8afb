// Package library manages the rag service's collections ("books"): it
// creates them with their settings, turns incoming documents (text, HTML
// or Markdown) into chunks and stores them, and keeps each collection's
// scope threshold calibrated on its own content as it changes.
//
// Calibration ([answer.Calibrate]) asks about 200 pseudo-questions of the
// collection, which takes ~80 ms on the Go specification (270 chunks) but
// about a second at 100,000 chunks. Ingest therefore never waits for it: it
// marks the collection stale and one background worker recalibrates stale
// collections one at a time, coalescing the ingests that arrive meanwhile
// into a single further pass. Until it finishes, questions are checked
// against the previous threshold (or the default one for a new
// collection). Collections whose calibration is older than their content
// (the process stopped before it ran) are recalibrated when the library
// opens.
package library

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/groundcrew/groundcrew/platform/weburl"
	"github.com/groundcrew/groundcrew/services/rag/internal/answer"
	"github.com/groundcrew/groundcrew/services/rag/internal/chunker"
	"github.com/groundcrew/groundcrew/services/rag/internal/rag"
)

// Store is what the library needs from a document store;
// both document stores (vectorindex, qdrantstore) implement it.
type Store interface {
	answer.Sampler
	Upsert(ctx context.Context, collection string, docs ...rag.Document) (rag.UpsertResult, error)
	PutSettings(collection string, s rag.Settings) error
	Stats(collection string) (rag.Stats, error)
	Collections() []string
	DeleteCollection(ctx context.Context, collection string) error
}

// ErrInvalidDocument means a document cannot be ingested; the error is a
// [*DocumentError] saying which one and why.
var ErrInvalidDocument = errors.New("invalid document")

// DocumentError reports a document of an ingest batch that cannot be
// ingested. Its Reason is about the caller's own input and safe to show.
type DocumentError struct {
	// Index is the document's position in the batch, from 0.
	Index int
	// Reason says what is wrong with it.
	Reason string
}

// Error implements error.
func (e *DocumentError) Error() string {
	return fmt.Sprintf("%v: documents[%d]: %s", ErrInvalidDocument, e.Index, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalidDocument) hold.
func (e *DocumentError) Unwrap() error { return ErrInvalidDocument }

// Document is a document to ingest, before chunking.
type Document struct {
	// URL identifies the document; ingesting it again replaces it.
	URL string
	// Title names it; empty means taken from the content (HTML <title>,
	// first Markdown heading, else the first line of text), else the
	// URL's file name.
	Title string
	// Format is the markup of Content.
	Format chunker.Format
	// Content is the document's text, HTML or Markdown.
	Content string
	// Metadata are labels kept with every chunk, usable as filters. The
	// key [IngestedByKey] is the library's: whatever is sent under it is
	// replaced.
	Metadata map[string]string
	// IngestedBy names who ingests the document (the caller's API key
	// name); it is kept in the document's metadata under
	// [IngestedByKey], so a document that replaced an indexed one records
	// who replaced it. Empty when the caller is unknown.
	IngestedBy string
}

// IngestedByKey is the metadata key recording who ingested (or last
// replaced) a document.
const IngestedByKey = "ingested_by"

// IngestResult counts what an ingest stored.
type IngestResult struct {
	rag.UpsertResult
	// Collection describes the collection afterwards.
	Collection Info
}

// Info describes a collection: its settings and its size.
type Info struct {
	// Name is the collection's name.
	Name string
	// Settings are the collection's settings.
	Settings rag.Settings
	// Stats count its documents and chunks.
	Stats rag.Stats
	// ScopeThreshold is the threshold the scope check applies now:
	// explicit, calibrated or the default.
	ScopeThreshold float64
}

// Options tune a [Library]; zero fields take defaults.
type Options struct {
	// Chunking sets chunk sizes; default the chunker's defaults.
	Chunking chunker.Options
	// Scope gives the default scope threshold shown for uncalibrated
	// collections; it should be the Asker's.
	Scope answer.ScopeOptions
	// Logger receives calibration outcomes; default discards.
	Logger *slog.Logger
	// MaxCollectionsPerKey bounds the collections one caller may create
	// (rag.Limits.MaxCollectionsPerKey); 0 means unlimited. Callers
	// without a name (direct gRPC, open gateway) are not counted.
	MaxCollectionsPerKey int
}

// Library manages collections over a [Store]. Close it to stop its
// background calibration.
type Library struct {
	store Store
	opts  Options
	log   *slog.Logger

	// settingsMu serialises read-modify-write of settings, so that a
	// calibration finishing does not undo a concurrent settings change,
	// and collection creation, so that the per-key quota is counted
	// against a stable list.
	settingsMu sync.Mutex

	// Calibration bookkeeping: wanted counts ingests per collection, done
	// the ingest count the latest finished calibration covered. changed
	// is closed (and replaced) whenever done moves, to wake waiters.
	mu      sync.Mutex
	wanted  map[string]uint64
	done    map[string]uint64
	changed chan struct{}
	kick    chan struct{}
	stop    context.CancelFunc
	stopped chan struct{}
}

// New returns a Library over store and starts its calibration worker.
// Collections whose calibration does not cover their current content are
// queued for recalibration at once.
func New(store Store, opts Options) *Library {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &Library{
		store:   store,
		opts:    opts,
		log:     log,
		wanted:  map[string]uint64{},
		done:    map[string]uint64{},
		changed: make(chan struct{}),
		kick:    make(chan struct{}, 1),
		stop:    cancel,
		stopped: make(chan struct{}),
	}
	for _, name := range store.Collections() {
		s, err1 := store.Settings(name)
		st, err2 := store.Stats(name)
		if err1 == nil && err2 == nil && st.Chunks > 0 && s.CalibratedChunks != st.Chunks {
			l.wanted[name] = 1
		}
	}
	go l.worker(ctx)
	if len(l.wanted) > 0 {
		l.kick <- struct{}{}
	}
	return l
}

// Close stops background calibration, abandoning one in progress (it is
// redone when the library next opens).
func (l *Library) Close() {
	l.stop()
	<-l.stopped
}

// Create creates a collection with the given settings, or updates the
// description, out-of-scope answer and explicit scope threshold of an
// existing one (there is no separate update call, and collections are
// also created implicitly by the first ingest, with default settings).
// Calibration results and the embedding model are kept.
//
// s.CreatedBy names the caller; a new collection counts against its
// per-key quota.
func (l *Library) Create(ctx context.Context, name string, s rag.Settings) (Info, error) {
	l.settingsMu.Lock()
	cur, err := l.store.Settings(name)
	switch {
	case errors.Is(err, rag.ErrNotFound):
		if err := l.checkKeyQuota(name, s.CreatedBy); err != nil {
			l.settingsMu.Unlock()
			return Info{}, err
		}
		cur = rag.Settings{CreatedBy: s.CreatedBy}
	case err != nil:
		l.settingsMu.Unlock()
		return Info{}, err
	}
	cur.Description = s.Description
	cur.OutOfScopeAnswer = s.OutOfScopeAnswer
	cur.ScopeThreshold = s.ScopeThreshold
	err = l.store.PutSettings(name, cur)
	l.settingsMu.Unlock()
	if err != nil {
		return Info{}, fmt.Errorf("saving collection %q: %w", name, err)
	}
	return l.Info(name)
}

// createFor creates the collection for a named caller when it does not
// exist yet, within the caller's quota; the store would otherwise create
// it on first write, without a creator.
func (l *Library) createFor(name, by string) error {
	if by == "" {
		return nil
	}
	l.settingsMu.Lock()
	defer l.settingsMu.Unlock()
	if _, err := l.store.Settings(name); !errors.Is(err, rag.ErrNotFound) {
		return nil // exists (or fails again at the write)
	}
	if err := l.checkKeyQuota(name, by); err != nil {
		return err
	}
	if err := l.store.PutSettings(name, rag.Settings{CreatedBy: by}); err != nil {
		return fmt.Errorf("creating collection %q: %w", name, err)
	}
	return nil
}

// checkKeyQuota refuses a new collection by a caller who created
// MaxCollectionsPerKey already. The caller holds settingsMu.
func (l *Library) checkKeyQuota(name, by string) error {
	max := l.opts.MaxCollectionsPerKey
	if by == "" || max <= 0 {
		return nil
	}
	n := 0
	for _, c := range l.store.Collections() {
		if s, err := l.store.Settings(c); err == nil && s.CreatedBy == by {
			n++
		}
	}
	if n+1 > max {
		return &rag.QuotaError{Limit: "collections per key", Max: max, Want: n + 1, Collection: name}
	}
	return nil
}

// Delete deletes a collection with its documents and settings, and
// returns what it was. Errors wrap rag.ErrNotFound for an unknown one.
func (l *Library) Delete(ctx context.Context, name string) (Info, error) {
	// Under settingsMu: a calibration finishing now must not write the
	// settings back and so recreate the collection.
	l.settingsMu.Lock()
	defer l.settingsMu.Unlock()
	info, err := l.Info(name)
	if err != nil {
		return Info{}, err
	}
	if err := l.store.DeleteCollection(ctx, name); err != nil {
		return Info{}, err
	}
	l.mu.Lock()
	delete(l.wanted, name)
	delete(l.done, name)
	close(l.changed) // waiters for the deleted collection return
	l.changed = make(chan struct{})
	l.mu.Unlock()
	return info, nil
}

// Info describes a collection. Errors wrap rag.ErrNotFound for an
// unknown one.
func (l *Library) Info(name string) (Info, error) {
	s, err := l.store.Settings(name)
	if err != nil {
		return Info{}, err
	}
	st, err := l.store.Stats(name)
	if err != nil {
		return Info{}, err
	}
	return Info{Name: name, Settings: s, Stats: st, ScopeThreshold: l.opts.Scope.Threshold(s)}, nil
}

// List describes every collection, by name. A collection that cannot be
// described (for instance, dropped meanwhile) is left out.
func (l *Library) List() []Info {
	var out []Info
	for _, name := range l.store.Collections() {
		if info, err := l.Info(name); err == nil {
			out = append(out, info)
		}
	}
	return out
}

// Ingest chunks documents and stores them in a collection, creating it
// with default settings if needed; each document replaces every chunk
// stored before under its URL. The documents are stored together, all or
// none. The collection is then queued for recalibration.
func (l *Library) Ingest(ctx context.Context, name string, docs []Document) (IngestResult, error) {
	return l.IngestAs(ctx, name, "", docs)
}

// IngestAs is Ingest by a named caller (an API key's name): each
// document records it (see [Document.IngestedBy]), and a collection it
// creates counts against its per-key quota.
func (l *Library) IngestAs(ctx context.Context, name, by string, docs []Document) (IngestResult, error) {
	vdocs := make([]rag.Document, 0, len(docs))
	for i, d := range docs {
		if by != "" {
			d.IngestedBy = by
		}
		vd, err := l.prepare(d)
		if err != nil {
			return IngestResult{}, &DocumentError{Index: i, Reason: err.Error()}
		}
		vdocs = append(vdocs, vd)
	}
	// Only once every document is valid: a refused batch must not leave
	// an empty collection counting against the caller's quota.
	if err := l.createFor(name, by); err != nil {
		return IngestResult{}, err
	}
	res, err := l.store.Upsert(ctx, name, vdocs...)
	if err != nil {
		return IngestResult{}, fmt.Errorf("storing %d documents in %q: %w", len(vdocs), name, err)
	}
	l.queue(name)
	for _, u := range res.Replaced {
		// The audit trail of replacements (issue 29: a leaked write key
		// replacing a runbook must be traceable).
		by := ""
		for _, d := range vdocs {
			if d.URL == u {
				by = d.Metadata[IngestedByKey]
			}
		}
		l.log.InfoContext(ctx, "document replaced", "collection", name, "url", u, "by", by)
	}
	info, err := l.Info(name)
	if err != nil {
		return IngestResult{}, err
	}
	return IngestResult{UpsertResult: res, Collection: info}, nil
}

// prepare chunks one document.
func (l *Library) prepare(d Document) (rag.Document, error) {
	if strings.TrimSpace(d.URL) == "" {
		return rag.Document{}, errors.New("the url is empty")
	}
	// Store and compare the canonical form (punycode host, percent-encoded
	// path), so an IRI and its encoded form are one document. Addresses
	// weburl cannot read are kept as given: the API admits only http(s)
	// ones, and tools may key documents otherwise.
	if c, err := weburl.Canonical(d.URL); err == nil {
		d.URL = c
	}
	chunks, err := chunker.Split(d.Format, d.Content, l.opts.Chunking)
	if err != nil {
		return rag.Document{}, fmt.Errorf("reading its %v: %w", d.Format, err)
	}
	title := strings.TrimSpace(d.Title)
	if title == "" {
		title = chunker.Title(d.Format, d.Content)
	}
	first := ""
	if len(chunks) > 0 {
		first = chunks[0].Text
	}
	// Plain text and untitled pages take their first line, else their
	// file name: a source is never shown without a title.
	title = rag.DocumentTitle(title, first, d.URL)
	meta := d.Metadata
	if _, sent := meta[IngestedByKey]; sent || d.IngestedBy != "" {
		// A caller may not write this key itself: it is the audit's.
		meta = maps.Clone(meta)
		if meta == nil {
			meta = map[string]string{}
		}
		delete(meta, IngestedByKey)
		if d.IngestedBy != "" {
			meta[IngestedByKey] = d.IngestedBy
		}
	}
	return rag.Document{URL: d.URL, Title: title, Metadata: meta, Chunks: chunks}, nil
}

// queue marks a collection stale and wakes the worker.
func (l *Library) queue(name string) {
	l.mu.Lock()
	l.wanted[name]++
	l.mu.Unlock()
	select {
	case l.kick <- struct{}{}:
	default: // a wake-up is already pending; the worker will see name
	}
}

// WaitCalibrated blocks until every ingest into the collection that
// returned before the call is covered by a finished calibration, or ctx
// ends. Tests and tools use it; serving never needs to wait.
func (l *Library) WaitCalibrated(ctx context.Context, name string) error {
	l.mu.Lock()
	target := l.wanted[name]
	for l.done[name] < target {
		ch := l.changed
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		l.mu.Lock()
	}
	l.mu.Unlock()
	return nil
}

// worker calibrates stale collections until ctx ends.
func (l *Library) worker(ctx context.Context) {
	defer close(l.stopped)
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.kick:
		}
		for {
			name, gen, ok := l.nextStale()
			if !ok {
				break
			}
			if err := l.calibrate(ctx, name); err != nil {
				if ctx.Err() != nil {
					return
				}
				// Keep the old threshold: a failed calibration leaves a
				// usable, merely older, one. Count it as done so waiters
				// and the loop move on; the next ingest retries.
				l.log.Warn("scope calibration failed", "collection", name, "error", err)
			}
			l.mu.Lock()
			l.done[name] = gen
			close(l.changed)
			l.changed = make(chan struct{})
			l.mu.Unlock()
		}
	}
}

// nextStale returns a collection whose content changed since its last
// calibration, with the ingest count a calibration started now covers.
func (l *Library) nextStale() (string, uint64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for name, gen := range l.wanted {
		if l.done[name] < gen {
			return name, gen, true
		}
	}
	return "", 0, false
}

// calibrate learns and saves one collection's scope threshold.
func (l *Library) calibrate(ctx context.Context, name string) error {
	start := time.Now()
	st, err := l.store.Stats(name)
	if err != nil {
		return err
	}
	cal, err := answer.Calibrate(ctx, l.store, name)
	if err != nil {
		return err
	}
	l.settingsMu.Lock()
	defer l.settingsMu.Unlock()
	s, err := l.store.Settings(name)
	if err != nil {
		return err
	}
	s.CalibratedThreshold = cal.Threshold
	s.CalibratedChunks = st.Chunks
	if err := l.store.PutSettings(name, s); err != nil {
		return fmt.Errorf("saving the calibrated threshold of %q: %w", name, err)
	}
	l.log.Info("scope calibrated", "collection", name, "chunks", st.Chunks, "questions", cal.Questions,
		"p10", cal.P10, "median", cal.Median, "threshold", cal.Threshold, "took", time.Since(start))
	return nil
}
