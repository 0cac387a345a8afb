// Package vectorindex is the rag service's embedded document store: one or
// many collections, each persisted in its own append-only file under a
// directory and held in memory as a BM25 inverted index plus an int8
// vector matrix, searched lexically, densely, or both fused with
// reciprocal rank fusion. It needs no server and no network; it is the
// default backend when no Qdrant is configured. It speaks package rag's
// vocabulary (documents, queries, hits, settings, errors).
//
// Similarity follows package rag: every hit's [rag.Hit.Score] is the
// embedding cosine clamped to [0,1], whatever the ranking mode. The
// ranking itself comes from the mode (BM25 order, dense order or the
// fused order), so in hybrid and BM25 mode scores need not decrease down
// the list.
package vectorindex

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/groundcrew/groundcrew/services/rag/internal/embedder"
	"github.com/groundcrew/groundcrew/services/rag/internal/rag"
)

// Options tune a [Store].
type Options struct {
	// NoSync skips fsync after writes: faster, but a machine crash may
	// lose the latest writes. Tests and benchmarks only.
	NoSync bool
	// Limits bound the collections, the documents per collection and the
	// chunks held in memory over all collections; writes past them fail
	// with rag.ErrQuota. Zero fields mean unlimited.
	Limits rag.Limits
}

// Store holds the collections of one directory. It is safe for
// concurrent use; searches run in parallel, writes to one collection are
// serialised.
type Store struct {
	dir  string
	emb  rag.Embedder
	opts Options

	mu     sync.RWMutex
	cols   map[string]*handle
	closed bool

	// quotaMu guards chunks, the live chunks of every collection, which
	// Options.Limits.MaxChunks bounds. It is taken after a handle's lock,
	// never before.
	quotaMu sync.Mutex
	chunks  int
}

// handle is a collection with its lock and its log file.
type handle struct {
	mu   sync.RWMutex
	col  *collection
	path string
	f    *os.File
	size int64
	err  error // set when the collection cannot be used with this store
}

// errIncomplete marks a collection file without a complete first record.
var errIncomplete = errors.New("incomplete collection file")

const logExt = ".rag"

// Open loads every collection stored in dir, creating dir if needed.
// Collections embedded with another model than emb still load (so they can
// be listed and dropped) but refuse searches and writes with
// [ErrEmbedderMismatch].
func Open(dir string, emb rag.Embedder, opts Options) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating store directory: %w", err)
	}
	s := &Store{dir: dir, emb: emb, opts: opts, cols: map[string]*handle{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading store directory: %w", err)
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), logExt)
		if !ok || e.IsDir() || !rag.ValidName(name) {
			continue
		}
		h, err := s.load(name)
		if errors.Is(err, errIncomplete) {
			// The process died while creating the collection, before
			// its settings were durable: it never existed.
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				s.Close()
				return nil, fmt.Errorf("removing incomplete collection %q: %w", name, err)
			}
			continue
		}
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("loading collection %q: %w", name, err)
		}
		s.cols[name] = h
		s.chunks += h.col.live
	}
	return s, nil
}

func (s *Store) load(name string) (*handle, error) {
	path := filepath.Join(s.dir, name+logExt)
	var c *collection
	end, err := replay(path, func(p []byte) error {
		d := &decoder{buf: p[1:]}
		switch p[0] {
		case opSettings:
			r, err := decodeSettings(d)
			if err != nil {
				return err
			}
			if c == nil {
				c = newCollection(name, r.Settings, r.Dimensions)
			}
			c.settings = r.Settings
		case opUpsert:
			if c == nil {
				return errors.New("document before settings")
			}
			r, err := decodeUpsert(d)
			if err != nil {
				return err
			}
			for _, ch := range r.chunks {
				if len(ch.vec) != c.dims {
					return fmt.Errorf("vector of %d dimensions in a %d-dimension collection", len(ch.vec), c.dims)
				}
			}
			c.remove(r.url)
			c.add(r, int64(len(p)+8))
		case opDelete:
			if c == nil {
				return errors.New("delete before settings")
			}
			c.remove(d.string())
		default:
			return fmt.Errorf("unknown record type %d", p[0])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, errIncomplete
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	// Cut a torn tail left by a crash, so new frames follow good ones.
	if err := f.Truncate(end); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(end, 0); err != nil {
		f.Close()
		return nil, err
	}
	h := &handle{col: c, path: path, f: f, size: end}
	h.err = s.compatible(c)
	return h, nil
}

func (s *Store) compatible(c *collection) error {
	if c.settings.EmbeddingModel != s.emb.Name() || c.dims != s.emb.Dimensions() {
		return fmt.Errorf("%w: collection %q uses %q (%d dimensions), the store embeds with %q (%d)",
			rag.ErrEmbedderMismatch, c.name, c.settings.EmbeddingModel, c.dims, s.emb.Name(), s.emb.Dimensions())
	}
	return nil
}

// Close releases the store's files. Further calls fail with [ErrClosed].
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for _, h := range s.cols {
		h.mu.Lock()
		if h.f != nil {
			errs = append(errs, h.f.Close())
			h.f = nil
		}
		h.mu.Unlock()
	}
	return errors.Join(errs...)
}

// Collections returns the names of all collections, sorted.
func (s *Store) Collections() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Sorted(maps.Keys(s.cols))
}

func (s *Store) get(name string) (*handle, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, rag.ErrClosed
	}
	h, ok := s.cols[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", rag.ErrNotFound, name)
	}
	return h, nil
}

// getOrCreate returns the named collection, creating it with settings
// when it does not exist.
func (s *Store) getOrCreate(name string, settings rag.Settings) (*handle, bool, error) {
	if !rag.ValidName(name) {
		return nil, false, fmt.Errorf("%w: %q", rag.ErrInvalidName, name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false, rag.ErrClosed
	}
	if h, ok := s.cols[name]; ok {
		return h, false, nil
	}
	if err := s.opts.Limits.CheckCollections(name, len(s.cols)); err != nil {
		return nil, false, err
	}
	settings.EmbeddingModel = s.emb.Name()
	settings.Created = time.Now().UTC().Truncate(time.Millisecond)
	path := filepath.Join(s.dir, name+logExt)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("creating collection %q: %w", name, err)
	}
	h := &handle{col: newCollection(name, settings, s.emb.Dimensions()), path: path, f: f}
	payload, err := encodeSettings(settingsRecord{Settings: settings, Dimensions: s.emb.Dimensions()})
	if err == nil {
		err = h.write(s.opts, []byte(logMagic), payload)
	}
	if err == nil && !s.opts.NoSync {
		err = syncDir(s.dir)
	}
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, false, fmt.Errorf("creating collection %q: %w", name, err)
	}
	s.cols[name] = h
	return h, true, nil
}

// write appends raw bytes (the magic) and frames, then syncs.
func (h *handle) write(opts Options, magic []byte, payloads ...[]byte) error {
	if h.f == nil {
		return rag.ErrClosed
	}
	buf := slices.Clone(magic)
	for _, p := range payloads {
		var b bytesWriter
		if _, err := appendFrame(&b, p); err != nil {
			return err
		}
		buf = append(buf, b...)
	}
	if _, err := h.f.Write(buf); err != nil {
		// Leave the file as it was: a partial frame would be cut on the
		// next open, but later appends would follow it.
		_ = h.f.Truncate(h.size)
		_, _ = h.f.Seek(h.size, 0)
		return err
	}
	h.size += int64(len(buf))
	if !opts.NoSync {
		return h.f.Sync()
	}
	return nil
}

type bytesWriter []byte

// Write appends p; it never fails.
func (b *bytesWriter) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }

// PutSettings creates the collection with the given settings or updates
// the settings of an existing one. EmbeddingModel and Created are the
// store's to set and are ignored.
func (s *Store) PutSettings(name string, settings rag.Settings) error {
	h, created, err := s.getOrCreate(name, settings)
	if err != nil || created {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	settings.EmbeddingModel = h.col.settings.EmbeddingModel
	settings.Created = h.col.settings.Created
	settings.CreatedBy = h.col.settings.CreatedBy
	payload, err := encodeSettings(settingsRecord{Settings: settings, Dimensions: h.col.dims})
	if err != nil {
		return err
	}
	if err := h.write(s.opts, nil, payload); err != nil {
		return fmt.Errorf("saving settings of %q: %w", name, err)
	}
	h.col.settings = settings
	return nil
}

// Settings returns a collection's settings.
func (s *Store) Settings(name string) (rag.Settings, error) {
	h, err := s.get(name)
	if err != nil {
		return rag.Settings{}, err
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.col.settings, nil
}

// Stats returns a collection's size.
func (s *Store) Stats(name string) (rag.Stats, error) {
	h, err := s.get(name)
	if err != nil {
		return rag.Stats{}, err
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return rag.Stats{Documents: len(h.col.docs), Chunks: h.col.live, LogBytes: h.size}, nil
}

// Drop deletes a collection and its file.
func (s *Store) Drop(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return rag.ErrClosed
	}
	h, ok := s.cols[name]
	if !ok {
		return fmt.Errorf("%w: %q", rag.ErrNotFound, name)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.f != nil {
		h.f.Close()
		h.f = nil
	}
	delete(s.cols, name)
	s.quotaMu.Lock()
	s.chunks -= h.col.live
	s.quotaMu.Unlock()
	if err := os.Remove(h.path); err != nil {
		return fmt.Errorf("dropping collection %q: %w", name, err)
	}
	return nil
}

// Upsert stores documents in a collection, creating the collection with
// default settings if needed. Each document replaces every chunk
// previously stored under its URL; a document without chunks just removes
// them. Documents are written together: all of them or none.
func (s *Store) Upsert(ctx context.Context, name string, docs ...rag.Document) (rag.UpsertResult, error) {
	texts := []string{}
	for _, d := range docs {
		if strings.TrimSpace(d.URL) == "" {
			return rag.UpsertResult{}, fmt.Errorf("%w: document without URL", rag.ErrInvalidArgument)
		}
		for _, c := range d.Chunks {
			texts = append(texts, rag.IndexText(c.HeadingPath, c.Text))
		}
	}
	h, _, err := s.getOrCreate(name, rag.Settings{})
	if err != nil {
		return rag.UpsertResult{}, err
	}
	if h.err != nil {
		return rag.UpsertResult{}, h.err
	}
	// Refuse what cannot fit before paying for embeddings; the check is
	// repeated, and the chunks counted, under the write lock below.
	h.mu.RLock()
	_, err = s.checkQuota(name, h.col, changesOf(docs), false)
	h.mu.RUnlock()
	if err != nil {
		return rag.UpsertResult{}, err
	}
	// Embed before locking: a remote embedder may take a while, and
	// searches should not wait for it.
	vecs, err := rag.EmbedChunks(ctx, s.emb, texts)
	if err != nil {
		return rag.UpsertResult{}, err
	}
	records := make([]*upsertRecord, len(docs))
	payloads := make([][]byte, len(docs))
	k := 0
	for i, d := range docs {
		r := &upsertRecord{url: d.URL, title: d.Title, meta: maps.Clone(d.Metadata)}
		for _, c := range d.Chunks {
			if len(vecs[k]) != h.col.dims {
				return rag.UpsertResult{}, fmt.Errorf("embedder returned a %d-dimension vector, want %d", len(vecs[k]), h.col.dims)
			}
			q, scale := quantize(vecs[k])
			k++
			r.chunks = append(r.chunks, storedChunk{index: c.Index, headings: slices.Clone(c.HeadingPath), text: c.Text, scale: scale, vec: q})
		}
		records[i] = r
		if len(r.chunks) == 0 {
			payloads[i] = encodeDelete(r.url)
		} else {
			payloads[i] = encodeUpsert(r)
		}
	}

	h.mu.Lock()
	defer h.mu.Unlock()
	release, err := s.checkQuota(name, h.col, changesOf(docs), true)
	if err != nil {
		return rag.UpsertResult{}, err
	}
	if err := h.write(s.opts, nil, payloads...); err != nil {
		release()
		return rag.UpsertResult{}, fmt.Errorf("writing to collection %q: %w", name, err)
	}
	res := rag.UpsertResult{Documents: len(records)}
	for i, r := range records {
		if d, ok := h.col.docs[r.url]; ok {
			res.ReplacedChunks += len(d.rows)
			res.Replaced = append(res.Replaced, r.url)
		}
		h.col.remove(r.url)
		h.col.add(r, int64(len(payloads[i])+8))
		res.Chunks += len(r.chunks)
	}
	return res, s.maybeRewrite(h)
}

// change is what an upsert does to one URL: it will hold n chunks.
type change struct {
	url string
	n   int
}

// changesOf lists what docs do to their URLs.
func changesOf(docs []rag.Document) []change {
	out := make([]change, len(docs))
	for i, d := range docs {
		out[i] = change{d.URL, len(d.Chunks)}
	}
	return out
}

// plan returns the documents c will hold after changes, and by how many
// chunks its live count moves. Changes apply in order, so of a URL given
// twice the later one wins.
func plan(c *collection, changes []change) (docs, delta int) {
	cur := map[string]int{}
	docs = len(c.docs)
	for _, ch := range changes {
		n, seen := cur[ch.url]
		if !seen {
			if d, ok := c.docs[ch.url]; ok {
				n = len(d.rows)
			}
		}
		switch {
		case n > 0 && ch.n == 0:
			docs--
		case n == 0 && ch.n > 0:
			docs++
		}
		delta += ch.n - n
		cur[ch.url] = ch.n
	}
	return docs, delta
}

// checkQuota refuses changes to c that would take the documents or the
// chunks in memory past the limits. Writes that do not grow what is
// over a limit (replacing, deleting) pass. The caller holds c's handle
// lock; with reserve set the chunks are counted until release is called.
func (s *Store) checkQuota(name string, c *collection, changes []change, reserve bool) (release func(), err error) {
	docs, delta := plan(c, changes)
	if err := s.opts.Limits.CheckDocuments(name, docs); err != nil && docs > len(c.docs) {
		return nil, err
	}
	s.quotaMu.Lock()
	defer s.quotaMu.Unlock()
	if err := s.opts.Limits.CheckChunks(name, s.chunks+delta); err != nil && delta > 0 {
		return nil, err
	}
	if !reserve {
		return func() {}, nil
	}
	s.chunks += delta
	return func() {
		s.quotaMu.Lock()
		s.chunks -= delta
		s.quotaMu.Unlock()
	}, nil
}

// ChunksInMemory returns the live chunks of every collection, which
// Options.Limits.MaxChunks bounds.
func (s *Store) ChunksInMemory() int {
	s.quotaMu.Lock()
	defer s.quotaMu.Unlock()
	return s.chunks
}

// Delete removes every chunk of a document. Deleting an unknown URL is
// not an error.
func (s *Store) Delete(ctx context.Context, name, url string) error {
	h, err := s.get(name)
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.col.docs[url]; !ok {
		return nil
	}
	if err := h.write(s.opts, nil, encodeDelete(url)); err != nil {
		return fmt.Errorf("writing to collection %q: %w", name, err)
	}
	live := h.col.live
	h.col.remove(url)
	s.quotaMu.Lock()
	s.chunks -= live - h.col.live
	s.quotaMu.Unlock()
	return s.maybeRewrite(h)
}

// rewriteMinBytes keeps small logs from being rewritten over and over.
const rewriteMinBytes = 4 << 20

// maybeRewrite replaces the log with a compact copy of the live state once
// superseded records are more than half of it. The copy is written to a
// temporary file, synced and renamed over the log, so a crash leaves
// either the old or the new file, both complete.
func (s *Store) maybeRewrite(h *handle) error {
	live := h.col.liveBytes()
	if h.size < rewriteMinBytes || h.size < 2*live {
		return nil
	}
	tmp := h.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("compacting %q: %w", h.col.name, err)
	}
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("compacting %q: %w", h.col.name, err)
	}
	nh := &handle{f: f}
	payload, err := encodeSettings(settingsRecord{Settings: h.col.settings, Dimensions: h.col.dims})
	if err != nil {
		return fail(err)
	}
	payloads := [][]byte{payload}
	urls := slices.SortedFunc(maps.Keys(h.col.docs), cmp.Compare)
	for _, u := range urls {
		d := h.col.docs[u]
		r := &upsertRecord{url: d.url, title: d.title, meta: d.meta}
		for _, id := range d.rows {
			row := &h.col.rows[id]
			r.chunks = append(r.chunks, storedChunk{
				index: int(row.chunkIndex), headings: row.headings, text: row.text,
				scale: h.col.scales[id], vec: h.col.vecs[int(id)*h.col.dims : (int(id)+1)*h.col.dims],
			})
		}
		payloads = append(payloads, encodeUpsert(r))
	}
	if err := nh.write(Options{}, []byte(logMagic), payloads...); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, h.path); err != nil {
		return fail(err)
	}
	if err := syncDir(s.dir); err != nil {
		f.Close()
		return fmt.Errorf("compacting %q: %w", h.col.name, err)
	}
	h.f.Close()
	h.f, h.size = f, nh.size
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Search returns the chunks of a collection that best match q.
func (s *Store) Search(ctx context.Context, name string, q rag.Query) ([]rag.Hit, error) {
	q, err := q.Normalize()
	if err != nil {
		return nil, err
	}
	h, err := s.get(name)
	if err != nil {
		return nil, err
	}
	if h.err != nil {
		return nil, h.err
	}
	vecs, err := s.emb.Embed(ctx, []string{q.Text})
	if err != nil {
		return nil, fmt.Errorf("embedding query: %w", err)
	}
	if len(vecs) != 1 || len(vecs[0]) != h.col.dims {
		return nil, fmt.Errorf("embedder returned no usable query vector")
	}
	terms := queryTerms(embedder.Analyze(q.Text))
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.col.search(vecs[0], terms, q), nil
}

// Sample returns up to n chunks spread evenly over a collection, in
// storage order; scope calibration draws its pseudo-queries from them.
func (s *Store) Sample(ctx context.Context, name string, n int) ([]rag.Hit, error) {
	h, err := s.get(name)
	if err != nil {
		return nil, err
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	c := h.col
	if n <= 0 || c.live == 0 {
		return nil, nil
	}
	step := max(1, float64(c.live)/float64(n))
	var out []rag.Hit
	seen, next := 0, 0.0
	for id := range c.rows {
		if !c.alive[id] {
			continue
		}
		if float64(seen) >= next && len(out) < n {
			r := &c.rows[id]
			out = append(out, rag.Hit{URL: r.doc.url, Title: r.doc.title, ChunkIndex: int(r.chunkIndex), HeadingPath: slices.Clone(r.headings), Text: r.text, Metadata: maps.Clone(r.doc.meta)})
			next += step
		}
		seen++
	}
	return out, nil
}

// TermStats returns how many chunks of a collection contain each term.
func (s *Store) TermStats(name string, terms []string) (rag.TermStats, error) {
	h, err := s.get(name)
	if err != nil {
		return rag.TermStats{}, err
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := rag.TermStats{Chunks: h.col.live, DF: make(map[string]int, len(terms))}
	for _, t := range terms {
		out.DF[t] = int(h.col.df[t])
	}
	return out, nil
}

// DeleteCollection removes a collection: its documents, chunks and
// settings, and its file. Its chunks stop counting against the store's
// limits at once. Searches already holding the collection finish on what
// they have.
func (s *Store) DeleteCollection(ctx context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return rag.ErrClosed
	}
	h, ok := s.cols[name]
	if !ok {
		return fmt.Errorf("%w: %q", rag.ErrNotFound, name)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.f != nil {
		if err := h.f.Close(); err != nil {
			return fmt.Errorf("closing collection %q: %w", name, err)
		}
		h.f = nil // later writes through a stale handle fail with ErrClosed
	}
	if err := os.Remove(h.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("deleting collection %q: %w", name, err)
	}
	if !s.opts.NoSync {
		if err := syncDir(s.dir); err != nil {
			return fmt.Errorf("deleting collection %q: %w", name, err)
		}
	}
	delete(s.cols, name)
	s.quotaMu.Lock()
	s.chunks -= h.col.live
	s.quotaMu.Unlock()
	return nil
}
