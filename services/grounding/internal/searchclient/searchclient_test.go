package searchclient_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"

	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
	"github.com/groundcrew/groundcrew/platform/grpcserver/grpcservertest"
	"github.com/groundcrew/groundcrew/services/grounding/internal/grounding"
	"github.com/groundcrew/groundcrew/services/grounding/internal/research"
	"github.com/groundcrew/groundcrew/services/grounding/internal/searchclient"
)

// recorder is a search service that records requests and answers with one
// result.
type recorder struct {
	searchv1.UnimplementedSearchServiceServer
	mu   sync.Mutex
	reqs []*searchv1.SearchRequest
}

func (r *recorder) Search(_ context.Context, req *searchv1.SearchRequest) (*searchv1.SearchResponse, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return &searchv1.SearchResponse{Engine: searchv1.Engine_LOCAL, Results: []*searchv1.SearchResult{
		{Title: "Postgres — too many connections", Url: "https://runbooks.example/pg", Snippet: "Put PgBouncer in front.", SourceDomain: "runbooks.example", Score: 2},
	}}, nil
}

func dial(t *testing.T, srv searchv1.SearchServiceServer) *searchclient.Client {
	t.Helper()
	conn := grpcservertest.Serve(t, func(s *grpc.Server) { searchv1.RegisterSearchServiceServer(s, srv) })
	return searchclient.New(searchv1.NewSearchServiceClient(conn))
}

// TestBothCallersShareOneCall: Ground's searcher and research's evidence
// trim long queries and clamp the result count the same way.
func TestBothCallersShareOneCall(t *testing.T) {
	rec := &recorder{}
	c := dial(t, rec)
	long := strings.Repeat("é", 1500)
	if _, err := c.Search(t.Context(), grounding.SearchRequest{Query: long, MaxResults: 50, Engine: grounding.EngineLocal}); err != nil {
		t.Fatal(err)
	}
	ev, err := c.Evidence().Search(t.Context(), long, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []research.Evidence{{Title: "Postgres — too many connections", URL: "https://runbooks.example/pg", Snippet: "Put PgBouncer in front."}}
	if diff := cmp.Diff(want, ev); diff != "" {
		t.Errorf("evidence (-want +got):\n%s", diff)
	}
	tests := []struct {
		name   string
		req    *searchv1.SearchRequest
		max    int32
		engine searchv1.Engine
	}{
		{"grounding", rec.reqs[0], 10, searchv1.Engine_LOCAL},
		{"research", rec.reqs[1], 1, searchv1.Engine_AUTO},
	}
	for _, tt := range tests {
		if n := utf8.RuneCountInString(tt.req.GetQuery()); n != 1000 {
			t.Errorf("%s: query of %d characters, want trimmed to 1000", tt.name, n)
		}
		if tt.req.GetMaxResults() != tt.max || tt.req.GetEngine() != tt.engine {
			t.Errorf("%s: max_results=%d engine=%s, want %d, %s", tt.name, tt.req.GetMaxResults(), tt.req.GetEngine(), tt.max, tt.engine)
		}
	}
}
