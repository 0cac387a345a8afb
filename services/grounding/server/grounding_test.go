package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/platform/logging/logtest"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
)

// groundingDocs is the fake search service's local index.
var groundingDocs = []*searchv1.SearchResult{
	{Title: "Too many clients already: PostgreSQL connections", Url: "https://www.postgresql.org/docs/current/runtime-config-connection.html", SourceDomain: "postgresql.org",
		Snippet: "max_connections determines the maximum number of concurrent connections to the database server. When it is reached new clients get FATAL: sorry, too many clients already."},
	{Title: "PgBouncer", Url: "https://www.pgbouncer.org/", SourceDomain: "pgbouncer.org",
		Snippet: "PgBouncer is a lightweight connection pooler for PostgreSQL that keeps too many clients from exhausting server connections."},
}

type groundingSearch struct {
	searchv1.UnimplementedSearchServiceServer
}

func (groundingSearch) Search(_ context.Context, req *searchv1.SearchRequest) (*searchv1.SearchResponse, error) {
	return &searchv1.SearchResponse{Results: groundingDocs[:min(int(req.GetMaxResults()), len(groundingDocs))], Engine: req.GetEngine()}, nil
}

// runGrounding runs the service as main would, with env on top of a
// temporary DATA_DIR, loopback :0 listeners and a fake search service.
func runGrounding(t *testing.T, env map[string]string) (groundingv1.GroundingServiceClient, *grpcserver.Server, *logtest.Buffer) {
	t.Helper()
	gs := grpc.NewServer()
	searchv1.RegisterSearchServiceServer(gs, groundingSearch{})
	var lc net.ListenConfig
	lis, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)

	vars := map[string]string{
		"DATA_DIR": filepath.Join(t.TempDir(), "data"), "GROUNDING_ADDR": "127.0.0.1:0", "GROUNDING_ADMIN_ADDR": "127.0.0.1:0",
		"SEARCH_ADDR": lis.Addr().String(), "GRACE_PERIOD": "1s",
		// Tests stay on loopback: cited pages are not fetched.
		"GROUNDING_FETCH_PAGES": "false",
		// SQLite under DATA_DIR, or a schema of its own on PostgreSQL
		// when the suite runs with DATABASE_URL.
		"DATABASE_URL": sqlstoretest.URL(t, "grounding_server"),
	}
	for k, v := range env {
		vars[k] = v
	}
	cfg, err := config.Load[Config](config.MapLookup(vars))
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	logs := &logtest.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	ready := make(chan *grpcserver.Server, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, logger, func(s *grpcserver.Server) { ready <- s }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	var srv *grpcserver.Server
	select {
	case srv = <-ready:
	case err := <-done:
		t.Fatalf("run stopped: %v\n%s", err, logs)
	}
	conn, err := grpc.NewClient(srv.GRPCAddr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return groundingv1.NewGroundingServiceClient(conn), srv, logs
}

func TestRunOffline(t *testing.T) {
	c, srv, logs := runGrounding(t, nil)
	resp, err := c.Ground(t.Context(), &groundingv1.GroundRequest{
		Text:        "FATAL: sorry, too many clients already",
		RoundConfig: &groundingv1.RoundConfig{Engine: groundingv1.RoundConfig_LOCAL, MaxResults: proto.Int32(5)},
	})
	if err != nil {
		t.Fatalf("Ground: %v", err)
	}
	m := resp.GetMessage()
	if m.GetStatus() != groundingv1.AnnotatedMessage_PROCESSED || len(m.GetCitations()) == 0 || utf8.RuneCountInString(m.GetSummary()) > 250 {
		t.Errorf("message = %v", m)
	}
	got, err := c.GetAnnotatedMessage(t.Context(), &groundingv1.GetAnnotatedMessageRequest{Id: m.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m, got.GetMessage(), protocmp.Transform()); diff != "" {
		t.Errorf("stored message differs (-ground +get):\n%s", diff)
	}
	if !strings.Contains(logs.String(), "GEMINI_API_KEY is not set: grounding with the offline extractive summariser") {
		t.Errorf("no start-up line naming the offline method in:\n%s", logs)
	}
	metrics := scrape(t, srv)
	if want := `grounding_round_duration_seconds_count{engine="local",method="extractive",status="processed"} 1`; !strings.Contains(metrics, want) {
		t.Errorf("metrics lack %q", want)
	}
}

func scrape(t *testing.T, srv *grpcserver.Server) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+srv.AdminAddr().String()+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestRunGeminiNative runs the service against a local server speaking
// Gemini's wire format with grounding metadata whose chunks are redirect
// links through the server's own host (as Google's are through
// vertexaisearch.cloud.google.com) titled with a bare domain: the stored
// citations name the destinations, never the redirect links.
func TestRunGeminiNative(t *testing.T) {
	text := "连接数已满 😱 means max_connections was reached. PgBouncer pools connections."
	first := "连接数已满 😱 means max_connections was reached."
	resp := map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": []any{map[string]any{"text": text}}},
			"finishReason": "STOP",
			"groundingMetadata": map[string]any{
				"webSearchQueries": []string{"postgres too many clients"},
				"groundingChunks": []any{
					map[string]any{"web": map[string]any{"uri": "REDIRECTOR/grounding-api-redirect/AAA", "title": "postgresql.org"}},
					map[string]any{"web": map[string]any{"uri": "REDIRECTOR/grounding-api-redirect/BBB", "title": "pgbouncer.org"}},
				},
				"groundingSupports": []any{
					map[string]any{"segment": map[string]any{"endIndex": len(first), "text": first}, "groundingChunkIndices": []int{0}},
					map[string]any{"segment": map[string]any{"startIndex": len(first) + 1, "endIndex": len(text), "text": "PgBouncer pools connections."}, "groundingChunkIndices": []int{1}},
				},
			},
		}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 20},
	}
	body, _ := json.Marshal(resp)
	destinations := map[string]string{
		"/grounding-api-redirect/AAA": "https://www.postgresql.org/docs/current/runtime-config-connection.html",
		"/grounding-api-redirect/BBB": "https://www.pgbouncer.org/usage.html",
	}
	gemini := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d, ok := destinations[r.URL.Path]; ok {
			http.Redirect(w, r, d, http.StatusFound)
			return
		}
		if r.URL.Path != "/v1beta/models/gemini-test:generateContent" || r.Header.Get("x-goog-api-key") != "k-123456" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(bytes.ReplaceAll(body, []byte("REDIRECTOR"), []byte("http://"+r.Host)))
	}))
	t.Cleanup(gemini.Close)

	c, _, logs := runGrounding(t, map[string]string{
		"GEMINI_API_KEY": "k-123456", "GEMINI_MODEL": "gemini-test", "GOOGLE_GEMINI_BASE_URL": gemini.URL,
	})
	r, err := c.Ground(t.Context(), &groundingv1.GroundRequest{
		Text: "too many clients already", RoundConfig: &groundingv1.RoundConfig{Engine: groundingv1.RoundConfig_NATIVE},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := r.GetMessage()
	type cite struct {
		Span, URL, Domain string
		Start, End        int32
	}
	var got []cite
	for _, ci := range m.GetCitations() {
		got = append(got, cite{string([]rune(m.GetText())[ci.GetStartIndex():ci.GetEndIndex()]), ci.GetUrl(), ci.GetDomain(), ci.GetStartIndex(), ci.GetEndIndex()})
	}
	want := []cite{
		{first, destinations["/grounding-api-redirect/AAA"], "postgresql.org", 0, 42},
		{"PgBouncer pools connections.", destinations["/grounding-api-redirect/BBB"], "pgbouncer.org", 43, 71},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("citations (-want +got):\n%s", diff)
	}
	if m.GetModel() != "gemini-test" || m.GetEngine() != groundingv1.RoundConfig_NATIVE || m.GetGroundedContext().GetQuery() != "postgres too many clients" {
		t.Errorf("model %q engine %v query %q", m.GetModel(), m.GetEngine(), m.GetGroundedContext().GetQuery())
	}
	if !strings.Contains(logs.String(), "grounding with Gemini") || strings.Contains(logs.String(), "k-123456") {
		t.Errorf("start-up log should name Gemini and never the key:\n%s", logs)
	}
}
