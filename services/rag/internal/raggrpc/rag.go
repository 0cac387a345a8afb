// Package raggrpc is the gRPC adapter of the rag service: it converts
// between the generated types and the domain (packages rag, library and
// answer), and alone maps domain errors to gRPC codes.
package raggrpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	ragv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/rag/v1"
	"github.com/groundcrew/groundcrew/platform/actor"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/services/rag/internal/answer"
	"github.com/groundcrew/groundcrew/services/rag/internal/library"
	"github.com/groundcrew/groundcrew/services/rag/internal/rag"
)

// Store is what the handlers read directly from the document store;
// both document stores implement it.
type Store interface {
	answer.Searcher
}

// Options configure a [RagService]; zero fields take defaults.
type Options struct {
	// Asker answers questions; the server builds it once with the
	// configured writer and its fallback. Default: an extractive Asker
	// over the store.
	Asker *answer.Asker
	// EmbeddingModel is the store's embedder name, checked against a
	// CreateCollection request's embedding_model.
	EmbeddingModel string
	// Logger receives failures and each answer's state path.
	Logger *slog.Logger
	// Now is the clock, for tests; default time.Now.
	Now func() time.Time
}

// RagService implements ragv1.RagServiceServer.
type RagService struct {
	ragv1.UnimplementedRagServiceServer
	lib   *library.Library
	store Store
	opts  Options
	log   *slog.Logger
}

var _ ragv1.RagServiceServer = (*RagService)(nil)

// NewRagService returns the handlers over a library and the store it
// manages.
func NewRagService(lib *library.Library, store Store, opts Options) *RagService {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Asker == nil {
		opts.Asker = answer.NewAsker(store, answer.Options{Logger: opts.Logger, Now: opts.Now})
	}
	return &RagService{lib: lib, store: store, opts: opts, log: opts.Logger}
}

// CreateCollection creates a collection, or updates the settings of an
// existing one (collections are also created by their first ingest, and
// the API has no separate update call).
func (s *RagService) CreateCollection(ctx context.Context, req *ragv1.CreateCollectionRequest) (*ragv1.CreateCollectionResponse, error) {
	c := req.GetCollection()
	if m := c.GetEmbeddingModel(); m != "" && m != s.opts.EmbeddingModel {
		return nil, grpcserver.FieldViolations(grpcserver.FieldViolation{
			Field:       "collection.embedding_model",
			Description: fmt.Sprintf("this service embeds with %q; leave it empty or name that model", s.opts.EmbeddingModel),
		})
	}
	settings := toSettings(c)
	settings.CreatedBy = actor.FromContext(ctx)
	info, err := s.lib.Create(ctx, c.GetName(), settings)
	if err != nil {
		return nil, s.toStatus(ctx, err, "creating a collection", "collection.name")
	}
	return &ragv1.CreateCollectionResponse{Collection: fromInfo(info)}, nil
}

// GetCollection returns a collection's settings and counts.
func (s *RagService) GetCollection(ctx context.Context, req *ragv1.GetCollectionRequest) (*ragv1.GetCollectionResponse, error) {
	info, err := s.lib.Info(req.GetCollection())
	if err != nil {
		return nil, s.toStatus(ctx, err, "reading a collection", "collection")
	}
	return &ragv1.GetCollectionResponse{Collection: fromInfo(info)}, nil
}

// ListCollections lists every collection by name.
func (s *RagService) ListCollections(ctx context.Context, _ *ragv1.ListCollectionsRequest) (*ragv1.ListCollectionsResponse, error) {
	out := &ragv1.ListCollectionsResponse{}
	for _, info := range s.lib.List() {
		out.Collections = append(out.Collections, fromInfo(info))
	}
	return out, nil
}

// IngestDocuments chunks and stores documents, creating the collection on
// first use; the scope threshold is recalibrated in the background.
func (s *RagService) IngestDocuments(ctx context.Context, req *ragv1.IngestDocumentsRequest) (*ragv1.IngestDocumentsResponse, error) {
	docs := make([]library.Document, 0, len(req.GetDocuments()))
	for _, d := range req.GetDocuments() {
		docs = append(docs, toDocument(d))
	}
	res, err := s.lib.IngestAs(ctx, req.GetCollection(), actor.FromContext(ctx), docs)
	if err != nil {
		return nil, s.toStatus(ctx, err, "ingesting documents", "collection")
	}
	return &ragv1.IngestDocumentsResponse{
		Documents:         int32(res.Documents),
		Chunks:            int32(res.Chunks),
		ReplacedChunks:    int32(res.ReplacedChunks),
		ReplacedDocuments: int32(len(res.Replaced)),
		Collection:        fromInfo(res.Collection),
	}, nil
}

// DeleteCollection deletes a collection with its documents and settings
// (admin scope at the gateway), freeing its place in the collection
// quota; the response describes what was deleted.
func (s *RagService) DeleteCollection(ctx context.Context, req *ragv1.DeleteCollectionRequest) (*ragv1.DeleteCollectionResponse, error) {
	info, err := s.lib.Delete(ctx, req.GetCollection())
	if err != nil {
		return nil, s.toStatus(ctx, err, "deleting a collection", "collection")
	}
	s.log.InfoContext(ctx, "collection deleted", "collection", info.Name, "documents", info.Stats.Documents,
		"chunks", info.Stats.Chunks, "by", actor.FromContext(ctx))
	return &ragv1.DeleteCollectionResponse{Collection: fromInfo(info)}, nil
}

// Retrieve returns the chunks most similar to a query.
func (s *RagService) Retrieve(ctx context.Context, req *ragv1.RetrieveRequest) (*ragv1.RetrieveResponse, error) {
	hits, err := s.store.Search(ctx, req.GetCollection(), toQuery(req))
	if err != nil {
		return nil, s.toStatus(ctx, err, "retrieving chunks", "collection")
	}
	out := &ragv1.RetrieveResponse{Chunks: make([]*ragv1.Chunk, 0, len(hits))}
	for _, h := range hits {
		out.Chunks = append(out.Chunks, fromHit(h))
	}
	return out, nil
}

// Ask answers a question from a collection. A question the collection does
// not cover gets the collection's out-of-scope answer and a reason. The
// writer's fallback is the Asker's (see answer.Options.Generator); the
// response's model says which writer answered.
func (s *RagService) Ask(ctx context.Context, req *ragv1.AskRequest) (*ragv1.AskResponse, error) {
	resp, err := s.ask(ctx, req.GetCollection(), req.GetQuery(), req.TopK, req.GetMetadata(), nil, nil)
	if err != nil {
		return nil, err
	}
	return &ragv1.AskResponse{Response: resp}, nil
}

// AskStream answers like Ask, sending each state change, the answer text
// as it is written, and last the whole AgentResponse. Errors found before
// the question is accepted (invalid question, unknown collection) end the
// stream with a status, like Ask's; later failures are a FAILED response.
func (s *RagService) AskStream(req *ragv1.AskStreamRequest, stream ragv1.RagService_AskStreamServer) error {
	ctx := stream.Context()
	// A failed Send means the client is gone; remember it so the answer
	// stops instead of writing into the void.
	var sendErr error
	send := func(ev *ragv1.AskStreamResponse) {
		if sendErr == nil {
			sendErr = stream.Send(ev)
		}
	}
	onState := func(st ragv1.AgentResponse_State) {
		send(&ragv1.AskStreamResponse{Event: &ragv1.AskStreamResponse_State{State: st}})
	}
	onDelta := func(text string) {
		if text != "" {
			send(&ragv1.AskStreamResponse{Event: &ragv1.AskStreamResponse_Delta{Delta: text}})
		}
	}
	resp, err := s.ask(ctx, req.GetCollection(), req.GetQuery(), req.TopK, req.GetMetadata(), onState, onDelta)
	if err != nil {
		return err
	}
	send(&ragv1.AskStreamResponse{Event: &ragv1.AskStreamResponse_Response{Response: resp}})
	return sendErr
}

// ask runs one question through the states RECEIVED → SCOPE_CHECK →
// PROCESSING → ANSWERING → COMPLETED | FAILED, reporting each to onState
// (when set) and answer text to onDelta (when set). It returns a status
// error for requests that cannot be answered at all (NotFound,
// InvalidArgument…) and a FAILED response when answering itself failed.
//
// The domain retrieves before it checks scope, because both scope guards
// look at the retrieved chunks; so SCOPE_CHECK covers retrieval and the
// checks, and PROCESSING (the retrieved chunks being prepared for the
// writer) follows only an in-scope verdict. An out-of-scope question goes
// RECEIVED → SCOPE_CHECK → COMPLETED.
func (s *RagService) ask(ctx context.Context, collection, query string, topK *int32, metadata map[string]string, onState func(ragv1.AgentResponse_State), onDelta func(string)) (*ragv1.AgentResponse, error) {
	start := s.opts.Now()
	var path []string
	state := func(st ragv1.AgentResponse_State) {
		path = append(path, st.String())
		if onState != nil {
			onState(st)
		}
	}
	state(ragv1.AgentResponse_RECEIVED)
	res, err := s.opts.Asker.Ask(ctx, answer.Request{
		Collection: collection,
		Question:   query,
		TopK:       int(topK32(topK)),
		Progress: func(st answer.Stage) {
			for _, ps := range fromStage(st) {
				state(ps)
			}
		},
		Delta:    onDelta,
		Metadata: metadata,
	})
	logAttrs := []any{"collection", collection, "query_chars", len([]rune(query))}
	var genErr *answer.GenerationError
	switch {
	case errors.As(err, &genErr):
		state(ragv1.AgentResponse_FAILED)
		s.log.WarnContext(ctx, "ask failed", append(logAttrs, "states", strings.Join(path, ">"), "error", err)...)
		return &ragv1.AgentResponse{
			State:        ragv1.AgentResponse_FAILED,
			Error:        "the answer could not be written; try again later",
			QueryTime:    s.opts.Now().Sub(start).Seconds(),
			Model:        genErr.Model,
			Metadata:     metadata,
			ReceivedTime: timestamppb.New(start),
		}, nil
	case err != nil:
		s.log.InfoContext(ctx, "ask rejected", append(logAttrs, "states", strings.Join(path, ">"), "error", err)...)
		return nil, s.toStatus(ctx, err, "answering a question", "collection")
	}
	state(ragv1.AgentResponse_COMPLETED)
	s.log.InfoContext(ctx, "ask", append(logAttrs, "states", strings.Join(path, ">"), "out_of_scope", res.IsOutOfScope,
		"model", res.Model, "query_time", res.QueryTime)...)
	return fromResult(res), nil
}

func topK32(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// fromStage maps an answering stage to the states it enters (see ask).
func fromStage(st answer.Stage) []ragv1.AgentResponse_State {
	switch st {
	case answer.StageRetrieving:
		return []ragv1.AgentResponse_State{ragv1.AgentResponse_SCOPE_CHECK}
	case answer.StageAnswering:
		return []ragv1.AgentResponse_State{ragv1.AgentResponse_PROCESSING, ragv1.AgentResponse_ANSWERING}
	}
	return nil
}

// toStatus maps domain errors to codes. field names the request field an
// unknown or invalid collection name came from.
func (s *RagService) toStatus(ctx context.Context, err error, doing, field string) error {
	var (
		docErr   *library.DocumentError
		quotaErr *rag.QuotaError
	)
	switch {
	case errors.As(err, &quotaErr):
		return status.Error(codes.ResourceExhausted, quotaErr.Public())
	case errors.Is(err, rag.ErrNotFound):
		return status.Error(codes.NotFound, "collection not found")
	case errors.Is(err, answer.ErrInvalidQuestion):
		return grpcserver.FieldViolations(grpcserver.FieldViolation{Field: "query", Description: reason(err, answer.ErrInvalidQuestion)})
	case errors.As(err, &docErr):
		return grpcserver.FieldViolations(grpcserver.FieldViolation{Field: fmt.Sprintf("documents[%d]", docErr.Index), Description: docErr.Reason})
	case errors.Is(err, rag.ErrInvalidName):
		return grpcserver.FieldViolations(grpcserver.FieldViolation{Field: field, Description: "must be 1..63 lower-case letters, digits, '-' or '_'"})
	case errors.Is(err, rag.ErrEmbedderMismatch):
		return grpcserver.PreconditionFailed("EMBEDDING_MODEL_MISMATCH", "collections", "the collection was embedded with another model than this service's; re-ingest it into a new collection")
	case errors.Is(err, rag.ErrClosed):
		return status.Error(codes.Unavailable, "the service is shutting down")
	}
	// rag.ErrInvalidArgument is not mapped: requests are validated
	// before they reach the store, so one coming back is our bug.
	return grpcserver.InternalError(ctx, s.log, err, doing)
}

// reason strips the sentinel's text from a domain error, leaving the part
// written for the caller.
func reason(err, sentinel error) string {
	msg := err.Error()
	if i := strings.Index(msg, sentinel.Error()+": "); i >= 0 {
		return msg[i+len(sentinel.Error())+2:]
	}
	return msg
}

// clamp01 keeps a similarity inside the [0,1] the contract promises,
// whatever the store computed.
func clamp01(x float64) float64 {
	return min(max(x, 0), 1)
}
