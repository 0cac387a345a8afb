// Package searchgrpc is the gRPC adapter of the search service: it converts
// between the generated types and the domain (package search), and alone
// maps domain errors to gRPC codes.
package searchgrpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
	"github.com/groundcrew/groundcrew/platform/actor"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/platform/weburl"
	"github.com/groundcrew/groundcrew/services/search/internal/search"
)

// DefaultMaxResults is what a request without max_results gets.
const DefaultMaxResults = 5

// Searcher is the domain service the handlers use.
type Searcher interface {
	Search(ctx context.Context, q search.Query) (search.Response, error)
	IndexDocuments(ctx context.Context, docs []search.Document) (search.IndexResult, error)
	Engines(ctx context.Context) []search.EngineStatus
	Documents(ctx context.Context, urls, excludeCollections []string) ([]search.Result, error)
}

// Counter reports how many documents the local index holds.
type Counter interface {
	Count(ctx context.Context) (uint64, error)
}

// SearchService implements searchv1.SearchServiceServer.
type SearchService struct {
	searchv1.UnimplementedSearchServiceServer
	svc    Searcher
	index  Counter
	logger *slog.Logger
}

var _ searchv1.SearchServiceServer = (*SearchService)(nil)

// NewSearchService returns the handlers over svc; index may be nil when no
// local index is open.
func NewSearchService(svc Searcher, index Counter, logger *slog.Logger) *SearchService {
	return &SearchService{svc: svc, index: index, logger: logger}
}

// Search runs one search.
func (s *SearchService) Search(ctx context.Context, req *searchv1.SearchRequest) (*searchv1.SearchResponse, error) {
	resp, err := s.svc.Search(ctx, toQuery(req))
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return fromResponse(resp), nil
}

// IndexDocuments adds documents to the local index.
func (s *SearchService) IndexDocuments(ctx context.Context, req *searchv1.IndexDocumentsRequest) (*searchv1.IndexDocumentsResponse, error) {
	docs := make([]search.Document, 0, len(req.GetDocuments()))
	var bad []grpcserver.FieldViolation
	for i, d := range req.GetDocuments() {
		// The proto's rule checks the syntax; IDNA and the other checks
		// of the canonical form need Go, and a document that cannot have
		// a key is bad input, not a partial failure.
		if err := weburl.Validate(d.GetUrl()); err != nil {
			var werr *weburl.Error
			reason := "must be an http or https address"
			if errors.As(err, &werr) {
				reason = "is not a valid web address: " + werr.Reason
			}
			bad = append(bad, grpcserver.FieldViolation{Field: fmt.Sprintf("documents[%d].url", i), Description: reason})
			continue
		}
		doc := toDocument(d)
		// Who indexes is the caller the edge authenticated, never a
		// name from the body.
		doc.IndexedBy = actor.FromContext(ctx)
		docs = append(docs, doc)
	}
	if len(bad) > 0 {
		return nil, grpcserver.FieldViolations(bad...)
	}
	res, err := s.svc.IndexDocuments(ctx, docs)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	out := &searchv1.IndexDocumentsResponse{
		Indexed:  int32(res.Indexed - res.Replaced),
		Replaced: int32(res.Replaced),
	}
	for _, r := range res.Rejected {
		out.Rejected = append(out.Rejected, &searchv1.DocumentRejection{Index: int32(r.Index), Url: r.URL, Reason: r.Reason})
	}
	for _, r := range res.Replacements {
		out.Replacements = append(out.Replacements, &searchv1.DocumentReplacement{
			Index: int32(r.Index), Url: r.URL, Provenance: fromProvenance(r.Provenance),
		})
	}
	if s.index != nil {
		n, err := s.index.Count(ctx)
		if err != nil {
			return nil, grpcserver.InternalError(ctx, s.logger, fmt.Errorf("counting indexed documents: %w", err), "IndexDocuments")
		}
		out.TotalDocuments = int64(n)
	}
	return out, nil
}

// GetDocuments looks local documents up by URL.
func (s *SearchService) GetDocuments(ctx context.Context, req *searchv1.GetDocumentsRequest) (*searchv1.GetDocumentsResponse, error) {
	docs, err := s.svc.Documents(ctx, req.GetUrls(), req.GetExcludeCollections())
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	out := &searchv1.GetDocumentsResponse{Documents: make([]*searchv1.SearchResult, 0, len(docs))}
	for _, d := range docs {
		out.Documents = append(out.Documents, FromResult(d))
	}
	return out, nil
}

// ListEngines reports every engine.
func (s *SearchService) ListEngines(ctx context.Context, _ *searchv1.ListEnginesRequest) (*searchv1.ListEnginesResponse, error) {
	out := &searchv1.ListEnginesResponse{}
	for _, e := range s.svc.Engines(ctx) {
		out.Engines = append(out.Engines, &searchv1.EngineStatus{
			Engine:         fromEngine(e.Name),
			Configured:     e.Configured,
			Healthy:        e.Healthy,
			ConfigVariable: e.EnvVar,
			Detail:         e.Detail,
			AutoOrder:      int32(e.AutoRank),
		})
	}
	return out, nil
}

// toStatus maps domain errors to codes. Engine failures name the engine and
// the fallbacks tried, but not the engines' own error texts (which can carry
// provider URLs); those go to the log.
func (s *SearchService) toStatus(ctx context.Context, err error) error {
	var invalid *search.InvalidArgumentError
	var notConfigured *search.NotConfiguredError
	var engineErr *search.EngineError
	switch {
	case errors.As(err, &invalid):
		return grpcserver.FieldViolations(grpcserver.FieldViolation{Field: fieldName(invalid.Field), Description: invalid.Reason})
	case errors.As(err, &notConfigured):
		return grpcserver.PreconditionFailed("ENGINE_NOT_CONFIGURED", "engines/"+notConfigured.Engine,
			fmt.Sprintf("engine %s is not configured: set %s", notConfigured.Engine, notConfigured.EnvVar))
	case errors.Is(err, search.ErrUnknownEngine):
		// protovalidate refuses undefined values first; this is the
		// handler's own guard, naming the field like every other 400.
		return grpcserver.FieldViolations(grpcserver.FieldViolation{
			Field:       "engine",
			Description: "is not a known engine; use one of " + strings.Join(knownEngineValues(), ", "),
		})
	case errors.As(err, &engineErr):
		s.logger.WarnContext(ctx, "search failed", "engine", engineErr.Engine, "tried", engineErr.Tried, "error", err)
		code := codes.Unavailable
		if errors.Is(err, context.DeadlineExceeded) {
			code = codes.DeadlineExceeded
		}
		return status.Error(code, engineMessage(engineErr, code))
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, "search canceled")
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, "search deadline exceeded")
	}
	return grpcserver.InternalError(ctx, s.logger, err, "search")
}

func engineMessage(e *search.EngineError, code codes.Code) string {
	var b strings.Builder
	what := "failed"
	if code == codes.DeadlineExceeded {
		what = "timed out"
	}
	fmt.Fprintf(&b, "search engine %s %s", e.Engine, what)
	switch {
	case e.FallbackTried:
		fmt.Fprintf(&b, " after falling back from %s", strings.Join(e.Tried[:len(e.Tried)-1], ", "))
	case e.NoFallback != "":
		fmt.Fprintf(&b, " (no fallback tried: %s)", e.NoFallback)
	}
	return b.String()
}

// fieldName turns a domain field name into the request's JSON path.
func fieldName(f string) string {
	switch f {
	case "text", "query":
		return "query"
	case "max_results", "MaxResults":
		return "max_results"
	}
	return f
}

var engineNames = map[searchv1.Engine]string{
	searchv1.Engine_ENGINE_UNSPECIFIED: "auto",
	searchv1.Engine_AUTO:               "auto",
	searchv1.Engine_LOCAL:              search.EngineLocal,
	searchv1.Engine_SEARXNG:            search.EngineSearxng,
	searchv1.Engine_EXA:                search.EngineExa,
	searchv1.Engine_TAVILY:             search.EngineTavily,
	searchv1.Engine_BRAVE:              search.EngineBrave,
}

// knownEngineValues lists the Engine values a request may name, as the
// client spells them (AUTO, SEARXNG, ...), in the proto's order.
func knownEngineValues() []string {
	values := searchv1.Engine(0).Descriptor().Values()
	out := make([]string, 0, values.Len())
	for i := range values.Len() {
		v := values.Get(i)
		if v.Number() != 0 {
			out = append(out, string(v.Name()))
		}
	}
	return out
}

func toEngine(e searchv1.Engine) string {
	if n, ok := engineNames[e]; ok {
		return n
	}
	// protovalidate rejects undefined values before this; keep the number
	// so the domain reports it as unknown.
	return fmt.Sprintf("engine(%d)", e)
}

func fromEngine(name string) searchv1.Engine {
	for e, n := range engineNames {
		if n == name && e != searchv1.Engine_ENGINE_UNSPECIFIED {
			return e
		}
	}
	return searchv1.Engine_ENGINE_UNSPECIFIED
}

func toQuery(req *searchv1.SearchRequest) search.Query {
	q := search.Query{
		Text:               req.GetQuery(),
		MaxResults:         DefaultMaxResults,
		Engine:             toEngine(req.GetEngine()),
		AllowedDomains:     req.GetAllowedDomains(),
		BlockedDomains:     req.GetBlockedDomains(),
		ExcludeCollections: req.GetExcludeCollections(),
		IncludeText:        req.GetIncludeText(),
	}
	if req.MaxResults != nil {
		q.MaxResults = int(req.GetMaxResults())
	}
	if req.GetMaxAge() != nil {
		q.MaxAge = req.GetMaxAge().AsDuration()
	}
	return q
}

func fromResponse(r search.Response) *searchv1.SearchResponse {
	out := &searchv1.SearchResponse{
		Engine:         fromEngine(r.Engine),
		DroppedResults: int32(r.Dropped + r.Duplicates),
		Cached:         r.Cached,
		Results:        make([]*searchv1.SearchResult, 0, len(r.Results)),
	}
	for _, res := range r.Results {
		out.Results = append(out.Results, FromResult(res))
	}
	for _, name := range r.FallbackFrom {
		out.FallbackFrom = append(out.FallbackFrom, fromEngine(name))
	}
	return out
}

// FromResult converts one domain result.
func FromResult(r search.Result) *searchv1.SearchResult {
	out := &searchv1.SearchResult{
		Title:        r.Title,
		Snippet:      r.Snippet,
		Url:          r.URL,
		SourceDomain: r.SourceDomain,
		Score:        r.Score,
		Text:         r.Text,
	}
	if !r.PublishedAt.IsZero() {
		out.PublishedAt = timestamppb.New(r.PublishedAt)
	}
	out.DisplayUrl = r.DisplayURL
	if out.DisplayUrl == "" {
		out.DisplayUrl = search.DisplayURL(r.URL)
	}
	out.MimeType = r.MimeType
	out.FaviconUrl = r.FaviconURL
	if r.Provenance != nil {
		out.Provenance = fromProvenance(*r.Provenance)
	}
	return out
}

func fromProvenance(p search.Provenance) *searchv1.DocumentProvenance {
	out := &searchv1.DocumentProvenance{
		IndexedBy:         p.IndexedBy,
		Revision:          int32(p.Revision),
		PreviousIndexedBy: p.PreviousIndexedBy,
	}
	if !p.IndexedAt.IsZero() {
		out.IndexTime = timestamppb.New(p.IndexedAt)
	}
	if !p.PreviousIndexedAt.IsZero() {
		out.PreviousIndexTime = timestamppb.New(p.PreviousIndexedAt)
	}
	return out
}

func toDocument(d *searchv1.Document) search.Document {
	return search.Document{
		URL:      d.GetUrl(),
		Title:    d.GetTitle(),
		Text:     d.GetText(),
		HTML:     d.GetHtml(),
		Metadata: toMetadata(d.GetMetadata()),
	}
}

// toMetadata flattens a JSON object to strings: nested values keep their
// JSON text.
func toMetadata(s *structpb.Struct) map[string]string {
	if len(s.GetFields()) == 0 {
		return nil
	}
	out := make(map[string]string, len(s.GetFields()))
	for k, v := range s.GetFields() {
		switch x := v.GetKind().(type) {
		case *structpb.Value_StringValue:
			out[k] = x.StringValue
		default:
			b, err := v.MarshalJSON()
			if err == nil {
				out[k] = string(b)
			}
		}
	}
	return out
}
