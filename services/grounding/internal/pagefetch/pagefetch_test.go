package pagefetch_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/services/grounding/internal/pagefetch"
)

const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>
  Checkout API runbook —
  Example Corp
</title>
<meta property="og:title" content="Not this one">
<style>body { color: red }</style>
<script>var secret = "do not show";</script>
</head>
<body><nav>Home</nav>
<h1>Checkout API: high error rate</h1>
<p>When the checkout API answers <b>5xx</b>, check the payments upstream first.</p>
<p>Then roll back the last deploy.</p>
</body></html>`

func loopback(a netip.Addr) bool { return a.IsLoopback() }

func TestFetchReadsTitleTextAndHTML(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/runbook", http.StatusMovedPermanently)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	}))
	t.Cleanup(srv.Close)
	f := pagefetch.New(pagefetch.Config{AllowAddr: loopback})
	p, err := f.Fetch(t.Context(), srv.URL+"/old")
	if err != nil {
		t.Fatal(err)
	}
	if p.URL != srv.URL+"/runbook" || p.MimeType != "text/html" || p.HTML != page || p.Truncated {
		t.Errorf("page %q %q truncated %v, html equal %v", p.URL, p.MimeType, p.Truncated, p.HTML == page)
	}
	if want := "Checkout API runbook — Example Corp"; p.Title != want {
		t.Errorf("title %q, want %q", p.Title, want)
	}
	wantText := "Home\nCheckout API: high error rate\nWhen the checkout API answers 5xx , check the payments upstream first.\nThen roll back the last deploy."
	if p.Text != wantText {
		t.Errorf("text\n%q\nwant\n%q", p.Text, wantText)
	}
}

func TestFetchOGTitleAndPlainText(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/txt" {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("plain words"))
			return
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<html><meta property="og:title" content=" Disk  full "><p>x</p>`))
	}))
	t.Cleanup(srv.Close)
	f := pagefetch.New(pagefetch.Config{AllowAddr: loopback})
	p, err := f.Fetch(t.Context(), srv.URL+"/og")
	if err != nil || p.Title != "Disk full" {
		t.Errorf("og: %+v, %v", p, err)
	}
	p, err = f.Fetch(t.Context(), srv.URL+"/txt")
	if err != nil || p.Text != "plain words" || p.HTML != "" || p.Title != "" {
		t.Errorf("text/plain: %+v, %v", p, err)
	}
}

func TestFetchIsBounded(t *testing.T) {
	big := "<html><title>Big</title><p>" + strings.Repeat("é", 3000) + "</p></html>"
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(big))
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	f := pagefetch.New(pagefetch.Config{AllowAddr: loopback, MaxBytes: 1002, Timeout: 200 * time.Millisecond})
	p, err := f.Fetch(t.Context(), srv.URL+"/big")
	if err != nil {
		t.Fatal(err)
	}
	// 1002 bytes end inside a two-byte "é": the half is dropped.
	if !p.Truncated || len(p.HTML) != 1001 || p.Title != "Big" {
		t.Errorf("truncated %v, %d bytes of HTML, title %q", p.Truncated, len(p.HTML), p.Title)
	}
	if _, err := f.Fetch(t.Context(), srv.URL+"/slow"); err == nil {
		t.Error("a page slower than the timeout was read")
	}
}

// TestFetchRefusesNonPublicAddresses: loopback, private and link-local
// addresses are refused at dial time, also when a public-looking page
// redirects there, and non-http schemes are refused outright.
func TestFetchRefusesNonPublicAddresses(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		switch r.URL.Path {
		case "/to-private":
			http.Redirect(w, r, "http://10.1.2.3/admin", http.StatusFound)
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		default:
			_, _ = w.Write([]byte("<title>internal</title>"))
		}
	}))
	t.Cleanup(srv.Close)
	strict := pagefetch.New(pagefetch.Config{})
	for _, u := range []string{srv.URL + "/", "http://localhost:1/", "ftp://example.com/x", "http://[::1]:1/", "http://0.0.0.0:1/"} {
		if _, err := strict.Fetch(t.Context(), u); !errors.Is(err, pagefetch.ErrRefused) {
			t.Errorf("Fetch(%s) = %v, want ErrRefused", u, err)
		}
	}
	if hits != 0 {
		t.Fatalf("the loopback server was reached %d times", hits)
	}
	onlyLoopback := pagefetch.New(pagefetch.Config{AllowAddr: loopback})
	for _, path := range []string{"/to-private", "/to-metadata", "/to-file"} {
		if _, err := onlyLoopback.Fetch(t.Context(), srv.URL+path); !errors.Is(err, pagefetch.ErrRefused) {
			t.Errorf("Fetch(%s) = %v, want ErrRefused", path, err)
		}
	}
}

func TestPublic(t *testing.T) {
	for s, want := range map[string]bool{
		"93.184.215.14": true, "2606:2800:21f:cb07:6820:80da:af6b:8b2c": true,
		"127.0.0.1": false, "10.0.0.1": false, "172.16.5.4": false, "192.168.1.1": false, "169.254.169.254": false,
		"100.64.0.1": false, "0.0.0.0": false, "::1": false, "fe80::1": false, "fc00::1": false, "::ffff:10.0.0.1": false,
		"224.0.0.1": false, "198.18.0.1": false, "203.0.113.9": false, "2001:db8::1": false,
	} {
		if got := pagefetch.Public(netip.MustParseAddr(s)); got != want {
			t.Errorf("Public(%s) = %v, want %v", s, got, want)
		}
	}
}

// TestResolve: a redirect link is resolved by reading its Location, which
// is never requested; links through other hosts are returned as they are.
func TestResolve(t *testing.T) {
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		switch r.URL.Path {
		case "/grounding-api-redirect/AAA":
			w.Header().Set("Location", "https://runbooks.example.com/checkout-api")
			w.WriteHeader(http.StatusFound)
		case "/grounding-api-redirect/hop":
			http.Redirect(w, r, "/grounding-api-redirect/AAA", http.StatusFound)
		case "/grounding-api-redirect/js":
			w.Header().Set("Location", "javascript:alert(1)")
			w.WriteHeader(http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	f := pagefetch.New(pagefetch.Config{RedirectHosts: []string{pagefetch.GeminiRedirector, "127.0.0.1"}})
	for link, want := range map[string]string{
		srv.URL + "/grounding-api-redirect/AAA": "https://runbooks.example.com/checkout-api",
		srv.URL + "/grounding-api-redirect/hop": "https://runbooks.example.com/checkout-api",
		"https://www.pgbouncer.org/usage.html":  "https://www.pgbouncer.org/usage.html",
	} {
		got, err := f.Resolve(t.Context(), link)
		if err != nil || got != want {
			t.Errorf("Resolve(%s) = %q, %v; want %q", link, got, err, want)
		}
	}
	for _, link := range []string{srv.URL + "/grounding-api-redirect/js", srv.URL + "/grounding-api-redirect/gone"} {
		if got, err := f.Resolve(t.Context(), link); err == nil {
			t.Errorf("Resolve(%s) = %q, want an error", link, got)
		}
	}
	if !f.IsRedirect("https://vertexaisearch.cloud.google.com/grounding-api-redirect/x") || f.IsRedirect("https://example.com/") {
		t.Error("IsRedirect does not follow the configured hosts")
	}
}
