package groundinggrpc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/riverqueue/river/rivertype"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
	"github.com/groundcrew/groundcrew/platform/actor"
	"github.com/groundcrew/groundcrew/platform/grpcserver/grpcservertest"
	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/platform/waitfor"
	"github.com/groundcrew/groundcrew/services/grounding/internal/groundinggrpc"
	"github.com/groundcrew/groundcrew/services/grounding/internal/notifierclient"
	"github.com/groundcrew/groundcrew/services/grounding/internal/research"
	"github.com/groundcrew/groundcrew/services/grounding/internal/researchstore"
	"github.com/groundcrew/groundcrew/services/grounding/internal/searchclient"
)

const userID = "0b0e7a4c-3f9d-4c55-9a43-7a0f1f0f6b21"

var discard = slog.New(slog.DiscardHandler)

// fakeSearch is a search service with a fixed corpus: every query gets the
// pages whose text shares a word with it.
type fakeSearch struct {
	searchv1.UnimplementedSearchServiceServer
}

var corpus = []*searchv1.SearchResult{
	{Title: "Kubernetes operators", Url: "https://kubernetes.io/docs/concepts/extend-kubernetes/operator/", Snippet: "Kubernetes operators are software extensions that work by running a controller loop over custom resources."},
	{Title: "Operator benefits", Url: "https://redhat.com/topics/containers/what-is-a-kubernetes-operator", Snippet: "Kubernetes operators improve reliability; the benefit is automated day-2 operations."},
	{Title: "Operator risks", Url: "https://cncf.io/blog/operator-risks", Snippet: "Kubernetes operators carry risks: a faulty operator can fail and cause outages, a real limitation."},
	{Title: "Operator best practices", Url: "https://sdk.operatorframework.io/docs/best-practices/", Snippet: "Best practices: kubernetes operators should be idempotent and we recommend small controllers."},
	{Title: "Operator internals", Url: "https://blog.example.org/operators", Snippet: "How kubernetes operators work: the process watches resources and the design reconciles state; benefits include automation."},
}

func (fakeSearch) Search(_ context.Context, req *searchv1.SearchRequest) (*searchv1.SearchResponse, error) {
	words := strings.Fields(strings.ToLower(req.GetQuery()))
	resp := &searchv1.SearchResponse{Engine: searchv1.Engine_LOCAL}
	for _, r := range corpus {
		text := strings.ToLower(r.GetTitle() + " " + r.GetSnippet())
		for _, w := range words {
			if strings.Contains(text, w) {
				resp.Results = append(resp.Results, r)
				break
			}
		}
		if len(resp.Results) == int(req.GetMaxResults()) {
			break
		}
	}
	return resp, nil
}

type fakeNotifier struct {
	notifierv1.UnimplementedNotifierServiceServer
	// gate, when not nil, holds every send until it is closed.
	gate chan struct{}
	// refuse, when not nil, may answer a send with an error instead.
	refuse func(*notifierv1.SendMessageRequest) error
	mu     sync.Mutex
	sent   []*notifierv1.SendMessageRequest
	tries  int
}

func (f *fakeNotifier) SendMessage(ctx context.Context, req *notifierv1.SendMessageRequest) (*notifierv1.SendMessageResponse, error) {
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tries++
	if f.refuse != nil {
		if err := f.refuse(req); err != nil {
			return nil, err
		}
	}
	f.sent = append(f.sent, req)
	return &notifierv1.SendMessageResponse{DeliveryId: fmt.Sprint(len(f.sent)), Destination: "log"}, nil
}

func (f *fakeNotifier) attempts() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tries
}

func (f *fakeNotifier) messages() []*notifierv1.SendMessageRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*notifierv1.SendMessageRequest(nil), f.sent...)
}

type retryNow struct{}

func (retryNow) NextRetry(*rivertype.JobRow) time.Time { return time.Now() }

// serve starts a server with register's services in-process and returns a
// client connection.
func serve(t *testing.T, register func(*grpc.Server)) *grpc.ClientConn {
	t.Helper()
	return grpcservertest.Serve(t, register)
}

type env struct {
	client   groundingv1.ResearchServiceClient
	notifier *fakeNotifier
}

// newEnv runs the research service with its durable workers on a SQLite
// store, against fake search and notifier services, all over gRPC.
func newEnv(t *testing.T, cfg research.Config) *env {
	t.Helper()
	return newEnvWith(t, cfg, &fakeNotifier{})
}

// newEnvWith is newEnv with the given notifier.
func newEnvWith(t *testing.T, cfg research.Config, n *fakeNotifier) *env {
	t.Helper()
	return newEnvClock(t, cfg, n, nil)
}

// newEnvClock is newEnvWith with the given clock (nil: the system's).
func newEnvClock(t *testing.T, cfg research.Config, n *fakeNotifier, clock research.Clock) *env {
	t.Helper()
	backends := serve(t, func(s *grpc.Server) {
		searchv1.RegisterSearchServiceServer(s, fakeSearch{})
		notifierv1.RegisterNotifierServiceServer(s, n)
	})
	db, err := sqlstore.Open(t.Context(), sqlstoretest.URL(t, "research"), filepath.Join(t.TempDir(), "data"), "research", discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	st, err := researchstore.Open(t.Context(), db, discard, researchstore.Options{PollInterval: 20 * time.Millisecond, RetryPolicy: retryNow{}})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := research.New(research.Deps{
		Store:    st,
		Searcher: searchclient.New(searchv1.NewSearchServiceClient(backends)).Evidence(),
		Notifier: notifierclient.New(notifierv1.NewNotifierServiceClient(backends)),
		Clock:    clock,
		Logger:   discard,
	}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Start(t.Context(), svc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = st.Stop(ctx)
	})
	conn := serve(t, func(s *grpc.Server) {
		groundingv1.RegisterResearchServiceServer(s, groundinggrpc.NewResearch(svc, discard))
	})
	return &env{client: groundingv1.NewResearchServiceClient(conn), notifier: n}
}

// watchToEnd starts a run and returns every state WatchResearch streamed.
func (e *env) watchToEnd(t *testing.T, req *groundingv1.StartResearchRequest) []*groundingv1.ResearchState {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	started, err := e.client.StartResearch(ctx, req)
	if err != nil {
		t.Fatalf("StartResearch: %v", err)
	}
	stream, err := e.client.WatchResearch(ctx, &groundingv1.WatchResearchRequest{Id: started.GetRun().GetId()})
	if err != nil {
		t.Fatal(err)
	}
	var states []*groundingv1.ResearchState
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return states
		}
		if err != nil {
			t.Fatalf("WatchResearch: %v", err)
		}
		states = append(states, resp.GetRun())
	}
}

func TestResearchOverGRPC(t *testing.T) {
	e := newEnv(t, research.Config{})
	states := e.watchToEnd(t, &groundingv1.StartResearchRequest{Topic: "Kubernetes operators", UserId: userID, MaxIterations: new(int32(1000))})
	final := states[len(states)-1]
	if final.GetStatus() != groundingv1.ResearchState_FINISHED {
		t.Fatalf("last watched state = %s (%s), want FINISHED", final.GetStatus(), final.GetError())
	}
	if final.GetMaxIterations() != 5 || final.GetIterationCount() < 1 || final.GetIterationCount() > 5 {
		t.Errorf("max_iterations=%d iteration_count=%d", final.GetMaxIterations(), final.GetIterationCount())
	}
	urls := map[string]bool{}
	for _, r := range corpus {
		urls[r.GetUrl()] = true
	}
	for _, s := range final.GetSources() {
		if !urls[s.GetUrl()] {
			t.Errorf("source %s is not from the search service", s.GetUrl())
		}
	}
	rep := final.GetReport()
	if len(final.GetSources()) != len(corpus) || rep.GetExecutiveSummary() == "" || !strings.Contains(rep.GetFindingsMarkdown(), "[1]") ||
		rep.GetQuality().GetQualityScore() != final.GetQualityScore() || rep.GetIterations() != final.GetIterationCount() {
		t.Errorf("final run = %v", final)
	}
	// The watch starts wherever the run is by then (it may already be past
	// PLANNING); from there the states move forward and only the last is
	// terminal.
	for i := 1; i < len(states); i++ {
		if states[i].GetIterationCount() < states[i-1].GetIterationCount() {
			t.Errorf("iteration_count went back from %d to %d", states[i-1].GetIterationCount(), states[i].GetIterationCount())
		}
	}
	for _, st := range states[:len(states)-1] {
		if s := st.GetStatus(); s == groundingv1.ResearchState_FINISHED || s == groundingv1.ResearchState_FAILED {
			t.Errorf("watch sent %s before its last state", s)
		}
	}

	got, err := e.client.GetResearch(t.Context(), &groundingv1.GetResearchRequest{Id: final.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(final, got.GetRun(), protocmp.Transform(), protocmp.IgnoreFields(&groundingv1.ResearchState{}, "planned_actions", "update_time")); diff != "" {
		t.Errorf("GetResearch differs from the last watched state (-watched +got):\n%s", diff)
	}
	acts := got.GetRun().GetPlannedActions()
	if len(acts) != 1 || acts[0].GetActionType() != "send_summary" || acts[0].GetRiskLevel() != groundingv1.RiskLevel_REVERSIBLE_WITH_DELAY ||
		acts[0].GetStatus() != groundingv1.PlannedAction_AWAITING_APPROVAL {
		t.Errorf("planned actions = %v", acts)
	}
}

// TestQueuedActionOverGRPC: an action that needs no approval is QUEUED
// while it waits to run (here: while the notifier holds its send), then
// EXECUTED.
func TestQueuedActionOverGRPC(t *testing.T) {
	n := &fakeNotifier{gate: make(chan struct{})}
	e := newEnvWith(t, research.Config{SummaryRisk: research.Reversible}, n)
	states := e.watchToEnd(t, &groundingv1.StartResearchRequest{Topic: "Kubernetes operators", UserId: userID, MaxIterations: new(int32(1))})
	runID := states[0].GetId()
	action := func() *groundingv1.PlannedAction {
		got, err := e.client.GetResearch(t.Context(), &groundingv1.GetResearchRequest{Id: runID})
		if err != nil || len(got.GetRun().GetPlannedActions()) != 1 {
			t.Fatalf("GetResearch = %v, %v; want one planned action", got, err)
		}
		return got.GetRun().GetPlannedActions()[0]
	}
	if a := action(); a.GetStatus() != groundingv1.PlannedAction_QUEUED || a.GetRiskLevel() != groundingv1.RiskLevel_REVERSIBLE || a.GetApprovalId() != "" {
		t.Errorf("action before it ran = %v, want QUEUED, REVERSIBLE, no approval", a)
	}
	close(n.gate)
	waitfor.Cond(t, "the action to run", func() bool { return action().GetStatus() == groundingv1.PlannedAction_EXECUTED })
}

func TestApprovalsOverGRPC(t *testing.T) {
	for _, tt := range []struct {
		decision   groundingv1.DecideApprovalRequest_Decision
		wantStatus groundingv1.ApprovalRequest_Status
		wantAction groundingv1.PlannedAction_Status
		wantSends  int
	}{
		{groundingv1.DecideApprovalRequest_APPROVE, groundingv1.ApprovalRequest_APPROVED, groundingv1.PlannedAction_EXECUTED, 2},
		{groundingv1.DecideApprovalRequest_REJECT, groundingv1.ApprovalRequest_REJECTED, groundingv1.PlannedAction_SKIPPED, 1},
	} {
		t.Run(tt.decision.String(), func(t *testing.T) {
			e := newEnv(t, research.Config{})
			states := e.watchToEnd(t, &groundingv1.StartResearchRequest{Topic: "Kubernetes operators", UserId: userID})
			runID := states[0].GetId()

			list, err := e.client.ListApprovals(t.Context(), &groundingv1.ListApprovalsRequest{Status: groundingv1.ApprovalRequest_PENDING})
			if err != nil || len(list.GetApprovals()) != 1 {
				t.Fatalf("ListApprovals(PENDING) = %v, %v; want one", list, err)
			}
			a := list.GetApprovals()[0]
			if a.GetRunId() != runID || a.GetRequester() != userID ||
				a.GetTimeoutAt().AsTime().Sub(a.GetRequestedAt().AsTime()) != 5*time.Minute {
				t.Errorf("approval = %v", a)
			}
			// The approval is posted with approval buttons; the notifier
			// writes their callback data and turns a press back into a
			// DecideApproval.
			waitfor.Cond(t, "the approval post", func() bool { return len(e.notifier.messages()) == 1 })
			post := e.notifier.messages()[0]
			wantButtons := []*notifierv1.InlineButton{
				{Text: "Approve", Approval: &notifierv1.ApprovalButton{ApprovalId: a.GetId(), Decision: notifierv1.ApprovalButton_DECISION_APPROVE}},
				{Text: "Reject", Approval: &notifierv1.ApprovalButton{ApprovalId: a.GetId(), Decision: notifierv1.ApprovalButton_DECISION_REJECT}},
			}
			if diff := cmp.Diff(wantButtons, post.GetButtons(), protocmp.Transform()); diff != "" {
				t.Errorf("buttons (-want +got):\n%s", diff)
			}

			dec, err := e.client.DecideApproval(t.Context(), &groundingv1.DecideApprovalRequest{
				Id: a.GetId(), Decision: tt.decision, DecidedBy: "telegram:42", Comment: "looks right",
			})
			if err != nil {
				t.Fatal(err)
			}
			d := dec.GetApproval().GetDecision()
			by := d.GetApprovedBy() + d.GetRejectedBy()
			// No key on this call: the decider is what it said it was, marked.
			if dec.GetApproval().GetStatus() != tt.wantStatus || by != "telegram:42"+actor.SelfDeclared || d.GetActor() != by ||
				d.GetComment() != "looks right" || d.GetDurationSeconds() < 0 {
				t.Errorf("decided approval = %v", dec.GetApproval())
			}
			waitfor.Cond(t, "the action to settle", func() bool {
				got, err := e.client.GetResearch(t.Context(), &groundingv1.GetResearchRequest{Id: runID})
				return err == nil && got.GetRun().GetPlannedActions()[0].GetStatus() == tt.wantAction
			})
			if n := len(e.notifier.messages()); n != tt.wantSends {
				t.Errorf("%d messages sent, want %d", n, tt.wantSends)
			}

			_, err = e.client.DecideApproval(t.Context(), &groundingv1.DecideApprovalRequest{
				Id: a.GetId(), Decision: groundingv1.DecideApprovalRequest_APPROVE, DecidedBy: "telegram:43",
			})
			if status.Code(err) != codes.FailedPrecondition {
				t.Errorf("second decision: %v, want FailedPrecondition", err)
			}
			pending, err := e.client.ListApprovals(t.Context(), &groundingv1.ListApprovalsRequest{Status: groundingv1.ApprovalRequest_PENDING})
			if err != nil || len(pending.GetApprovals()) != 0 {
				t.Errorf("pending after the decision = %v, %v", pending, err)
			}
		})
	}
}

func TestResearchErrorsOverGRPC(t *testing.T) {
	e := newEnv(t, research.Config{})
	ctx := t.Context()
	tests := []struct {
		name string
		call func() error
		want codes.Code
	}{
		{"unknown run", func() error {
			_, err := e.client.GetResearch(ctx, &groundingv1.GetResearchRequest{Id: "nope"})
			return err
		}, codes.NotFound},
		{"watch unknown run", func() error {
			s, err := e.client.WatchResearch(ctx, &groundingv1.WatchResearchRequest{Id: "nope"})
			if err != nil {
				return err
			}
			_, err = s.Recv()
			return err
		}, codes.NotFound},
		{"user id not a uuid", func() error {
			_, err := e.client.StartResearch(ctx, &groundingv1.StartResearchRequest{Topic: "x", UserId: "bob"})
			return err
		}, codes.InvalidArgument},
		{"blank topic", func() error {
			_, err := e.client.StartResearch(ctx, &groundingv1.StartResearchRequest{Topic: "  ", UserId: userID})
			return err
		}, codes.InvalidArgument},
		{"threshold above 1", func() error {
			_, err := e.client.StartResearch(ctx, &groundingv1.StartResearchRequest{Topic: "x", UserId: userID, QualityThreshold: new(1.5)})
			return err
		}, codes.InvalidArgument},
		{"bad page token", func() error {
			_, err := e.client.ListResearch(ctx, &groundingv1.ListResearchRequest{UserId: userID, PageToken: "!!"})
			return err
		}, codes.InvalidArgument},
		{"unknown approval", func() error {
			_, err := e.client.DecideApproval(ctx, &groundingv1.DecideApprovalRequest{Id: "nope", Decision: groundingv1.DecideApprovalRequest_REJECT, DecidedBy: "x"})
			return err
		}, codes.NotFound},
		{"no decision", func() error {
			_, err := e.client.DecideApproval(ctx, &groundingv1.DecideApprovalRequest{Id: "nope", DecidedBy: "x"})
			return err
		}, codes.InvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := status.Code(tt.call()); got != tt.want {
				t.Errorf("code = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestListResearchPages(t *testing.T) {
	e := newEnv(t, research.Config{})
	var want []string
	for i := range 3 {
		resp, err := e.client.StartResearch(t.Context(), &groundingv1.StartResearchRequest{Topic: fmt.Sprintf("topic %d", i), UserId: userID, MaxIterations: new(int32(1))})
		if err != nil {
			t.Fatal(err)
		}
		want = append([]string{resp.GetRun().GetId()}, want...)
	}
	var got []string
	tok := ""
	for range 4 {
		resp, err := e.client.ListResearch(t.Context(), &groundingv1.ListResearchRequest{UserId: userID, PageSize: 2, PageToken: tok})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range resp.GetRuns() {
			got = append(got, r.GetId())
		}
		if tok = resp.GetNextPageToken(); tok == "" {
			break
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("listed runs (-want +got):\n%s", diff)
	}

	// An operator lists every user's runs by leaving user_id empty.
	other, err := e.client.StartResearch(t.Context(), &groundingv1.StartResearchRequest{Topic: "another user's topic", UserId: "9b0e7a4c-3f9d-4c55-9a43-7a0f1f0f6b21", MaxIterations: new(int32(1))})
	if err != nil {
		t.Fatal(err)
	}
	all, err := e.client.ListResearch(t.Context(), &groundingv1.ListResearchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, r := range all.GetRuns() {
		got = append(got, r.GetId())
	}
	if diff := cmp.Diff(append([]string{other.GetRun().GetId()}, want...), got); diff != "" {
		t.Errorf("every run (-want +got):\n%s", diff)
	}
}

// offsetClock is the system clock moved forward by a settable offset.
type offsetClock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *offsetClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *offsetClock) jumpTo(at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off = time.Until(at)
}

// pendingOverGRPC runs a run to its approval and returns it.
func pendingOverGRPC(t *testing.T, e *env, req *groundingv1.StartResearchRequest) *groundingv1.ApprovalRequest {
	t.Helper()
	states := e.watchToEnd(t, req)
	list, err := e.client.ListApprovals(t.Context(), &groundingv1.ListApprovalsRequest{RunId: states[0].GetId()})
	if err != nil || len(list.GetApprovals()) == 0 {
		t.Fatalf("ListApprovals = %v, %v", list, err)
	}
	return list.GetApprovals()[0]
}

func TestDecisionRecordsActor(t *testing.T) {
	e := newEnv(t, research.Config{})
	a := pendingOverGRPC(t, e, &groundingv1.StartResearchRequest{Topic: "Kubernetes operators", UserId: userID, MaxIterations: new(int32(1))})
	ctx := actor.OutgoingContext(t.Context(), "ops-key")
	dec, err := e.client.DecideApproval(ctx, &groundingv1.DecideApprovalRequest{
		Id: a.GetId(), Decision: groundingv1.DecideApprovalRequest_REJECT, DecidedBy: "Ann from the night shift",
	})
	if err != nil {
		t.Fatal(err)
	}
	d := dec.GetApproval().GetDecision()
	want := &groundingv1.DecisionMetadata{RejectedBy: "ops-key", Actor: "ops-key", DecidedBy: "Ann from the night shift"}
	if diff := cmp.Diff(want, d, protocmp.Transform(), protocmp.IgnoreFields(&groundingv1.DecisionMetadata{}, "duration_seconds", "decide_time")); diff != "" {
		t.Errorf("decision (-want +got):\n%s", diff)
	}
}

// TestLateDecisionOverGRPC: a decision at or after timeout_at is refused
// with FailedPrecondition saying it escalated, and the approval reads as
// ESCALATED at once, before any timeout job ran.
func TestLateDecisionOverGRPC(t *testing.T) {
	clock := &offsetClock{}
	e := newEnvClock(t, research.Config{}, &fakeNotifier{}, clock)
	a := pendingOverGRPC(t, e, &groundingv1.StartResearchRequest{Topic: "Kubernetes operators", UserId: userID, MaxIterations: new(int32(1))})
	clock.jumpTo(a.GetTimeoutAt().AsTime().Add(45 * time.Second))
	_, err := e.client.DecideApproval(t.Context(), &groundingv1.DecideApprovalRequest{
		Id: a.GetId(), Decision: groundingv1.DecideApprovalRequest_APPROVE, DecidedBy: "late",
	})
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(status.Convert(err).Message(), "escalated") {
		t.Fatalf("late decision: %v, want FailedPrecondition saying it escalated", err)
	}
	list, err := e.client.ListApprovals(t.Context(), &groundingv1.ListApprovalsRequest{RunId: a.GetRunId()})
	if err != nil {
		t.Fatal(err)
	}
	got := list.GetApprovals()[0]
	if got.GetStatus() != groundingv1.ApprovalRequest_ESCALATED || got.GetDecision().GetReason() != research.ReasonApprovalTimeout {
		t.Errorf("approval = %v, want ESCALATED for approval_timeout", got)
	}
	run, err := e.client.GetResearch(t.Context(), &groundingv1.GetResearchRequest{Id: a.GetRunId()})
	if err != nil {
		t.Fatal(err)
	}
	if st := run.GetRun().GetPlannedActions()[0].GetStatus(); st != groundingv1.PlannedAction_SKIPPED {
		t.Errorf("action = %s, want SKIPPED", st)
	}
}

func TestRequestedActionOverGRPC(t *testing.T) {
	n := &fakeNotifier{}
	e := newEnvWith(t, research.Config{SummaryChats: []string{"-100200"}}, n)
	params, err := structpb.NewStruct(map[string]any{"chat_id": "-100200"})
	if err != nil {
		t.Fatal(err)
	}
	a := pendingOverGRPC(t, e, &groundingv1.StartResearchRequest{
		Topic: "Kubernetes operators", UserId: userID, MaxIterations: new(int32(1)),
		Actions: []*groundingv1.RequestedAction{{ActionType: "send_summary", RiskLevel: groundingv1.RiskLevel_IRREVERSIBLE, Parameters: params}},
	})
	if a.GetRiskLevel() != groundingv1.RiskLevel_IRREVERSIBLE {
		t.Errorf("approval risk = %s, want IRREVERSIBLE", a.GetRiskLevel())
	}
	run, err := e.client.GetResearch(t.Context(), &groundingv1.GetResearchRequest{Id: a.GetRunId()})
	if err != nil {
		t.Fatal(err)
	}
	act := run.GetRun().GetPlannedActions()[0]
	if diff := cmp.Diff(params, act.GetParameters(), protocmp.Transform()); diff != "" || act.GetStatus() != groundingv1.PlannedAction_AWAITING_APPROVAL {
		t.Errorf("planned action %v, parameters (-want +got):\n%s", act, diff)
	}
	waitfor.Cond(t, "the approval post", func() bool { return len(n.messages()) == 1 })
	if _, err := e.client.DecideApproval(t.Context(), &groundingv1.DecideApprovalRequest{Id: a.GetId(), Decision: groundingv1.DecideApprovalRequest_APPROVE, DecidedBy: "x"}); err != nil {
		t.Fatal(err)
	}
	waitfor.Cond(t, "the summary", func() bool { return len(n.messages()) == 2 })
	if got := n.messages()[1].GetChatId(); got != "-100200" {
		t.Errorf("summary posted to %q, want -100200", got)
	}

	bad, _ := structpb.NewStruct(map[string]any{"chat_id": "-999"})
	_, err = e.client.StartResearch(t.Context(), &groundingv1.StartResearchRequest{
		Topic: "x", UserId: userID,
		Actions: []*groundingv1.RequestedAction{{ActionType: "send_summary", Parameters: bad}},
	})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(fmt.Sprint(status.Convert(err).Details()), "actions[0].parameters.chat_id") {
		t.Errorf("unconfigured chat: %v, want InvalidArgument naming actions[0].parameters.chat_id", err)
	}
}

func TestGetResearchReport(t *testing.T) {
	e := newEnv(t, research.Config{})
	states := e.watchToEnd(t, &groundingv1.StartResearchRequest{Topic: "Kubernetes operators, asked by jane.doe@example.com", UserId: userID, MaxIterations: new(int32(1))})
	final := states[len(states)-1]
	got, err := e.client.GetResearchReport(t.Context(), &groundingv1.GetResearchReportRequest{Id: final.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	rep := final.GetReport()
	for _, part := range []string{"## Executive summary", rep.GetExecutiveSummary(), "## Sources", "[1]"} {
		if !strings.Contains(got.GetContent(), part) {
			t.Errorf("content lacks %q:\n%s", part, got.GetContent())
		}
	}
	for _, sec := range rep.GetSections() {
		if sec.GetRelevanceBar() != research.RelevanceBar || sec.GetQuestion() == "" {
			t.Errorf("section = %v", sec)
		}
		for _, sc := range sec.GetScores() {
			if sc.GetAdmitted() != (sc.GetScore() >= sec.GetRelevanceBar()) {
				t.Errorf("section %q: %v", sec.GetQuestion(), sc)
			}
		}
	}
	if len(rep.GetSections()) != len(final.GetPlan()) {
		t.Errorf("%d report sections for %d sub-questions", len(rep.GetSections()), len(final.GetPlan()))
	}
	m := got.GetMetadata()
	if m.GetType() != "research_report" || m.GetUserId() != userID || m.GetIterationCount() != final.GetIterationCount() ||
		!m.GetTimestamp().AsTime().Equal(rep.GetGenerateTime().AsTime()) || len(m.GetSources()) != len(rep.GetSources()) {
		t.Errorf("metadata = %v", m)
	}
	if strings.Contains(m.GetTopic(), "jane.doe") || !strings.Contains(m.GetTopic(), "[email]") {
		t.Errorf("metadata topic %q keeps personal data", m.GetTopic())
	}
	for i, s := range m.GetSources() {
		if s.GetUrl() != rep.GetSources()[i].GetUrl() || s.GetTitle() == "" {
			t.Errorf("metadata source %d = %v", i, s)
		}
	}
	if _, err := e.client.GetResearchReport(t.Context(), &groundingv1.GetResearchReportRequest{Id: "nope"}); status.Code(err) != codes.NotFound {
		t.Errorf("unknown run: %v, want NotFound", err)
	}
}

// TestRefusedSummaryOverGRPC holds that a summary the notifier refuses for
// good (PermissionDenied: a chat it may not post to) ends the action
// FAILED at the first attempt with the notifier's reason in the API,
// instead of staying QUEUED while the job retries.
func TestRefusedSummaryOverGRPC(t *testing.T) {
	n := &fakeNotifier{refuse: func(req *notifierv1.SendMessageRequest) error {
		if req.GetChatId() == "-100200" {
			return status.Error(codes.PermissionDenied, "chat_id is not a configured chat")
		}
		return nil
	}}
	e := newEnvWith(t, research.Config{SummaryChats: []string{"-100200"}}, n)
	params, err := structpb.NewStruct(map[string]any{"chat_id": "-100200"})
	if err != nil {
		t.Fatal(err)
	}
	a := pendingOverGRPC(t, e, &groundingv1.StartResearchRequest{
		Topic: "Kubernetes operators", UserId: userID, MaxIterations: new(int32(1)),
		Actions: []*groundingv1.RequestedAction{{ActionType: "send_summary", RiskLevel: groundingv1.RiskLevel_IRREVERSIBLE, Parameters: params}},
	})
	waitfor.Cond(t, "the approval post", func() bool { return len(n.messages()) == 1 })
	if _, err := e.client.DecideApproval(t.Context(), &groundingv1.DecideApprovalRequest{Id: a.GetId(), Decision: groundingv1.DecideApprovalRequest_APPROVE, DecidedBy: "x"}); err != nil {
		t.Fatal(err)
	}
	var act *groundingv1.PlannedAction
	waitfor.Cond(t, "the action to end", func() bool {
		run, err := e.client.GetResearch(t.Context(), &groundingv1.GetResearchRequest{Id: a.GetRunId()})
		if err != nil {
			t.Fatal(err)
		}
		act = run.GetRun().GetPlannedActions()[0]
		return act.GetStatus() != groundingv1.PlannedAction_QUEUED && act.GetStatus() != groundingv1.PlannedAction_AWAITING_APPROVAL
	})
	if act.GetStatus() != groundingv1.PlannedAction_FAILED || act.GetResult() != "refused by the notifier: chat_id is not a configured chat" {
		t.Errorf("action = %v, want FAILED with the notifier's reason", act)
	}
	if got := n.attempts(); got != 2 {
		t.Errorf("%d sends, want 2 (the approval post, then one refused summary, not retried)", got)
	}
}
