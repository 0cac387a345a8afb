// Package exa is the search engine "exa": an adapter for the Exa search API
// (POST /search with an x-api-key header). Snippets come from Exa's
// query-relevant highlights.
package exa

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

// DefaultBaseURL is Exa's API endpoint.
const DefaultBaseURL = "https://api.exa.ai"

// Config configures a Client.
type Config struct {
	// APIKey is EXA_API_KEY; required.
	APIKey string
	// BaseURL defaults to DefaultBaseURL.
	BaseURL string
	// Timeout bounds one search, retries included; 0 means
	// enginehttp.DefaultTimeout.
	Timeout time.Duration
	// Retry sends requests; nil means enginehttp.NewRetryClient over
	// http.DefaultClient.
	Retry *httpretry.Client
	// SearchType is Exa's "type": auto (default), neural, keyword or fast.
	SearchType string
	// Now is the clock for recency filters; nil means time.Now.
	Now func() time.Time
}

// Client searches with Exa. It is safe for concurrent use.
type Client struct {
	cfg    Config
	caller enginehttp.Caller
}

var _ search.Engine = (*Client)(nil)

// New returns a Client; it fails when the API key is missing.
func New(cfg Config) (*Client, error) {
	if strings.TrimSpace(cfg.APIKey) == "" {
		return nil, errors.New("exa: EXA_API_KEY is empty")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.SearchType == "" {
		cfg.SearchType = "auto"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Client{cfg: cfg, caller: enginehttp.Caller{
		Engine:   search.EngineExa,
		Retry:    cfg.Retry,
		Timeout:  cfg.Timeout,
		Describe: describe,
		Hint:     hint,
		Secrets:  []string{cfg.APIKey},
	}}, nil
}

// Name returns "exa".
func (c *Client) Name() string { return search.EngineExa }

type highlightsOpts struct {
	NumSentences     int `json:"numSentences"`
	HighlightsPerURL int `json:"highlightsPerUrl"`
}

type contentsOpts struct {
	Highlights highlightsOpts `json:"highlights"`
}

type request struct {
	Query              string       `json:"query"`
	Type               string       `json:"type"`
	NumResults         int          `json:"numResults"`
	IncludeDomains     []string     `json:"includeDomains,omitempty"`
	ExcludeDomains     []string     `json:"excludeDomains,omitempty"`
	StartPublishedDate string       `json:"startPublishedDate,omitempty"`
	Contents           contentsOpts `json:"contents"`
}

type response struct {
	RequestID string `json:"requestId"`
	Results   []struct {
		ID            string   `json:"id"`
		Title         *string  `json:"title"`
		URL           string   `json:"url"`
		PublishedDate *string  `json:"publishedDate"`
		Author        *string  `json:"author"`
		Score         *float64 `json:"score"`
		Highlights    []string `json:"highlights"`
		Summary       string   `json:"summary"`
		Text          string   `json:"text"`
		Favicon       string   `json:"favicon"`
	} `json:"results"`
}

// Search asks Exa for q.MaxResults results. Domain filters map to
// includeDomains (or, when no domain is allowed, excludeDomains, since Exa
// does not combine the two) and MaxAge to startPublishedDate.
func (c *Client) Search(ctx context.Context, q search.Query) ([]search.Result, error) {
	body := request{
		Query:      q.Text,
		Type:       c.cfg.SearchType,
		NumResults: q.MaxResults,
		Contents:   contentsOpts{Highlights: highlightsOpts{NumSentences: 3, HighlightsPerURL: 1}},
	}
	if len(q.AllowedDomains) > 0 {
		body.IncludeDomains = q.AllowedDomains
	} else {
		body.ExcludeDomains = q.BlockedDomains
	}
	if q.MaxAge > 0 {
		body.StartPublishedDate = c.cfg.Now().Add(-q.MaxAge).UTC().Format("2006-01-02T15:04:05.000Z")
	}
	var resp response
	err := c.caller.Do(ctx, enginehttp.Request{
		Method: http.MethodPost,
		URL:    enginehttp.JoinURL(c.cfg.BaseURL, "/search"),
		Header: http.Header{"X-Api-Key": {c.cfg.APIKey}},
		Body:   body,
	}, &resp)
	if err != nil {
		return nil, err
	}
	out := make([]search.Result, 0, len(resp.Results))
	for _, r := range resp.Results {
		res := search.Result{URL: r.URL, FaviconURL: r.Favicon}
		if r.Title != nil {
			res.Title = *r.Title
		}
		switch {
		case len(r.Highlights) > 0:
			res.Snippet = strings.Join(r.Highlights, " … ")
		case r.Summary != "":
			res.Snippet = r.Summary
		default:
			res.Snippet = r.Text
		}
		if r.Score != nil {
			res.Score = *r.Score
		}
		if r.PublishedDate != nil {
			res.PublishedAt = enginehttp.ParseTime(*r.PublishedDate)
		}
		out = append(out, res)
	}
	return out, nil
}

// describe reads Exa's error body: {"requestId", "error", "tag"}.
func describe(_ int, body []byte) string {
	var e struct {
		RequestID string `json:"requestId"`
		Error     string `json:"error"`
		Tag       string `json:"tag"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error == "" {
		return ""
	}
	msg := e.Error
	if e.Tag != "" {
		msg = e.Tag + ": " + msg
	}
	if e.RequestID != "" {
		msg += " [request " + e.RequestID + "]"
	}
	return msg
}

func hint(status int, _ string) string {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return "check EXA_API_KEY"
	case http.StatusPaymentRequired:
		return "Exa credits exhausted"
	}
	return ""
}
