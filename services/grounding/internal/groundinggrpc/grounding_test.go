package groundinggrpc_test

import (
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
	"github.com/groundcrew/groundcrew/platform/actor"
	"github.com/groundcrew/groundcrew/platform/grpcclient"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/platform/grpcserver/grpcservertest"
	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/grounding/internal/grounding"
	"github.com/groundcrew/groundcrew/services/grounding/internal/groundinggrpc"
	"github.com/groundcrew/groundcrew/services/grounding/internal/searchclient"
	"github.com/groundcrew/groundcrew/services/grounding/internal/store"
)

var quietLog = slog.New(slog.DiscardHandler)

// indexed are the documents of the fake search service's local index.
var indexed = []*searchv1.SearchResult{
	{Title: "PostgreSQL: Connections and Authentication", Url: "https://www.postgresql.org/docs/current/runtime-config-connection.html", SourceDomain: "postgresql.org", Score: 3.1,
		MimeType: "text/html", FaviconUrl: "https://www.postgresql.org/favicon.ico",
		Snippet: "max_connections determines the maximum number of concurrent connections to the database server. When it is reached, new clients are refused with FATAL: sorry, too many clients already."},
	{Title: "PgBouncer", Url: "https://www.pgbouncer.org/", SourceDomain: "pgbouncer.org", Score: 2.2,
		Snippet: "PgBouncer is a lightweight connection pooler for PostgreSQL. Pooling lets many clients share few server connections."},
	{Title: "Connection storms after failover", Url: "https://blog.example.com/storms", SourceDomain: "blog.example.com", Score: 1.4,
		Snippet: "After a failover many clients reconnect at once and too many connections exhaust max_connections."},
	{Title: "Tuning work_mem", Url: "https://blog.example.com/work-mem", SourceDomain: "blog.example.com", Score: 0.9,
		Snippet: "work_mem sets the memory used by sort operations before spilling to disk."},
}

// evidenceSearch is a search service answering from indexed.
type evidenceSearch struct {
	searchv1.UnimplementedSearchServiceServer
	mu   sync.Mutex
	reqs []*searchv1.SearchRequest
}

func (f *evidenceSearch) Search(_ context.Context, req *searchv1.SearchRequest) (*searchv1.SearchResponse, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, proto.CloneOf(req))
	f.mu.Unlock()
	n := 5
	if req.MaxResults != nil {
		n = int(req.GetMaxResults())
	}
	return &searchv1.SearchResponse{Results: indexed[:min(n, len(indexed))], Engine: searchv1.Engine_LOCAL}, nil
}

func listenLoopback(t *testing.T) net.Listener {
	t.Helper()
	var lc net.ListenConfig
	lis, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return lis
}

type groundingEnv struct {
	client groundingv1.GroundingServiceClient
	search *evidenceSearch
}

// startGrounding runs the search fake and the grounding handlers on the real
// grpcserver runtime (validation included) over loopback listeners.
func startGrounding(t *testing.T) groundingEnv {
	t.Helper()
	fs := &evidenceSearch{}
	gs := grpc.NewServer()
	searchv1.RegisterSearchServiceServer(gs, fs)
	lis := listenLoopback(t)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	conn, err := grpcclient.Dial(lis.Addr().String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })

	dir := t.TempDir()
	db, err := sqlstore.Open(t.Context(), sqlstoretest.URL(t, "groundinggrpc"), dir, "grounding", quietLog)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := store.Migrate(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	arts, err := store.NewArtifacts(filepath.Join(dir, "artifacts"))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := grounding.New(grounding.Options{
		Searcher: searchclient.New(searchv1.NewSearchServiceClient(conn)), Store: store.New(db, arts), Logger: quietLog,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := grpcserver.New(grpcserver.Config{GRPCAddr: "127.0.0.1:0", GracePeriod: -1}, quietLog)
	if err != nil {
		t.Fatal(err)
	}
	groundingv1.RegisterGroundingServiceServer(srv, groundinggrpc.NewGroundingService(svc, quietLog))
	cc := grpcservertest.Dial(t, srv)
	return groundingEnv{client: groundingv1.NewGroundingServiceClient(cc), search: fs}
}

const alertText = "[FIRING:1] PostgresTooManyConnections db-prod-1: FATAL: sorry, too many clients already (max_connections=100)"

func TestGroundAndGetOffline(t *testing.T) {
	e := startGrounding(t)
	resp, err := e.client.Ground(t.Context(), &groundingv1.GroundRequest{
		Text:        alertText,
		RoundConfig: &groundingv1.RoundConfig{Engine: groundingv1.RoundConfig_LOCAL, MaxResults: proto.Int32(5)},
		CreatedBy:   "notifier",
	})
	if err != nil {
		t.Fatalf("Ground: %v", err)
	}
	m := resp.GetMessage()
	if m.GetStatus() != groundingv1.AnnotatedMessage_PROCESSED || m.GetModel() != "extractive" || m.GetEngine() != groundingv1.RoundConfig_LOCAL {
		t.Errorf("status %v model %q engine %v (error %q)", m.GetStatus(), m.GetModel(), m.GetEngine(), m.GetError())
	}
	if n := utf8.RuneCountInString(m.GetSummary()); n == 0 || n > 250 {
		t.Errorf("summary of %d characters: %q", n, m.GetSummary())
	}
	urls := map[string]bool{}
	for _, r := range indexed {
		urls[r.GetUrl()] = true
	}
	sources := map[string]bool{}
	for _, c := range m.GetCitations() {
		if !urls[c.GetUrl()] {
			t.Errorf("citation %s is not an indexed document", c.GetUrl())
		}
		sources[c.GetUrl()] = true
	}
	// The evidence is the results about the alert (the Postgres pages,
	// not the work_mem one), at most 3.
	if n := len(m.GetGroundedContext().GetResults()); len(sources) == 0 || len(sources) > n || n > 3 {
		t.Errorf("%d cited sources, %d evidence results; want 1..3 of at most 3", len(sources), n)
	}
	if got := e.search.reqs[0]; got.GetEngine() != searchv1.Engine_LOCAL || got.GetMaxResults() != 5 {
		t.Errorf("search request %v", got)
	}
	got, err := e.client.GetAnnotatedMessage(t.Context(), &groundingv1.GetAnnotatedMessageRequest{Id: m.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m, got.GetMessage(), protocmp.Transform()); diff != "" {
		t.Errorf("GetAnnotatedMessage differs from Ground's message (-ground +get):\n%s", diff)
	}
}

func TestDeriveQueryOffline(t *testing.T) {
	e := startGrounding(t)
	resp, err := e.client.DeriveQuery(t.Context(), &groundingv1.DeriveQueryRequest{Text: alertText})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetMethod() != "keywords" || resp.GetQuery() == "" || len(resp.GetTerms()) == 0 {
		t.Errorf("DeriveQuery = %v", resp)
	}
}

func fieldViolations(err error) []string {
	var out []string
	for _, d := range status.Convert(err).Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				out = append(out, v.GetField())
			}
		}
	}
	return out
}

func TestErrors(t *testing.T) {
	e := startGrounding(t)
	ground, err := e.client.Ground(t.Context(), &groundingv1.GroundRequest{Text: alertText})
	if err != nil {
		t.Fatal(err)
	}
	id := ground.GetMessage().GetId()
	approve := &groundingv1.ReviewAnnotatedMessageRequest{Id: id, ReviewerId: "alice", Status: groundingv1.AnnotatedMessage_APPROVED}
	if _, err := e.client.ReviewAnnotatedMessage(t.Context(), approve); err != nil {
		t.Fatalf("first review: %v", err)
	}
	tests := []struct {
		name       string
		call       func() error
		code       codes.Code
		violations []string
	}{
		{"blank text", func() error {
			_, err := e.client.Ground(t.Context(), &groundingv1.GroundRequest{Text: "  \n"})
			return err
		}, codes.InvalidArgument, []string{"text"}},
		{"max_results out of range", func() error {
			_, err := e.client.Ground(t.Context(), &groundingv1.GroundRequest{Text: "x", RoundConfig: &groundingv1.RoundConfig{MaxResults: proto.Int32(11)}})
			return err
		}, codes.InvalidArgument, []string{"round_config.max_results"}},
		{"unknown message", func() error {
			_, err := e.client.GetAnnotatedMessage(t.Context(), &groundingv1.GetAnnotatedMessageRequest{Id: "nope"})
			return err
		}, codes.NotFound, nil},
		{"approve twice", func() error {
			_, err := e.client.ReviewAnnotatedMessage(t.Context(), approve)
			return err
		}, codes.FailedPrecondition, nil},
		{"review to FAILED", func() error {
			_, err := e.client.ReviewAnnotatedMessage(t.Context(), &groundingv1.ReviewAnnotatedMessageRequest{Id: id, ReviewerId: "a", Status: groundingv1.AnnotatedMessage_FAILED})
			return err
		}, codes.InvalidArgument, []string{"status"}},
		{"bad page token", func() error {
			_, err := e.client.ListAnnotatedMessages(t.Context(), &groundingv1.ListAnnotatedMessagesRequest{PageToken: "garbage"})
			return err
		}, codes.InvalidArgument, []string{"page_token"}},
		{"converse target missing", func() error {
			_, err := e.client.Converse(t.Context(), &groundingv1.ConverseRequest{
				TargetMessageId: "9",
				History:         []*groundingv1.ChatMsg{{Id: "1", Parts: []*groundingv1.ChatPart{{Part: &groundingv1.ChatPart_Text{Text: "hi"}}}}},
			})
			return err
		}, codes.InvalidArgument, []string{"target_message_id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if got := status.Code(err); got != tt.code {
				t.Fatalf("code = %v (%v), want %v", got, err, tt.code)
			}
			if diff := cmp.Diff(tt.violations, fieldViolations(err)); diff != "" {
				t.Errorf("field violations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestListAndReview(t *testing.T) {
	e := startGrounding(t)
	var ids []string
	for range 3 {
		r, err := e.client.Ground(t.Context(), &groundingv1.GroundRequest{Text: alertText})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.GetMessage().GetId())
	}
	rev, err := e.client.ReviewAnnotatedMessage(t.Context(), &groundingv1.ReviewAnnotatedMessageRequest{
		Id: ids[1], ReviewerId: "alice", Notes: "sources check out", Status: groundingv1.AnnotatedMessage_REJECTED,
	})
	if err != nil {
		t.Fatal(err)
	}
	if r := rev.GetMessage().GetReview(); rev.GetMessage().GetStatus() != groundingv1.AnnotatedMessage_REJECTED ||
		r.GetReviewerId() != "alice" || r.GetNotes() != "sources check out" || r.GetPreviousStatus() != groundingv1.AnnotatedMessage_PROCESSED {
		t.Errorf("reviewed message = %v", rev.GetMessage())
	}

	var got []string
	req := &groundingv1.ListAnnotatedMessagesRequest{PageSize: 2}
	for range 3 {
		page, err := e.client.ListAnnotatedMessages(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range page.GetMessages() {
			got = append(got, m.GetId())
		}
		if page.GetNextPageToken() == "" {
			break
		}
		req.PageToken = page.GetNextPageToken()
	}
	if diff := cmp.Diff([]string{ids[2], ids[1], ids[0]}, got); diff != "" {
		t.Errorf("listed ids, newest first (-want +got):\n%s", diff)
	}
	rejected, err := e.client.ListAnnotatedMessages(t.Context(), &groundingv1.ListAnnotatedMessagesRequest{
		Status: groundingv1.AnnotatedMessage_REJECTED, Domain: "postgresql.org",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rejected.GetMessages()) != 1 || rejected.GetMessages()[0].GetId() != ids[1] {
		t.Errorf("rejected messages citing postgresql.org = %v", rejected.GetMessages())
	}
}

// TestAuditRecord: over the API a message shows its round (every default
// applied), the caller's request id and what the parser derived, and its
// citations their ids, creation time and the authenticated actor; reviews
// keep their history with the actor; no absolute server path is shown.
func TestAuditRecord(t *testing.T) {
	e := startGrounding(t)
	ctx := metadata.AppendToOutgoingContext(t.Context(), "x-request-id", "req-audit-1", actor.MetadataKey, "ci")
	resp, err := e.client.Ground(ctx, &groundingv1.GroundRequest{Text: alertText})
	if err != nil {
		t.Fatal(err)
	}
	m := resp.GetMessage()
	rc := m.GetRoundConfig()
	if m.GetRequestId() != "req-audit-1" || m.GetRoundId() == "" || rc.GetId() != m.GetRoundId() {
		t.Errorf("request id %q round id %q round config id %q", m.GetRequestId(), m.GetRoundId(), rc.GetId())
	}
	if rc.EnableSearch == nil || !rc.GetEnableSearch() || rc.MaxResults == nil || rc.GetMaxResults() != 5 || rc.GetEngine() != groundingv1.RoundConfig_AUTO ||
		rc.GetContextScale() != groundingv1.RoundConfig_MEDIUM || rc.TimeoutMs == nil || rc.GetTimeoutMs() != 30000 || rc.BudgetTokens == nil {
		t.Errorf("round config = %v; want every default applied", rc)
	}
	if _, ok := m.GetParsedMetadata().GetFields()["markers"]; !ok {
		t.Errorf("parsed metadata = %v; want markers", m.GetParsedMetadata())
	}
	if p := m.GetArtifactPath(); p == "" || strings.HasPrefix(p, "/") || !strings.HasPrefix(p, "artifacts/") {
		t.Errorf("artifact path %q, want one relative to DATA_DIR", p)
	}
	if len(m.GetCitations()) == 0 {
		t.Fatal("no citations")
	}
	pg := false
	for _, c := range m.GetCitations() {
		if c.GetDomain() == "postgresql.org" {
			pg = true
			if c.GetMimeType() != "text/html" || c.GetFaviconUrl() != "https://www.postgresql.org/favicon.ico" {
				t.Errorf("postgresql.org citation %v; want the search result's media type and icon", c)
			}
		}
		if _, err := uuid.Parse(c.GetId()); err != nil || c.GetCreateTime() == nil || c.GetCreatedBy() != "ci" || c.GetHasRawHtml() {
			t.Errorf("citation %v; want a UUID, a create time, created by ci, no page", c)
		}
	}
	if !pg {
		t.Errorf("citations %v; want postgresql.org among them", m.GetCitations())
	}
	for i, who := range []string{"console", "ops"} {
		st := []groundingv1.AnnotatedMessage_Status{groundingv1.AnnotatedMessage_APPROVED, groundingv1.AnnotatedMessage_REJECTED}[i]
		rctx := metadata.AppendToOutgoingContext(t.Context(), actor.MetadataKey, who)
		if _, err := e.client.ReviewAnnotatedMessage(rctx, &groundingv1.ReviewAnnotatedMessageRequest{Id: m.GetId(), ReviewerId: "alice", Status: st}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := e.client.GetAnnotatedMessage(t.Context(), &groundingv1.GetAnnotatedMessageRequest{Id: m.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	revs := got.GetMessage().GetReviews()
	if len(revs) != 2 || revs[0].GetActor() != "ops" || revs[0].GetNewStatus() != groundingv1.AnnotatedMessage_REJECTED ||
		revs[1].GetActor() != "console" || got.GetMessage().GetReview().GetActor() != "ops" {
		t.Errorf("reviews = %v; want ops's rejection, then console's approval", revs)
	}
	for i, c := range got.GetMessage().GetCitations() {
		if c.GetId() != m.GetCitations()[i].GetId() {
			t.Errorf("citation %d id %q on read, %q when grounded; want it stable", i, c.GetId(), m.GetCitations()[i].GetId())
		}
	}

	for _, tt := range []struct {
		msg, cit string
		want     codes.Code
	}{
		{m.GetId(), m.GetCitations()[0].GetId(), codes.NotFound}, // no page kept
		{m.GetId(), "nope", codes.NotFound},
		{"nope", m.GetCitations()[0].GetId(), codes.NotFound},
		{m.GetId(), "", codes.InvalidArgument},
	} {
		_, err := e.client.GetCitationRawHtml(t.Context(), &groundingv1.GetCitationRawHtmlRequest{MessageId: tt.msg, CitationId: tt.cit})
		if status.Code(err) != tt.want {
			t.Errorf("GetCitationRawHtml(%q, %q) = %v, want %v", tt.msg, tt.cit, err, tt.want)
		}
	}
}
