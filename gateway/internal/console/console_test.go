package console

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func serve(t *testing.T) *httptest.Server {
	t.Helper()
	h, err := Handler()
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+Prefix, h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url string, gzipOK bool) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Set explicitly, so the transport does not decompress for us.
	if gzipOK {
		req.Header.Set("Accept-Encoding", "gzip")
	} else {
		req.Header.Set("Accept-Encoding", "identity")
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

var assetRef = regexp.MustCompile(`(?:src|href)="(/console/assets/[^"]+)"`)

func TestEveryPagePathAnswersTheApp(t *testing.T) {
	srv := serve(t)
	for _, p := range []string{"/console/", "/console/alerts", "/console/messages", "/console/approvals",
		"/console/ask", "/console/research", "/console/search", "/console/alerts/0193-abc", "/console/no/such/page"} {
		resp, body := get(t, srv.URL+p, false)
		if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Type"), "text/html") {
			t.Errorf("GET %s = %d %s, want 200 text/html", p, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if !strings.Contains(body, `<div id="app">`) {
			t.Errorf("GET %s did not answer the app's index.html", p)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("GET %s: Content-Security-Policy = %q", p, csp)
		}
	}
}

func TestAssetsAreLocalCachedAndCompressed(t *testing.T) {
	srv := serve(t)
	_, index := get(t, srv.URL+"/console/", false)
	if strings.Contains(index, "://") {
		t.Errorf("index.html refers to another origin (a CDN?):\n%s", index)
	}
	refs := assetRef.FindAllStringSubmatch(index, -1)
	if len(refs) < 2 {
		t.Fatalf("index.html refers to %d assets, want the script and the stylesheet:\n%s", len(refs), index)
	}
	for _, m := range refs {
		plain, body := get(t, srv.URL+m[1], false)
		if plain.StatusCode != 200 || len(body) == 0 {
			t.Fatalf("GET %s = %d (%d bytes)", m[1], plain.StatusCode, len(body))
		}
		if cc := plain.Header.Get("Cache-Control"); !strings.Contains(cc, "immutable") {
			t.Errorf("GET %s: Cache-Control = %q, want immutable", m[1], cc)
		}
		wantType := map[bool]string{true: "text/javascript", false: "text/css"}[strings.HasSuffix(m[1], ".js")]
		if ct := plain.Header.Get("Content-Type"); !strings.HasPrefix(ct, wantType) {
			t.Errorf("GET %s: Content-Type = %q, want %s", m[1], ct, wantType)
		}
		zipped, unzipped := get(t, srv.URL+m[1], true)
		if zipped.Header.Get("Content-Encoding") != "gzip" || unzipped != body {
			t.Errorf("GET %s with gzip: encoding %q, same body %v", m[1], zipped.Header.Get("Content-Encoding"), unzipped == body)
		}
	}
}

func TestMissingAssetIsNotFound(t *testing.T) {
	srv := serve(t)
	if resp, _ := get(t, srv.URL+"/console/assets/nope.js", false); resp.StatusCode != http.StatusNotFound {
		t.Errorf("missing asset = %d, want 404", resp.StatusCode)
	}
}

func TestAcceptsGzip(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   bool
	}{
		{"", false}, {"identity", false}, {"gzip", true}, {"br, gzip;q=0.8", true},
		{"gzip;q=0", false}, {"GZIP", true}, {"deflate", false},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Accept-Encoding", tc.header)
		if got := acceptsGzip(r); got != tc.want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
}
