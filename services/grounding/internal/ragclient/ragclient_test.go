package ragclient_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	ragv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/rag/v1"
	"github.com/groundcrew/groundcrew/platform/grpcserver/grpcservertest"
	"github.com/groundcrew/groundcrew/services/grounding/internal/ragclient"
	"github.com/groundcrew/groundcrew/services/grounding/internal/research"
)

type fakeRag struct {
	ragv1.UnimplementedRagServiceServer
	got *ragv1.RetrieveRequest
}

func (f *fakeRag) Retrieve(_ context.Context, req *ragv1.RetrieveRequest) (*ragv1.RetrieveResponse, error) {
	f.got = req
	if req.GetCollection() == "missing" {
		return nil, status.Error(codes.NotFound, "no such collection")
	}
	return &ragv1.RetrieveResponse{Chunks: []*ragv1.Chunk{
		{Text: "Goroutines are cheap.", Source: &ragv1.Source{Url: "https://go.dev/ref/spec#Go_statements", Title: "Go statements"}},
		{Text: "A rune is a code point.", Source: &ragv1.Source{Title: "Rune literals / notes"}},
	}}, nil
}

func TestRetrieve(t *testing.T) {
	f := &fakeRag{}
	conn := grpcservertest.Serve(t, func(s *grpc.Server) { ragv1.RegisterRagServiceServer(s, f) })
	c := ragclient.New(ragv1.NewRagServiceClient(conn))

	got, err := c.Retrieve(t.Context(), "gospec", "goroutines", 500)
	if err != nil {
		t.Fatal(err)
	}
	// A passage without a URL gets a rag:// one naming collection and title.
	want := []research.Evidence{
		{Title: "Go statements", URL: "https://go.dev/ref/spec#Go_statements", Snippet: "Goroutines are cheap."},
		{Title: "Rune literals / notes", URL: "rag://gospec/Rune%20literals%20%2F%20notes", Snippet: "A rune is a code point."},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("evidence (-want +got):\n%s", diff)
	}
	if f.got.GetTopK() != 50 || f.got.GetCollection() != "gospec" || f.got.GetQuery() != "goroutines" {
		t.Errorf("request = %v, want top_k clamped to 50", f.got)
	}
	if _, err := c.Retrieve(t.Context(), "gospec", "x", 0); err != nil || f.got.GetTopK() != 1 {
		t.Errorf("top_k 0: %v, sent %d; want 1", err, f.got.GetTopK())
	}
	if _, err := c.Retrieve(t.Context(), "missing", "x", 3); status.Code(err) != codes.NotFound {
		t.Errorf("missing collection: %v, want the NotFound wrapped", err)
	}
}
