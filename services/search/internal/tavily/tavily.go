// Package tavily is the search engine "tavily": an adapter for the Tavily
// search API (POST /search with a bearer API key). Snippets are Tavily's
// query-relevant page content.
package tavily

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/groundcrew/groundcrew/platform/httpretry"
	"github.com/groundcrew/groundcrew/services/search/internal/enginehttp"
	"github.com/groundcrew/groundcrew/services/search/internal/search"
)

// DefaultBaseURL is Tavily's API endpoint.
const DefaultBaseURL = "https://api.tavily.com"

// Tavily's plan-limit statuses: 432 when the plan's monthly limit is
// reached, 433 when the pay-as-you-go limit is.
const (
	StatusPlanLimit       = 432
	StatusPayAsYouGoLimit = 433
)

// Config configures a Client.
type Config struct {
	// APIKey is TAVILY_API_KEY; required.
	APIKey string
	// BaseURL defaults to DefaultBaseURL.
	BaseURL string
	// Timeout bounds one search, retries included; 0 means
	// enginehttp.DefaultTimeout.
	Timeout time.Duration
	// Retry sends requests; nil means enginehttp.NewRetryClient over
	// http.DefaultClient.
	Retry *httpretry.Client
	// SearchDepth is "basic" (default, 1 credit) or "advanced" (2 credits).
	SearchDepth string
	// Topic is "general" (default) or "news".
	Topic string
}

// Client searches with Tavily. It is safe for concurrent use.
type Client struct {
	cfg    Config
	caller enginehttp.Caller
}

var _ search.Engine = (*Client)(nil)

// New returns a Client; it fails when the API key is missing.
func New(cfg Config) (*Client, error) {
	if strings.TrimSpace(cfg.APIKey) == "" {
		return nil, errors.New("tavily: TAVILY_API_KEY is empty")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.SearchDepth == "" {
		cfg.SearchDepth = "basic"
	}
	if cfg.Topic == "" {
		cfg.Topic = "general"
	}
	return &Client{cfg: cfg, caller: enginehttp.Caller{
		Engine:   search.EngineTavily,
		Retry:    cfg.Retry,
		Timeout:  cfg.Timeout,
		Describe: describe,
		Hint:     hint,
		Secrets:  []string{cfg.APIKey},
		Classify: classify,
	}}, nil
}

// Name returns "tavily".
func (c *Client) Name() string { return search.EngineTavily }

type request struct {
	Query             string   `json:"query"`
	Topic             string   `json:"topic"`
	SearchDepth       string   `json:"search_depth"`
	MaxResults        int      `json:"max_results"`
	TimeRange         string   `json:"time_range,omitempty"`
	IncludeDomains    []string `json:"include_domains,omitempty"`
	ExcludeDomains    []string `json:"exclude_domains,omitempty"`
	IncludeAnswer     bool     `json:"include_answer"`
	IncludeRawContent bool     `json:"include_raw_content"`
	IncludeImages     bool     `json:"include_images"`
	// IncludeFavicon asks for each result's site icon ("favicon").
	IncludeFavicon bool `json:"include_favicon"`
}

type response struct {
	Query   string `json:"query"`
	Results []struct {
		Title         string  `json:"title"`
		URL           string  `json:"url"`
		Content       string  `json:"content"`
		Score         float64 `json:"score"`
		PublishedDate string  `json:"published_date"`
		Favicon       string  `json:"favicon"`
	} `json:"results"`
	ResponseTime json.Number `json:"response_time"`
	RequestID    string      `json:"request_id"`
}

// Search asks Tavily for q.MaxResults results (Tavily allows up to 20).
// Domain filters map to include_domains/exclude_domains and MaxAge to the
// smallest time_range (day, week, month, year) that covers it.
func (c *Client) Search(ctx context.Context, q search.Query) ([]search.Result, error) {
	body := request{
		Query:          q.Text,
		Topic:          c.cfg.Topic,
		SearchDepth:    c.cfg.SearchDepth,
		MaxResults:     min(q.MaxResults, 20),
		TimeRange:      enginehttp.TimeRange(q.MaxAge),
		IncludeDomains: q.AllowedDomains,
		ExcludeDomains: q.BlockedDomains,
		IncludeFavicon: true,
	}
	var resp response
	err := c.caller.Do(ctx, enginehttp.Request{
		Method: http.MethodPost,
		URL:    enginehttp.JoinURL(c.cfg.BaseURL, "/search"),
		Header: http.Header{"Authorization": {"Bearer " + c.cfg.APIKey}},
		Body:   body,
	}, &resp)
	if err != nil {
		return nil, err
	}
	out := make([]search.Result, 0, len(resp.Results))
	for _, r := range resp.Results {
		out = append(out, search.Result{
			Title:       r.Title,
			Snippet:     r.Content,
			URL:         r.URL,
			Score:       r.Score,
			PublishedAt: enginehttp.ParseTime(r.PublishedDate),
			FaviconURL:  r.Favicon,
		})
	}
	return out, nil
}

// describe reads Tavily's error body: {"detail": {"error": "…"}} (FastAPI
// style), or {"detail": "…"} for validation errors.
func describe(_ int, body []byte) string {
	var e struct {
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &e) != nil || len(e.Detail) == 0 {
		return ""
	}
	var nested struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(e.Detail, &nested) == nil && nested.Error != "" {
		return nested.Error
	}
	var s string
	if json.Unmarshal(e.Detail, &s) == nil {
		return s
	}
	return string(e.Detail)
}

// classify: 432 and 433 are Tavily's own codes for a spent plan or
// pay-as-you-go limit.
func classify(status int, _ string) error {
	if status == StatusPlanLimit || status == StatusPayAsYouGoLimit {
		return enginehttp.ErrQuota
	}
	return nil
}

func hint(status int, _ string) string {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return "check TAVILY_API_KEY"
	case StatusPlanLimit, StatusPayAsYouGoLimit:
		return "Tavily plan limit reached"
	}
	return ""
}
