package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/groundcrew/groundcrew/e2e/faultinject"
	"github.com/groundcrew/groundcrew/e2e/providerfake"
	"github.com/groundcrew/groundcrew/e2e/stack"
	"github.com/groundcrew/groundcrew/platform/logging/logtest"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
)

// TestMain fails the package when a test leaves goroutines behind: every
// service must stop everything it started when its context ends. What
// libraries start in their package init (bleve's analysis queue,
// opencensus's view worker) runs before TestMain and is not ours to stop.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
}

// faulty serves h behind an injector on a loopback server closed at the
// end of the test.
func faulty(t *testing.T, h http.Handler, cfg faultinject.Config) (*faultinject.Injector, string) {
	t.Helper()
	inj := faultinject.New(h, cfg)
	srv := httptest.NewServer(inj)
	t.Cleanup(srv.Close)
	return inj, srv.URL
}

func loadWeb(t *testing.T) *providerfake.Web {
	t.Helper()
	web, err := providerfake.LoadWeb("../examples/runbooks")
	if err != nil {
		t.Fatal(err)
	}
	return web
}

// onEachDatabase runs test as a subtest per store grounding and notifier
// can use: SQLite always, PostgreSQL when TEST_DATABASE_URL is set.
func onEachDatabase(t *testing.T, test func(t *testing.T, databaseURL string)) {
	t.Run("sqlite", func(t *testing.T) { test(t, "") })
	t.Run("postgres", func(t *testing.T) {
		if os.Getenv(sqlstoretest.EnvVar) == "" {
			t.Skip(sqlstoretest.EnvVar + " is not set")
		}
		// grounding and notifier share one database, as in
		// docker-compose.yml, in a schema of the test's own.
		test(t, sqlstoretest.PostgresURL(t, "e2e"))
	})
}

// startStack runs the suite until the test ends and waits for the
// gateway's /readyz. databaseURL empty means SQLite. The services' logs are
// printed when the test fails (with -v).
func startStack(t *testing.T, env map[string]string, databaseURL string) *stack.Stack {
	t.Helper()
	logs := &logtest.Buffer{}
	env["DATABASE_URL"] = databaseURL
	s, err := stack.Start(t.Context(), stack.Options{DataDir: t.TempDir(), Env: env, Logs: logs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stopping the stack: %v", err)
		}
		if t.Failed() && testing.Verbose() {
			t.Logf("service logs:\n%s", logs)
		}
	})
	eventually(t, 30*time.Second, "the gateway's /readyz to answer 200", func() bool {
		if err := s.Err(); err != nil {
			t.Fatalf("a service stopped during start-up: %v", err)
		}
		resp, err := http.Get(s.GatewayURL + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return s
}

// eventually polls cond until it holds or the time is up.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		<-tick.C
	}
}

// call sends a JSON request to the gateway and decodes a JSON answer.
func call(ctx context.Context, method, url string, in, out any) (int, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.StatusCode, fmt.Errorf("decoding %s: %w", b, err)
		}
	}
	return resp.StatusCode, nil
}

// runbookDocs are the example runbooks as IndexDocuments / IngestDocuments
// documents.
func runbookDocs(t *testing.T) []map[string]string {
	t.Helper()
	var docs []map[string]string
	for _, d := range loadWeb(t).Docs() {
		docs = append(docs, map[string]string{"url": d.URL, "title": d.Title, "text": d.Text})
	}
	return docs
}
