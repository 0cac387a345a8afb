package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/grpcclient"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/platform/grpcserver/grpcservertest"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/platform/waitfor"
)

const testUserID = "0b0e7a4c-3f9d-4c55-9a43-7a0f1f0f6b21"

// backends is a fake search service over a small local corpus and a fake
// notifier, listening on a free local port as real peers would.
type backends struct {
	searchv1.UnimplementedSearchServiceServer
	notifierv1.UnimplementedNotifierServiceServer
	mu   sync.Mutex
	sent []*notifierv1.SendMessageRequest
	addr string
}

var localIndex = []*searchv1.SearchResult{
	{Title: "Write-ahead logging", Url: "https://www.postgresql.org/docs/current/wal-intro.html", Snippet: "Write-ahead logging (WAL) is a standard method for ensuring data integrity: changes are logged before they are written."},
	{Title: "WAL internals", Url: "https://wiki.postgresql.org/wiki/WAL_internals", Snippet: "The write-ahead log works by appending records; the process replays them after a crash."},
	{Title: "SQLite WAL mode", Url: "https://sqlite.org/wal.html", Snippet: "Write-ahead logging improves concurrency; a benefit is that readers do not block writers."},
}

func (b *backends) Search(_ context.Context, req *searchv1.SearchRequest) (*searchv1.SearchResponse, error) {
	resp := &searchv1.SearchResponse{Engine: searchv1.Engine_LOCAL}
	for _, r := range localIndex {
		for _, w := range strings.Fields(strings.ToLower(req.GetQuery())) {
			if strings.Contains(strings.ToLower(r.GetTitle()+" "+r.GetSnippet()), w) {
				resp.Results = append(resp.Results, r)
				break
			}
		}
	}
	return resp, nil
}

func (b *backends) SendMessage(_ context.Context, req *notifierv1.SendMessageRequest) (*notifierv1.SendMessageResponse, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sent = append(b.sent, req)
	return &notifierv1.SendMessageResponse{DeliveryId: fmt.Sprint(len(b.sent)), Destination: "log"}, nil
}

func startBackends(t *testing.T) *backends {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &backends{addr: lis.Addr().String()}
	srv := grpc.NewServer()
	searchv1.RegisterSearchServiceServer(srv, b)
	notifierv1.RegisterNotifierServiceServer(srv, b)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return b
}

// startGrounding runs a grpcserver with research started on it and
// returns a client.
func startGrounding(t *testing.T, rc ResearchConfig, start func(context.Context, Config, *slog.Logger, *grpcserver.Server) (func(), error)) groundingv1.ResearchServiceClient {
	t.Helper()
	b := startBackends(t)
	logger := slog.New(slog.DiscardHandler)
	cfg := Config{
		Common:         config.Common{DataDir: filepath.Join(t.TempDir(), "data"), GracePeriod: time.Second},
		DatabaseURL:    sqlstoretest.URL(t, "research_server"),
		SearchAddr:     b.addr,
		RagAddr:        b.addr, // no collection is named, so rag is never called
		NotifierAddr:   b.addr,
		ResearchConfig: rc,
	}
	srv, err := grpcserver.New(grpcserver.Config{GRPCAddr: "127.0.0.1:0"}, logger)
	if err != nil {
		t.Fatal(err)
	}
	stop, err := start(t.Context(), cfg, logger, srv)
	if err != nil {
		t.Fatalf("starting research: %v", err)
	}
	t.Cleanup(stop) // after the server has stopped
	conn := grpcservertest.Dial(t, srv)
	return groundingv1.NewResearchServiceClient(conn)
}

// dialSearch is the search connection run dials once and hands research.
func dialSearch(t *testing.T, cfg Config) *grpc.ClientConn {
	t.Helper()
	conn, err := grpcclient.Dial(cfg.SearchAddr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// pollRun reads the run until done says so or the deadline passes.
func pollRun(t *testing.T, c groundingv1.ResearchServiceClient, id string, within time.Duration, done func(*groundingv1.ResearchState) bool) *groundingv1.ResearchState {
	t.Helper()
	var run *groundingv1.ResearchState
	waitfor.Within(t, within, "run "+id+" to get where the test waits for", nil, func() bool {
		resp, err := c.GetResearch(t.Context(), &groundingv1.GetResearchRequest{Id: id})
		if err != nil {
			t.Fatalf("GetResearch: %v", err)
		}
		run = resp.GetRun()
		return done(run)
	})
	return run
}

func TestStartResearchOffline(t *testing.T) {
	c := startGrounding(t, defaultResearchConfig, func(ctx context.Context, cfg Config, l *slog.Logger, srv *grpcserver.Server) (func(), error) {
		return startResearch(ctx, cfg, l, srv, nil, nil, dialSearch(t, cfg))
	})
	started, err := c.StartResearch(t.Context(), &groundingv1.StartResearchRequest{
		Topic: "write-ahead logging", UserId: testUserID, MaxIterations: new(int32(1000)),
	})
	if err != nil {
		t.Fatal(err)
	}
	run := pollRun(t, c, started.GetRun().GetId(), 30*time.Second, func(r *groundingv1.ResearchState) bool {
		return r.GetStatus() == groundingv1.ResearchState_FINISHED || r.GetStatus() == groundingv1.ResearchState_FAILED
	})
	if run.GetStatus() != groundingv1.ResearchState_FINISHED || run.GetReport() == nil {
		t.Fatalf("run = %s (%s), want FINISHED with a report", run.GetStatus(), run.GetError())
	}
	if run.GetIterationCount() < 1 || run.GetIterationCount() > 5 || run.GetMaxIterations() != 5 {
		t.Errorf("iteration_count=%d max_iterations=%d; want 1..5 and 5", run.GetIterationCount(), run.GetMaxIterations())
	}
	var got []string
	for _, s := range run.GetReport().GetSources() {
		got = append(got, s.GetUrl())
	}
	var want []string
	for _, r := range localIndex {
		want = append(want, r.GetUrl())
	}
	if diff := cmp.Diff(want, got, cmp.Transformer("sort", func(s []string) []string {
		out := append([]string(nil), s...)
		for i := range out {
			for j := i + 1; j < len(out); j++ {
				if out[j] < out[i] {
					out[i], out[j] = out[j], out[i]
				}
			}
		}
		return out
	})); diff != "" {
		t.Errorf("report sources (-local index +got):\n%s", diff)
	}
	if len(run.GetPlannedActions()) != 1 || run.GetPlannedActions()[0].GetStatus() != groundingv1.PlannedAction_AWAITING_APPROVAL {
		t.Errorf("planned actions = %v", run.GetPlannedActions())
	}
}

func TestApprovalTimeoutEndToEnd(t *testing.T) {
	rc := defaultResearchConfig
	rc.ResearchApprovalTimeout = 500 * time.Millisecond
	rc.ResearchPollInterval = 20 * time.Millisecond
	c := startGrounding(t, rc, func(ctx context.Context, cfg Config, l *slog.Logger, srv *grpcserver.Server) (func(), error) {
		return startResearchWith(ctx, cfg, rc, l, srv, nil, nil, dialSearch(t, cfg))
	})
	started, err := c.StartResearch(t.Context(), &groundingv1.StartResearchRequest{Topic: "write-ahead logging", UserId: testUserID, MaxIterations: new(int32(1))})
	if err != nil {
		t.Fatal(err)
	}
	// River moves scheduled jobs to runnable every few seconds, so the
	// escalation comes within seconds of timeout_at, well within ±10 s.
	run := pollRun(t, c, started.GetRun().GetId(), 30*time.Second, func(r *groundingv1.ResearchState) bool {
		acts := r.GetPlannedActions()
		return len(acts) == 1 && acts[0].GetStatus() == groundingv1.PlannedAction_SKIPPED
	})
	approvals, err := c.ListApprovals(t.Context(), &groundingv1.ListApprovalsRequest{RunId: run.GetId()})
	if err != nil || len(approvals.GetApprovals()) != 1 {
		t.Fatalf("ListApprovals = %v, %v", approvals, err)
	}
	a := approvals.GetApprovals()[0]
	if a.GetStatus() != groundingv1.ApprovalRequest_ESCALATED || a.GetDecision().GetReason() != "approval_timeout" ||
		a.GetTimeoutAt().AsTime().Sub(a.GetRequestedAt().AsTime()) != 500*time.Millisecond {
		t.Errorf("approval = %v", a)
	}
}

func TestResearchConfigLoads(t *testing.T) {
	type withResearch struct{ ResearchConfig }
	got, err := config.Load[withResearch](config.MapLookup(map[string]string{
		"RESEARCH_APPROVAL_TIMEOUT": "2s", "RESEARCH_SUMMARY_RISK": "reversible", "RESEARCH_LOOKUP_CONCURRENCY": "1",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := defaultResearchConfig
	want.ResearchApprovalTimeout, want.ResearchSummaryRisk, want.ResearchLookupConcurrency = 2*time.Second, "reversible", 1
	if diff := cmp.Diff(want, got.ResearchConfig); diff != "" {
		t.Errorf("loaded (-want +got):\n%s", diff)
	}
	defaults, err := config.Load[withResearch](config.MapLookup(nil))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(defaultResearchConfig, defaults.ResearchConfig); diff != "" {
		t.Errorf("envDefault tags and defaultResearchConfig disagree (-var +tags):\n%s", diff)
	}
}

func TestValidateResearch(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*ResearchConfig)
		wantErr string // empty: valid
	}{
		{"defaults", func(*ResearchConfig) {}, ""},
		{"unknown risk level", func(c *ResearchConfig) { c.ResearchSummaryRisk = "yolo" }, "RESEARCH_SUMMARY_RISK"},
		{"one lookup at a time", func(c *ResearchConfig) { c.ResearchLookupConcurrency = 1 }, ""},
		{"no lookups", func(c *ResearchConfig) { c.ResearchLookupConcurrency = 0 }, "RESEARCH_LOOKUP_CONCURRENCY: must be at least 1, got 0"},
		{"negative lookups", func(c *ResearchConfig) { c.ResearchLookupConcurrency = -2 }, "RESEARCH_LOOKUP_CONCURRENCY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := defaultResearchConfig
			tt.edit(&c)
			err := c.ValidateResearch()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("ValidateResearch() = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("ValidateResearch() = %v, want an error naming %q", err, tt.wantErr)
			}
		})
	}
}
