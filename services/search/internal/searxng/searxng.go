// Package searxng is the search engine "searxng": an adapter for a
// self-hosted SearXNG metasearch instance's JSON API
// (GET /search?q=…&format=json). The instance must list "json" under
// search.formats in its settings.yml; otherwise it answers 403.
package searxng

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/groundcrew/groundcrew/platform/httpretry"
	"github.com/groundcrew/groundcrew/services/search/internal/enginehttp"
	"github.com/groundcrew/groundcrew/services/search/internal/htmltext"
	"github.com/groundcrew/groundcrew/services/search/internal/search"
)

// Config configures a Client.
type Config struct {
	// BaseURL is SEARXNG_URL, e.g. http://searxng:8080; required.
	BaseURL string
	// Timeout bounds one search, retries included; 0 means
	// enginehttp.DefaultTimeout.
	Timeout time.Duration
	// Retry sends requests; nil means enginehttp.NewRetryClient over
	// http.DefaultClient.
	Retry *httpretry.Client
	// Categories is passed as categories; "" means "general".
	Categories string
	// Engines, if set, restricts the upstream engines (comma-separated).
	Engines string
	// Language, if set, is passed as language (e.g. "en").
	Language string
	// SafeSearch is 0, 1 or 2; nil leaves the instance default.
	SafeSearch *int
}

// Client searches with a SearXNG instance. It is safe for concurrent use.
type Client struct {
	cfg    Config
	caller enginehttp.Caller
	health enginehttp.Caller
}

var (
	_ search.Engine        = (*Client)(nil)
	_ search.HealthChecker = (*Client)(nil)
)

// New returns a Client; it fails when the base URL is missing or not an
// http(s) URL.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(cfg.BaseURL))
	if cfg.BaseURL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		shown := "(unparseable)"
		if err == nil {
			shown = u.Redacted()
		}
		return nil, fmt.Errorf("searxng: SEARXNG_URL %q is not an http(s) URL", shown)
	}
	// A password in the URL (basic auth in front of the instance) is a
	// secret like an API key.
	var secrets []string
	if pw, ok := u.User.Password(); ok {
		secrets = append(secrets, pw)
	}
	cfg.BaseURL = strings.TrimSpace(cfg.BaseURL)
	if cfg.Categories == "" {
		cfg.Categories = "general"
	}
	c := &Client{cfg: cfg, caller: enginehttp.Caller{
		Engine:   search.EngineSearxng,
		Retry:    cfg.Retry,
		Timeout:  cfg.Timeout,
		Describe: describe,
		Hint:     hint,
		Secrets:  secrets,
	}}
	// Health checks must answer quickly and never wait out a retry.
	c.health = c.caller
	if cfg.Retry != nil {
		once := *cfg.Retry
		once.MaxAttempts = 1
		c.health.Retry = &once
	} else {
		c.health.Retry = &httpretry.Client{MaxAttempts: 1}
	}
	return c, nil
}

// Name returns "searxng".
func (c *Client) Name() string { return search.EngineSearxng }

type response struct {
	Query           string `json:"query"`
	NumberOfResults int    `json:"number_of_results"`
	Results         []struct {
		URL           string   `json:"url"`
		Title         string   `json:"title"`
		Content       string   `json:"content"`
		Engine        string   `json:"engine"`
		Engines       []string `json:"engines"`
		Score         float64  `json:"score"`
		Category      string   `json:"category"`
		PublishedDate *string  `json:"publishedDate"`
		// Mimetype is set on file results (template "file.html").
		Mimetype string `json:"mimetype"`
	} `json:"results"`
	// UnresponsiveEngines lists [engine, reason] pairs.
	UnresponsiveEngines [][]string `json:"unresponsive_engines"`
}

// Search asks the instance for results. SearXNG has no result count
// parameter (a page holds what its engines return) and no domain filters;
// the Service trims and filters. MaxAge maps to time_range. When there are
// no results and upstream engines failed, Search returns an error naming
// them, so that auto falls back instead of reporting an outage as "nothing
// found".
func (c *Client) Search(ctx context.Context, q search.Query) ([]search.Result, error) {
	v := url.Values{}
	v.Set("q", q.Text)
	v.Set("format", "json")
	v.Set("pageno", "1")
	v.Set("categories", c.cfg.Categories)
	if tr := enginehttp.TimeRange(q.MaxAge); tr != "" {
		v.Set("time_range", tr)
	}
	if c.cfg.Engines != "" {
		v.Set("engines", c.cfg.Engines)
	}
	if c.cfg.Language != "" {
		v.Set("language", c.cfg.Language)
	}
	if c.cfg.SafeSearch != nil {
		v.Set("safesearch", fmt.Sprint(*c.cfg.SafeSearch))
	}
	var resp response
	err := c.caller.Do(ctx, enginehttp.Request{
		Method: http.MethodGet,
		URL:    enginehttp.JoinURL(c.cfg.BaseURL, "/search") + "?" + v.Encode(),
	}, &resp)
	if err != nil {
		return nil, err
	}
	if len(resp.Results) == 0 && len(resp.UnresponsiveEngines) > 0 {
		var failed []string
		for _, ue := range resp.UnresponsiveEngines {
			failed = append(failed, strings.Join(ue, ": "))
		}
		return nil, fmt.Errorf("searxng: no results; upstream engines failed: %s", strings.Join(failed, ", "))
	}
	out := make([]search.Result, 0, min(len(resp.Results), q.MaxResults))
	for _, r := range resp.Results {
		if len(out) == q.MaxResults {
			break
		}
		res := search.Result{
			Title:    htmltext.Inline(r.Title),
			Snippet:  htmltext.Inline(r.Content),
			URL:      r.URL,
			Score:    r.Score,
			MimeType: r.Mimetype,
		}
		if r.PublishedDate != nil {
			res.PublishedAt = enginehttp.ParseTime(*r.PublishedDate)
		}
		out = append(out, res)
	}
	return out, nil
}

// Healthy calls the instance's /healthz endpoint, once.
func (c *Client) Healthy(ctx context.Context) error {
	// /healthz answers a plain "OK": any 2xx will do.
	return c.health.Do(ctx, enginehttp.Request{Method: http.MethodGet, URL: enginehttp.JoinURL(c.cfg.BaseURL, "/healthz")}, nil)
}

// describe: SearXNG answers errors with plain text or HTML pages, which
// the generic body excerpt handles.
func describe(int, []byte) string { return "" }

func hint(status int, _ string) string {
	switch status {
	case http.StatusForbidden:
		return "enable the json format under search.formats in SearXNG's settings.yml"
	case http.StatusTooManyRequests:
		return "SearXNG's limiter blocked this client; allow its address in limiter.toml (botdetection.ip_lists.pass_ip)"
	}
	return ""
}
