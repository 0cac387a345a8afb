package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
)

// buildSearch builds the search binary once per test.
func buildSearch(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "search")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = ".." // the module root, where main.go is
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building search: %v\n%s", err, out)
	}
	return bin
}

// child is a running search process.
type child struct {
	cmd  *exec.Cmd
	addr string
	done chan struct{}
	mu   sync.Mutex
	log  strings.Builder
}

// start runs the binary on the database at dbURL and waits for its
// "serving" log line, which carries the gRPC address it bound.
func start(t *testing.T, bin, dbURL string) *child {
	t.Helper()
	c := &child{cmd: exec.Command(bin), done: make(chan struct{})}
	c.cmd.Env = append(os.Environ(),
		"DATA_DIR="+t.TempDir(),
		"SEARCH_DATABASE_URL="+dbURL,
		"LOG_FORMAT=json", "LOG_LEVEL=info",
		"SEARCH_LISTEN_ADDR=127.0.0.1:0", "SEARCH_ADMIN_ADDR=127.0.0.1:0",
		"GRACE_PERIOD=1s",
	)
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			c.mu.Lock()
			c.log.WriteString(line + "\n")
			c.mu.Unlock()
			var rec struct {
				Msg      string `json:"msg"`
				GRPCAddr string `json:"grpc_addr"`
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving" && rec.GRPCAddr != "" {
				select {
				case addr <- rec.GRPCAddr:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		<-c.done
		_ = c.cmd.Wait()
		if t.Failed() {
			t.Logf("search log:\n%s", c.logs())
		}
	})
	select {
	case c.addr = <-addr:
	case <-c.done:
		t.Fatalf("search exited before serving:\n%s", c.logs())
	case <-time.After(60 * time.Second):
		t.Fatalf("search did not start serving:\n%s", c.logs())
	}
	return c
}

func (c *child) logs() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.log.String()
}

// kill ends the process with SIGKILL: no shutdown code runs.
func (c *child) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-c.done
	_ = c.cmd.Wait()
}

func dial(t *testing.T, addr string) searchv1.SearchServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return searchv1.NewSearchServiceClient(conn)
}

func textDoc(url, title, text string) *searchv1.Document {
	return &searchv1.Document{Url: url, Title: title, Content: &searchv1.Document_Text{Text: text}}
}

func localSearch(t *testing.T, c searchv1.SearchServiceClient, q string) *searchv1.SearchResponse {
	t.Helper()
	resp, err := c.Search(t.Context(), &searchv1.SearchRequest{Query: q, Engine: searchv1.Engine_LOCAL})
	if err != nil {
		t.Fatalf("Search(%q): %v", q, err)
	}
	return resp
}

// TestReplicasShareTheIndex runs two search processes on one database: a
// document indexed through one is found through the other at once (no
// cached "nothing found" hides it), and a replacement through the second
// is what the first then returns.
func TestReplicasShareTheIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the search binary")
	}
	dbURL := sqlstoretest.PostgresURL(t, "search_replicas")
	bin := buildSearch(t)
	a, b := dial(t, start(t, bin, dbURL).addr), dial(t, start(t, bin, dbURL).addr)

	if got := localSearch(t, b, "zebra crossing"); len(got.GetResults()) != 0 {
		t.Fatalf("empty index answered %v", got.GetResults())
	}
	if _, err := a.IndexDocuments(t.Context(), &searchv1.IndexDocumentsRequest{Documents: []*searchv1.Document{
		textDoc("https://runbooks.example.com/zebra", "Zebra crossing", "Stop at the zebra crossing and let people cross."),
	}}); err != nil {
		t.Fatal(err)
	}
	got := localSearch(t, b, "zebra crossing")
	if len(got.GetResults()) != 1 || got.GetResults()[0].GetUrl() != "https://runbooks.example.com/zebra" || got.GetCached() {
		t.Fatalf("the other replica answered %v, want the document just indexed", got)
	}

	idx, err := b.IndexDocuments(t.Context(), &searchv1.IndexDocumentsRequest{Documents: []*searchv1.Document{
		textDoc("https://runbooks.example.com/zebra/", "Zebra crossing", "Wait for the green light at the zebra crossing."),
	}})
	if err != nil || idx.GetReplaced() != 1 || idx.GetTotalDocuments() != 1 {
		t.Fatalf("replacing through the second replica = %v, %v; want 1 replaced of 1", idx, err)
	}
	got = localSearch(t, a, "zebra crossing")
	if len(got.GetResults()) != 1 || !strings.Contains(got.GetResults()[0].GetSnippet(), "green light") {
		t.Errorf("the first replica answered %v, want the replaced text", got.GetResults())
	}
}

// TestKillDuringBulkIndexLosesNothingAcknowledged bulk-indexes through a
// search process and kills it (SIGKILL) while calls are in flight: every
// document of an acknowledged call is in the database and found by a new
// process on it.
func TestKillDuringBulkIndexLosesNothingAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the search binary")
	}
	dbURL := sqlstoretest.PostgresURL(t, "search_kill")
	bin := buildSearch(t)
	first := start(t, bin, dbURL)
	client := dial(t, first.addr)

	const writers, perCall = 3, 40
	var (
		mu    sync.Mutex
		acked []string
		calls int
	)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				var docs []*searchv1.Document
				var urls []string
				for i := range perCall {
					u := fmt.Sprintf("https://bulk.example.com/w%d/c%d/d%d", w, n, i)
					urls = append(urls, u)
					docs = append(docs, textDoc(u, fmt.Sprintf("Bulk document w%dc%dd%d", w, n, i),
						fmt.Sprintf("Runbook body number %d of call %d from writer %d, about disk, memory and latency.", i, n, w)))
				}
				if _, err := client.IndexDocuments(ctx, &searchv1.IndexDocumentsRequest{Documents: docs}); err != nil {
					return // the process is gone (or the test is over)
				}
				mu.Lock()
				acked = append(acked, urls...)
				calls++
				mu.Unlock()
			}
		})
	}
	// Kill once a fair number of calls went through, with others in flight.
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		n := calls
		mu.Unlock()
		if n >= 15 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d calls acknowledged in a minute", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	first.kill(t)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d documents in %d acknowledged calls before the kill", len(acked), calls)

	db, err := sqlstore.Open(t.Context(), dbURL, "", "search", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var stored int
	if err := db.QueryRowContext(t.Context(), "SELECT count(*) FROM search_documents WHERE id = ANY($1)", acked).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != len(acked) {
		t.Errorf("%d of %d acknowledged documents are stored", stored, len(acked))
	}

	// A new process on the database serves them.
	second := dial(t, start(t, bin, dbURL).addr)
	last := acked[len(acked)-1]
	var w, c, d int
	if _, err := fmt.Sscanf(last, "https://bulk.example.com/w%d/c%d/d%d", &w, &c, &d); err != nil {
		t.Fatal(err)
	}
	got := localSearch(t, second, fmt.Sprintf("w%dc%dd%d", w, c, d))
	if len(got.GetResults()) == 0 || got.GetResults()[0].GetUrl() != last {
		t.Errorf("after the restart, Search for the last acknowledged document = %v, want %s", got.GetResults(), last)
	}
}
