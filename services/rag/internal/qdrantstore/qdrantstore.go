// Package qdrantstore keeps rag collections in Qdrant instead of the
// embedded index. It offers the same operations and meanings as the
// embedded store (package vectorindex): both speak package rag, so the
// rest of the service cannot tell them apart.
//
// Layout. Each rag collection is one Qdrant collection (named with a
// prefix, "rag_" by default) holding one point per chunk, with
//   - a named dense vector "dense" (cosine distance, the embedder's size),
//   - a named sparse vector "bm25" with the IDF modifier, computed by
//     Qdrant itself from the chunk text (document inference with the
//     "qdrant/bm25" model, Qdrant ≥ 1.15; older servers are not supported),
//   - payload {url, title, chunk_index, heading_path, text, metadata},
//     with keyword payload indexes on url and on metadata.* (Qdrant indexes
//     every key of an object under one keyword index).
//
// Point ids are UUIDv5 of url and chunk index. Upsert first deletes every
// point whose url matches (no stale chunks when a document shrinks), then
// writes the new ones, both with wait=true.
//
// Search mirrors the embedded store: hybrid runs a Query with two
// prefetches (dense nearest and bm25 nearest) fused by RRF; dense and bm25
// modes query one vector. Scores: Qdrant's fused scores are ranks, not
// similarities, so each hit's [rag.Hit.Score] is recomputed as the
// cosine of the query and the returned dense vector, clamped to [0,1] —
// the same scale as the embedded store's, which the scope check and
// score_threshold rely on.
//
// Settings (description, out-of-scope answer, calibration) live in the
// Qdrant collection's metadata under "groundcrew_settings" as JSON, and are
// cached in memory at Open; writes go through to Qdrant.
package qdrantstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"

	"github.com/groundcrew/groundcrew/services/rag/internal/embedder"
	"github.com/groundcrew/groundcrew/services/rag/internal/rag"
)

// Names used in Qdrant.
const (
	DefaultPrefix = "rag_"
	denseName     = "dense"
	sparseName    = "bm25"
	bm25Model     = "qdrant/bm25"
	settingsKey   = "groundcrew_settings"
	// prefetchDepth is how many candidates each ranking contributes to
	// the fusion, as in the embedded store.
	prefetchDepth = 50
	// callTimeout bounds calls made without a caller's context
	// (Settings and Stats have none).
	callTimeout = 10 * time.Second
)

// idSpace namespaces point ids.
var idSpace = uuid.MustParse("6f1c1f0e-7c9b-4f43-9a53-0d6c2b9b7e11")

// Config configures a [Store].
type Config struct {
	// URL is Qdrant's gRPC endpoint, e.g. http://localhost:6334 (https
	// for TLS). The port defaults to 6334.
	URL string
	// APIKey authenticates, if the server wants one.
	APIKey string
	// Embedder makes the dense vectors.
	Embedder rag.Embedder
	// Limits bound the collections and the documents per collection;
	// Qdrant holds the chunks, so MaxChunks is the embedded store's.
	Limits rag.Limits
	// Prefix is put before every collection name; default "rag_".
	Prefix string
	// DialOptions are extra gRPC options (tests dial a bufconn).
	DialOptions []grpc.DialOption
}

// Store is a rag document store on Qdrant. It is safe for concurrent use.
type Store struct {
	client *qdrant.Client
	emb    rag.Embedder
	prefix string
	limits rag.Limits

	mu       sync.RWMutex
	settings map[string]rag.Settings // by rag collection name

	// termsMu guards terms: per collection, the term counts of a sample
	// of its chunks, dropped whenever the collection changes.
	termsMu  sync.Mutex
	terms    map[string]*termCounts
	termsGen map[string]uint64 // bumped by every change, so a count
	// that raced with a change is not kept
}

// termCounts are the document frequencies of a sample of a collection's
// chunks, scaled to the whole collection.
type termCounts struct {
	chunks  int
	sampled int
	df      map[string]int
}

// Open connects to Qdrant, checks it answers, and loads the settings of
// the rag collections it holds.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, fmt.Errorf("qdrant URL %q must look like http://host:6334", cfg.URL)
	}
	port := 6334
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return nil, fmt.Errorf("qdrant URL %q: bad port", cfg.URL)
		}
	}
	client, err := qdrant.NewClient(&qdrant.Config{
		Host: u.Hostname(), Port: port, APIKey: cfg.APIKey, UseTLS: u.Scheme == "https",
		GrpcOptions: cfg.DialOptions, PoolSize: 1,
		// The client's own check logs through the global slog logger;
		// Open checks the connection itself.
		SkipCompatibilityCheck: true,
	})
	if err != nil {
		return nil, fmt.Errorf("connecting to qdrant at %s: %w", cfg.URL, err)
	}
	s := &Store{client: client, emb: cfg.Embedder, prefix: cmp.Or(cfg.Prefix, DefaultPrefix), limits: cfg.Limits, settings: map[string]rag.Settings{}, terms: map[string]*termCounts{}, termsGen: map[string]uint64{}}
	if err := s.load(ctx); err != nil {
		client.Close()
		return nil, fmt.Errorf("qdrant at %s: %w", cfg.URL, err)
	}
	return s, nil
}

// Version asks the server for its version.
func (s *Store) Version(ctx context.Context) (string, error) {
	r, err := s.client.HealthCheck(ctx)
	if err != nil {
		return "", err
	}
	return r.GetVersion(), nil
}

func (s *Store) load(ctx context.Context) error {
	names, err := s.client.ListCollections(ctx)
	if err != nil {
		return fmt.Errorf("listing collections: %w", err)
	}
	for _, qn := range names {
		name, ok := strings.CutPrefix(qn, s.prefix)
		if !ok {
			continue
		}
		info, err := s.client.GetCollectionInfo(ctx, qn)
		if err != nil {
			return fmt.Errorf("reading collection %q: %w", qn, err)
		}
		var st rag.Settings
		if v := info.GetConfig().GetMetadata()[settingsKey]; v != nil {
			if err := json.Unmarshal([]byte(v.GetStringValue()), &st); err != nil {
				return fmt.Errorf("reading the settings of %q: %w", qn, err)
			}
		}
		s.settings[name] = st
	}
	return nil
}

// Close closes the connection.
func (s *Store) Close() error { return s.client.Close() }

func (s *Store) qname(name string) string { return s.prefix + name }

// Collections returns the rag collections' names, sorted.
func (s *Store) Collections() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Sorted(maps.Keys(s.settings))
}

// Settings returns a collection's settings.
func (s *Store) Settings(name string) (rag.Settings, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st, ok := s.settings[name]
	if !ok {
		return rag.Settings{}, fmt.Errorf("%w: %q", rag.ErrNotFound, name)
	}
	return st, nil
}

// compatible refuses collections made with another embedder.
func (s *Store) compatible(name string, st rag.Settings) error {
	if st.EmbeddingModel != "" && st.EmbeddingModel != s.emb.Name() {
		return fmt.Errorf("%w: collection %q uses %q, the store embeds with %q",
			rag.ErrEmbedderMismatch, name, st.EmbeddingModel, s.emb.Name())
	}
	return nil
}

// PutSettings creates the collection with the given settings or updates
// them. EmbeddingModel and Created are the store's to set.
func (s *Store) PutSettings(name string, st rag.Settings) error {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	_, err := s.putSettings(ctx, name, st)
	return err
}

// putSettings is PutSettings; it reports whether it created the
// collection.
func (s *Store) putSettings(ctx context.Context, name string, st rag.Settings) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, exists := s.settings[name]
	if exists {
		st.EmbeddingModel, st.Created, st.CreatedBy = cur.EmbeddingModel, cur.Created, cur.CreatedBy
	} else {
		if err := s.limits.CheckCollections(name, len(s.settings)); err != nil {
			return false, err
		}
		st.EmbeddingModel = s.emb.Name()
		st.Created = time.Now().UTC().Truncate(time.Millisecond)
	}
	raw, err := json.Marshal(st)
	if err != nil {
		return false, err
	}
	meta := map[string]*qdrant.Value{settingsKey: qdrant.NewValueString(string(raw))}
	if exists {
		if err := s.client.UpdateCollection(ctx, &qdrant.UpdateCollection{CollectionName: s.qname(name), Metadata: meta}); err != nil {
			return false, fmt.Errorf("saving the settings of %q: %w", name, err)
		}
		s.settings[name] = st
		return false, nil
	}
	if err := s.create(ctx, name, meta); err != nil {
		return false, err
	}
	s.settings[name] = st
	return true, nil
}

// create makes the Qdrant collection and its payload indexes.
func (s *Store) create(ctx context.Context, name string, meta map[string]*qdrant.Value) error {
	qn := s.qname(name)
	err := s.client.CreateCollection(ctx, &qdrant.CreateCollection{
		CollectionName: qn,
		VectorsConfig: qdrant.NewVectorsConfigMap(map[string]*qdrant.VectorParams{
			denseName: {Size: uint64(s.emb.Dimensions()), Distance: qdrant.Distance_Cosine},
		}),
		SparseVectorsConfig: qdrant.NewSparseVectorsConfig(map[string]*qdrant.SparseVectorParams{
			sparseName: {Modifier: qdrant.Modifier_Idf.Enum()},
		}),
		Metadata: meta,
	})
	if err != nil {
		return fmt.Errorf("creating collection %q: %w", qn, err)
	}
	for _, field := range []string{"url", "metadata"} {
		_, err := s.client.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{
			CollectionName: qn, FieldName: field, FieldType: qdrant.FieldType_FieldTypeKeyword.Enum(), Wait: new(true),
		})
		if err != nil {
			return fmt.Errorf("indexing %s of %q: %w", field, qn, err)
		}
	}
	return nil
}

// Stats counts a collection's chunks and documents (chunks with index 0:
// every document has exactly one).
func (s *Store) Stats(name string) (rag.Stats, error) {
	if _, err := s.Settings(name); err != nil {
		return rag.Stats{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	chunks, err := s.client.Count(ctx, &qdrant.CountPoints{CollectionName: s.qname(name), Exact: new(true)})
	if err != nil {
		return rag.Stats{}, fmt.Errorf("counting chunks of %q: %w", name, err)
	}
	docs, err := s.client.Count(ctx, &qdrant.CountPoints{CollectionName: s.qname(name), Exact: new(true),
		Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchInt("chunk_index", 0)}}})
	if err != nil {
		return rag.Stats{}, fmt.Errorf("counting documents of %q: %w", name, err)
	}
	return rag.Stats{Documents: int(docs), Chunks: int(chunks)}, nil
}

// Upsert stores documents, creating the collection with default settings
// if needed; each document replaces every chunk stored under its URL.
// Unlike the embedded store, a batch is not atomic: Qdrant has no
// transactions, so a failure part-way leaves earlier documents written.
func (s *Store) Upsert(ctx context.Context, name string, docs ...rag.Document) (rag.UpsertResult, error) {
	var texts []string
	for _, d := range docs {
		if strings.TrimSpace(d.URL) == "" {
			return rag.UpsertResult{}, fmt.Errorf("%w: document without URL", rag.ErrInvalidArgument)
		}
		for _, c := range d.Chunks {
			texts = append(texts, rag.IndexText(c.HeadingPath, c.Text))
		}
	}
	st, err := s.Settings(name)
	if errors.Is(err, rag.ErrNotFound) {
		_, err = s.putSettings(ctx, name, rag.Settings{})
		st = rag.Settings{EmbeddingModel: s.emb.Name()}
	}
	if err != nil {
		return rag.UpsertResult{}, err
	}
	if err := s.compatible(name, st); err != nil {
		return rag.UpsertResult{}, err
	}
	if err := s.checkDocuments(ctx, name, docs); err != nil {
		return rag.UpsertResult{}, err
	}
	vecs, err := rag.EmbedChunks(ctx, s.emb, texts)
	if err != nil {
		return rag.UpsertResult{}, err
	}
	qn := s.qname(name)
	res := rag.UpsertResult{Documents: len(docs)}
	k := 0
	for _, d := range docs {
		byURL := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("url", d.URL)}}
		old, err := s.client.Count(ctx, &qdrant.CountPoints{CollectionName: qn, Filter: byURL, Exact: new(true)})
		if err != nil {
			return res, fmt.Errorf("counting chunks of %s: %w", d.URL, err)
		}
		if old > 0 {
			if _, err := s.client.Delete(ctx, &qdrant.DeletePoints{CollectionName: qn, Wait: new(true), Points: qdrant.NewPointsSelectorFilter(byURL)}); err != nil {
				return res, fmt.Errorf("deleting chunks of %s: %w", d.URL, err)
			}
			res.ReplacedChunks += int(old)
			res.Replaced = append(res.Replaced, d.URL)
		}
		if len(d.Chunks) == 0 {
			continue
		}
		points := make([]*qdrant.PointStruct, 0, len(d.Chunks))
		for _, c := range d.Chunks {
			payload, err := qdrant.TryValueMap(map[string]any{
				"url": d.URL, "title": d.Title, "chunk_index": int64(c.Index),
				"heading_path": toAnySlice(c.HeadingPath), "text": c.Text, "metadata": toAnyMap(d.Metadata),
			})
			if err != nil {
				return res, fmt.Errorf("payload of %s: %w", d.URL, err)
			}
			points = append(points, &qdrant.PointStruct{
				Id: qdrant.NewIDUUID(pointID(d.URL, c.Index)),
				Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{
					denseName:  qdrant.NewVectorDense(vecs[k]),
					sparseName: qdrant.NewVectorDocument(&qdrant.Document{Text: texts[k], Model: bm25Model}),
				}),
				Payload: payload,
			})
			k++
		}
		if _, err := s.client.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: qn, Wait: new(true), Points: points}); err != nil {
			return res, fmt.Errorf("writing chunks of %s: %w", d.URL, err)
		}
		res.Chunks += len(points)
	}
	s.forgetTerms(name)
	return res, nil
}

// checkDocuments refuses an upsert that would take the collection past
// Limits.MaxDocuments, before anything is embedded. Every document has
// exactly one chunk with index 0, so counting those counts documents.
// Qdrant has no transactions: two concurrent upserts may pass together.
func (s *Store) checkDocuments(ctx context.Context, name string, docs []rag.Document) error {
	if s.limits.MaxDocuments <= 0 {
		return nil
	}
	last := map[string]bool{} // url -> has chunks, the later copy winning
	for _, d := range docs {
		last[d.URL] = len(d.Chunks) > 0
	}
	adds, dels := []string{}, []string{}
	for u, has := range last {
		if has {
			adds = append(adds, u)
		} else {
			dels = append(dels, u)
		}
	}
	qn := s.qname(name)
	count := func(urls []string) (int, error) {
		must := []*qdrant.Condition{qdrant.NewMatchInt("chunk_index", 0)}
		if urls != nil {
			if len(urls) == 0 {
				return 0, nil
			}
			must = append(must, qdrant.NewMatchKeywords("url", urls...))
		}
		n, err := s.client.Count(ctx, &qdrant.CountPoints{CollectionName: qn, Exact: new(true), Filter: &qdrant.Filter{Must: must}})
		if err != nil {
			return 0, fmt.Errorf("counting documents of %q: %w", name, err)
		}
		return int(n), nil
	}
	total, err := count(nil)
	if err != nil {
		return err
	}
	existingAdds, err := count(adds)
	if err != nil {
		return err
	}
	existingDels, err := count(dels)
	if err != nil {
		return err
	}
	after := total + len(adds) - existingAdds - existingDels
	if after <= total {
		return nil
	}
	return s.limits.CheckDocuments(name, after)
}

func pointID(u string, index int) string {
	return uuid.NewSHA1(idSpace, []byte(u+"#"+strconv.Itoa(index))).String()
}

func toAnySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func toAnyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Delete removes every chunk of a document.
func (s *Store) Delete(ctx context.Context, name, u string) error {
	if _, err := s.Settings(name); err != nil {
		return err
	}
	_, err := s.client.Delete(ctx, &qdrant.DeletePoints{CollectionName: s.qname(name), Wait: new(true),
		Points: qdrant.NewPointsSelectorFilter(&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("url", u)}})})
	if err != nil {
		return fmt.Errorf("deleting chunks of %s: %w", u, err)
	}
	s.forgetTerms(name)
	return nil
}

// filter translates a rag filter.
func filter(f rag.Filter) *qdrant.Filter {
	var must []*qdrant.Condition
	if len(f.URLs) > 0 {
		must = append(must, qdrant.NewMatchKeywords("url", f.URLs...))
	}
	for _, k := range slices.Sorted(maps.Keys(f.Metadata)) {
		must = append(must, qdrant.NewMatchKeyword("metadata."+k, f.Metadata[k]))
	}
	if len(must) == 0 {
		return nil
	}
	return &qdrant.Filter{Must: must}
}

// Search returns the chunks of a collection that best match q.
func (s *Store) Search(ctx context.Context, name string, q rag.Query) ([]rag.Hit, error) {
	q, err := q.Normalize()
	if err != nil {
		return nil, err
	}
	if q.Filter.URLPrefix != "" {
		// Qdrant's keyword index matches whole values only.
		return nil, fmt.Errorf("%w: URL prefix filters are not supported on Qdrant", rag.ErrInvalidArgument)
	}
	st, err := s.Settings(name)
	if err != nil {
		return nil, err
	}
	if err := s.compatible(name, st); err != nil {
		return nil, err
	}
	vecs, err := s.emb.Embed(ctx, []string{q.Text})
	if err != nil {
		return nil, fmt.Errorf("embedding query: %w", err)
	}
	if len(vecs) != 1 || len(vecs[0]) != s.emb.Dimensions() {
		return nil, errors.New("embedder returned no usable query vector")
	}
	qv := vecs[0]
	dense := qdrant.NewQueryDense(qv)
	sparse := qdrant.NewQueryNearest(qdrant.NewVectorInputDocument(&qdrant.Document{Text: q.Text, Model: bm25Model}))
	limit := uint64(q.TopK)
	req := &qdrant.QueryPoints{
		CollectionName: s.qname(name),
		Filter:         filter(q.Filter),
		Limit:          &limit,
		WithPayload:    qdrant.NewWithPayload(true),
		WithVectors:    qdrant.NewWithVectorsInclude(denseName),
	}
	switch q.Mode {
	case rag.ModeHybrid:
		depth := uint64(max(prefetchDepth, q.TopK))
		req.Prefetch = []*qdrant.PrefetchQuery{
			{Query: dense, Using: new(denseName), Limit: &depth, Filter: req.Filter},
			{Query: sparse, Using: new(sparseName), Limit: &depth, Filter: req.Filter},
		}
		req.Query = qdrant.NewQueryFusion(qdrant.Fusion_RRF)
	case rag.ModeDense:
		req.Query, req.Using = dense, new(denseName)
	case rag.ModeBM25:
		req.Query, req.Using = sparse, new(sparseName)
	default:
		return nil, fmt.Errorf("%w: unknown mode %v", rag.ErrInvalidArgument, q.Mode)
	}
	points, err := s.client.Query(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("querying %q: %w", name, err)
	}
	hits := make([]rag.Hit, 0, len(points))
	for _, p := range points {
		h := toHit(p.GetPayload())
		dv := p.GetVectors().GetVectors().GetVectors()[denseName]
		h.Cosine = cosine(qv, dv.GetDense().GetData())
		h.Score = min(max(h.Cosine, 0), 1)
		if h.Score < q.MinScore {
			continue
		}
		hits = append(hits, h)
	}
	return hits, nil
}

// cosine of two vectors (the stored ones are unit length, the query's
// too; dividing by the norms keeps it right if a provider's are not).
func cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// toHit reads a point's payload.
func toHit(p map[string]*qdrant.Value) rag.Hit {
	h := rag.Hit{
		URL:        p["url"].GetStringValue(),
		Title:      p["title"].GetStringValue(),
		ChunkIndex: int(p["chunk_index"].GetIntegerValue()),
		Text:       p["text"].GetStringValue(),
	}
	for _, v := range p["heading_path"].GetListValue().GetValues() {
		h.HeadingPath = append(h.HeadingPath, v.GetStringValue())
	}
	if fields := p["metadata"].GetStructValue().GetFields(); len(fields) > 0 {
		h.Metadata = make(map[string]string, len(fields))
		for k, v := range fields {
			h.Metadata[k] = v.GetStringValue()
		}
	}
	return h
}

// termSample bounds the chunks TermStats reads to count terms.
const termSample = 1000

// TermStats returns how many chunks of a collection contain each term. Qdrant
// cannot count stemmed terms, so the counts come from up to 1,000 chunks
// read once per change of the collection, scaled to its size: exact for
// collections of up to 1,000 chunks, an estimate above (a term seen in no
// sampled chunk counts as absent).
func (s *Store) TermStats(name string, terms []string) (rag.TermStats, error) {
	s.termsMu.Lock()
	tc, ok := s.terms[name]
	gen := s.termsGen[name]
	s.termsMu.Unlock()
	if !ok {
		var err error
		if tc, err = s.countTerms(name); err != nil {
			return rag.TermStats{}, err
		}
		s.termsMu.Lock()
		if s.termsGen[name] == gen {
			s.terms[name] = tc
		}
		s.termsMu.Unlock()
	}
	out := rag.TermStats{Chunks: tc.chunks, DF: make(map[string]int, len(terms))}
	for _, t := range terms {
		df := tc.df[t]
		if tc.sampled > 0 && tc.sampled < tc.chunks {
			df = int(math.Round(float64(df) * float64(tc.chunks) / float64(tc.sampled)))
		}
		out.DF[t] = df
	}
	return out, nil
}

// countTerms reads a sample of a collection's chunks and counts the
// chunks each term occurs in.
func (s *Store) countTerms(name string) (*termCounts, error) {
	st, err := s.Stats(name)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	sample, err := s.Sample(ctx, name, termSample)
	if err != nil {
		return nil, err
	}
	tc := &termCounts{chunks: max(st.Chunks, len(sample)), sampled: len(sample), df: map[string]int{}}
	for _, h := range sample {
		seen := map[string]bool{}
		for _, t := range embedder.Analyze(rag.IndexText(h.HeadingPath, h.Text)) {
			if !seen[t] {
				seen[t] = true
				tc.df[t]++
			}
		}
	}
	return tc, nil
}

// forgetTerms drops a collection's term counts after it changed.
func (s *Store) forgetTerms(name string) {
	s.termsMu.Lock()
	delete(s.terms, name)
	s.termsGen[name]++
	s.termsMu.Unlock()
}

// Sample returns up to n chunks for scope calibration: the first n in
// Qdrant's id order. Ids are hashes, so that order is effectively random
// over documents, which is what calibration needs.
func (s *Store) Sample(ctx context.Context, name string, n int) ([]rag.Hit, error) {
	if _, err := s.Settings(name); err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, nil
	}
	limit := uint32(n)
	points, err := s.client.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: s.qname(name), Limit: &limit, WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		return nil, fmt.Errorf("sampling %q: %w", name, err)
	}
	out := make([]rag.Hit, 0, len(points))
	for _, p := range points {
		out = append(out, toHit(p.GetPayload()))
	}
	return out, nil
}

// DeleteCollection deletes a collection's Qdrant collection (its chunks
// and settings).
func (s *Store) DeleteCollection(ctx context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.settings[name]; !ok {
		return fmt.Errorf("%w: %q", rag.ErrNotFound, name)
	}
	if err := s.client.DeleteCollection(ctx, s.qname(name)); err != nil {
		return fmt.Errorf("deleting collection %q: %w", name, err)
	}
	delete(s.settings, name)
	return nil
}
