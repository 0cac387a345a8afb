package enricheval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/logging"
	groundingserver "github.com/groundcrew/groundcrew/services/grounding/server"
	searchserver "github.com/groundcrew/groundcrew/services/search/server"
)

// Env is the search and grounding services running offline with the
// corpus indexed.
type Env struct {
	corpus   Corpus
	cancel   context.CancelFunc
	done     chan error
	conns    []*grpc.ClientConn
	ground   groundingv1.GroundingServiceClient
	research groundingv1.ResearchServiceClient
	search   searchv1.SearchServiceClient
}

// Start runs the search and grounding services in-process, each through
// its own server.Run as its binary does, on loopback listeners, offline
// (no provider keys) with their data in dataDir, and indexes the corpus.
func Start(ctx context.Context, dataDir string, corpus Corpus, logs io.Writer) (*Env, error) {
	if logs == nil {
		logs = io.Discard
	}
	lis := map[string]config.Listeners{}
	addrs := map[string]string{}
	for _, name := range []string{"search", "grounding"} {
		api, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		admin, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			_ = api.Close()
			return nil, err
		}
		lis[name] = config.Listeners{API: api, Admin: admin}
		addrs[name] = api.Addr().String()
	}
	// rag and the notifier are not started. Their default addresses are
	// where `make run` serves them, so an evaluation beside a running stack
	// would post its research approvals into that stack's chat: point them
	// at a port nothing listens on instead.
	nowhere, err := refusedAddr()
	if err != nil {
		return nil, err
	}
	env := func(name string) func(string) (string, bool) {
		return config.MapLookup(map[string]string{
			"DATA_DIR": filepath.Join(dataDir, name), "LOG_FORMAT": "json", "LOG_LEVEL": "warn", "GRACE_PERIOD": "2s",
			"SEARCH_ADDR": addrs["search"], "GROUNDING_ADDR": addrs["grounding"],
			"RAG_ADDR": nowhere, "NOTIFIER_ADDR": nowhere,
			strings.ToUpper(name) + "_ADMIN_ADDR": lis[name].Admin.Addr().String(),
		})
	}
	scfg, err := config.Load[searchserver.Config](env("search"))
	if err != nil {
		return nil, err
	}
	scfg.Listeners = lis["search"]
	gcfg, err := config.Load[groundingserver.Config](env("grounding"))
	if err != nil {
		return nil, err
	}
	gcfg.Listeners = lis["grounding"]
	logger, err := logging.New(logs, "json", "warn")
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	e := &Env{corpus: corpus, cancel: cancel, done: make(chan error, 2)}
	go func() { e.done <- searchserver.Run(rctx, scfg, logger.With("service", "search")) }()
	go func() { e.done <- groundingserver.Run(rctx, gcfg, logger.With("service", "grounding")) }()

	sc, err := e.dial(addrs["search"])
	if err != nil {
		e.Close()
		return nil, err
	}
	gc, err := e.dial(addrs["grounding"])
	if err != nil {
		e.Close()
		return nil, err
	}
	if err := e.wait(ctx, sc, gc); err != nil {
		e.Close()
		return nil, err
	}
	e.ground = groundingv1.NewGroundingServiceClient(gc)
	e.research = groundingv1.NewResearchServiceClient(gc)
	e.search = searchv1.NewSearchServiceClient(sc)
	resp, err := e.search.IndexDocuments(ctx, &searchv1.IndexDocumentsRequest{Documents: corpus.Docs})
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("indexing the corpus: %w", err)
	}
	if len(resp.GetRejected()) > 0 {
		e.Close()
		return nil, fmt.Errorf("indexing the corpus: %s rejected: %s", resp.GetRejected()[0].GetUrl(), resp.GetRejected()[0].GetReason())
	}
	return e, nil
}

// refusedAddr returns a loopback address that refuses connections: a port
// the system handed out and that was closed again at once.
func refusedAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

func (e *Env) dial(addr string) (*grpc.ClientConn, error) {
	c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err == nil {
		e.conns = append(e.conns, c)
	}
	return c, err
}

// wait returns once both services report SERVING.
func (e *Env) wait(ctx context.Context, conns ...*grpc.ClientConn) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for _, c := range conns {
		h := healthpb.NewHealthClient(c)
		for {
			resp, err := h.Check(ctx, &healthpb.HealthCheckRequest{})
			if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
				break
			}
			select {
			case err := <-e.done:
				return fmt.Errorf("a service stopped during start-up: %v", err)
			case <-ctx.Done():
				return errors.New("the services did not become ready within a minute")
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}

// Close stops the services and waits for them.
func (e *Env) Close() {
	for _, c := range e.conns {
		_ = c.Close()
	}
	e.cancel()
	for range 2 {
		select {
		case <-e.done:
		case <-time.After(time.Minute):
			return
		}
	}
}

// Outcome is what grounding answered about one alert.
type Outcome struct {
	Alert Alert
	// Cited are the cited runbooks' names (a URL outside the corpus as
	// is), in citation order.
	Cited   []string
	Status  string
	Error   string
	Summary string
	// Retrieved are the runbooks the search service returned for the
	// derived query (the candidates relevance judged), in its order: a
	// required runbook missing here is a retrieval miss, not a relevance
	// one.
	Retrieved []string
}

// Enrich asks grounding about the alert as the notifier does:
// DeriveQuery, then Ground with the derived query.
func (e *Env) Enrich(ctx context.Context, a Alert) (Outcome, error) {
	text := a.Rendered()
	q, err := e.ground.DeriveQuery(ctx, &groundingv1.DeriveQueryRequest{Text: text})
	if err != nil {
		return Outcome{}, fmt.Errorf("%s: DeriveQuery: %w", a.ID, err)
	}
	resp, err := e.ground.Ground(ctx, &groundingv1.GroundRequest{Text: text, Query: q.GetQuery(), CreatedBy: "enrich-eval"})
	if err != nil {
		return Outcome{}, fmt.Errorf("%s: Ground: %w", a.ID, err)
	}
	m := resp.GetMessage()
	out := Outcome{Alert: a, Status: m.GetStatus().String(), Error: m.GetError(), Summary: m.GetSummary()}
	// The same search grounding made (its default of five results,
	// groundcrew's runbooks left out of a user's alert).
	sreq := &searchv1.SearchRequest{Query: q.GetQuery(), MaxResults: proto.Int32(groundingMaxResults)}
	if !groundcrewAlert(a) {
		sreq.ExcludeCollections = []string{GroundcrewCollection}
	}
	found, err := e.search.Search(ctx, sreq)
	if err != nil {
		return Outcome{}, fmt.Errorf("%s: Search: %w", a.ID, err)
	}
	for _, r := range found.GetResults() {
		out.Retrieved = append(out.Retrieved, e.name(r.GetUrl()))
	}
	for _, c := range m.GetCitations() {
		name := e.name(c.GetUrl())
		if !slices.Contains(out.Cited, name) {
			out.Cited = append(out.Cited, name)
		}
	}
	return out, nil
}

// groundingMaxResults is how many results grounding asks the search
// service for by default.
const groundingMaxResults = 5

// groundcrewAlert reports whether grounding consults groundcrew's own
// runbooks for the alert: its name starts with Groundcrew, or it has the
// label service=groundcrew.
func groundcrewAlert(a Alert) bool {
	name := a.Labels["alertname"]
	if name == "" {
		name = a.Labels["rulename"]
	}
	return strings.HasPrefix(strings.ToLower(name), "groundcrew") || strings.EqualFold(a.Labels["service"], "groundcrew")
}

func (e *Env) name(url string) string {
	if n, ok := e.corpus.Names[url]; ok {
		return n
	}
	return url
}

// TopicOutcome is what a research run reported on one topic.
type TopicOutcome struct {
	Topic Topic
	// Cited are the report's sources' names.
	Cited []string
	// Sections and Answered count the report's sub-question sections and
	// those that cite a source.
	Sections, Answered int
	// NoEvidenceNotes counts the report's statements that nothing in the
	// index answers (the topic or a section).
	NoEvidenceNotes int
	Status          string
	Plan            []string
}

// evalUser is the research runs' user id.
const evalUser = "0f5c2b1e-7a4d-4c3b-9e8f-1a2b3c4d5e6f"

var (
	sectionRe = regexp.MustCompile(`(?m)^## (.+)\n\n((?:.+\n?)*)`)
	markerRe  = regexp.MustCompile(`\[\d+\]`)
	noneRe    = regexp.MustCompile(`(?i)no (?:source|runbook|document)[^.]*(?:answers|covers|is about)`)
)

// Research runs one research workflow on the topic and reads its report.
func (e *Env) Research(ctx context.Context, t Topic) (TopicOutcome, error) {
	started, err := e.research.StartResearch(ctx, &groundingv1.StartResearchRequest{Topic: t.Topic, UserId: evalUser})
	if status.Code(err) == codes.InvalidArgument {
		// A topic the service refuses (longer than the 500 characters
		// DESIGN allows) gets no report: it cites nothing and says
		// nothing, a miss whether covered or not, and the set goes on.
		return TopicOutcome{Topic: t, Status: "REFUSED (" + status.Convert(err).Message() + ")"}, nil
	}
	if err != nil {
		return TopicOutcome{}, fmt.Errorf("%s: StartResearch: %w", t.ID, err)
	}
	id := started.GetRun().GetId()
	deadline := time.Now().Add(2 * time.Minute)
	var run *groundingv1.ResearchState
	for {
		got, err := e.research.GetResearch(ctx, &groundingv1.GetResearchRequest{Id: id})
		if err != nil {
			return TopicOutcome{}, fmt.Errorf("%s: GetResearch: %w", t.ID, err)
		}
		run = got.GetRun()
		st := run.GetStatus()
		if st == groundingv1.ResearchState_FINISHED || st == groundingv1.ResearchState_FAILED {
			break
		}
		if time.Now().After(deadline) {
			return TopicOutcome{}, fmt.Errorf("%s: research run %s still %s after 2 minutes", t.ID, id, st)
		}
		select {
		case <-ctx.Done():
			return TopicOutcome{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	out := TopicOutcome{Topic: t, Status: run.GetStatus().String(), Plan: run.GetPlan()}
	rep := run.GetReport()
	for _, s := range rep.GetSources() {
		if n := e.name(s.GetUrl()); !slices.Contains(out.Cited, n) {
			out.Cited = append(out.Cited, n)
		}
	}
	body, _, _ := strings.Cut(rep.GetFindingsMarkdown(), "\n## Sources")
	for _, m := range sectionRe.FindAllStringSubmatch(body, -1) {
		out.Sections++
		if markerRe.MatchString(m[2]) {
			out.Answered++
		}
	}
	out.NoEvidenceNotes = len(noneRe.FindAllString(body, -1))
	return out, nil
}
