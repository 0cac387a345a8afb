// Package pagefetch reads the web pages grounding cites, safely: it turns a
// model provider's redirect link (Gemini's vertexaisearch…/grounding-api-
// redirect/… links, which expire) into the address it stands for, and
// fetches a cited page for its title, its text (where snippets come from)
// and its HTML (kept as the citation's restricted raw_html artifact).
//
// The addresses come from search results and model output, so from outside:
// every connection is checked at dial time, after name resolution, and
// refused unless the address is public (no loopback, private, link-local,
// shared (CGNAT), multicast, unspecified or documentation range), so a
// page cannot point grounding at the cluster's own services, and a name
// that resolves to a private address is refused too (DNS rebinding gains
// nothing). Redirects are followed at most MaxRedirects times and only to
// http and https addresses, each checked the same way. Every fetch is
// bounded in time and in bytes read. No environment proxy is used: a proxy
// would make the dial-time check see the proxy's address instead of the
// page's.
//
// A redirect link is resolved without being followed: one request to the
// provider's redirect host (a host named in configuration, never in model
// output), whose Location header is read and not requested.
package pagefetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/groundcrew/groundcrew/platform/weburl"
	"github.com/groundcrew/groundcrew/services/grounding/internal/grounding"
)

// Defaults of Config.
const (
	DefaultTimeout   = 5 * time.Second
	DefaultMaxBytes  = 1 << 20
	MaxRedirects     = 5
	UserAgent        = "groundcrew-grounding/1.0 (cited page fetch)"
	GeminiRedirector = "vertexaisearch.cloud.google.com"
)

// ErrRefused: the address is not one grounding may fetch (not http(s), or
// not a public address).
var ErrRefused = errors.New("address refused: not a public http(s) address")

// Config configures a Fetcher.
type Config struct {
	// Timeout bounds one fetch or resolution, redirects included
	// (DefaultTimeout when 0).
	Timeout time.Duration
	// MaxBytes bounds the body read of a page (DefaultMaxBytes when 0);
	// a longer page is read up to it.
	MaxBytes int64
	// RedirectHosts are the hosts whose links are a provider's redirects
	// (GeminiRedirector, and the host of a configured Gemini base URL).
	RedirectHosts []string
	// NoFetch turns page fetching off: Fetch returns nil, and only
	// redirect links are resolved (which contacts the redirect hosts
	// alone).
	NoFetch bool
	// AllowAddr, when set, admits addresses the public-address check
	// refuses. Tests use it for their loopback servers; nothing else
	// should.
	AllowAddr func(netip.Addr) bool
}

// Fetcher fetches cited pages: the grounding.Pages of the service. It is
// safe for concurrent use.
type Fetcher struct {
	cfg       Config
	pages     *http.Client
	redirects *http.Client
	hosts     map[string]bool
}

var _ grounding.Pages = (*Fetcher)(nil)

// New returns a Fetcher.
func New(cfg Config) *Fetcher {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	f := &Fetcher{cfg: cfg, hosts: map[string]bool{}}
	for _, h := range cfg.RedirectHosts {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
			f.hosts[h] = true
		}
	}
	dialer := &net.Dialer{Timeout: cfg.Timeout, Control: f.control}
	guarded := &http.Transport{
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          20,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   cfg.Timeout,
		ResponseHeaderTimeout: cfg.Timeout,
	}
	f.pages = &http.Client{Transport: guarded, CheckRedirect: checkRedirect}
	// The redirect host is configuration, not model output: it is dialled
	// as named (the e2e stand-in lives on loopback), and never followed.
	plain := &http.Transport{
		DialContext: (&net.Dialer{Timeout: cfg.Timeout}).DialContext,
		// One request per link: nothing to keep open.
		DisableKeepAlives:     true,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   cfg.Timeout,
		ResponseHeaderTimeout: cfg.Timeout,
	}
	f.redirects = &http.Client{Transport: plain, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return f
}

// control refuses connections to addresses that are not public.
func (f *Fetcher) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w (%s)", ErrRefused, address)
	}
	a := ap.Addr().Unmap()
	if Public(a) || (f.cfg.AllowAddr != nil && f.cfg.AllowAddr(a)) {
		return nil
	}
	return fmt.Errorf("%w (%s)", ErrRefused, a)
}

// checkRedirect follows at most MaxRedirects redirects, only to http(s).
func checkRedirect(next *http.Request, via []*http.Request) error {
	if len(via) > MaxRedirects {
		return fmt.Errorf("stopped after %d redirects", MaxRedirects)
	}
	if next.URL.Scheme != "http" && next.URL.Scheme != "https" {
		return fmt.Errorf("%w: redirect to scheme %q", ErrRefused, next.URL.Scheme)
	}
	return nil
}

// nonPublic are the special-purpose ranges (RFC 6890 and successors) that
// netip's predicates do not cover.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("2001::/23"),
}

// Public reports whether a is a globally routable unicast address.
func Public(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || !a.IsGlobalUnicast() || a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// IsRedirect reports whether u is a link through one of the configured
// redirect hosts.
func (f *Fetcher) IsRedirect(u string) bool {
	pu, err := url.Parse(u)
	return err == nil && f.hosts[strings.ToLower(pu.Hostname())]
}

// Resolve returns the address a provider's redirect link stands for: one
// request to the link, whose Location is read, not followed. A link
// through another host is returned as it is. The destination must be an
// http(s) address.
func (f *Fetcher) Resolve(ctx context.Context, link string) (string, error) {
	if !f.IsRedirect(link) {
		return link, nil
	}
	ctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	defer cancel()
	cur := link
	// A redirector may bounce through itself before naming the page.
	for range 3 {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, cur, nil)
		if err != nil {
			return "", fmt.Errorf("resolving redirect link: %w", err)
		}
		req.Header.Set("User-Agent", UserAgent)
		resp, err := f.redirects.Do(req)
		if err != nil {
			return "", fmt.Errorf("resolving redirect link: %w", err)
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		loc := resp.Header.Get("Location")
		if resp.StatusCode < 300 || resp.StatusCode > 399 || loc == "" {
			return "", fmt.Errorf("resolving redirect link: answered %d without a Location", resp.StatusCode)
		}
		next, err := req.URL.Parse(loc)
		if err != nil {
			return "", fmt.Errorf("resolving redirect link: bad Location: %w", err)
		}
		if _, err := weburl.Parse(next.String()); err != nil {
			return "", fmt.Errorf("resolving redirect link: %w", ErrRefused)
		}
		if !f.IsRedirect(next.String()) {
			return next.String(), nil
		}
		cur = next.String()
	}
	return "", errors.New("resolving redirect link: too many redirects through the redirect host")
}

// Fetch reads the page at u, following redirects as the package says: its
// title, text and HTML when it is HTML, its text when it is other text.
// Answers other than 2xx are errors. With NoFetch it returns nil, nil.
func (f *Fetcher) Fetch(ctx context.Context, u string) (*grounding.Page, error) {
	if f.cfg.NoFetch {
		return nil, nil
	}
	if _, err := weburl.Parse(u); err != nil {
		return nil, ErrRefused
	}
	ctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("fetching page: %w", err)
	}
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.8,*/*;q=0.1")
	resp, err := f.pages.Do(req)
	if err != nil {
		if errors.Is(err, ErrRefused) {
			return nil, ErrRefused
		}
		return nil, fmt.Errorf("fetching page: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("fetching page: answered %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.cfg.MaxBytes+1))
	if err != nil && len(body) == 0 {
		return nil, fmt.Errorf("fetching page: reading: %w", err)
	}
	p := &grounding.Page{URL: resp.Request.URL.String()}
	if int64(len(body)) > f.cfg.MaxBytes {
		body, p.Truncated = body[:f.cfg.MaxBytes], true
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "" {
		mt = http.DetectContentType(body)
		mt, _, _ = mime.ParseMediaType(mt)
	}
	p.MimeType = mt
	text := strings.ToValidUTF8(string(body), "\uFFFD")
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		p.HTML = trimPartialRune(text)
		p.Title, p.Text = parseHTML(p.HTML)
	case strings.HasPrefix(mt, "text/"):
		p.Text = trimPartialRune(text)
	}
	return p, nil
}

// trimPartialRune drops a replacement character left by a body cut in the
// middle of a multi-byte character.
func trimPartialRune(s string) string {
	for strings.HasSuffix(s, "\uFFFD") {
		r, n := utf8.DecodeLastRuneInString(s)
		if r != utf8.RuneError {
			break
		}
		s = s[:len(s)-n]
	}
	return s
}
