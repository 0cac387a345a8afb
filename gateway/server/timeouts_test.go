package server

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
)

// runGateway runs the gateway as main does, with Run, in front of a fake
// notifier (every backend address points at it; the other routes are not
// used). It returns the REST address and the notifier.
func runGateway(t *testing.T, cfg Config) (string, *fakeNotifier) {
	t.Helper()
	n := &fakeNotifier{}
	rest, _ := runGatewayWith(t, cfg, func(s *grpcserver.Server) { notifierv1.RegisterNotifierServiceServer(s, n) })
	return rest, n
}

// runGatewayWith runs the gateway as main does, with Run, in front of one
// backend serving what register registers (every backend address points
// at it). Run serves listeners opened here on 127.0.0.1:0, so the
// addresses are known before it starts and no port is fixed. Run stops
// when the test ends. It returns the REST and admin addresses.
func runGatewayWith(t *testing.T, cfg Config, register func(*grpcserver.Server)) (rest, admin string) {
	t.Helper()
	backend := startBackend(t, register)
	cfg.SearchAddr, cfg.GroundingAddr, cfg.RagAddr, cfg.NotifierAddr = backend.addr, backend.addr, backend.addr, backend.addr
	cfg.GracePeriod = 5 * time.Second
	cfg.Listeners = config.Listeners{API: listenLocal(t), Admin: listenLocal(t)}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() = %v", err)
		}
	})
	return cfg.Listeners.API.Addr().String(), cfg.Listeners.Admin.Addr().String()
}

func listenLocal(t *testing.T) net.Listener {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// Run closes what it serves; this covers a Run that failed first.
	t.Cleanup(func() { _ = lis.Close() })
	return lis
}

func dialRaw(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// trickle writes b to c once every interval, as a slowloris client does,
// until a write fails or stop is called. stop waits for the writer to
// finish and returns how many bytes it wrote.
func trickle(c net.Conn, b byte, interval time.Duration) (stop func() int) {
	quit := make(chan struct{})
	wrote := make(chan int, 1)
	go func() {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		n := 0
		defer func() { wrote <- n }()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
				if _, err := c.Write([]byte{b}); err != nil {
					return
				}
				n++
			}
		}
	}()
	return func() int {
		close(quit)
		return <-wrote
	}
}

// readUntilClosed reads c until the server closes it (EOF, or a reset when
// the server closed with our bytes unread), and returns what was read. A
// generous deadline only keeps a broken server from hanging the test; it
// running out fails the test, since then it, not the server, ended the
// connection.
func readUntilClosed(t *testing.T, c net.Conn) (string, error) {
	t.Helper()
	const patience = 30 * time.Second
	if err := c.SetReadDeadline(time.Now().Add(patience)); err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(c)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		t.Fatalf("the server kept the connection open for %v (read %q)", patience, data)
	case err != nil && !errors.Is(err, syscall.ECONNRESET):
		t.Fatalf("reading until the server closes: %v", err)
	}
	return string(data), err
}

func TestSlowHeadersAreCutOff(t *testing.T) {
	cfg := testConfig()
	cfg.ReadHeaderTimeout = 200 * time.Millisecond
	// Long enough that only the header timeout can end the connection.
	cfg.ReadTimeout = time.Minute
	addr, _ := runGateway(t, cfg)

	start := time.Now()
	c := dialRaw(t, addr)
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: "); err != nil {
		t.Fatal(err)
	}
	stop := trickle(c, 'a', 20*time.Millisecond)
	got, _ := readUntilClosed(t, c)
	elapsed := time.Since(start)
	trickled := stop()

	if elapsed < cfg.ReadHeaderTimeout {
		t.Errorf("connection closed after %v, before the %v read-header timeout", elapsed, cfg.ReadHeaderTimeout)
	}
	if got != "" {
		t.Errorf("server answered a request whose headers never ended: %q", got)
	}
	t.Logf("closed after %v; %d header bytes trickled", elapsed, trickled)
}

func TestSlowBodyIsCutOff(t *testing.T) {
	cfg := testConfig()
	cfg.ReadTimeout = 300 * time.Millisecond
	addr, notifier := runGateway(t, cfg)

	start := time.Now()
	c := dialRaw(t, addr)
	const head = "POST /v1/alerts HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
	if _, err := io.WriteString(c, head+`{"text":"`); err != nil {
		t.Fatal(err)
	}
	stop := trickle(c, 'a', 20*time.Millisecond)
	got, err := readUntilClosed(t, c)
	elapsed := time.Since(start)
	stop()

	if elapsed < cfg.ReadTimeout {
		t.Errorf("connection closed after %v, before the %v read timeout", elapsed, cfg.ReadTimeout)
	}
	// The server answers 408 before closing; a reset (our trickled bytes
	// unread when it closed) may discard that answer, but nothing else may
	// come back.
	if !strings.HasPrefix(got, "HTTP/1.1 408 ") && !(got == "" && errors.Is(err, syscall.ECONNRESET)) {
		t.Errorf("server answered %q (read error %v), want 408 Request Timeout or a reset", got, err)
	}
	if md := notifier.md(); md != nil {
		t.Error("the partial alert reached the notifier")
	}
}

func TestIdleConnectionsAreClosed(t *testing.T) {
	cfg := testConfig()
	cfg.IdleTimeout = 200 * time.Millisecond
	addr, _ := runGateway(t, cfg)

	c := dialRaw(t, addr)
	// The server starts its idle clock when it has answered, which is
	// after this and (by a little) before we have read the answer.
	sent := time.Now()
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("GET /healthz = %d (close %v), want 200 on a kept-alive connection", resp.StatusCode, resp.Close)
	}
	got, _ := readUntilClosed(t, c)
	if elapsed := time.Since(sent); elapsed < cfg.IdleTimeout {
		t.Errorf("connection closed %v after the request, before the %v idle timeout", elapsed, cfg.IdleTimeout)
	}
	if got != "" {
		t.Errorf("server sent %q on an idle connection", got)
	}
}

func TestRequestsWorkWithShortTimeouts(t *testing.T) {
	cfg := testConfig()
	cfg.ReadHeaderTimeout, cfg.ReadTimeout, cfg.IdleTimeout = 200*time.Millisecond, 300*time.Millisecond, 300*time.Millisecond
	addr, notifier := runGateway(t, cfg)

	// A client of its own, so no keep-alive connection outlives the test.
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	post := func(body string) (int, string) {
		t.Helper()
		resp, err := client.Post("http://"+addr+"/v1/alerts", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// Twice: the second request reuses the kept-alive connection.
	for i := range 2 {
		code, body := post(`{"text":"disk full","metadata":{"host":"web-1"}}`)
		if code != http.StatusOK || !strings.Contains(body, `"status":"RECEIVED"`) {
			t.Fatalf("request %d: POST /v1/alerts = %d %s, want 200 RECEIVED", i+1, code, body)
		}
	}
	if notifier.md() == nil {
		t.Error("the alert did not reach the notifier")
	}
	// The whole server is configured, not just the handler: the depth limit
	// answers through Run too.
	if code, body := post(strings.Repeat("[", 100_000)); code != http.StatusBadRequest || !strings.Contains(body, "nested deeper than 64 levels") {
		t.Errorf("deep body = %d %s, want 400 naming the depth limit", code, body)
	}
}

func TestNewHTTPServerTimeouts(t *testing.T) {
	defaults, err := config.Load[Config](config.MapLookup(nil))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  Config
		want Config
	}{
		{
			name: "from the configuration",
			cfg:  Config{ReadHeaderTimeout: time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 3 * time.Second, IdleTimeout: 4 * time.Second},
			want: Config{ReadHeaderTimeout: time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 3 * time.Second, IdleTimeout: 4 * time.Second},
		},
		{
			// Never no limit, and the same defaults as the environment's.
			name: "zero takes the default",
			cfg:  Config{},
			want: defaults,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newHTTPServer(http.NotFoundHandler(), tt.cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
			got := []time.Duration{srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout}
			want := []time.Duration{tt.want.ReadHeaderTimeout, tt.want.ReadTimeout, tt.want.WriteTimeout, tt.want.IdleTimeout}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("read-header, read, write and idle timeouts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAdminPortServesProfiler checks that the gateway's admin port has Go's
// profiler with ADMIN_PPROF=true, as every service's admin port does, and
// the REST port never.
func TestAdminPortServesProfiler(t *testing.T) {
	cfg := testConfig()
	cfg.Transport.AdminPprof = true
	rest, admin := runGatewayWith(t, cfg, func(*grpcserver.Server) {})
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get("http://" + admin + "/debug/pprof/goroutine?debug=1"); code != http.StatusOK || !strings.Contains(body, "goroutine profile:") {
		t.Errorf("admin /debug/pprof/goroutine = %d %.80q", code, body)
	}
	if code, _ := get("http://" + rest + "/debug/pprof/goroutine?debug=1"); code == http.StatusOK {
		t.Errorf("REST port serves the profiler (%d)", code)
	}
	// Without ADMIN_PPROF=true the admin port has no profiler either.
	_, admin = runGatewayWith(t, testConfig(), func(*grpcserver.Server) {})
	if code, _ := get("http://" + admin + "/debug/pprof/goroutine?debug=1"); code == http.StatusOK {
		t.Errorf("admin port serves the profiler without ADMIN_PPROF (%d)", code)
	}
}

// TestShutdownEndsAfterGracePeriod: a client that connected but never sent
// a request keeps net/http's Shutdown waiting past a short grace period;
// Run must then close it and return cleanly, not fail with the deadline.
func TestShutdownEndsAfterGracePeriod(t *testing.T) {
	backend := startBackend(t, func(s *grpcserver.Server) { notifierv1.RegisterNotifierServiceServer(s, &fakeNotifier{}) })
	var cfg Config
	cfg.SearchAddr, cfg.GroundingAddr, cfg.RagAddr, cfg.NotifierAddr = backend.addr, backend.addr, backend.addr, backend.addr
	cfg.GracePeriod = 200 * time.Millisecond
	cfg.Listeners = config.Listeners{API: listenLocal(t), Admin: listenLocal(t)}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	// The listener is open before Run starts, so this waits for Run to serve.
	resp, err := http.Get("http://" + cfg.Listeners.API.Addr().String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	dialRaw(t, cfg.Listeners.API.Addr().String()) // connected, never sends a request
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run() = %v, want nil after the grace period", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after its grace period")
	}
}
