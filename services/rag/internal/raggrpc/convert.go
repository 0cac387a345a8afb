package raggrpc

import (
	"encoding/json"
	"strconv"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	ragv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/rag/v1"
	"github.com/groundcrew/groundcrew/services/rag/internal/answer"
	"github.com/groundcrew/groundcrew/services/rag/internal/chunker"
	"github.com/groundcrew/groundcrew/services/rag/internal/library"
	"github.com/groundcrew/groundcrew/services/rag/internal/rag"
)

// toSettings reads the settings a client may set on a collection.
func toSettings(c *ragv1.Collection) rag.Settings {
	return rag.Settings{
		Description:      c.GetDescription(),
		OutOfScopeAnswer: c.GetOutOfScopeAnswer(),
	}
}

// fromInfo describes a collection. The out-of-scope answer is shown as
// applied, so clients see the default text rather than an empty field.
func fromInfo(info library.Info) *ragv1.Collection {
	c := &ragv1.Collection{
		Name:             info.Name,
		Description:      info.Settings.Description,
		OutOfScopeAnswer: info.Settings.OutOfScopeAnswer,
		EmbeddingModel:   info.Settings.EmbeddingModel,
		DocumentCount:    int64(info.Stats.Documents),
		ChunkCount:       int64(info.Stats.Chunks),
		ScopeThreshold:   info.ScopeThreshold,
	}
	if c.OutOfScopeAnswer == "" {
		c.OutOfScopeAnswer = rag.DefaultOutOfScopeAnswer
	}
	if !info.Settings.Created.IsZero() {
		c.CreateTime = timestamppb.New(info.Settings.Created)
	}
	return c
}

// toDocument reads a document to ingest.
func toDocument(d *ragv1.Document) library.Document {
	out := library.Document{URL: d.GetUrl(), Title: d.GetTitle(), Metadata: toMetadata(d.GetMetadata())}
	switch c := d.GetContent().(type) {
	case *ragv1.Document_Html:
		out.Format, out.Content = chunker.FormatHTML, c.Html
	case *ragv1.Document_Markdown:
		out.Format, out.Content = chunker.FormatMarkdown, c.Markdown
	case *ragv1.Document_Text:
		out.Format, out.Content = chunker.FormatText, c.Text
	}
	return out
}

// toMetadata flattens a Struct into the string labels the store filters
// on: strings as they are, numbers and booleans as Go formats them (so a
// filter "tier": "1" matches the number 1), lists and objects as JSON;
// nulls are dropped.
func toMetadata(s *structpb.Struct) map[string]string {
	if len(s.GetFields()) == 0 {
		return nil
	}
	out := make(map[string]string, len(s.GetFields()))
	for k, v := range s.GetFields() {
		switch x := v.GetKind().(type) {
		case *structpb.Value_StringValue:
			out[k] = x.StringValue
		case *structpb.Value_NumberValue:
			out[k] = strconv.FormatFloat(x.NumberValue, 'f', -1, 64)
		case *structpb.Value_BoolValue:
			out[k] = strconv.FormatBool(x.BoolValue)
		case *structpb.Value_ListValue, *structpb.Value_StructValue:
			b, err := json.Marshal(v.AsInterface())
			if err == nil {
				out[k] = string(b)
			}
		}
	}
	return out
}

// toQuery reads a retrieval request.
func toQuery(req *ragv1.RetrieveRequest) rag.Query {
	q := rag.Query{
		Text:     req.GetQuery(),
		TopK:     int(topK32(req.TopK)),
		MinScore: req.GetScoreThreshold(),
	}
	if len(req.GetFilters()) > 0 {
		q.Filter.Metadata = req.GetFilters()
	}
	return q
}

// fromHit describes a retrieved chunk. Its similarity is the store's
// cosine clamped to [0,1] (see package rag), whatever the ranking.
func fromHit(h rag.Hit) *ragv1.Chunk {
	return &ragv1.Chunk{
		Text:            h.Text,
		SimilarityScore: clamp01(h.Score),
		Source:          fromSource(answer.SourceOf(h)),
		HeadingPath:     h.HeadingPath,
		Metadata:        fromChunkMetadata(h),
	}
}

// fromChunkMetadata is a chunk's metadata: its document's labels (as
// strings, the way they are stored) and its heading path under
// "heading_path", joined with " > ". Always set, so clients need not
// test for it; empty when the chunk has neither.
func fromChunkMetadata(h rag.Hit) *structpb.Struct {
	fields := make(map[string]*structpb.Value, len(h.Metadata)+1)
	for k, v := range h.Metadata {
		fields[k] = structpb.NewStringValue(v)
	}
	if len(h.HeadingPath) > 0 {
		fields["heading_path"] = structpb.NewStringValue(strings.Join(h.HeadingPath, " > "))
	}
	return &structpb.Struct{Fields: fields}
}

// fromSource describes where a chunk came from.
func fromSource(s answer.Source) *ragv1.Source {
	return &ragv1.Source{Url: s.URL, Title: s.Title, ChunkIndex: int32(s.ChunkIndex)}
}

// fromResult builds the AgentResponse of a finished answer.
func fromResult(r answer.Result) *ragv1.AgentResponse {
	out := &ragv1.AgentResponse{
		Answer:           r.Answer,
		PrimarySource:    r.PrimarySource,
		QueryTime:        r.QueryTime.Seconds(),
		Success:          r.Success,
		IsOutOfScope:     r.IsOutOfScope,
		OutOfScopeReason: r.OutOfScopeReason,
		State:            ragv1.AgentResponse_COMPLETED,
		Model:            r.Model,
		NeedsReview:      r.NeedsReview,
		ReviewReason:     r.ReviewReason,
		DroppedCitations: int32(r.DroppedCitations),
	}
	for _, s := range r.Sources {
		out.Sources = append(out.Sources, fromSource(s))
	}
	if p, ok := r.PrimarySourceOf(); ok {
		out.Primary = fromSource(p)
		out.PrimaryIndex = int32(r.Primary)
	}
	if len(r.Metadata) > 0 {
		out.Metadata = r.Metadata
	}
	if !r.Received.IsZero() {
		out.ReceivedTime = timestamppb.New(r.Received)
	}
	for _, h := range r.MatchedChunks {
		out.MatchedChunks = append(out.MatchedChunks, fromHit(h))
	}
	return out
}
