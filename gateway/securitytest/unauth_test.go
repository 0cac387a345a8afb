package securitytest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rawConn is a client connection written byte by byte, so a test can send
// a request's head and part of its body and see the gateway answer before
// the rest exists.
type rawConn struct {
	t    *testing.T
	conn net.Conn
	br   *bufio.Reader
}

// dialFrom connects to the edge from the loopback address local
// ("127.0.0.1", "127.0.0.2", …: Linux routes all of 127/8 to lo).
func (e *edge) dialFrom(t *testing.T, local string) *rawConn {
	t.Helper()
	d := net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	conn, err := d.DialContext(t.Context(), "tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return &rawConn{t: t, conn: conn, br: bufio.NewReader(conn)}
}

// head writes a POST's request line and headers (name, value pairs).
func (c *rawConn) head(path string, headers ...string) {
	c.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n", path)
	for i := 0; i+1 < len(headers); i += 2 {
		fmt.Fprintf(&b, "%s: %s\r\n", headers[i], headers[i+1])
	}
	b.WriteString("\r\n")
	c.write(b.String())
}

func (c *rawConn) write(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, s); err != nil {
		c.t.Fatalf("writing the request: %v", err)
	}
}

// chunk writes one chunk of a chunked body.
func (c *rawConn) chunk(data string) {
	c.t.Helper()
	c.write(strconv.FormatInt(int64(len(data)), 16) + "\r\n" + data + "\r\n")
}

// waiting reports whether the gateway has not answered c yet (it is
// still reading c's body).
func (c *rawConn) waiting() bool {
	_ = c.conn.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := c.br.Peek(1)
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// response reads the answer. The client has not finished its body when
// this is called: an answer at all shows the gateway did not wait for it.
func (c *rawConn) response() (int, string) {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		c.t.Fatalf("no answer while the body was still unsent: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The webhook must be reachable without a key, so its body is what anyone
// can make the gateway buffer: a body over 64 KiB (what Telegram sends at
// most) is refused once 64 KiB have arrived, or at once when its declared
// length says so, and with TELEGRAM_WEBHOOK_SECRET given to the gateway a
// missing or wrong secret header is refused before a single body byte is
// read. The rest of each body is never sent: the answer comes anyway.
func TestWebhookBodiesAreRefusedBeforeTheyAreReadWhole(t *testing.T) {
	const secret = "webhook-secret-0123456789abcdef"
	withKeys := baseConfig()
	withKeys.APIKeys = []string{"ops:k-ops-0123456789"}
	noSecret := newEdge(t, withKeys, nil)
	withKeys.TelegramWebhookSecret = secret
	checked := newEdge(t, withKeys, nil)
	kib := strings.Repeat("x", 1024)

	t.Run("chunked body over 64 KiB, 1 MiB meant", func(t *testing.T) {
		c := noSecret.dialFrom(t, "127.0.0.1")
		c.head("/v1/telegram/webhook", "Transfer-Encoding", "chunked")
		for range 65 { // 65 KiB of the 1 MiB
			c.chunk(kib)
		}
		if code, body := c.response(); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "65536") {
			t.Errorf("= %d %s, want 413 naming the 65536-byte limit", code, body)
		}
	})
	t.Run("declared 1 MiB, 1 KiB sent", func(t *testing.T) {
		c := noSecret.dialFrom(t, "127.0.0.1")
		c.head("/v1/telegram/webhook", "Content-Length", strconv.Itoa(1<<20))
		c.write(kib)
		if code, body := c.response(); code != http.StatusRequestEntityTooLarge {
			t.Errorf("= %d %s, want 413", code, body)
		}
	})
	for name, header := range map[string][]string{
		"no secret header":        {"Content-Length", "60000"},
		"wrong secret header":     {"Content-Length", "60000", "X-Telegram-Bot-Api-Secret-Token", secret + "-not"},
		"secret of another case":  {"Content-Length", "60000", "X-Telegram-Bot-Api-Secret-Token", strings.ToUpper(secret)},
		"chunked, no secret":      {"Transfer-Encoding", "chunked"},
		"valid API key no secret": {"Content-Length", "60000", "Authorization", "Bearer k-ops-0123456789"},
	} {
		t.Run(name+", no body byte sent", func(t *testing.T) {
			checked.rec.reset()
			c := checked.dialFrom(t, "127.0.0.1")
			c.head("/v1/telegram/webhook", header...)
			code, body := c.response()
			if code != http.StatusUnauthorized || !strings.Contains(body, "X-Telegram-Bot-Api-Secret-Token") {
				t.Errorf("= %d %s, want 401 naming the header", code, body)
			}
			if strings.Contains(body, secret) {
				t.Errorf("the refusal quotes the secret: %s", body)
			}
			if checked.rec.count() != 0 {
				t.Error("a refused update reached the notifier")
			}
		})
	}
	t.Run("the right secret is served", func(t *testing.T) {
		got := checked.do(t, jsonPost("/v1/telegram/webhook", `{"update_id":1}`, "X-Telegram-Bot-Api-Secret-Token", secret))
		if got.code != http.StatusOK {
			t.Fatalf("= %d %s, want 200", got.code, got.body)
		}
		c, ok := checked.rec.last("HandleTelegramUpdate")
		if !ok {
			t.Fatal("the update never reached the notifier")
		}
		// The notifier still checks it too.
		if v := c.md.Get("x-telegram-bot-api-secret-token"); len(v) != 1 || v[0] != secret {
			t.Errorf("secret header at the notifier = %q, want it forwarded", v)
		}
	})
}

// Requests without a key, held open with half-sent bodies, take at most
// GATEWAY_UNAUTH_MAX_REQUESTS_PER_CLIENT slots per address and
// GATEWAY_UNAUTH_MAX_REQUESTS in all; the next is refused at once (429 for
// the address, 503 for the gateway), never queued, and callers with a key
// are not affected.
func TestUnauthenticatedRequestsAreBounded(t *testing.T) {
	cfg := baseConfig()
	cfg.APIKeys = []string{"ops:k-ops-0123456789:read+alerts"}
	cfg.UnauthMaxRequestsPerClient, cfg.UnauthMaxRequests = 2, 3
	e := newEdge(t, cfg, nil)
	// held are the requests each address holds open, half-sent.
	held := map[string][]*rawConn{}
	hold := func(local string, n int) {
		// A held request that arrived while a probe held a slot was
		// refused: it has an answer. Replace it.
		kept := held[local][:0]
		for _, c := range held[local] {
			if c.waiting() {
				kept = append(kept, c)
			}
		}
		for len(kept) < n {
			c := e.dialFrom(t, local)
			c.head("/v1/telegram/webhook", "Transfer-Encoding", "chunked")
			c.chunk(`{"update_id":`)
			kept = append(kept, c)
		}
		held[local] = kept
	}
	// probe sends a whole small update from local until the gateway
	// refuses it with want: the held requests reach the admission in their
	// own time, and until they all do a probe is served.
	probe := func(local string, want int, holds map[string]int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			for addr, n := range holds {
				hold(addr, n)
			}
			c := e.dialFrom(t, local)
			c.head("/v1/telegram/webhook", "Content-Length", "15")
			c.write(`{"update_id":1}`)
			code, body := c.response()
			_ = c.conn.Close()
			if code == want {
				return
			}
			if code != http.StatusOK || time.Now().After(deadline) {
				t.Fatalf("probe from %s = %d %s, want %d once the held requests are admitted", local, code, body, want)
			}
		}
	}
	probe("127.0.0.1", http.StatusTooManyRequests, map[string]int{"127.0.0.1": 2})
	probe("127.0.0.3", http.StatusServiceUnavailable, map[string]int{"127.0.0.1": 2, "127.0.0.2": 1})
	// A key is no request without one.
	if got := e.do(t, jsonPost("/v1/alerts", `{"text":"x"}`, "Authorization", "Bearer k-ops-0123456789")); got.code != http.StatusOK {
		t.Errorf("with a key while the unauthenticated slots are full = %d %s, want 200", got.code, got.body)
	}
}
