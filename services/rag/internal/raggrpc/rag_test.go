package raggrpc

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"

	ragv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/rag/v1"
	"github.com/groundcrew/groundcrew/platform/actor"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/platform/grpcserver/grpcservertest"
	"github.com/groundcrew/groundcrew/platform/logging/logtest"
	"github.com/groundcrew/groundcrew/services/rag/internal/answer"
	"github.com/groundcrew/groundcrew/services/rag/internal/embedder"
	"github.com/groundcrew/groundcrew/services/rag/internal/library"
	"github.com/groundcrew/groundcrew/services/rag/internal/rag"
	"github.com/groundcrew/groundcrew/services/rag/internal/vectorindex"
)

// fixture is a rag service on a real gRPC transport (a :0 listener) with
// the embedded store, and a client to it.
type fixture struct {
	client ragv1.RagServiceClient
	lib    *library.Library
	store  *vectorindex.Store
	logs   *logtest.Buffer
}

type fixtureOptions struct {
	generator answer.Generator
	// wrap replaces the store the handlers read (not the library's).
	wrap func(Store) Store
	// limits are the store's quotas.
	limits rag.Limits
	// library sets the library's options (its logger is the fixture's).
	library library.Options
}

// newFixtureWithLibrary is newFixture with library options.
func newFixtureWithLibrary(t *testing.T, lo library.Options) *fixture {
	return newFixture(t, fixtureOptions{library: lo})
}

func newFixture(t *testing.T, o fixtureOptions) *fixture {
	t.Helper()
	logs := &logtest.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	emb := embedder.NewHashing(0)
	store, err := vectorindex.Open(t.TempDir(), emb, vectorindex.Options{NoSync: true, Limits: o.limits})
	if err != nil {
		t.Fatal(err)
	}
	lo := o.library
	lo.Logger = logger
	lib := library.New(store, lo)
	t.Cleanup(func() { lib.Close(); _ = store.Close() })
	var handlerStore Store = store
	if o.wrap != nil {
		handlerStore = o.wrap(store)
	}
	srv, err := grpcserver.New(grpcserver.Config{GRPCAddr: "127.0.0.1:0"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ragv1.RegisterRagServiceServer(srv, NewRagService(lib, handlerStore, Options{
		Asker:          answer.NewAsker(handlerStore, answer.Options{Generator: o.generator, Logger: logger}),
		EmbeddingModel: emb.Name(),
		Logger:         logger,
	}))
	conn := grpcservertest.Dial(t, srv)
	return &fixture{client: ragv1.NewRagServiceClient(conn), lib: lib, store: store, logs: logs}
}

// ingest stores documents and waits for the collection's calibration.
func (f *fixture) ingest(t *testing.T, collection string, docs ...*ragv1.Document) *ragv1.IngestDocumentsResponse {
	t.Helper()
	ctx := t.Context()
	resp, err := f.client.IngestDocuments(ctx, &ragv1.IngestDocumentsRequest{Collection: collection, Documents: docs})
	if err != nil {
		t.Fatalf("IngestDocuments: %v", err)
	}
	if err := f.lib.WaitCalibrated(ctx, collection); err != nil {
		t.Fatal(err)
	}
	return resp
}

func textDoc(url, title, text string) *ragv1.Document {
	return &ragv1.Document{Url: url, Title: title, Content: &ragv1.Document_Text{Text: text}}
}

// goSpec returns the Go specification shipped with the Go toolchain.
func goSpec(t *testing.T) string {
	t.Helper()
	path := filepath.Join(runtime.GOROOT(), "doc", "go_spec.html")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("the Go specification is not at %s (a Go installation without doc/): %v", path, err)
	}
	return string(b)
}

const (
	specURL   = "https://go.dev/ref/spec"
	specTitle = "The Go Programming Language Specification"
)

// TestGoSpec is the example: the Go specification ingested into
// "gospec" answers a question about channels from the right section, and
// a baking question is out of scope.
func TestGoSpec(t *testing.T) {
	spec := goSpec(t)
	f := newFixture(t, fixtureOptions{})
	ctx := t.Context()
	// The spec's title is in a Go-website comment, not in <title>: the
	// client names it, as rag-ingest does.
	ing := f.ingest(t, "gospec", &ragv1.Document{Url: specURL, Title: specTitle, Content: &ragv1.Document_Html{Html: spec}})
	if ing.GetDocuments() != 1 || ing.GetChunks() < 100 || ing.GetCollection().GetName() != "gospec" {
		t.Fatalf("IngestDocuments = %v, want 1 document in 100+ chunks of gospec", ing)
	}

	got, err := f.client.GetCollection(ctx, &ragv1.GetCollectionRequest{Collection: "gospec"})
	if err != nil {
		t.Fatal(err)
	}
	c := got.GetCollection()
	if c.GetChunkCount() != int64(ing.GetChunks()) || c.GetDocumentCount() != 1 ||
		c.GetScopeThreshold() == answer.DefaultThreshold || c.GetScopeThreshold() <= 0 ||
		c.GetOutOfScopeAnswer() != rag.DefaultOutOfScopeAnswer || c.GetCreateTime() == nil {
		t.Errorf("GetCollection = %v, want counts, a calibrated threshold, the default out-of-scope answer and a create time", c)
	}

	ask, err := f.client.Ask(ctx, &ragv1.AskRequest{Collection: "gospec", Query: "What happens when you send on a closed channel?"})
	if err != nil {
		t.Fatal(err)
	}
	r := ask.GetResponse()
	if !r.GetSuccess() || r.GetIsOutOfScope() || r.GetState() != ragv1.AgentResponse_COMPLETED || r.GetModel() != answer.ExtractiveModel {
		t.Fatalf("Ask = %v, want a completed in-scope extractive answer", r)
	}
	if !strings.Contains(r.GetAnswer(), "panic") {
		t.Errorf("answer = %q, want it to say a send on a closed channel panics", r.GetAnswer())
	}
	const wantPrimary = "Source: Document 1: [The Go Programming Language Specification] (https://go.dev/ref/spec)"
	if r.GetPrimarySource() != wantPrimary {
		t.Errorf("primary_source = %q, want %q", r.GetPrimarySource(), wantPrimary)
	}
	// The primary source is Document 1, the first entry of sources; the
	// chunk it names must come from a section about closing or sending.
	if len(r.GetSources()) == 0 || len(r.GetMatchedChunks()) == 0 {
		t.Fatalf("sources %v, matched chunks %d: want both", r.GetSources(), len(r.GetMatchedChunks()))
	}
	primary := r.GetSources()[0]
	var section string
	for _, ch := range r.GetMatchedChunks() {
		if s := ch.GetSimilarityScore(); s < 0 || s > 1 {
			t.Errorf("chunk similarity %v outside [0,1]", s)
		}
		if proto.Equal(ch.GetSource(), primary) {
			section = strings.Join(ch.GetHeadingPath(), " > ")
		}
	}
	if !strings.Contains(section, "Close") && !strings.Contains(section, "Send statements") {
		t.Errorf("primary chunk is in section %q, want Close or Send statements", section)
	}
	if r.GetQueryTime() <= 0 || r.GetQueryTime() > 5 {
		t.Errorf("query_time = %v s, want a small positive number of seconds", r.GetQueryTime())
	}

	ask, err = f.client.Ask(ctx, &ragv1.AskRequest{Collection: "gospec", Query: "How do I bake sourdough bread?"})
	if err != nil {
		t.Fatal(err)
	}
	r = ask.GetResponse()
	if !r.GetIsOutOfScope() || !r.GetSuccess() || r.GetAnswer() != rag.DefaultOutOfScopeAnswer ||
		r.GetOutOfScopeReason() == "" || r.GetPrimarySource() != "" || r.GetState() != ragv1.AgentResponse_COMPLETED {
		t.Errorf("Ask(sourdough) = %v, want the default out-of-scope answer with a reason", r)
	}
	logs := f.logs.String()
	for _, want := range []string{
		"states=RECEIVED>SCOPE_CHECK>PROCESSING>ANSWERING>COMPLETED",
		"states=RECEIVED>SCOPE_CHECK>COMPLETED",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
}

// runbooks is a small collection for the tests that need no spec.
var runbooks = []*ragv1.Document{
	textDoc("https://runbooks.example.com/postgres", "Postgres connections",
		"Too many connections to Postgres: raise max_connections or put PgBouncer in front of the database.\n\nPgBouncer pools client connections in transaction mode."),
	textDoc("https://runbooks.example.com/kafka", "Kafka consumer lag",
		"Consumer lag grows when consumers are slower than producers. Scale the consumer group or speed up processing."),
	{Url: "https://runbooks.example.com/checkout", Title: "Checkout errors",
		Content: &ragv1.Document_Markdown{Markdown: "# Checkout errors\n\n## 5xx responses\n\nWhen checkout returns 5xx errors, check the payments upstream first and roll back the last deploy."}},
}

func TestErrors(t *testing.T) {
	failing := func(s Store) Store { return failingStore{s} }
	f := newFixture(t, fixtureOptions{})
	broken := newFixture(t, fixtureOptions{wrap: failing})
	f.ingest(t, "runbooks", runbooks...)
	broken.ingest(t, "runbooks", runbooks...)
	ctx := t.Context()
	tests := []struct {
		name      string
		call      func(ragv1.RagServiceClient) error
		code      codes.Code
		field     string // a field violation wanted, if any
		forbidden string // text that must not reach the client
	}{
		{"ask unknown collection", func(c ragv1.RagServiceClient) error {
			_, err := c.Ask(ctx, &ragv1.AskRequest{Collection: "nope", Query: "postgres connections"})
			return err
		}, codes.NotFound, "", ""},
		{"retrieve unknown collection", func(c ragv1.RagServiceClient) error {
			_, err := c.Retrieve(ctx, &ragv1.RetrieveRequest{Collection: "nope", Query: "postgres"})
			return err
		}, codes.NotFound, "", ""},
		{"get unknown collection", func(c ragv1.RagServiceClient) error {
			_, err := c.GetCollection(ctx, &ragv1.GetCollectionRequest{Collection: "nope"})
			return err
		}, codes.NotFound, "", ""},
		{"stream unknown collection", func(c ragv1.RagServiceClient) error {
			st, err := c.AskStream(ctx, &ragv1.AskStreamRequest{Collection: "nope", Query: "postgres"})
			if err != nil {
				return err
			}
			for {
				if _, err := st.Recv(); err != nil {
					return err
				}
			}
		}, codes.NotFound, "", ""},
		{"blank query", func(c ragv1.RagServiceClient) error {
			_, err := c.Ask(ctx, &ragv1.AskRequest{Collection: "runbooks", Query: "   "})
			return err
		}, codes.InvalidArgument, "query", ""},
		{"long query", func(c ragv1.RagServiceClient) error {
			_, err := c.Ask(ctx, &ragv1.AskRequest{Collection: "runbooks", Query: strings.Repeat("é", 2001)})
			return err
		}, codes.InvalidArgument, "query", ""},
		{"top_k too large", func(c ragv1.RagServiceClient) error {
			_, err := c.Retrieve(ctx, &ragv1.RetrieveRequest{Collection: "runbooks", Query: "postgres", TopK: proto.Int32(51)})
			return err
		}, codes.InvalidArgument, "top_k", ""},
		{"bad collection name", func(c ragv1.RagServiceClient) error {
			_, err := c.IngestDocuments(ctx, &ragv1.IngestDocumentsRequest{Collection: "Bad Name", Documents: runbooks[:1]})
			return err
		}, codes.InvalidArgument, "collection", ""},
		{"non-http url", func(c ragv1.RagServiceClient) error {
			_, err := c.IngestDocuments(ctx, &ragv1.IngestDocumentsRequest{Collection: "runbooks", Documents: []*ragv1.Document{textDoc("file:///etc/passwd", "", "x")}})
			return err
		}, codes.InvalidArgument, "documents[0].url", ""},
		{"other embedding model", func(c ragv1.RagServiceClient) error {
			_, err := c.CreateCollection(ctx, &ragv1.CreateCollectionRequest{Collection: &ragv1.Collection{Name: "x", EmbeddingModel: "text-embedding-3-large"}})
			return err
		}, codes.InvalidArgument, "collection.embedding_model", ""},
		{"store failure is internal", func(c ragv1.RagServiceClient) error {
			_, err := broken.client.Retrieve(ctx, &ragv1.RetrieveRequest{Collection: "runbooks", Query: "postgres"})
			return err
		}, codes.Internal, "", "/var/secret"},
		{"store failure in ask is internal", func(c ragv1.RagServiceClient) error {
			_, err := broken.client.Ask(ctx, &ragv1.AskRequest{Collection: "runbooks", Query: "postgres"})
			return err
		}, codes.Internal, "", "/var/secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call(f.client)
			st := status.Convert(err)
			if st.Code() != tt.code {
				t.Fatalf("code = %v (%v), want %v", st.Code(), err, tt.code)
			}
			if tt.forbidden != "" && strings.Contains(st.Message(), tt.forbidden) {
				t.Errorf("message %q leaks %q", st.Message(), tt.forbidden)
			}
			if tt.field == "" {
				return
			}
			var fields []string
			for _, d := range st.Details() {
				if br, ok := d.(*errdetails.BadRequest); ok {
					for _, v := range br.GetFieldViolations() {
						fields = append(fields, v.GetField())
					}
				}
			}
			found := false
			for _, fl := range fields {
				found = found || fl == tt.field
			}
			if !found {
				t.Errorf("field violations %v, want one on %q", fields, tt.field)
			}
		})
	}
}

// failingStore fails every search with an error whose text must stay in
// the server's log.
type failingStore struct{ Store }

func (failingStore) Search(context.Context, string, rag.Query) ([]rag.Hit, error) {
	return nil, errors.New("reading /var/secret/rag/runbooks.rag: input/output error")
}

func TestCollections(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := t.Context()
	created, err := f.client.CreateCollection(ctx, &ragv1.CreateCollectionRequest{Collection: &ragv1.Collection{
		Name: "ops", Description: "Operations runbooks", OutOfScopeAnswer: "Ask the ops channel instead.",
	}})
	if err != nil {
		t.Fatal(err)
	}
	ignore := protocmp.IgnoreFields(&ragv1.Collection{}, "create_time")
	want := &ragv1.Collection{Name: "ops", Description: "Operations runbooks", OutOfScopeAnswer: "Ask the ops channel instead.",
		EmbeddingModel: embedder.NewHashing(0).Name(), ScopeThreshold: answer.DefaultThreshold}
	if diff := cmp.Diff(want, created.GetCollection(), protocmp.Transform(), ignore); diff != "" {
		t.Errorf("CreateCollection (-want +got):\n%s", diff)
	}
	ing := f.ingest(t, "ops", runbooks...)
	// The collection created on first ingest gets default settings.
	f.ingest(t, "adhoc", runbooks[0])

	list, err := f.client.ListCollections(ctx, &ragv1.ListCollectionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range list.GetCollections() {
		names = append(names, c.GetName())
	}
	if diff := cmp.Diff([]string{"adhoc", "ops"}, names); diff != "" {
		t.Errorf("ListCollections names (-want +got):\n%s", diff)
	}
	if c := list.GetCollections()[1]; c.GetChunkCount() != int64(ing.GetChunks()) || c.GetDocumentCount() != 3 || c.GetDescription() != "Operations runbooks" {
		t.Errorf("ops = %v, want 3 documents, its chunks and its description kept across ingest", c)
	}
	if c := list.GetCollections()[0]; c.GetOutOfScopeAnswer() != rag.DefaultOutOfScopeAnswer || c.GetDescription() != "" {
		t.Errorf("adhoc = %v, want default settings", c)
	}

	// The collection's own out-of-scope answer is used.
	ask, err := f.client.Ask(ctx, &ragv1.AskRequest{Collection: "ops", Query: "Who won the football world cup?"})
	if err != nil {
		t.Fatal(err)
	}
	if r := ask.GetResponse(); !r.GetIsOutOfScope() || r.GetAnswer() != "Ask the ops channel instead." {
		t.Errorf("Ask = %v, want the collection's out-of-scope answer", r)
	}

	// Creating an existing collection updates its settings.
	upd, err := f.client.CreateCollection(ctx, &ragv1.CreateCollectionRequest{Collection: &ragv1.Collection{Name: "ops", Description: "Runbooks v2"}})
	if err != nil {
		t.Fatal(err)
	}
	if c := upd.GetCollection(); c.GetDescription() != "Runbooks v2" || c.GetChunkCount() != int64(ing.GetChunks()) ||
		c.GetOutOfScopeAnswer() != rag.DefaultOutOfScopeAnswer {
		t.Errorf("CreateCollection(existing) = %v, want the new settings and the chunks kept", c)
	}
}

func TestReingestAndRetrieve(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := t.Context()
	meta, err := structpb.NewStruct(map[string]any{"team": "payments", "tier": 1})
	if err != nil {
		t.Fatal(err)
	}
	docs := []*ragv1.Document{proto.Clone(runbooks[0]).(*ragv1.Document), runbooks[1], runbooks[2]}
	docs[2] = proto.Clone(docs[2]).(*ragv1.Document)
	docs[2].Metadata = meta
	f.ingest(t, "ops", docs...)

	resp, err := f.client.Retrieve(ctx, &ragv1.RetrieveRequest{Collection: "ops", Query: "checkout 5xx errors", TopK: proto.Int32(1)})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetChunks()) != 1 {
		t.Fatalf("Retrieve = %v, want 1 chunk", resp)
	}
	got := resp.GetChunks()[0]
	want := &ragv1.Chunk{
		Text:        "When checkout returns 5xx errors, check the payments upstream first and roll back the last deploy.",
		Source:      &ragv1.Source{Url: "https://runbooks.example.com/checkout", Title: "Checkout errors"},
		HeadingPath: []string{"Checkout errors", "5xx responses"},
		// The document's metadata (as stored: strings) and the heading
		// path (issue 19).
		Metadata: &structpb.Struct{Fields: map[string]*structpb.Value{
			"team":         structpb.NewStringValue("payments"),
			"tier":         structpb.NewStringValue("1"),
			"heading_path": structpb.NewStringValue("Checkout errors > 5xx responses"),
		}},
	}
	if diff := cmp.Diff(want, got, protocmp.Transform(), protocmp.IgnoreFields(&ragv1.Chunk{}, "similarity_score")); diff != "" {
		t.Errorf("Retrieve (-want +got):\n%s", diff)
	}
	if s := got.GetSimilarityScore(); s <= 0 || s > 1 {
		t.Errorf("similarity %v, want in (0,1]", s)
	}

	filtered := []struct {
		name    string
		filters map[string]string
		want    int
	}{
		{"string label", map[string]string{"team": "payments"}, 1},
		{"number label", map[string]string{"tier": "1"}, 1},
		{"no match", map[string]string{"team": "search"}, 0},
	}
	for _, tt := range filtered {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := f.client.Retrieve(ctx, &ragv1.RetrieveRequest{Collection: "ops", Query: "errors connections lag", Filters: tt.filters, TopK: proto.Int32(10)})
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.GetChunks()) != tt.want {
				t.Errorf("Retrieve with %v = %d chunks, want %d", tt.filters, len(resp.GetChunks()), tt.want)
			}
		})
	}

	// A threshold above every similarity leaves nothing.
	resp, err = f.client.Retrieve(ctx, &ragv1.RetrieveRequest{Collection: "ops", Query: "checkout", ScoreThreshold: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetChunks()) != 0 {
		t.Errorf("Retrieve with threshold 1 = %d chunks, want 0", len(resp.GetChunks()))
	}

	// Re-ingesting a URL replaces its chunks: the old text is gone.
	ing := f.ingest(t, "ops", textDoc("https://runbooks.example.com/postgres", "Postgres connections",
		"Postgres replication lag: check the replica's WAL receiver and network throughput."))
	if ing.GetReplacedChunks() < 1 || ing.GetCollection().GetDocumentCount() != 3 {
		t.Errorf("re-ingest = %v, want replaced chunks and still 3 documents", ing)
	}
	resp, err = f.client.Retrieve(ctx, &ragv1.RetrieveRequest{Collection: "ops", Query: "PgBouncer max_connections", TopK: proto.Int32(50)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range resp.GetChunks() {
		if strings.Contains(c.GetText(), "PgBouncer") {
			t.Errorf("stale chunk after re-ingest: %q", c.GetText())
		}
	}
}

// TestCalibrationInBackground shows that ingest returns before the
// calibration and that the threshold lands afterwards.
func TestCalibrationInBackground(t *testing.T) {
	spec := goSpec(t)
	f := newFixture(t, fixtureOptions{})
	ctx := t.Context()
	if _, err := f.client.IngestDocuments(ctx, &ragv1.IngestDocumentsRequest{Collection: "gospec",
		Documents: []*ragv1.Document{{Url: specURL, Content: &ragv1.Document_Html{Html: spec}}}}); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := f.lib.WaitCalibrated(wctx, "gospec"); err != nil {
		t.Fatal(err)
	}
	s, err := f.store.Settings("gospec")
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.store.Stats("gospec")
	if s.CalibratedThreshold <= 0 || s.CalibratedChunks != st.Chunks {
		t.Errorf("settings %+v after calibration, want a threshold learnt on %d chunks", s, st.Chunks)
	}
}

// fakeWriter is a streaming answer writer: it writes pieces, then fails
// with err if set.
type fakeWriter struct {
	pieces []string
	err    error
}

func (w *fakeWriter) Model() string { return "fake-llm" }

func (w *fakeWriter) Generate(ctx context.Context, q string, chunks []rag.Hit) (answer.Draft, error) {
	return w.GenerateStream(ctx, q, chunks, func(string) {})
}

func (w *fakeWriter) GenerateStream(_ context.Context, _ string, chunks []rag.Hit, delta func(string)) (answer.Draft, error) {
	for _, p := range w.pieces {
		delta(p)
	}
	if w.err != nil {
		return answer.Draft{}, w.err
	}
	return answer.Draft{Text: strings.Join(w.pieces, ""), Primary: min(1, len(chunks)-1), Model: "fake-llm"}, nil
}

var _ answer.StreamGenerator = (*fakeWriter)(nil)

// collect reads a whole AskStream.
func collect(t *testing.T, c ragv1.RagServiceClient, req *ragv1.AskStreamRequest) (states []ragv1.AgentResponse_State, deltas []string, final *ragv1.AgentResponse) {
	t.Helper()
	st, err := c.AskStream(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("AskStream: %v", err)
		}
		if final != nil {
			t.Errorf("event %v after the final response", ev)
		}
		switch e := ev.GetEvent().(type) {
		case *ragv1.AskStreamResponse_State:
			states = append(states, e.State)
		case *ragv1.AskStreamResponse_Delta:
			deltas = append(deltas, e.Delta)
		case *ragv1.AskStreamResponse_Response:
			final = e.Response
		}
	}
}

func TestAskStream(t *testing.T) {
	inScope := []ragv1.AgentResponse_State{ragv1.AgentResponse_RECEIVED, ragv1.AgentResponse_SCOPE_CHECK,
		ragv1.AgentResponse_PROCESSING, ragv1.AgentResponse_ANSWERING, ragv1.AgentResponse_COMPLETED}
	failed := append(inScope[:4:4], ragv1.AgentResponse_FAILED)
	tests := []struct {
		name       string
		gen        answer.Generator
		query      string
		wantStates []ragv1.AgentResponse_State
		wantDeltas []string // nil: one delta equal to the answer
		wantModel  string
		wantOOS    bool
		wantFailed bool
	}{
		{name: "extractive", query: "How do I fix too many Postgres connections?",
			wantStates: inScope, wantModel: answer.ExtractiveModel},
		{name: "streaming writer", gen: &fakeWriter{pieces: []string{"Put PgBouncer ", "in front [2]", "."}},
			query: "How do I fix too many Postgres connections?", wantStates: inScope,
			wantDeltas: []string{"Put PgBouncer ", "in front [2]", "."}, wantModel: "fake-llm"},
		{name: "writer fails before writing: extractive fallback", gen: &fakeWriter{err: errors.New("HTTP 500 from https://llm.internal")},
			query: "How do I fix too many Postgres connections?", wantStates: inScope, wantModel: answer.ExtractiveModel},
		{name: "writer fails after writing: failed", gen: &fakeWriter{pieces: []string{"Put "}, err: errors.New("stream reset")},
			query: "How do I fix too many Postgres connections?", wantStates: failed, wantDeltas: []string{"Put "},
			wantModel: "fake-llm", wantFailed: true},
		{name: "out of scope", query: "How do I bake sourdough bread?",
			wantStates: []ragv1.AgentResponse_State{ragv1.AgentResponse_RECEIVED, ragv1.AgentResponse_SCOPE_CHECK, ragv1.AgentResponse_COMPLETED},
			wantDeltas: []string{}, wantOOS: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, fixtureOptions{generator: tt.gen})
			f.ingest(t, "ops", runbooks...)
			states, deltas, final := collect(t, f.client, &ragv1.AskStreamRequest{Collection: "ops", Query: tt.query})
			if diff := cmp.Diff(tt.wantStates, states); diff != "" {
				t.Errorf("states (-want +got):\n%s", diff)
			}
			if final == nil {
				t.Fatal("no final response")
			}
			want := tt.wantDeltas
			if want == nil {
				want = []string{final.GetAnswer()}
			}
			if diff := cmp.Diff(want, deltas, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("deltas (-want +got):\n%s", diff)
			}
			if final.GetModel() != tt.wantModel || final.GetIsOutOfScope() != tt.wantOOS {
				t.Errorf("final = %v, want model %q, out of scope %v", final, tt.wantModel, tt.wantOOS)
			}
			if tt.wantFailed {
				if final.GetState() != ragv1.AgentResponse_FAILED || final.GetSuccess() || final.GetError() == "" ||
					strings.Contains(final.GetError(), "stream reset") {
					t.Errorf("final = %v, want FAILED with a safe error", final)
				}
				return
			}
			if final.GetState() != ragv1.AgentResponse_COMPLETED || !final.GetSuccess() {
				t.Errorf("final = %v, want COMPLETED and success", final)
			}
			if !tt.wantOOS && (final.GetPrimarySource() == "" || len(final.GetSources()) == 0) {
				t.Errorf("final = %v, want a primary source and sources", final)
			}
			if strings.Contains(final.GetAnswer(), "llm.internal") {
				t.Errorf("answer leaks the writer's error: %q", final.GetAnswer())
			}
		})
	}
}

// TestAskFallback checks unary Ask with a failing model: the extractive
// writer answers.
func TestAskFallback(t *testing.T) {
	f := newFixture(t, fixtureOptions{generator: &fakeWriter{err: errors.New("429 too many requests")}})
	f.ingest(t, "ops", runbooks...)
	resp, err := f.client.Ask(t.Context(), &ragv1.AskRequest{Collection: "ops", Query: "How do I fix too many Postgres connections?"})
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.GetResponse(); r.GetModel() != answer.ExtractiveModel || !r.GetSuccess() || !strings.Contains(r.GetAnswer(), "PgBouncer") {
		t.Errorf("Ask = %v, want an extractive answer about PgBouncer", r)
	}
	if !strings.Contains(f.logs.String(), "answering extractively") {
		t.Errorf("the fallback is not logged:\n%s", f.logs.String())
	}
}

// TestGoSpecSharedWord checks issue 17's examples over gRPC: questions
// sharing one word with the Go specification ("routine", "interface")
// are out of scope with the default answer and a reason naming the
// weighted coverage, while Go questions using those words are answered.
func TestGoSpecSharedWord(t *testing.T) {
	spec := goSpec(t)
	f := newFixture(t, fixtureOptions{})
	f.ingest(t, "gospec", &ragv1.Document{Url: specURL, Title: specTitle, Content: &ragv1.Document_Html{Html: spec}})
	tests := []struct {
		query      string
		outOfScope bool
	}{
		{"What is a good stretching routine for runners?", true},
		{"What interface does a USB-C charger use?", true},
		{"Which types satisfy the empty interface?", false},
		{"What happens if two goroutines read from the same channel?", false},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			resp, err := f.client.Ask(t.Context(), &ragv1.AskRequest{Collection: "gospec", Query: tt.query})
			if err != nil {
				t.Fatal(err)
			}
			r := resp.GetResponse()
			if r.GetIsOutOfScope() != tt.outOfScope || !r.GetSuccess() {
				t.Fatalf("Ask(%q) out of scope = %v (%s), want %v", tt.query, r.GetIsOutOfScope(), r.GetOutOfScopeReason(), tt.outOfScope)
			}
			if tt.outOfScope && (!strings.Contains(r.GetAnswer(), "sorry this content is not related to this book") ||
				!strings.Contains(r.GetOutOfScopeReason(), "weighted coverage")) {
				t.Errorf("Ask(%q) = answer %q, reason %q; want the default answer and the coverage reason", tt.query, r.GetAnswer(), r.GetOutOfScopeReason())
			}
		})
	}
}

// TestDeleteCollection: a deleted collection is gone from every read and
// frees its place in the collection quota, so a writer cannot hold the
// quota for good (issue 29).
func TestDeleteCollection(t *testing.T) {
	f := newFixture(t, fixtureOptions{limits: rag.Limits{MaxCollections: 1}})
	ctx := t.Context()
	f.ingest(t, "ops", runbooks...)
	_, err := f.client.IngestDocuments(ctx, &ragv1.IngestDocumentsRequest{Collection: "other", Documents: runbooks[:1]})
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("second collection at the quota: %v, want ResourceExhausted", err)
	}
	resp, err := f.client.DeleteCollection(ctx, &ragv1.DeleteCollectionRequest{Collection: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if c := resp.GetCollection(); c.GetName() != "ops" || c.GetDocumentCount() != int64(len(runbooks)) {
		t.Errorf("deleted collection = %v, want ops with %d documents", c, len(runbooks))
	}
	if _, err := f.client.GetCollection(ctx, &ragv1.GetCollectionRequest{Collection: "ops"}); status.Code(err) != codes.NotFound {
		t.Errorf("GetCollection after delete: %v, want NotFound", err)
	}
	if _, err := f.client.Ask(ctx, &ragv1.AskRequest{Collection: "ops", Query: "postgres connections"}); status.Code(err) != codes.NotFound {
		t.Errorf("Ask after delete: %v, want NotFound", err)
	}
	if _, err := f.client.DeleteCollection(ctx, &ragv1.DeleteCollectionRequest{Collection: "ops"}); status.Code(err) != codes.NotFound {
		t.Errorf("deleting it again: %v, want NotFound", err)
	}
	if _, err := f.client.DeleteCollection(ctx, &ragv1.DeleteCollectionRequest{Collection: "Bad Name"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("deleting an invalid name: %v, want InvalidArgument", err)
	}
	f.ingest(t, "other", runbooks[:1]...)
	list, err := f.client.ListCollections(ctx, &ragv1.ListCollectionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.GetCollections()) != 1 || list.GetCollections()[0].GetName() != "other" {
		t.Errorf("collections = %v, want only other", list.GetCollections())
	}
	if f.store.ChunksInMemory() != 1 {
		t.Errorf("%d chunks in memory, want only other's 1", f.store.ChunksInMemory())
	}
}

// TestIngestRecordsWhoReplaced: each document keeps who ingested it (the
// caller's key name, from the gateway's actor metadata) under
// "ingested_by", so a document that replaced an indexed one records who
// replaced it; a caller cannot write that key itself, and the
// replacement is logged with its actor.
func TestIngestRecordsWhoReplaced(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	as := func(name string) context.Context {
		return metadata.AppendToOutgoingContext(t.Context(), actor.MetadataKey, name)
	}
	doc := textDoc("https://runbooks.example.com/postgres", "Postgres connections", "Too many connections: put PgBouncer in front of Postgres.")
	first, err := f.client.IngestDocuments(as("ops-team"), &ragv1.IngestDocumentsRequest{Collection: "ops", Documents: []*ragv1.Document{doc}})
	if err != nil {
		t.Fatal(err)
	}
	if first.GetReplacedDocuments() != 0 {
		t.Errorf("first ingest replaced %d documents", first.GetReplacedDocuments())
	}
	forged := proto.Clone(doc).(*ragv1.Document)
	forged.Metadata, _ = structpb.NewStruct(map[string]any{"ingested_by": "ops-team", "team": "db"})
	second, err := f.client.IngestDocuments(as("leaked-ci"), &ragv1.IngestDocumentsRequest{Collection: "ops", Documents: []*ragv1.Document{forged}})
	if err != nil {
		t.Fatal(err)
	}
	if second.GetReplacedDocuments() != 1 {
		t.Errorf("second ingest replaced %d documents, want 1", second.GetReplacedDocuments())
	}
	got, err := f.client.Retrieve(t.Context(), &ragv1.RetrieveRequest{Collection: "ops", Query: "PgBouncer"})
	if err != nil || len(got.GetChunks()) == 0 {
		t.Fatalf("Retrieve: %v, %v", got, err)
	}
	meta := got.GetChunks()[0].GetMetadata().AsMap()
	if meta["ingested_by"] != "leaked-ci" || meta["team"] != "db" {
		t.Errorf("chunk metadata = %v, want ingested_by leaked-ci (not the forged value) and team db", meta)
	}
	if !strings.Contains(f.logs.String(), "document replaced") || !strings.Contains(f.logs.String(), "by=leaked-ci") {
		t.Errorf("no audit log line naming who replaced the document:\n%s", f.logs.String())
	}
	// Without an actor nothing is recorded, and nothing forged survives.
	if _, err := f.client.IngestDocuments(t.Context(), &ragv1.IngestDocumentsRequest{Collection: "ops", Documents: []*ragv1.Document{forged}}); err != nil {
		t.Fatal(err)
	}
	got, _ = f.client.Retrieve(t.Context(), &ragv1.RetrieveRequest{Collection: "ops", Query: "PgBouncer"})
	if _, ok := got.GetChunks()[0].GetMetadata().AsMap()["ingested_by"]; ok {
		t.Errorf("ingested_by kept without an actor: %v", got.GetChunks()[0].GetMetadata())
	}
}

// TestCollectionQuotaPerKey: one API key cannot create more than its
// share of collections, whether through CreateCollection or a first
// ingest; other keys still can, an existing collection still takes
// writes, and deleting one frees the key's place.
func TestCollectionQuotaPerKey(t *testing.T) {
	f := newFixtureWithLibrary(t, library.Options{MaxCollectionsPerKey: 2})
	as := func(name string) context.Context {
		return metadata.AppendToOutgoingContext(t.Context(), actor.MetadataKey, name)
	}
	ingest := func(ctx context.Context, collection string) error {
		_, err := f.client.IngestDocuments(ctx, &ragv1.IngestDocumentsRequest{Collection: collection, Documents: runbooks[:1]})
		return err
	}
	if err := ingest(as("writer"), "one"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.CreateCollection(as("writer"), &ragv1.CreateCollectionRequest{Collection: &ragv1.Collection{Name: "two"}}); err != nil {
		t.Fatal(err)
	}
	err := ingest(as("writer"), "three")
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(status.Convert(err).Message(), "at most 2 collections") {
		t.Fatalf("third collection of one key: %v, want ResourceExhausted naming the per-key limit", err)
	}
	if _, err := f.client.CreateCollection(as("writer"), &ragv1.CreateCollectionRequest{Collection: &ragv1.Collection{Name: "three"}}); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("CreateCollection past the key's quota: %v, want ResourceExhausted", err)
	}
	if _, err := f.client.GetCollection(t.Context(), &ragv1.GetCollectionRequest{Collection: "three"}); status.Code(err) != codes.NotFound {
		t.Errorf("the refused collection exists: %v", err)
	}
	if err := ingest(as("writer"), "one"); err != nil {
		t.Errorf("writing to the key's existing collection: %v", err)
	}
	if err := ingest(as("other"), "three"); err != nil {
		t.Errorf("another key creating a collection: %v", err)
	}
	if _, err := f.client.DeleteCollection(as("admin"), &ragv1.DeleteCollectionRequest{Collection: "one"}); err != nil {
		t.Fatal(err)
	}
	if err := ingest(as("writer"), "four"); err != nil {
		t.Errorf("after a delete the key has room again: %v", err)
	}
}

// TestCollectionNameRuleIsTheAPIs holds rag.ValidName, the rule the stores
// keep, equal to the API's: a name the request rules refuse
// (InvalidArgument) is one ValidName refuses, and a name they let through
// to the store (NotFound, as no collection exists) is one it accepts.
func TestCollectionNameRuleIsTheAPIs(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, name := range []string{
		"ops", "a", "0runbooks", "gospec-v2", "team_db", strings.Repeat("a", 63), strings.Repeat("a", 64),
		"", "Ops", "ops.v2", "-ops", "_ops", "ops v2", "ops/v2", "ops\n", "é",
	} {
		_, err := f.client.GetCollection(t.Context(), &ragv1.GetCollectionRequest{Collection: name})
		code := status.Code(err)
		if code != codes.InvalidArgument && code != codes.NotFound {
			t.Fatalf("GetCollection(%q) = %v, want InvalidArgument or NotFound", name, err)
		}
		if api := code == codes.NotFound; api != rag.ValidName(name) {
			t.Errorf("%q: the API accepts it: %v, rag.ValidName: %v", name, api, rag.ValidName(name))
		}
	}
}
