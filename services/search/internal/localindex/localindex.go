// Package localindex is the embedded search engine "local": a persistent
// bleve full-text index of documents someone indexed, scored with BM25.
//
// Documents are keyed by canonical URL, so indexing a URL again replaces the
// earlier version. HTML is reduced to its readable text before indexing,
// and Markdown (recognised by its headings or code fences) to plain text with
// one block per line, each ending a sentence.
// Queries match title and text with the English analyzer (stemming, stop
// words); a title match weighs twice a text match, and the whole query as a
// phrase adds a further boost in either field, so pages that say exactly
// what was asked, in their title especially, rank first. Snippets are the
// passage of the text with the most distinct query terms, at most
// MaxSnippetChars characters, cut at word boundaries.
package localindex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/mapping"
	blevesearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/groundcrew/groundcrew/services/search/internal/indexdoc"
	"github.com/groundcrew/groundcrew/services/search/internal/search"
)

// Field boosts. BM25 already favours matches in short fields such as
// titles; these boosts add intent: the title names what a page is about,
// and a page containing the query as a phrase answers it more exactly than
// one containing its words scattered.
const (
	titleBoost       = 2.0
	textBoost        = 1.0
	titlePhraseBoost = 4.0
	textPhraseBoost  = 2.0
)

// Boosts of compound identifiers' words (indexdoc.SplitIdentifier). The
// parts field holds the words of each identifier a document writes
// (ResourceQuota → resource quota); two words next to each other in the
// query that are next to each other in one of them match it, so "resource
// quota" finds a runbook that writes ResourceQuota, and a document whose
// identifiers merely contain "resource" is not lifted by it. The other
// way round, an identifier in the query matches its words written apart
// as a phrase, so that ResourceQuota does not find every page that says
// "resource". Both weigh half the exact word's match: the runbook that
// writes what was asked still ranks first.
const (
	partsPairBoost        = 0.5
	titleSplitPhraseBoost = 1.0
	textSplitPhraseBoost  = 0.5
)

// Limits on indexed documents.
const (
	// MaxDocumentBytes bounds a document's text plus HTML.
	MaxDocumentBytes = indexdoc.MaxDocumentBytes
	// MaxSnippetChars bounds a local result's snippet, ellipses included.
	// A snippet is the passage that matched, not the document: a caller
	// that cites it shows the words that support the citation, and one
	// that wants the whole runbook fetches it.
	MaxSnippetChars = 300
	// SnippetBytes is the target snippet length, ellipses excluded: with
	// "… " before and " …" after it stays within MaxSnippetChars.
	SnippetBytes = MaxSnippetChars - 4
)

// Document field names in the index.
const (
	fieldURL       = "url"
	fieldTitle     = "title"
	fieldText      = "text"
	fieldParts     = "parts"
	fieldDomains   = "domains"
	fieldDate      = "date"
	fieldPublished = "published"
	fieldMetadata  = "metadata"
)

var _ search.Engine = (*Index)(nil)
var _ search.HealthChecker = (*Index)(nil)
var _ search.DocumentIndexer = (*Index)(nil)

// Options tune an Index; the zero value is usable.
type Options struct {
	// Now is the clock for indexing times and recency filters; nil means
	// time.Now.
	Now func() time.Time
	// BatchSize is the number of documents written per index batch; 0 means
	// 1000. Larger batches index faster (fewer segments to merge) and hold
	// more memory.
	BatchSize int
}

// Index is a persistent local search index. It is safe for concurrent use.
type Index struct {
	idx       bleve.Index
	now       func() time.Time
	batchSize int
	// writeMu serialises Upsert and Delete so that "replaced" counts are
	// exact.
	writeMu sync.Mutex
}

// Open opens the index at dir, creating it (and its parent directories)
// when it does not exist.
//
// An index written before compound identifiers' words were indexed (its
// mapping has no parts field, which bleve cannot add to an existing
// index) is rebuilt from its stored fields on open: see rebuild.
func Open(dir string, opts Options) (*Index, error) {
	if err := recoverRebuild(dir); err != nil {
		return nil, fmt.Errorf("opening local index %s: %w", dir, err)
	}
	var idx bleve.Index
	_, err := os.Stat(filepath.Join(dir, "index_meta.json"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Create a new index, but never inside a directory holding
		// something else.
		if entries, rerr := os.ReadDir(dir); rerr == nil && len(entries) > 0 {
			return nil, fmt.Errorf("opening local index: %s is not empty and holds no bleve index", dir)
		}
		idx, err = bleve.New(dir, newMapping())
	case err == nil:
		idx, err = bleve.Open(dir)
		if err == nil && !hasField(idx, fieldParts) {
			idx, err = rebuild(dir, idx, time.Now().UTC())
		}
	}
	if err != nil {
		return nil, fmt.Errorf("opening local index %s: %w", dir, err)
	}
	if err := restrict(dir); err != nil {
		_ = idx.Close()
		return nil, fmt.Errorf("opening local index %s: %w", dir, err)
	}
	ix := &Index{idx: idx, now: opts.Now, batchSize: opts.BatchSize}
	if ix.now == nil {
		ix.now = time.Now
	}
	if ix.batchSize <= 0 {
		ix.batchSize = 1000
	}
	return ix, nil
}

// hasField reports whether idx's mapping indexes field.
func hasField(idx bleve.Index, field string) bool {
	m, ok := idx.Mapping().(*mapping.IndexMappingImpl)
	return ok && m.DefaultMapping != nil && m.DefaultMapping.Properties[field] != nil
}

// Sibling directories of an index being rebuilt: the new index is written
// beside the old, which is moved aside only once the new one is complete.
// The names are the rebuild's own, so that a backup a person keeps beside
// the index ("search-index.old") is never taken for a leftover.
const (
	rebuildSuffix = ".rebuild-new"
	oldSuffix     = ".rebuild-old"
)

// rebuild writes old's documents into a new index with the current
// mapping, from their stored fields (url, title, text, publication date,
// metadata with provenance): the domains are derived from the URL and the
// collection in the metadata, the recency date from the publication date
// or the indexing time, as Prepare set them. The new index replaces the
// old in dir; old is closed. Stopped half-way, the old index is still in
// dir (or moved back by recoverRebuild) and the next Open starts again.
func rebuild(dir string, old bleve.Index, now time.Time) (bleve.Index, error) {
	closeOld := func(err error) (bleve.Index, error) {
		_ = old.Close()
		return nil, fmt.Errorf("rebuilding with compound words: %w", err)
	}
	tmp := dir + rebuildSuffix
	if err := removeIndexDir(tmp); err != nil {
		return closeOld(err)
	}
	next, err := bleve.New(tmp, newMapping())
	if err != nil {
		return closeOld(err)
	}
	if err := copyDocuments(old, next, now); err != nil {
		_ = next.Close()
		_ = os.RemoveAll(tmp)
		return closeOld(err)
	}
	if err := errors.Join(next.Close(), old.Close()); err != nil {
		return nil, fmt.Errorf("rebuilding with compound words: %w", err)
	}
	if err := os.Rename(dir, dir+oldSuffix); err != nil {
		return nil, fmt.Errorf("rebuilding with compound words: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("rebuilding with compound words: %w", err)
	}
	if err := removeIndexDir(dir + oldSuffix); err != nil {
		return nil, fmt.Errorf("rebuilding with compound words: %w", err)
	}
	return bleve.Open(dir)
}

// rebuildPage is how many documents rebuild reads and writes at a time.
const rebuildPage = 500

// copyDocuments writes every document of from into to (see rebuild).
func copyDocuments(from, to bleve.Index, now time.Time) error {
	var after []string
	for {
		req := bleve.NewSearchRequestOptions(bleve.NewMatchAllQuery(), rebuildPage, 0, false)
		req.Score = "none"
		req.SortBy([]string{"_id"})
		if after != nil {
			req.SetSearchAfter(after)
		}
		req.Fields = []string{fieldURL, fieldTitle, fieldText, fieldPublished, fieldMetadata}
		res, err := from.Search(req)
		if err != nil {
			return fmt.Errorf("reading documents: %w", err)
		}
		if len(res.Hits) == 0 {
			return nil
		}
		batch := to.NewBatch()
		for _, h := range res.Hits {
			if err := batch.Index(h.ID, storedFields(h.Fields, now)); err != nil {
				return fmt.Errorf("indexing %s: %w", h.ID, err)
			}
		}
		if err := to.Batch(batch); err != nil {
			return fmt.Errorf("writing documents: %w", err)
		}
		after = []string{res.Hits[len(res.Hits)-1].ID}
	}
}

// storedFields returns the index fields of a document from its stored
// fields, as indexFields wrote them; a document indexed before its
// indexing time was kept, with no publication date, is dated now, as a
// new one would be.
func storedFields(stored map[string]any, now time.Time) map[string]any {
	url, _ := stored[fieldURL].(string)
	title, _ := stored[fieldTitle].(string)
	text, _ := stored[fieldText].(string)
	metaJSON, _ := stored[fieldMetadata].(string)
	var meta map[string]string
	_ = json.Unmarshal([]byte(metaJSON), &meta)
	fields := map[string]any{
		fieldURL:      url,
		fieldTitle:    title,
		fieldText:     text,
		fieldDomains:  indexdoc.DomainTerms(url, meta[search.MetaCollection]),
		fieldMetadata: metaJSON,
	}
	date, _ := time.Parse(time.RFC3339Nano, meta[metaIndexedAt])
	if p, ok := stored[fieldPublished].(string); ok {
		fields[fieldPublished] = p
		if t, err := time.Parse(time.RFC3339Nano, p); err == nil {
			date = t
		}
	}
	if date.IsZero() {
		date = now
	}
	fields[fieldDate] = date
	if parts := compoundFields(title, text); parts != nil {
		fields[fieldParts] = parts
	}
	return fields
}

// compoundFields are the values of the parts field: each compound
// identifier's words, one value each, so that a phrase never spans two
// identifiers; nil without any.
func compoundFields(title, text string) []string {
	words := indexdoc.CompoundWords(title, text)
	if words == "" {
		return nil
	}
	return strings.Split(words, "\n")
}

// recoverRebuild puts back an index that a rebuild stopped between moving
// it aside and moving the new one in, and removes a new one left
// unfinished.
func recoverRebuild(dir string) error {
	old := dir + oldSuffix
	if _, err := os.Stat(filepath.Join(old, "index_meta.json")); err == nil {
		if _, err := os.Stat(filepath.Join(dir, "index_meta.json")); errors.Is(err, fs.ErrNotExist) {
			if err := os.RemoveAll(dir); err != nil {
				return err
			}
			if err := os.Rename(old, dir); err != nil {
				return err
			}
		}
	}
	if err := removeIndexDir(old); err != nil {
		return err
	}
	return removeIndexDir(dir + rebuildSuffix)
}

// removeIndexDir removes path when it is a bleve index or empty (what a
// rebuild leaves), and refuses to remove anything else a person may have
// put there.
func removeIndexDir(path string) error {
	entries, err := os.ReadDir(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(path, "index_meta.json")); err != nil && len(entries) > 0 {
		return fmt.Errorf("%s holds something other than a bleve index; move it away", path)
	}
	return os.RemoveAll(path)
}

// restrict makes the index readable by its owner only: directories 0700,
// files 0600. The index holds the documents' full text, and bleve writes
// some files (index_meta.json) with the process umask; indexes created by
// earlier versions are tightened on open too. Segment files bleve writes
// later are 0600 already.
func restrict(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o600)
		if d.IsDir() {
			mode = 0o700
		}
		if info, err := d.Info(); err == nil && info.Mode().Perm() == mode {
			return nil
		}
		if err := os.Chmod(path, mode); err != nil {
			return fmt.Errorf("restricting permissions: %w", err)
		}
		return nil
	})
}

func newMapping() mapping.IndexMapping {
	text := func(store bool) *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Analyzer = en.AnalyzerName
		f.Store = store
		f.IncludeTermVectors = true // for match locations (snippets, phrases)
		f.IncludeInAll = false
		f.DocValues = false
		return f
	}
	kw := bleve.NewKeywordFieldMapping()
	kw.Analyzer = keyword.Name
	kw.Store = false
	kw.IncludeInAll = false
	kw.IncludeTermVectors = false
	kw.DocValues = false

	stored := bleve.NewTextFieldMapping()
	stored.Index = false
	stored.Store = true
	stored.IncludeInAll = false
	stored.IncludeTermVectors = false
	stored.DocValues = false

	date := bleve.NewDateTimeFieldMapping()
	date.Store = false
	date.IncludeInAll = false
	date.DocValues = false

	doc := bleve.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt(fieldURL, stored)
	doc.AddFieldMappingsAt(fieldTitle, text(true))
	doc.AddFieldMappingsAt(fieldText, text(true))
	doc.AddFieldMappingsAt(fieldParts, text(false))
	doc.AddFieldMappingsAt(fieldDomains, kw)
	doc.AddFieldMappingsAt(fieldDate, date)
	doc.AddFieldMappingsAt(fieldPublished, stored)
	doc.AddFieldMappingsAt(fieldMetadata, stored)

	m := bleve.NewIndexMapping()
	m.DefaultMapping = doc
	m.DefaultAnalyzer = en.AnalyzerName
	m.ScoringModel = index.BM25Scoring
	m.StoreDynamic = false
	m.IndexDynamic = false
	m.DocValuesDynamic = false
	return m
}

// Name returns "local".
func (ix *Index) Name() string { return search.EngineLocal }

// Close flushes and closes the index.
func (ix *Index) Close() error { return ix.idx.Close() }

// Count returns the number of indexed documents.
func (ix *Index) Count(context.Context) (uint64, error) { return ix.idx.DocCount() }

// Healthy reports whether the index can be read.
func (ix *Index) Healthy(ctx context.Context) error {
	if _, err := ix.idx.DocCount(); err != nil {
		return fmt.Errorf("local index: %w", err)
	}
	return ctx.Err()
}

// Upsert indexes docs, each replacing any document with the same canonical
// URL. Documents that cannot be indexed (bad URL, no text, too large) are
// reported in the result and do not stop the others. An error means the
// index itself failed; documents of earlier batches may have been written.
func (ix *Index) Upsert(ctx context.Context, docs []search.Document) (search.IndexResult, error) {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()

	var res search.IndexResult
	now := ix.now().UTC()
	// seen holds the provenance of each document written by this call, so
	// a URL given twice is a replacement of the first.
	seen := make(map[string]search.Provenance, len(docs))
	for start := 0; start < len(docs); start += ix.batchSize {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		chunk := docs[start:min(start+ix.batchSize, len(docs))]
		type ready struct {
			index int
			doc   indexdoc.Prepared
		}
		var batchDocs []ready
		for i, d := range chunk {
			p, err := indexdoc.Prepare(d, now)
			if err != nil {
				res.Rejected = append(res.Rejected, search.Rejection{Index: start + i, URL: d.URL, Reason: err.Error()})
				continue
			}
			batchDocs = append(batchDocs, ready{start + i, p})
		}
		if len(batchDocs) == 0 {
			continue
		}
		ids := make([]string, 0, len(batchDocs))
		for _, r := range batchDocs {
			if _, ok := seen[r.doc.ID]; !ok {
				ids = append(ids, r.doc.ID)
			}
		}
		existing, err := ix.existing(ctx, ids)
		if err != nil {
			return res, err
		}
		batch := ix.idx.NewBatch()
		written := make(map[string]search.Provenance, len(batchDocs))
		for _, r := range batchDocs {
			prov := search.Provenance{IndexedBy: r.doc.IndexedBy, IndexedAt: now, Revision: 1}
			prev, replaced := seen[r.doc.ID]
			if w, ok := written[r.doc.ID]; ok {
				prev, replaced = w, true
			} else if !replaced {
				prev, replaced = existing[r.doc.ID]
			}
			if replaced {
				prov.Revision = prev.Revision + 1
				prov.PreviousIndexedBy, prov.PreviousIndexedAt = prev.IndexedBy, prev.IndexedAt
				res.Replaced++
				res.Replacements = append(res.Replacements, search.Replacement{Index: r.index, URL: r.doc.ID, Provenance: prov})
			}
			written[r.doc.ID] = prov
			fields, err := indexFields(r.doc, prov)
			if err != nil {
				return res, fmt.Errorf("indexing %s: %w", r.doc.ID, err)
			}
			if err := batch.Index(r.doc.ID, fields); err != nil {
				return res, fmt.Errorf("indexing %s: %w", r.doc.ID, err)
			}
		}
		if err := ix.idx.Batch(batch); err != nil {
			return res, fmt.Errorf("writing index batch: %w", err)
		}
		maps.Copy(seen, written)
		res.Indexed += len(batchDocs)
	}
	return res, nil
}

// Delete removes the documents with the canonical forms of urls and returns
// how many were present.
func (ix *Index) Delete(ctx context.Context, urls []string) (int, error) {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	var ids []string
	for _, u := range urls {
		if id, err := search.CanonicalURL(u); err == nil {
			ids = append(ids, id)
		}
	}
	existing, err := ix.existing(ctx, ids)
	if err != nil {
		return 0, err
	}
	batch := ix.idx.NewBatch()
	for id := range existing {
		batch.Delete(id)
	}
	if err := ix.idx.Batch(batch); err != nil {
		return 0, fmt.Errorf("deleting from local index: %w", err)
	}
	return len(existing), nil
}

// existing returns which of ids are in the index, with their provenance.
func (ix *Index) existing(ctx context.Context, ids []string) (map[string]search.Provenance, error) {
	found := make(map[string]search.Provenance)
	if len(ids) == 0 {
		return found, nil
	}
	req := bleve.NewSearchRequestOptions(bleve.NewDocIDQuery(ids), len(ids), 0, false)
	req.Score = "none"
	req.Fields = []string{fieldMetadata}
	res, err := ix.idx.SearchInContext(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("looking up existing documents: %w", err)
	}
	for _, h := range res.Hits {
		found[h.ID] = readStored(h.Fields[fieldMetadata]).provenance
	}
	return found, nil
}

// Reserved metadata keys holding the provenance in the stored metadata
// field: indexes created before provenance existed have no field of their
// own for it, and their mapping is fixed.
const (
	metaIndexedBy         = indexdoc.ReservedMetaPrefix + "indexed_by"
	metaIndexedAt         = indexdoc.ReservedMetaPrefix + "indexed_at"
	metaRevision          = indexdoc.ReservedMetaPrefix + "revision"
	metaPreviousIndexedBy = indexdoc.ReservedMetaPrefix + "previous_indexed_by"
	metaPreviousIndexedAt = indexdoc.ReservedMetaPrefix + "previous_indexed_at"
)

// indexFields returns the index fields of a prepared document.
func indexFields(p indexdoc.Prepared, prov search.Provenance) (map[string]any, error) {
	fields := map[string]any{
		fieldURL:     p.URL,
		fieldTitle:   p.Title,
		fieldText:    p.Text,
		fieldDomains: p.Domains,
		fieldDate:    p.Date,
	}
	if parts := compoundFields(p.Title, p.Text); parts != nil {
		fields[fieldParts] = parts
	}
	if !p.Published.IsZero() {
		fields[fieldPublished] = p.Published.Format(time.RFC3339Nano)
	}
	// The media type and icon travel in the stored metadata, under the
	// keys a caller would use, so that indexes created before they were
	// results' fields (whose mapping has no field for them) keep them too;
	// so does the provenance, under reserved keys.
	stored := maps.Clone(p.Metadata)
	stored[metaIndexedBy] = prov.IndexedBy
	stored[metaIndexedAt] = prov.IndexedAt.Format(time.RFC3339Nano)
	stored[metaRevision] = strconv.Itoa(prov.Revision)
	if prov.Revision > 1 {
		stored[metaPreviousIndexedBy] = prov.PreviousIndexedBy
		stored[metaPreviousIndexedAt] = prov.PreviousIndexedAt.Format(time.RFC3339Nano)
	}
	b, err := json.Marshal(stored)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	fields[fieldMetadata] = string(b)
	return fields, nil
}

// storedMeta is what results report about a document besides its text.
type storedMeta struct {
	mimeType, faviconURL string
	provenance           search.Provenance
}

// readStored reads the media type, icon and provenance from a stored
// metadata field. Documents indexed before provenance was recorded read as
// revision 1 by nobody known.
func readStored(stored any) storedMeta {
	s, _ := stored.(string)
	var m map[string]string
	if s == "" || json.Unmarshal([]byte(s), &m) != nil {
		return storedMeta{provenance: search.Provenance{Revision: 1}}
	}
	out := storedMeta{mimeType: m[search.MetaMimeType], faviconURL: m[search.MetaFaviconURL]}
	out.provenance.IndexedBy = m[metaIndexedBy]
	out.provenance.IndexedAt, _ = time.Parse(time.RFC3339Nano, m[metaIndexedAt])
	out.provenance.Revision, _ = strconv.Atoi(m[metaRevision])
	out.provenance.Revision = max(out.provenance.Revision, 1)
	out.provenance.PreviousIndexedBy = m[metaPreviousIndexedBy]
	out.provenance.PreviousIndexedAt, _ = time.Parse(time.RFC3339Nano, m[metaPreviousIndexedAt])
	return out
}

// Search runs q against the index. Domain and recency filters are applied
// in the index, so q.MaxResults hits are returned when that many match.
// Recency uses the publication date, or the indexing time for documents
// without one.
func (ix *Index) Search(ctx context.Context, q search.Query) ([]search.Result, error) {
	n := q.MaxResults
	if n <= 0 {
		return nil, nil
	}
	req := bleve.NewSearchRequestOptions(ix.buildQuery(q), n, 0, false)
	req.Fields = []string{fieldURL, fieldTitle, fieldText, fieldPublished, fieldMetadata}
	req.IncludeLocations = true
	res, err := ix.idx.SearchInContext(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("local index search: %w", err)
	}
	out := make([]search.Result, 0, len(res.Hits))
	for _, h := range res.Hits {
		r := resultOf(h.Fields, spansOf(h.Locations[fieldText]), q.IncludeText)
		// BM25 scores are unbounded; s/(1+s) keeps their order in [0,1).
		r.Score = h.Score / (1 + h.Score)
		out = append(out, r)
	}
	return out, nil
}

var _ search.DocumentReader = (*Index)(nil)

// Documents returns the indexed documents among ids (canonical URLs) in
// none of the excluded collections, each with its whole text and its
// beginning as snippet.
func (ix *Index) Documents(ctx context.Context, ids, excludeCollections []string) ([]search.Result, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	b := bleve.NewBooleanQuery()
	b.AddMust(bleve.NewDocIDQuery(ids))
	if len(excludeCollections) > 0 {
		b.AddMustNot(termsQuery(fieldDomains, indexdoc.CollectionTerms(excludeCollections)))
	}
	req := bleve.NewSearchRequestOptions(b, len(ids), 0, false)
	req.Score = "none"
	req.Fields = []string{fieldURL, fieldTitle, fieldText, fieldPublished, fieldMetadata}
	res, err := ix.idx.SearchInContext(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("local index lookup: %w", err)
	}
	out := make([]search.Result, 0, len(res.Hits))
	for _, h := range res.Hits {
		out = append(out, resultOf(h.Fields, nil, true))
	}
	return out, nil
}

// resultOf is a result from a hit's stored fields, as the search and the
// lookup both read them: the passage at spans as snippet (the text's
// beginning when nil), the whole text when withText.
func resultOf(fields map[string]any, spans []span, withText bool) search.Result {
	var r search.Result
	r.URL, _ = fields[fieldURL].(string)
	r.Title, _ = fields[fieldTitle].(string)
	text, _ := fields[fieldText].(string)
	r.Snippet = snippet(text, spans, SnippetBytes)
	if withText {
		r.Text = search.TruncateText(text)
	}
	r.SourceDomain, _ = search.Domain(r.URL)
	if p, ok := fields[fieldPublished].(string); ok {
		r.PublishedAt, _ = time.Parse(time.RFC3339Nano, p)
	}
	meta := readStored(fields[fieldMetadata])
	r.MimeType, r.FaviconURL = meta.mimeType, meta.faviconURL
	prov := meta.provenance
	r.Provenance = &prov
	return r
}

func (ix *Index) buildQuery(q search.Query) query.Query {
	match := func(field string, boost float64) query.Query {
		m := bleve.NewMatchQuery(q.Text)
		m.SetField(field)
		m.SetBoost(boost)
		return m
	}
	phrase := func(field string, boost float64) query.Query { return matchPhrase(q.Text, field, boost) }
	relevance := bleve.NewDisjunctionQuery(match(fieldTitle, titleBoost), match(fieldText, textBoost))
	if len(strings.Fields(q.Text)) > 1 {
		relevance.AddQuery(phrase(fieldTitle, titlePhraseBoost), phrase(fieldText, textPhraseBoost))
	}
	if c := ix.compoundQuery(q.Text); len(c.Disjuncts) > 0 {
		relevance.AddQuery(c)
	}

	b := bleve.NewBooleanQuery()
	b.AddMust(relevance)
	var filters []query.Query
	if len(q.AllowedDomains) > 0 {
		filters = append(filters, termsQuery(fieldDomains, q.AllowedDomains))
	}
	if q.MaxAge > 0 {
		dr := bleve.NewDateRangeQuery(ix.now().Add(-q.MaxAge).UTC(), time.Time{})
		dr.SetField(fieldDate)
		filters = append(filters, dr)
	}
	switch len(filters) {
	case 0:
	case 1:
		b.AddFilter(filters[0])
	default:
		b.AddFilter(bleve.NewConjunctionQuery(filters...))
	}
	if len(q.BlockedDomains) > 0 {
		b.AddMustNot(termsQuery(fieldDomains, q.BlockedDomains))
	}
	if len(q.ExcludeCollections) > 0 {
		b.AddMustNot(termsQuery(fieldDomains, indexdoc.CollectionTerms(q.ExcludeCollections)))
	}
	return b
}

// compoundQuery matches compound identifiers and their words both ways
// (see partsPairBoost): each pair of adjacent words of the query, its
// identifiers split, against the words of the documents' identifiers, and
// each identifier of the query as a phrase of its words in title and
// text. It is one clause of the relevance disjunction, so that adding it
// changes the other clauses' weights alike for every document.
func (ix *Index) compoundQuery(text string) *query.DisjunctionQuery {
	d := bleve.NewDisjunctionQuery()
	// The pairs are of the analyzed words (stemmed, stop words out), as
	// the parts field holds them; a pair is two words in a row with no
	// stop word between them.
	var prev *analysis.Token
	seen := map[string]bool{}
	for _, tok := range ix.idx.Mapping().AnalyzerNamed(en.AnalyzerName).Analyze([]byte(indexdoc.SplitQuery(text))) {
		if prev != nil && tok.Position == prev.Position+1 && len(seen) < indexdoc.MaxQueryPairs {
			pair := []string{string(prev.Term), string(tok.Term)}
			if key := pair[0] + " " + pair[1]; !seen[key] {
				seen[key] = true
				p := bleve.NewPhraseQuery(pair, fieldParts)
				p.SetBoost(partsPairBoost)
				d.AddQuery(p)
			}
		}
		prev = tok
	}
	for _, words := range indexdoc.QueryCompounds(text) {
		phrase := strings.Join(words, " ")
		for _, f := range []struct {
			field string
			boost float64
		}{{fieldTitle, titleSplitPhraseBoost}, {fieldText, textSplitPhraseBoost}} {
			d.AddQuery(matchPhrase(phrase, f.field, f.boost))
		}
	}
	return d
}

// matchPhrase matches text as a phrase in field, weighed boost.
func matchPhrase(text, field string, boost float64) query.Query {
	p := bleve.NewMatchPhraseQuery(text)
	p.SetField(field)
	p.SetBoost(boost)
	return p
}

func termsQuery(field string, terms []string) query.Query {
	d := bleve.NewDisjunctionQuery()
	for _, t := range terms {
		tq := bleve.NewTermQuery(t)
		tq.SetField(field)
		d.AddQuery(tq)
	}
	return d
}

// span is one matched term in the text, as byte offsets.
type span struct {
	start, end int
	term       string
}

func spansOf(tlm blevesearch.TermLocationMap) []span {
	var out []span
	for term, locs := range tlm {
		for _, l := range locs {
			out = append(out, span{int(l.Start), int(l.End), term})
		}
	}
	slices.SortFunc(out, func(a, b span) int { return a.start - b.start })
	return slices.CompactFunc(out, func(a, b span) bool { return a.start == b.start })
}

// snippet returns the passage of about size bytes of text that holds the
// most distinct matched terms (then the most matches), starting at a
// sentence or word boundary and ending at a word boundary, whitespace
// collapsed, with "…" where text was cut. Without matches it returns the
// beginning of the text.
func snippet(text string, spans []span, size int) string {
	if len(text) <= size {
		return oneLine(text)
	}
	first, last := 0, 0
	if len(spans) > 0 {
		bi, bj, best := 0, 0, -1
		j := 0
		counts := map[string]int{}
		for i := range spans {
			for j < len(spans) && spans[j].end-spans[i].start <= size {
				counts[spans[j].term]++
				j++
			}
			if j == i { // a single term longer than size
				j = i + 1
				counts[spans[i].term]++
			}
			if score := 4*len(counts) + (j - i); score > best {
				bi, bj, best = i, j-1, score
			}
			if counts[spans[i].term]--; counts[spans[i].term] == 0 {
				delete(counts, spans[i].term)
			}
		}
		first, last = spans[bi].start, spans[bj].end
	}

	// Leave up to a third of the spare room before the first match, and
	// start at a sentence or line start in that lead-in when there is one.
	start := max(first-max(size-(last-first), 0)/3, 0)
	if start > 0 {
		lead := text[start:first]
		if k := lastSentenceBreak(lead); k >= 0 {
			start += k
		} else if isSpace(text[start-1]) {
			// Already at a word start.
		} else if k := strings.IndexAny(lead, " \n\t"); k >= 0 {
			start += k + 1
		} else {
			start = first
		}
	}
	end := min(start+size, len(text))
	if end < len(text) {
		for end > start && !utf8.RuneStart(text[end]) {
			end--
		}
		if k := strings.LastIndexAny(text[start:end], " \n\t"); k > 0 && start+k >= last {
			end = start + k
		}
	}
	s := oneLine(text[start:end])
	if start > 0 {
		s = "… " + s
	}
	if end < len(text) {
		s += " …"
	}
	return s
}

// lastSentenceBreak returns the offset just after the last sentence end or
// line break in s, or -1.
func lastSentenceBreak(s string) int {
	best := -1
	for _, sep := range []string{". ", "! ", "? ", "\n"} {
		if k := strings.LastIndex(s, sep); k >= 0 && k+len(sep) > best {
			best = k + len(sep)
		}
	}
	return best
}

func isSpace(b byte) bool { return b == ' ' || b == '\n' || b == '\t' }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
