package qdrantstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"slices"
	"sync"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/groundcrew/groundcrew/services/rag/internal/answer"
	"github.com/groundcrew/groundcrew/services/rag/internal/chunker"
	"github.com/groundcrew/groundcrew/services/rag/internal/embedder"
	"github.com/groundcrew/groundcrew/services/rag/internal/library"
	"github.com/groundcrew/groundcrew/services/rag/internal/rag"
)

var (
	_ library.Store  = (*Store)(nil)
	_ answer.Sampler = (*Store)(nil)
)

// fakeQdrant is a wire-level stand-in for Qdrant: a real gRPC server
// implementing the calls the store makes, keeping points in memory and
// recording requests. Its Query ranks by the dense vector only; the
// requests are asserted separately.
type fakeQdrant struct {
	qdrant.UnimplementedQdrantServer
	qdrant.UnimplementedPointsServer

	mu      sync.Mutex
	cols    map[string]*fakeCollection
	creates []*qdrant.CreateCollection
	indexes []string
	queries []*qdrant.QueryPoints
	deletes []*qdrant.DeletePoints
	upserts []*qdrant.UpsertPoints
	apiKeys []string
	dropped []string
	ops     uint64
}

// opTime is the "time" (seconds) every reply of the stand-in reports, as
// Qdrant's do.
const opTime = 0.000734

// nextOp numbers write operations as Qdrant's operation_id does; the
// caller holds f.mu.
func (f *fakeQdrant) nextOp() *uint64 {
	f.ops++
	n := f.ops
	return &n
}

// fakeCols serves the Collections service; its method names clash with
// the Points service's, hence a separate type over the same state.
type fakeCols struct {
	qdrant.UnimplementedCollectionsServer
	f *fakeQdrant
}

type fakeCollection struct {
	meta   map[string]*qdrant.Value
	points []*qdrant.PointStruct
}

func newFake(t *testing.T) (*fakeQdrant, string) {
	t.Helper()
	f := &fakeQdrant{cols: map[string]*fakeCollection{}}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		f.mu.Lock()
		f.apiKeys = append(f.apiKeys, md.Get("api-key")...)
		f.mu.Unlock()
		return h(ctx, req)
	}))
	qdrant.RegisterQdrantServer(srv, f)
	qdrant.RegisterCollectionsServer(srv, fakeCols{f: f})
	qdrant.RegisterPointsServer(srv, f)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return f, "http://" + lis.Addr().String()
}

func (f *fakeQdrant) HealthCheck(context.Context, *qdrant.HealthCheckRequest) (*qdrant.HealthCheckReply, error) {
	return &qdrant.HealthCheckReply{Title: "fake", Version: "1.15.0"}, nil
}

func (fc fakeCols) List(context.Context, *qdrant.ListCollectionsRequest) (*qdrant.ListCollectionsResponse, error) {
	f := fc.f
	f.mu.Lock()
	defer f.mu.Unlock()
	out := &qdrant.ListCollectionsResponse{}
	for _, n := range slices.Sorted(func(yield func(string) bool) {
		for n := range f.cols {
			if !yield(n) {
				return
			}
		}
	}) {
		out.Collections = append(out.Collections, &qdrant.CollectionDescription{Name: n})
	}
	return out, nil
}

func (f *fakeQdrant) col(name string) (*fakeCollection, error) {
	c, ok := f.cols[name]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "collection %s not found", name)
	}
	return c, nil
}

func (fc fakeCols) Get(_ context.Context, r *qdrant.GetCollectionInfoRequest) (*qdrant.GetCollectionInfoResponse, error) {
	f := fc.f
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.col(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	points := uint64(len(c.points))
	return &qdrant.GetCollectionInfoResponse{Result: &qdrant.CollectionInfo{
		Status: qdrant.CollectionStatus_Green, OptimizerStatus: &qdrant.OptimizerStatus{Ok: true},
		PointsCount: &points, SegmentsCount: 1, PayloadSchema: map[string]*qdrant.PayloadSchemaInfo{},
		Config: &qdrant.CollectionConfig{Metadata: c.meta},
	}, Time: opTime}, nil
}

func (fc fakeCols) Create(_ context.Context, r *qdrant.CreateCollection) (*qdrant.CollectionOperationResponse, error) {
	f := fc.f
	f.mu.Lock()
	defer f.mu.Unlock()
	f.creates = append(f.creates, r)
	f.cols[r.GetCollectionName()] = &fakeCollection{meta: r.GetMetadata()}
	return &qdrant.CollectionOperationResponse{Result: true, Time: opTime}, nil
}

func (fc fakeCols) Delete(_ context.Context, r *qdrant.DeleteCollection) (*qdrant.CollectionOperationResponse, error) {
	f := fc.f
	f.mu.Lock()
	defer f.mu.Unlock()
	// Qdrant answers result false, not an error, for an unknown collection.
	_, ok := f.cols[r.GetCollectionName()]
	delete(f.cols, r.GetCollectionName())
	f.dropped = append(f.dropped, r.GetCollectionName())
	return &qdrant.CollectionOperationResponse{Result: ok, Time: opTime}, nil
}

func (fc fakeCols) Update(_ context.Context, r *qdrant.UpdateCollection) (*qdrant.CollectionOperationResponse, error) {
	f := fc.f
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.col(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	c.meta = r.GetMetadata()
	return &qdrant.CollectionOperationResponse{Result: true, Time: opTime}, nil
}

func (f *fakeQdrant) CreateFieldIndex(_ context.Context, r *qdrant.CreateFieldIndexCollection) (*qdrant.PointsOperationResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.indexes = append(f.indexes, r.GetCollectionName()+"."+r.GetFieldName()+":"+r.GetFieldType().String())
	return &qdrant.PointsOperationResponse{Result: &qdrant.UpdateResult{OperationId: f.nextOp(), Status: qdrant.UpdateStatus_Completed}, Time: opTime}, nil
}

// matches evaluates the filters the store sends: keyword, keywords and
// integer matches on payload paths, all of which must hold.
func matches(p *qdrant.PointStruct, fl *qdrant.Filter) bool {
	for _, c := range fl.GetMust() {
		fc := c.GetField()
		v := lookup(p.GetPayload(), fc.GetKey())
		m := fc.GetMatch()
		switch {
		case m.GetKeywords() != nil:
			if !slices.Contains(m.GetKeywords().GetStrings(), v.GetStringValue()) {
				return false
			}
		case m.GetKeyword() != "":
			if v.GetStringValue() != m.GetKeyword() {
				return false
			}
		default:
			if v == nil || v.GetIntegerValue() != m.GetInteger() {
				return false
			}
		}
	}
	return true
}

func lookup(p map[string]*qdrant.Value, path string) *qdrant.Value {
	if k, rest, ok := cutDot(path); ok {
		return lookup(p[k].GetStructValue().GetFields(), rest)
	}
	return p[path]
}

func cutDot(s string) (string, string, bool) {
	for i := range s {
		if s[i] == '.' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func (f *fakeQdrant) Upsert(_ context.Context, r *qdrant.UpsertPoints) (*qdrant.PointsOperationResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.upserts = append(f.upserts, r)
	c, err := f.col(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	for _, p := range r.GetPoints() {
		c.points = slices.DeleteFunc(c.points, func(q *qdrant.PointStruct) bool { return proto.Equal(q.GetId(), p.GetId()) })
		c.points = append(c.points, p)
	}
	return &qdrant.PointsOperationResponse{Result: &qdrant.UpdateResult{OperationId: f.nextOp(), Status: qdrant.UpdateStatus_Completed}, Time: opTime}, nil
}

func (f *fakeQdrant) Delete(_ context.Context, r *qdrant.DeletePoints) (*qdrant.PointsOperationResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deletes = append(f.deletes, r)
	c, err := f.col(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	c.points = slices.DeleteFunc(c.points, func(p *qdrant.PointStruct) bool { return matches(p, r.GetPoints().GetFilter()) })
	return &qdrant.PointsOperationResponse{Result: &qdrant.UpdateResult{OperationId: f.nextOp(), Status: qdrant.UpdateStatus_Completed}, Time: opTime}, nil
}

func (f *fakeQdrant) Count(_ context.Context, r *qdrant.CountPoints) (*qdrant.CountResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.col(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	n := 0
	for _, p := range c.points {
		if matches(p, r.GetFilter()) {
			n++
		}
	}
	return &qdrant.CountResponse{Result: &qdrant.CountResult{Count: uint64(n)}, Time: opTime}, nil
}

func denseOf(p *qdrant.PointStruct) []float32 {
	return p.GetVectors().GetVectors().GetVectors()[denseName].GetDense().GetData()
}

func (f *fakeQdrant) Query(_ context.Context, r *qdrant.QueryPoints) (*qdrant.QueryResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, r)
	c, err := f.col(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	// Rank by the dense query, wherever the request carries it.
	var qv []float32
	for _, q := range append([]*qdrant.Query{r.GetQuery()}, prefetchQueries(r)...) {
		if d := q.GetNearest().GetDense().GetData(); d != nil {
			qv = d
		}
	}
	var pts []*qdrant.PointStruct
	for _, p := range c.points {
		if matches(p, r.GetFilter()) {
			pts = append(pts, p)
		}
	}
	slices.SortStableFunc(pts, func(a, b *qdrant.PointStruct) int { return cmp.Compare(cosine(qv, denseOf(b)), cosine(qv, denseOf(a))) })
	out := &qdrant.QueryResponse{Time: opTime}
	for i, p := range pts {
		if uint64(i) == r.GetLimit() {
			break
		}
		out.Result = append(out.Result, &qdrant.ScoredPoint{Id: p.GetId(), Payload: p.GetPayload(), Score: 1 / float32(61+i), Version: f.ops,
			Vectors: &qdrant.VectorsOutput{VectorsOptions: &qdrant.VectorsOutput_Vectors{Vectors: &qdrant.NamedVectorsOutput{
				Vectors: map[string]*qdrant.VectorOutput{denseName: {Vector: &qdrant.VectorOutput_Dense{Dense: &qdrant.DenseVector{Data: denseOf(p)}}}}}}}})
	}
	return out, nil
}

func prefetchQueries(r *qdrant.QueryPoints) []*qdrant.Query {
	var out []*qdrant.Query
	for _, p := range r.GetPrefetch() {
		out = append(out, p.GetQuery())
	}
	return out
}

func (f *fakeQdrant) Scroll(_ context.Context, r *qdrant.ScrollPoints) (*qdrant.ScrollResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.col(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	out := &qdrant.ScrollResponse{Time: opTime}
	for i, p := range c.points {
		if uint32(i) == r.GetLimit() {
			break
		}
		out.Result = append(out.Result, &qdrant.RetrievedPoint{Id: p.GetId(), Payload: p.GetPayload()})
	}
	return out, nil
}

func openFake(t *testing.T, url string) *Store {
	t.Helper()
	s, err := Open(t.Context(), Config{URL: url, APIKey: "qd-key", Embedder: embedder.NewHashing(0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func doc(url, title string, meta map[string]string, texts ...string) rag.Document {
	d := rag.Document{URL: url, Title: title, Metadata: meta}
	for i, t := range texts {
		d.Chunks = append(d.Chunks, chunker.Chunk{Text: t, Index: i, HeadingPath: []string{title}})
	}
	return d
}

func TestStoreAgainstFake(t *testing.T) {
	fake, url := newFake(t)
	s := openFake(t, url)
	ctx := t.Context()

	res, err := s.Upsert(ctx, "ops",
		doc("https://runbooks.example.com/pg", "Postgres", map[string]string{"team": "db"},
			"Too many connections: put PgBouncer in front of Postgres.", "Replication lag: check the WAL receiver."),
		doc("https://runbooks.example.com/kafka", "Kafka", nil, "Consumer lag grows when consumers are slow."))
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(rag.UpsertResult{Documents: 2, Chunks: 3}, res); diff != "" {
		t.Errorf("Upsert (-want +got):\n%s", diff)
	}

	// The collection: named dense vector + bm25 sparse with IDF, payload
	// indexes on url and metadata, settings in its metadata.
	if len(fake.creates) != 1 {
		t.Fatalf("%d creates, want 1", len(fake.creates))
	}
	cr := fake.creates[0]
	if cr.GetCollectionName() != "rag_ops" ||
		cr.GetVectorsConfig().GetParamsMap().GetMap()[denseName].GetSize() != 384 ||
		cr.GetVectorsConfig().GetParamsMap().GetMap()[denseName].GetDistance() != qdrant.Distance_Cosine ||
		cr.GetSparseVectorsConfig().GetMap()[sparseName].GetModifier() != qdrant.Modifier_Idf ||
		cr.GetMetadata()[settingsKey].GetStringValue() == "" {
		t.Errorf("CreateCollection = %v", cr)
	}
	if diff := gocmp.Diff([]string{"rag_ops.url:FieldTypeKeyword", "rag_ops.metadata:FieldTypeKeyword"}, fake.indexes); diff != "" {
		t.Errorf("payload indexes (-want +got):\n%s", diff)
	}
	// Points carry both vectors (bm25 as a document for server-side
	// inference) and the payload.
	p := fake.upserts[0].GetPoints()[0]
	vecs := p.GetVectors().GetVectors().GetVectors()
	if len(vecs[denseName].GetDense().GetData()) != 384 || vecs[sparseName].GetDocument().GetModel() != bm25Model ||
		vecs[sparseName].GetDocument().GetText() == "" {
		t.Errorf("point vectors = %v", vecs)
	}
	wantPayload := map[string]any{"url": "https://runbooks.example.com/pg", "title": "Postgres", "chunk_index": int64(0),
		"heading_path": []any{"Postgres"}, "text": "Too many connections: put PgBouncer in front of Postgres.", "metadata": map[string]any{"team": "db"}}
	if diff := gocmp.Diff(qdrant.NewValueMap(wantPayload), p.GetPayload(), protoCmp()); diff != "" {
		t.Errorf("payload (-want +got):\n%s", diff)
	}
	if !fake.sawKey("qd-key") {
		t.Error("the API key was not sent")
	}

	// Hybrid search: two prefetches fused by RRF; scores are cosines.
	hits, err := s.Search(ctx, "ops", rag.Query{Text: "PgBouncer connections", TopK: 2, Filter: rag.Filter{Metadata: map[string]string{"team": "db"}}})
	if err != nil {
		t.Fatal(err)
	}
	q := fake.queries[len(fake.queries)-1]
	if q.GetQuery().GetFusion() != qdrant.Fusion_RRF || len(q.GetPrefetch()) != 2 ||
		q.GetPrefetch()[0].GetUsing() != denseName || q.GetPrefetch()[1].GetUsing() != sparseName ||
		q.GetPrefetch()[1].GetQuery().GetNearest().GetDocument().GetModel() != bm25Model ||
		q.GetFilter().GetMust()[0].GetField().GetKey() != "metadata.team" || q.GetLimit() != 2 {
		t.Errorf("hybrid query = %v", q)
	}
	if len(hits) != 2 || hits[0].URL != "https://runbooks.example.com/pg" || hits[0].ChunkIndex != 0 ||
		hits[0].Score <= 0 || hits[0].Score > 1 || hits[0].Metadata["team"] != "db" || !slices.Equal(hits[0].HeadingPath, []string{"Postgres"}) {
		t.Errorf("hits = %+v", hits)
	}

	// Modes query one named vector.
	for _, m := range []struct {
		mode  rag.Mode
		using string
	}{{rag.ModeDense, denseName}, {rag.ModeBM25, sparseName}} {
		if _, err := s.Search(ctx, "ops", rag.Query{Text: "lag", Mode: m.mode}); err != nil {
			t.Fatal(err)
		}
		if q := fake.queries[len(fake.queries)-1]; q.GetUsing() != m.using || len(q.GetPrefetch()) != 0 {
			t.Errorf("%v query = %v, want one query using %s", m.mode, q, m.using)
		}
	}

	// Re-ingest deletes the url's points by filter first.
	res, err = s.Upsert(ctx, "ops", doc("https://runbooks.example.com/pg", "Postgres", nil, "Use PgBouncer."))
	if err != nil {
		t.Fatal(err)
	}
	if res.ReplacedChunks != 2 || res.Chunks != 1 {
		t.Errorf("re-ingest = %+v, want 2 replaced, 1 stored", res)
	}
	del := fake.deletes[len(fake.deletes)-1]
	if del.GetPoints().GetFilter().GetMust()[0].GetField().GetMatch().GetKeyword() != "https://runbooks.example.com/pg" {
		t.Errorf("delete = %v, want a url filter", del)
	}
	st, err := s.Stats("ops")
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(rag.Stats{Documents: 2, Chunks: 2}, st); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}

	// Settings round-trip through Qdrant: a new Store reads them back.
	if err := s.PutSettings("ops", rag.Settings{Description: "runbooks", CalibratedThreshold: 0.2}); err != nil {
		t.Fatal(err)
	}
	s2 := openFake(t, url)
	got, err := s2.Settings("ops")
	if err != nil {
		t.Fatal(err)
	}
	if got.Description != "runbooks" || got.CalibratedThreshold != 0.2 || got.EmbeddingModel != "local-hash-v1-384" || got.Created.IsZero() {
		t.Errorf("Settings after reopen = %+v", got)
	}
	if diff := gocmp.Diff([]string{"ops"}, s2.Collections()); diff != "" {
		t.Errorf("Collections (-want +got):\n%s", diff)
	}
	sample, err := s2.Sample(ctx, "ops", 10)
	if err != nil || len(sample) != 2 {
		t.Errorf("Sample = %d hits, %v; want 2", len(sample), err)
	}
	if _, err := s2.Search(ctx, "nope", rag.Query{Text: "x"}); !errors.Is(err, rag.ErrNotFound) {
		t.Errorf("Search(unknown) = %v, want ErrNotFound", err)
	}
}

func (f *fakeQdrant) sawKey(k string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Contains(f.apiKeys, k)
}

func protoCmp() gocmp.Option {
	return gocmp.Comparer(func(a, b *qdrant.Value) bool { return proto.Equal(a, b) })
}

func TestOpenRejectsBadURL(t *testing.T) {
	for _, u := range []string{"", "localhost:6334", "ftp://x"} {
		if _, err := Open(t.Context(), Config{URL: u, Embedder: embedder.NewHashing(0)}); err == nil {
			t.Errorf("Open(%q) succeeded", u)
		}
	}
}

// TestRealQdrant runs against a real Qdrant (≥ 1.15, for server-side
// BM25) when QDRANT_URL is set, e.g.
//
//	docker run -p 6334:6334 qdrant/qdrant
//	QDRANT_URL=http://localhost:6334 go test ./internal/qdrantstore -run RealQdrant
func TestRealQdrant(t *testing.T) {
	u := os.Getenv("QDRANT_URL")
	if u == "" {
		t.Skip("set QDRANT_URL=http://localhost:6334 (a Qdrant ≥ 1.15 gRPC endpoint) to run against a real Qdrant")
	}
	ctx := t.Context()
	s, err := Open(ctx, Config{URL: u, APIKey: os.Getenv("QDRANT_API_KEY"), Embedder: embedder.NewHashing(0), Prefix: "ragtest_"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	name := fmt.Sprintf("t%d", os.Getpid())
	defer func() { _ = s.client.DeleteCollection(context.Background(), s.qname(name)) }()
	if _, err := s.Upsert(ctx, name,
		doc("https://example.com/ch", "Channels", nil, "A send on a closed channel proceeds by causing a run-time panic."),
		doc("https://example.com/maps", "Maps", nil, "A map is an unordered group of elements indexed by keys.")); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []rag.Mode{rag.ModeHybrid, rag.ModeDense, rag.ModeBM25} {
		hits, err := s.Search(ctx, name, rag.Query{Text: "send on closed channel", Mode: mode})
		if err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		if len(hits) == 0 || hits[0].URL != "https://example.com/ch" || math.IsNaN(hits[0].Score) {
			t.Errorf("%v hits = %+v, want the channel chunk first", mode, hits)
		}
	}
	res, err := s.Upsert(ctx, name, doc("https://example.com/ch", "Channels", nil, "Closing a closed channel panics too."))
	if err != nil || res.ReplacedChunks != 1 {
		t.Errorf("re-ingest = %+v, %v; want 1 replaced", res, err)
	}
	if st, err := s.Stats(name); err != nil || st.Chunks != 2 || st.Documents != 2 {
		t.Errorf("Stats = %+v, %v; want 2 documents, 2 chunks", st, err)
	}
}

// TestCollectionQuota checks that the Qdrant store refuses a collection
// past RAG_MAX_COLLECTIONS with a QuotaError, creating nothing in Qdrant.
func TestCollectionQuota(t *testing.T) {
	f, url := newFake(t)
	s, err := Open(t.Context(), Config{URL: url, APIKey: "qd-key", Embedder: embedder.NewHashing(0), Limits: rag.Limits{MaxCollections: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.PutSettings("a", rag.Settings{}); err != nil {
		t.Fatal(err)
	}
	err = s.PutSettings("b", rag.Settings{})
	var qe *rag.QuotaError
	if !errors.As(err, &qe) || qe.Limit != "collections" {
		t.Fatalf("PutSettings(b) = %v, want a collections quota error", err)
	}
	f.mu.Lock()
	_, hasA := f.cols["rag_a"]
	_, hasB := f.cols["rag_b"]
	f.mu.Unlock()
	if !hasA || hasB {
		t.Errorf("Qdrant holds rag_a %v, rag_b %v; want only rag_a", hasA, hasB)
	}
	if err := s.PutSettings("a", rag.Settings{Description: "updated"}); err != nil {
		t.Errorf("updating an existing collection at the limit: %v", err)
	}
}

// TestDeleteCollection: deleting a collection drops its Qdrant
// collection and frees its place in the collection quota; another store
// opened afterwards does not see it.
func TestDeleteCollection(t *testing.T) {
	f, url := newFake(t)
	s, err := Open(t.Context(), Config{URL: url, APIKey: "qd-key", Embedder: embedder.NewHashing(0), Limits: rag.Limits{MaxCollections: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if _, err := s.Upsert(t.Context(), "a", doc("https://x.example/1", "One", nil, "first chunk of one")); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteCollection(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteCollection(t.Context(), "a"); !errors.Is(err, rag.ErrNotFound) {
		t.Errorf("deleting it again = %v, want ErrNotFound", err)
	}
	if _, err := s.Settings("a"); !errors.Is(err, rag.ErrNotFound) {
		t.Errorf("Settings after delete = %v, want ErrNotFound", err)
	}
	if err := s.PutSettings("b", rag.Settings{}); err != nil {
		t.Errorf("creating another collection after the delete freed the quota: %v", err)
	}
	f.mu.Lock()
	dropped, _, hasA := slices.Clone(f.dropped), 0, f.cols["rag_a"] != nil
	f.mu.Unlock()
	if !slices.Equal(dropped, []string{"rag_a"}) || hasA {
		t.Errorf("Qdrant dropped %v and still has rag_a = %v; want rag_a dropped", dropped, hasA)
	}
	again := openFake(t, url)
	if got := again.Collections(); !slices.Equal(got, []string{"b"}) {
		t.Errorf("a store opened afterwards sees %v, want [b]", got)
	}
}

// TestTermStats checks the document frequencies the scope check weighs
// words by: counted over the collection's chunks (headings included),
// and counted again after the collection changes.
func TestTermStats(t *testing.T) {
	_, url := newFake(t)
	s := openFake(t, url)
	ctx := t.Context()
	if _, err := s.Upsert(ctx, "ops",
		doc("https://runbooks.example.com/pg", "Postgres", nil,
			"Too many connections: put PgBouncer in front of Postgres.", "Replication lag: check the WAL receiver."),
		doc("https://runbooks.example.com/kafka", "Kafka", nil, "Consumer lag grows when consumers are slow.")); err != nil {
		t.Fatal(err)
	}
	terms := []string{"postgr", "lag", "kafka", "ukulel"}
	check := func(want rag.TermStats) {
		t.Helper()
		got, err := s.TermStats("ops", terms)
		if err != nil {
			t.Fatal(err)
		}
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Errorf("TermStats (-want +got):\n%s", diff)
		}
	}
	check(rag.TermStats{Chunks: 3, DF: map[string]int{"postgr": 2, "lag": 2, "kafka": 1, "ukulel": 0}})
	if _, err := s.Upsert(ctx, "ops", doc("https://runbooks.example.com/music", "Ukulele", nil, "Tune the ukulele before playing.")); err != nil {
		t.Fatal(err)
	}
	check(rag.TermStats{Chunks: 4, DF: map[string]int{"postgr": 2, "lag": 2, "kafka": 1, "ukulel": 1}})
	if err := s.Delete(ctx, "ops", "https://runbooks.example.com/kafka"); err != nil {
		t.Fatal(err)
	}
	check(rag.TermStats{Chunks: 3, DF: map[string]int{"postgr": 2, "lag": 1, "kafka": 0, "ukulel": 1}})
	if _, err := s.TermStats("nope", terms); !errors.Is(err, rag.ErrNotFound) {
		t.Errorf("TermStats(nope) error = %v, want ErrNotFound", err)
	}
}

// TestDocumentQuota checks RAG_MAX_DOCUMENTS_PER_COLLECTION on Qdrant: a
// new document past the limit is refused before anything is written,
// replacing or deleting one at the limit is not.
func TestDocumentQuota(t *testing.T) {
	f, url := newFake(t)
	s, err := Open(t.Context(), Config{URL: url, APIKey: "qd-key", Embedder: embedder.NewHashing(0), Limits: rag.Limits{MaxDocuments: 2}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ctx := t.Context()
	steps := []struct {
		name  string
		docs  []rag.Document
		quota bool
		want  int // documents afterwards
	}{
		{"two documents", []rag.Document{doc("https://a/1", "A", nil, "one"), doc("https://a/2", "B", nil, "two")}, false, 2},
		{"a third", []rag.Document{doc("https://a/3", "C", nil, "three")}, true, 2},
		{"replacing one", []rag.Document{doc("https://a/2", "B", nil, "two", "more")}, false, 2},
		{"deleting one and adding one", []rag.Document{doc("https://a/1", "A", nil), doc("https://a/3", "C", nil, "three")}, false, 2},
		{"adding one again", []rag.Document{doc("https://a/4", "D", nil, "four")}, true, 2},
	}
	for _, st := range steps {
		upserts := len(f.upserts)
		_, err := s.Upsert(ctx, "ops", st.docs...)
		if got := errors.Is(err, rag.ErrQuota); got != st.quota || (err != nil && !st.quota) {
			t.Fatalf("%s: error %v, want quota error %v", st.name, err, st.quota)
		}
		if st.quota && len(f.upserts) != upserts {
			t.Errorf("%s: refused, yet %d points written", st.name, len(f.upserts)-upserts)
		}
		stats, err := s.Stats("ops")
		if err != nil {
			t.Fatal(err)
		}
		if stats.Documents != st.want {
			t.Errorf("%s: %d documents, want %d", st.name, stats.Documents, st.want)
		}
	}
}
