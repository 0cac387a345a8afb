package e2e_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	ragv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/rag/v1"
	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
)

func dial(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// probe is one kind of RPC the test makes again and again.
type probe struct {
	name string
	call func(ctx context.Context) error
	// ok are the codes the RPC may answer with under provider faults,
	// besides OK: anything else (Internal above all) is a bug.
	ok []codes.Code
}

// TestRPCsAnswerWithinDeadlines calls Search (Exa), DeriveQuery and Ground
// (Exa evidence, then Gemini), and Ask (Groq) over gRPC while every
// provider fails 30% of its requests, a slow answer taking longer than any
// server-side budget. Each service bounds its own work (engine timeout,
// round timeout, Groq timeout) well inside the caller's 10 s deadline, so
// every call must come back with an answer, never with the caller's own
// DeadlineExceeded, and never with an Internal error.
func TestRPCsAnswerWithinDeadlines(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole stack against flaky providers")
	}
	onEachDatabase(t, func(t *testing.T, databaseURL string) {
		p := startFlakyProviders(t, 30*time.Second) // slower than every budget below
		p.env["SEARCH_ENGINE_TIMEOUT"] = "1500ms"
		p.env["SEARCH_TIMEOUT"] = "3s"
		p.env["GROUNDING_ROUND_TIMEOUT"] = "4s"
		p.env["GROQ_TIMEOUT"] = "2s"
		s := startStack(t, p.env, databaseURL)
		ctx := t.Context()

		if _, err := call(ctx, "POST", s.GatewayURL+"/v1/search/documents", map[string]any{"documents": runbookDocs(t)}, nil); err != nil {
			t.Fatalf("indexing the runbooks: %v", err)
		}
		if _, err := call(ctx, "POST", s.GatewayURL+"/v1/collections/runbooks/documents", map[string]any{"documents": runbookDocs(t)}, nil); err != nil {
			t.Fatalf("ingesting the runbooks: %v", err)
		}

		searchc := searchv1.NewSearchServiceClient(dial(t, s.Addrs["search"]))
		groundc := groundingv1.NewGroundingServiceClient(dial(t, s.Addrs["grounding"]))
		ragc := ragv1.NewRagServiceClient(dial(t, s.Addrs["rag"]))
		questions := []string{
			"How do I free space when the disk is almost full?",
			"Postgres says too many clients already",
			"checkout api returns 5xx after a deploy",
			"kafka consumer lag keeps growing",
		}
		// Probes run concurrently; each takes the next question in turn.
		var asked atomic.Int64
		next := func() string { return questions[asked.Add(1)%int64(len(questions))] }
		probes := []probe{
			{name: "Search(exa)", ok: []codes.Code{codes.Unavailable, codes.ResourceExhausted, codes.DeadlineExceeded}, call: func(ctx context.Context) error {
				q := next()
				_, err := searchc.Search(ctx, &searchv1.SearchRequest{Query: q, MaxResults: proto.Int32(3), Engine: searchv1.Engine_EXA})
				return err
			}},
			{name: "Search(auto)", call: func(ctx context.Context) error {
				q := next()
				// Auto falls back to the local index when Exa fails.
				resp, err := searchc.Search(ctx, &searchv1.SearchRequest{Query: q, MaxResults: proto.Int32(3)})
				if err == nil && len(resp.GetResults()) == 0 {
					return errors.New("auto search found nothing in the indexed runbooks")
				}
				return err
			}},
			{name: "DeriveQuery", call: func(ctx context.Context) error {
				q := next()
				// Falls back to offline extraction when Gemini fails.
				resp, err := groundc.DeriveQuery(ctx, &groundingv1.DeriveQueryRequest{Text: q})
				if err == nil && strings.TrimSpace(resp.GetQuery()) == "" {
					return errors.New("empty query")
				}
				return err
			}},
			{name: "Ground(exa+gemini)", call: func(ctx context.Context) error {
				q := next()
				// A provider failure is a stored FAILED message, not an error.
				resp, err := groundc.Ground(ctx, &groundingv1.GroundRequest{Text: q, RoundConfig: &groundingv1.RoundConfig{Engine: groundingv1.RoundConfig_EXA}})
				if err == nil && resp.GetMessage().GetId() == "" {
					return errors.New("no message id")
				}
				return err
			}},
			{name: "Ask(groq)", call: func(ctx context.Context) error {
				q := next()
				// Groq failures fall back to the extractive answer.
				resp, err := ragc.Ask(ctx, &ragv1.AskRequest{Collection: "runbooks", Query: q})
				if err == nil && !resp.GetResponse().GetSuccess() {
					return errors.New("ask did not succeed")
				}
				return err
			}},
		}

		const rounds = 8
		type outcome struct {
			probe string
			code  codes.Code
			err   error
			took  time.Duration
		}
		results := make(chan outcome, rounds*len(probes))
		var wg sync.WaitGroup
		for _, pr := range probes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range rounds {
					cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
					start := time.Now()
					err := pr.call(cctx)
					cancel()
					results <- outcome{probe: pr.name, code: status.Code(err), err: err, took: time.Since(start)}
				}
			}()
		}
		wg.Wait()
		close(results)
		p.report(t)

		byProbe := map[string]map[codes.Code]int{}
		slowest := map[string]time.Duration{}
		for o := range results {
			if byProbe[o.probe] == nil {
				byProbe[o.probe] = map[codes.Code]int{}
			}
			byProbe[o.probe][o.code]++
			slowest[o.probe] = max(slowest[o.probe], o.took)
			if o.err == nil {
				continue
			}
			allowed := false
			for _, pr := range probes {
				if pr.name == o.probe {
					for _, c := range pr.ok {
						allowed = allowed || c == o.code
					}
				}
			}
			// The caller's own deadline firing means the server did not bound
			// its work; an unknown code means a plain error, not a status.
			if !allowed || o.code == codes.Unknown {
				t.Errorf("%s after %s: %v", o.probe, o.took.Round(time.Millisecond), o.err)
			}
			if o.code == codes.DeadlineExceeded && o.took >= 10*time.Second {
				t.Errorf("%s hit the caller's 10 s deadline: the server did not answer within its own budget", o.probe)
			}
		}
		for name, codes := range byProbe {
			t.Logf("%-20s %v, slowest %s", name, codes, slowest[name].Round(time.Millisecond))
		}
	})
}
