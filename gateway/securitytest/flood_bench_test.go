package securitytest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/gateway/server"
	"github.com/groundcrew/groundcrew/platform/config"
)

// The attack of issue 29: 1,000 clients without a key each send a 1 MiB
// body (all but its end) and hold it open, from one address and then from 100 (distinct
// loopback addresses, 127.0.0.10–127.0.0.109). The gateway runs as the
// binary does (server.Run, its http.Server timeouts, the defaults of
// every GATEWAY_* variable) with GATEWAY_API_KEYS set and the rate limiter
// off, so only the unauthenticated bounds stand between the flood and
// the heap. Bodies are chunked, the costliest kind: no declared length to
// refuse up front, and never finished.
//
// Run: cd gateway && go test -run '^$' -bench Flood -benchtime 1x ./securitytest/
// (also part of make bench). The figure that matters is peak-heap-MiB:
// the most the gateway's heap (HeapInuse, garbage included, and the
// attacking clients' own few bytes, which share the process) grew above
// idle while the flood was held open.
func BenchmarkUnauthenticatedFlood(b *testing.B) {
	const (
		clients  = 1000
		bodySize = 1 << 20
		secret   = "flood-webhook-secret-0123456789"
	)
	noSecret := map[string]string{}
	withSecret := map[string]string{"TELEGRAM_WEBHOOK_SECRET": secret}
	// No keys at all (make run's gateway, or GATEWAY_ALLOW_OPEN): every
	// route takes 1 MiB from anyone.
	open := map[string]string{"GATEWAY_API_KEYS": ""}
	scenarios := []struct {
		name  string
		env   map[string]string
		path  string
		addrs int
		body  int
	}{
		{"webhook/no-secret/one-address", noSecret, "/v1/telegram/webhook", 1, bodySize},
		{"webhook/no-secret/100-addresses", noSecret, "/v1/telegram/webhook", 100, bodySize},
		// The webhook's worst case now: bodies just under its 64 KiB
		// limit, so they are not refused for their size but held.
		{"webhook/no-secret/one-address/48KiB", noSecret, "/v1/telegram/webhook", 1, 48 << 10},
		{"webhook/no-secret/100-addresses/48KiB", noSecret, "/v1/telegram/webhook", 100, 48 << 10},
		{"webhook/secret/one-address", withSecret, "/v1/telegram/webhook", 1, bodySize},
		{"webhook/secret/100-addresses", withSecret, "/v1/telegram/webhook", 100, bodySize},
		{"open-gateway/alerts/one-address", open, "/v1/alerts", 1, bodySize},
		{"open-gateway/alerts/100-addresses", open, "/v1/alerts", 100, bodySize},
	}
	for _, sc := range scenarios {
		b.Run(sc.name, func(b *testing.B) {
			url := startGateway(b, sc.env)
			idle := settledHeap()
			var peak uint64
			outcomes := map[string]int{}
			for b.Loop() {
				p, got := flood(b, url, sc.path, clients, sc.addrs, sc.body)
				peak = max(peak, p)
				for k, v := range got {
					outcomes[k] += v
				}
			}
			b.ReportMetric(float64(peak-min(peak, idle))/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(idle)/(1<<20), "idle-heap-MiB")
			var parts []string
			for _, k := range []string{"held", "401", "413", "429", "503", "closed"} {
				if n := outcomes[k]; n > 0 {
					parts = append(parts, k+"="+strconv.Itoa(n/b.N))
				}
			}
			b.Logf("%s: per attack of %d clients: %s", sc.name, clients, strings.Join(parts, " "))
		})
	}
}

// startGateway runs the gateway binary's server.Run over fake backends,
// configured from env on top of every default, and returns its URL.
func startGateway(b *testing.B, env map[string]string) string {
	b.Helper()
	addr, _, _ := startBackends(b, nil)
	vars := map[string]string{
		"GATEWAY_API_KEYS":   "ops:k-ops-0123456789",
		"GATEWAY_RATE_LIMIT": "0",
		"LOG_LEVEL":          "error",
		"SEARCH_ADDR":        addr, "GROUNDING_ADDR": addr, "RAG_ADDR": addr, "NOTIFIER_ADDR": addr,
		"DATA_DIR": b.TempDir(),
	}
	for k, v := range env {
		vars[k] = v
	}
	cfg, err := config.Load[server.Config](config.MapLookup(vars))
	if err != nil {
		b.Fatal(err)
	}
	api, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	admin, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	cfg.Listeners.API, cfg.Listeners.Admin = api, admin
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.Run(ctx, cfg, discardLogger()) }()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Errorf("gateway: %v", err)
		}
	})
	url := "http://" + api.Addr().String()
	for deadline := time.Now().Add(10 * time.Second); ; {
		resp, err := http.Get(url + "/healthz")
		if err == nil {
			resp.Body.Close()
			return url
		}
		if time.Now().After(deadline) {
			b.Fatalf("the gateway did not come up: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// settledHeap is the heap in use once garbage is collected.
func settledHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// flood opens clients connections from addrs loopback addresses, sends
// each request's head and a chunked body of size bytes without its
// terminating chunk, and waits until every client has either an answer
// (or a closed connection) or nothing for three seconds, held open. It returns the peak
// heap seen from the first connection until all are settled, and how
// each client ended.
func flood(b *testing.B, url, path string, clients, addrs, size int) (uint64, map[string]int) {
	b.Helper()
	target := strings.TrimPrefix(url, "http://")
	head := []byte(fmt.Sprintf("POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n", path))
	const chunkSize = 16 << 10 // size is a multiple of it
	chunk := []byte(strconv.FormatInt(chunkSize, 16) + "\r\n" + strings.Repeat("x", chunkSize) + "\r\n")

	stop := make(chan struct{})
	peakc := make(chan uint64)
	go func() {
		var peak uint64
		var ms runtime.MemStats
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				peakc <- peak
				return
			case <-tick.C:
			}
		}
	}()

	var mu sync.Mutex
	outcomes := map[string]int{}
	conns := make([]net.Conn, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(10+i%addrs))}}
			conn, err := d.Dial("tcp", target)
			if err != nil {
				b.Errorf("client %d: %v", i, err)
				return
			}
			conns[i] = conn
			outcome := send(conn, head, chunk, size/chunkSize)
			mu.Lock()
			outcomes[outcome]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	// Everyone is settled: held requests stay held while the heap is
	// watched a little longer.
	time.Sleep(200 * time.Millisecond)
	close(stop)
	peak := <-peakc
	for _, c := range conns {
		if c != nil {
			_ = c.Close()
		}
	}
	return peak, outcomes
}

// send writes head and n chunks, then waits three seconds for an answer. It
// says how the request ended: the answer's status code, "closed" when
// the gateway dropped the connection without one the client could read,
// or "held" when the gateway is still waiting for the body.
func send(conn net.Conn, head, chunk []byte, n int) string {
	_ = conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write(head); err != nil {
		return "closed"
	}
	for range n {
		if _, err := conn.Write(chunk); err != nil {
			// Refused mid-body: the answer may still be readable.
			break
		}
	}
	_ = conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	var buf [32]byte
	got, err := conn.Read(buf[:])
	var ne net.Error
	if err != nil && errors.As(err, &ne) && ne.Timeout() {
		return "held"
	}
	if s := string(buf[:got]); got >= 12 && strings.HasPrefix(s, "HTTP/1.1 ") {
		return s[9:12]
	}
	return "closed"
}
