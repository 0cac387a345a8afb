package groundingclient

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/timestamppb"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
	"github.com/groundcrew/groundcrew/platform/grpcserver/grpcservertest"
	"github.com/groundcrew/groundcrew/services/notifier/internal/chat"
	"github.com/groundcrew/groundcrew/services/notifier/internal/format"
	"github.com/groundcrew/groundcrew/services/notifier/internal/pipeline"
)

type fakeGrounding struct {
	groundingv1.UnimplementedGroundingServiceServer
	ground   *groundingv1.GroundRequest
	converse *groundingv1.ConverseRequest
	reply    *groundingv1.ConverseResponse // nil: a fixed text
	msg      *groundingv1.AnnotatedMessage
	err      error
	queryErr error
}

func (f *fakeGrounding) DeriveQuery(_ context.Context, req *groundingv1.DeriveQueryRequest) (*groundingv1.DeriveQueryResponse, error) {
	if f.queryErr != nil {
		return nil, f.queryErr
	}
	return &groundingv1.DeriveQueryResponse{Query: "checkout-api 5xx"}, nil
}

func (f *fakeGrounding) Ground(_ context.Context, req *groundingv1.GroundRequest) (*groundingv1.GroundResponse, error) {
	f.ground = req
	if f.err != nil {
		return nil, f.err
	}
	return &groundingv1.GroundResponse{Message: f.msg}, nil
}

func (f *fakeGrounding) Converse(_ context.Context, req *groundingv1.ConverseRequest) (*groundingv1.ConverseResponse, error) {
	f.converse = req
	if f.reply != nil {
		return f.reply, nil
	}
	return &groundingv1.ConverseResponse{Text: "It means the container keeps crashing."}, nil
}

func newClient(t *testing.T, f *fakeGrounding) *Client {
	t.Helper()
	conn := grpcservertest.Serve(t, func(srv *grpc.Server) { groundingv1.RegisterGroundingServiceServer(srv, f) })
	return New(groundingv1.NewGroundingServiceClient(conn), 3, groundingv1.RoundConfig_AUTO)
}

func TestEnrich(t *testing.T) {
	conf := 0.7
	f := &fakeGrounding{msg: &groundingv1.AnnotatedMessage{
		Id: "m1", Summary: "Payments upstream failing.", Confidence: &conf, Status: groundingv1.AnnotatedMessage_PROCESSED,
		Citations: []*groundingv1.Citation{
			{Url: "https://runbooks.example.com/checkout", Title: "Runbook", Snippet: "Check payments."},
			{Url: "https://runbooks.example.com/checkout", Title: "Runbook", Snippet: "Again."},
			{Url: "https://status.example.com/", Title: "Status"},
		},
	}}
	got, err := newClient(t, f).Enrich(context.Background(), "High error rate on checkout-api")
	if err != nil {
		t.Fatal(err)
	}
	want := pipeline.Enrichment{MessageID: "m1",
		Summary: "Payments upstream failing.", Confidence: &conf,
		Citations: []format.Citation{
			{Title: "Runbook", Snippet: "Check payments.", URL: "https://runbooks.example.com/checkout"},
			{Title: "Status", URL: "https://status.example.com/"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("enrichment (-want +got):\n%s", diff)
	}
	wantReq := &groundingv1.GroundRequest{
		Text: "High error rate on checkout-api", Query: "checkout-api 5xx", MaxSources: proto.Int32(3), CreatedBy: "notifier",
		RoundConfig: &groundingv1.RoundConfig{Engine: groundingv1.RoundConfig_AUTO},
	}
	if diff := cmp.Diff(wantReq, f.ground, protocmp.Transform()); diff != "" {
		t.Errorf("Ground request (-want +got):\n%s", diff)
	}
}

func TestEnrichErrors(t *testing.T) {
	tests := []struct {
		name string
		f    *fakeGrounding
		want string
	}{
		{"grounding down", &fakeGrounding{queryErr: status.Error(codes.Unavailable, "connection refused 10.0.0.3")}, "grounding service unavailable"},
		{"model down", &fakeGrounding{err: status.Error(codes.Unavailable, "gemini answered 503 Service Unavailable")}, "model unavailable"},
		{"timeout", &fakeGrounding{err: status.Error(codes.DeadlineExceeded, "context deadline exceeded")}, "search timed out"},
		{"query timeout", &fakeGrounding{queryErr: status.Error(codes.DeadlineExceeded, "context deadline exceeded")}, "search timed out"},
		{"invalid", &fakeGrounding{err: status.Error(codes.InvalidArgument, "text too long")}, "grounding failed"},
		{"failed message", &fakeGrounding{msg: &groundingv1.AnnotatedMessage{Id: "m", Status: groundingv1.AnnotatedMessage_FAILED, Error: "model quota"}}, "model unavailable"},
		{"failed message, timed out", &fakeGrounding{msg: &groundingv1.AnnotatedMessage{Id: "m", Status: groundingv1.AnnotatedMessage_FAILED, Error: "model provider timed out after 1 attempt(s)"}}, "search timed out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newClient(t, tt.f).Enrich(context.Background(), "x")
			e, ok := errors.AsType[*Error](err)
			if !ok || e.Public() != tt.want {
				t.Fatalf("err = %v, want public text %q", err, tt.want)
			}
		})
	}
}

// TestEnrichUnavailable: an answer is shown only with a citation that
// resolves to one of the sources it was grounded on; otherwise the
// enrichment says why, in plain words.
func TestEnrichUnavailable(t *testing.T) {
	results := []*searchv1.SearchResult{{Url: "https://runbooks.example.com/disk", Title: "Disk runbook"}}
	tests := []struct {
		name          string
		msg           *groundingv1.AnnotatedMessage
		wantCitations []format.Citation
		wantReason    string
	}{
		{
			name: "search failed",
			msg: &groundingv1.AnnotatedMessage{Id: "m", Summary: "Disks fill up.", Status: groundingv1.AnnotatedMessage_NEEDS_REVIEW,
				Error: "search failed; no evidence", GroundedContext: &groundingv1.GroundedContext{Query: "disk"}},
			wantReason: "search unavailable",
		},
		{
			name: "no evidence",
			msg: &groundingv1.AnnotatedMessage{Id: "m", Summary: "Disks fill up.", Status: groundingv1.AnnotatedMessage_NEEDS_REVIEW,
				Error: "search found no evidence", GroundedContext: &groundingv1.GroundedContext{Query: "disk"}},
			wantReason: "no sources found",
		},
		{
			name: "no relevant source",
			msg: &groundingv1.AnnotatedMessage{Id: "m", Status: groundingv1.AnnotatedMessage_NEEDS_REVIEW,
				Error: "no relevant runbook found", GroundedContext: &groundingv1.GroundedContext{Query: "disk"}},
			wantReason: "no relevant runbook found",
		},
		{
			name: "uncited summary",
			msg: &groundingv1.AnnotatedMessage{Id: "m", Summary: "Disks fill up.", Status: groundingv1.AnnotatedMessage_NEEDS_REVIEW,
				Error: "no evidence matched the query", GroundedContext: &groundingv1.GroundedContext{Query: "disk", Results: results}},
			wantReason: "no sources found",
		},
		{
			name: "citation of a source that was not in the evidence",
			msg: &groundingv1.AnnotatedMessage{Id: "m", Summary: "Disks fill up.", Status: groundingv1.AnnotatedMessage_PROCESSED,
				GroundedContext: &groundingv1.GroundedContext{Query: "disk", Results: results},
				Citations:       []*groundingv1.Citation{{Url: "https://elsewhere.example.com/", Title: "Made up"}, {Url: "javascript:alert(1)"}}},
			wantReason: "no sources found",
		},
		{
			name: "cited",
			msg: &groundingv1.AnnotatedMessage{Id: "m", Summary: "Disks fill up.", Status: groundingv1.AnnotatedMessage_NEEDS_REVIEW,
				GroundedContext: &groundingv1.GroundedContext{Query: "disk", Results: results},
				Citations: []*groundingv1.Citation{
					{Url: "https://elsewhere.example.com/", Title: "Made up"},
					{Url: "https://runbooks.example.com/disk", Title: "Disk runbook"},
				}},
			wantCitations: []format.Citation{{Title: "Disk runbook", URL: "https://runbooks.example.com/disk"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := newClient(t, &fakeGrounding{msg: tt.msg}).Enrich(context.Background(), "disk full")
			if err != nil {
				t.Fatal(err)
			}
			if got.Unavailable != tt.wantReason {
				t.Errorf("Unavailable = %q, want %q", got.Unavailable, tt.wantReason)
			}
			if diff := cmp.Diff(tt.wantCitations, got.Citations); diff != "" {
				t.Errorf("citations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConverse(t *testing.T) {
	f := &fakeGrounding{}
	sent := time.Date(2025, 3, 14, 10, 0, 0, 0, time.UTC)
	reply, err := newClient(t, f).Converse(context.Background(), chat.ConverseRequest{
		Persona: "p", Group: true, TargetID: 2, ConversationID: "telegram:-1", HistorySize: 500, Now: sent,
		History: []chat.Message{
			{MessageID: 1, Speaker: "Ana", SpeakerID: "7", SentAt: sent, Parts: []chat.Part{{MediaKind: "photo", Text: "[photo 1×1]", UniqueID: "u1"}, {Text: "look"}}},
			{MessageID: 2, Speaker: "bot", IsAgent: true, ReplyToID: 1, SentAt: sent, Parts: []chat.Part{{Text: "ok"}}},
		},
	})
	if err != nil || reply != "It means the container keeps crashing." {
		t.Fatalf("reply %q, %v", reply, err)
	}
	ts := timestamppb.New(sent)
	want := &groundingv1.ConverseRequest{
		Persona: "p", ChatType: groundingv1.ChatType_GROUP, TargetMessageId: "2", ConversationId: "telegram:-1",
		HistorySize: proto.Int32(500), CurrentTime: ts,
		History: []*groundingv1.ChatMsg{
			{Id: "1", Speaker: "Ana", SpeakerId: "7", SendTime: ts, Parts: []*groundingv1.ChatPart{
				{Part: &groundingv1.ChatPart_Media{Media: &groundingv1.Media{MediaKind: "photo", RenderedText: "[photo 1×1]", UniqueId: "u1"}}},
				{Part: &groundingv1.ChatPart_Text{Text: "look"}},
			}},
			{Id: "2", Speaker: "bot", IsAgent: true, ReplyToId: "1", SendTime: ts, Parts: []*groundingv1.ChatPart{{Part: &groundingv1.ChatPart_Text{Text: "ok"}}}},
		},
	}
	if diff := cmp.Diff(want, f.converse, protocmp.Transform()); diff != "" {
		t.Errorf("Converse request (-want +got):\n%s", diff)
	}
}

// TestConverseStickers: the curated stickers go in the request, and the
// sticker the reply chose comes back with the text (which may be empty).
func TestConverseStickers(t *testing.T) {
	stickers := []chat.Sticker{
		{FileID: "CAAC1", Emoji: "👍", Set: "crew", Description: "done"},
		{FileID: "CAAC2", Emoji: "🔥"},
	}
	tests := []struct {
		name  string
		reply *groundingv1.ConverseResponse
		want  chat.Reply
	}{
		{"text only", &groundingv1.ConverseResponse{Text: "Done."}, chat.Reply{Text: "Done."}},
		{"sticker only", &groundingv1.ConverseResponse{Sticker: &groundingv1.Sticker{FileId: "CAAC2", Emoji: "🔥"}},
			chat.Reply{Sticker: &chat.Sticker{FileID: "CAAC2", Emoji: "🔥"}}},
		{"both", &groundingv1.ConverseResponse{Text: "Done.", Sticker: &groundingv1.Sticker{FileId: "CAAC1", Emoji: "👍", SetName: "crew", Description: "done"}},
			chat.Reply{Text: "Done.", Sticker: &stickers[0]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeGrounding{reply: tt.reply}
			got, err := newClient(t, f).ConverseReply(context.Background(), chat.ConverseRequest{TargetID: 1, Stickers: stickers,
				History: []chat.Message{{MessageID: 1, Speaker: "Ana", Parts: []chat.Part{{Text: "deployed?"}}}}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
			want := []*groundingv1.Sticker{
				{FileId: "CAAC1", Emoji: "👍", SetName: "crew", Description: "done"},
				{FileId: "CAAC2", Emoji: "🔥"},
			}
			if diff := cmp.Diff(want, f.converse.GetStickers(), protocmp.Transform()); diff != "" {
				t.Errorf("request's stickers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseEngine(t *testing.T) {
	for in, want := range map[string]groundingv1.RoundConfig_Engine{
		"": groundingv1.RoundConfig_AUTO, "auto": groundingv1.RoundConfig_AUTO, "Native": groundingv1.RoundConfig_NATIVE,
		" exa ": groundingv1.RoundConfig_EXA, "LOCAL": groundingv1.RoundConfig_LOCAL,
	} {
		if got, err := ParseEngine(in); err != nil || got != want {
			t.Errorf("ParseEngine(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"google", "engine_unspecified", "2"} {
		if _, err := ParseEngine(in); err == nil {
			t.Errorf("ParseEngine(%q) accepted", in)
		}
	}
}

// TestEnrichSendsEngine: the configured engine goes out in the round
// config.
func TestEnrichSendsEngine(t *testing.T) {
	f := &fakeGrounding{msg: &groundingv1.AnnotatedMessage{Id: "m1", Status: groundingv1.AnnotatedMessage_PROCESSED}}
	conn := grpcservertest.Serve(t, func(srv *grpc.Server) { groundingv1.RegisterGroundingServiceServer(srv, f) })
	c := New(groundingv1.NewGroundingServiceClient(conn), 0, groundingv1.RoundConfig_NATIVE)
	_, _ = c.Enrich(t.Context(), "Disk almost full")
	if got := f.ground.GetRoundConfig().GetEngine(); got != groundingv1.RoundConfig_NATIVE {
		t.Errorf("round config engine %v, want NATIVE", got)
	}
}

// TestEnrichLinkedSendsEvidenceURLs: an alert's own links (its runbook
// first) go to Ground as evidence_urls, at most as many as it takes.
func TestEnrichLinkedSendsEvidenceURLs(t *testing.T) {
	f := &fakeGrounding{msg: &groundingv1.AnnotatedMessage{Id: "m1", Status: groundingv1.AnnotatedMessage_PROCESSED}}
	urls := []string{"https://runbooks.example.com/checkout"}
	for i := range 10 {
		urls = append(urls, "https://grafana.example.com/d/"+strconv.Itoa(i))
	}
	if _, err := newClient(t, f).EnrichLinked(t.Context(), "High error rate on checkout-api", urls); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(urls[:maxEvidenceURLs], f.ground.GetEvidenceUrls()); diff != "" {
		t.Errorf("evidence_urls (-want +got):\n%s", diff)
	}
}
