// Package brave is the search engine "brave": an adapter for the Brave
// Search web API (GET /res/v1/web/search with an X-Subscription-Token
// header). Brave marks matched terms in descriptions with HTML; snippets are
// returned as plain text.
package brave

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/groundcrew/groundcrew/platform/httpretry"
	"github.com/groundcrew/groundcrew/services/search/internal/enginehttp"
	"github.com/groundcrew/groundcrew/services/search/internal/htmltext"
	"github.com/groundcrew/groundcrew/services/search/internal/search"
)

// DefaultBaseURL is Brave's API endpoint.
const DefaultBaseURL = "https://api.search.brave.com"

// Brave's documented query limits.
const (
	MaxQueryChars = 400
	MaxQueryWords = 50
	maxCount      = 20
)

// Config configures a Client.
type Config struct {
	// APIKey is BRAVE_API_KEY (the subscription token); required.
	APIKey string
	// BaseURL defaults to DefaultBaseURL.
	BaseURL string
	// Timeout bounds one search, retries included; 0 means
	// enginehttp.DefaultTimeout.
	Timeout time.Duration
	// Retry sends requests; nil means enginehttp.NewRetryClient over
	// http.DefaultClient. Its RetryAfter is replaced by one that reads
	// Brave's X-RateLimit-Reset.
	Retry *httpretry.Client
	// SafeSearch is off, moderate (default) or strict.
	SafeSearch string
	// Country and SearchLang, if set, are passed as country and
	// search_lang.
	Country, SearchLang string
	// Now is the clock for recency filters; nil means time.Now.
	Now func() time.Time
}

// Client searches with Brave. It is safe for concurrent use.
type Client struct {
	cfg    Config
	caller enginehttp.Caller
}

var _ search.Engine = (*Client)(nil)

// New returns a Client; it fails when the API key is missing.
func New(cfg Config) (*Client, error) {
	if strings.TrimSpace(cfg.APIKey) == "" {
		return nil, errors.New("brave: BRAVE_API_KEY is empty")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.SafeSearch == "" {
		cfg.SafeSearch = "moderate"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	rc := cfg.Retry
	if rc == nil {
		rc = enginehttp.NewRetryClient(http.DefaultClient)
	}
	withReset := *rc
	withReset.RetryAfter = RateLimitWait
	return &Client{cfg: cfg, caller: enginehttp.Caller{
		Engine:   search.EngineBrave,
		Retry:    &withReset,
		Timeout:  cfg.Timeout,
		Describe: describe,
		Hint:     hint,
		Secrets:  []string{cfg.APIKey},
		Classify: classify,
	}}, nil
}

// Name returns "brave".
func (c *Client) Name() string { return search.EngineBrave }

type response struct {
	Type  string `json:"type"`
	Query struct {
		Original string `json:"original"`
	} `json:"query"`
	Web struct {
		Results []struct {
			Title         string   `json:"title"`
			URL           string   `json:"url"`
			Description   string   `json:"description"`
			PageAge       string   `json:"page_age"`
			Age           string   `json:"age"`
			ExtraSnippets []string `json:"extra_snippets"`
			MetaURL       struct {
				// Favicon is Brave's proxied copy of the site's icon.
				Favicon string `json:"favicon"`
			} `json:"meta_url"`
		} `json:"results"`
	} `json:"web"`
}

// Search asks Brave for q.MaxResults web results (Brave allows up to 20).
// The query is cut to Brave's limits (400 characters, 50 words). A single
// allowed domain becomes a site: operator and blocked domains -site:
// operators; MaxAge maps to freshness as a date range.
func (c *Client) Search(ctx context.Context, q search.Query) ([]search.Result, error) {
	v := url.Values{}
	v.Set("q", c.queryText(q))
	v.Set("count", strconv.Itoa(min(max(q.MaxResults, 1), maxCount)))
	v.Set("safesearch", c.cfg.SafeSearch)
	v.Set("text_decorations", "false")
	if q.MaxAge > 0 {
		now := c.cfg.Now().UTC()
		v.Set("freshness", now.Add(-q.MaxAge).Format("2006-01-02")+"to"+now.Format("2006-01-02"))
	}
	if c.cfg.Country != "" {
		v.Set("country", c.cfg.Country)
	}
	if c.cfg.SearchLang != "" {
		v.Set("search_lang", c.cfg.SearchLang)
	}
	var resp response
	err := c.caller.Do(ctx, enginehttp.Request{
		Method: http.MethodGet,
		URL:    enginehttp.JoinURL(c.cfg.BaseURL, "/res/v1/web/search") + "?" + v.Encode(),
		Header: http.Header{"X-Subscription-Token": {c.cfg.APIKey}},
	}, &resp)
	if err != nil {
		return nil, err
	}
	results := resp.Web.Results
	out := make([]search.Result, 0, len(results))
	for i, r := range results {
		snippet := htmltext.Inline(r.Description)
		if snippet == "" && len(r.ExtraSnippets) > 0 {
			snippet = htmltext.Inline(r.ExtraSnippets[0])
		}
		out = append(out, search.Result{
			Title:   htmltext.Inline(r.Title),
			Snippet: snippet,
			URL:     r.URL,
			// Brave returns no score; rank order is all there is.
			Score:       float64(len(results)-i) / float64(len(results)),
			PublishedAt: enginehttp.ParseTime(r.PageAge),
			FaviconURL:  r.MetaURL.Favicon,
		})
	}
	return out, nil
}

// queryText adds site operators for the domain filters and cuts the query
// to Brave's limits, keeping whole words.
func (c *Client) queryText(q search.Query) string {
	var ops []string
	if len(q.AllowedDomains) == 1 {
		ops = append(ops, "site:"+q.AllowedDomains[0])
	}
	for _, d := range q.BlockedDomains {
		ops = append(ops, "-site:"+d)
	}
	words := strings.Fields(q.Text)
	budgetWords := MaxQueryWords - len(ops)
	budgetChars := MaxQueryChars
	for _, op := range ops {
		budgetChars -= len(op) + 1
	}
	if budgetWords < 1 || budgetChars < 1 {
		// Too many operators to fit: search without them; the Service
		// filters domains anyway.
		ops, budgetWords, budgetChars = nil, MaxQueryWords, MaxQueryChars
	}
	var kept []string
	n := 0
	for _, w := range words {
		l := utf8.RuneCountInString(w)
		if len(kept) == budgetWords || n+l > budgetChars {
			break
		}
		kept = append(kept, w)
		n += l + 1
	}
	if len(kept) == 0 && len(words) > 0 {
		kept = []string{string([]rune(words[0])[:budgetChars])}
	}
	return strings.Join(append(kept, ops...), " ")
}

// RateLimitWait reads how long Brave asks a client to wait: Retry-After if
// present, else from X-RateLimit-Remaining and X-RateLimit-Reset, which
// list one value per window ("1, 15000" for per second and per month): the
// wait is the reset of the longest window that has nothing remaining. A
// monthly quota running out thus yields a wait far beyond any sensible
// MaxWait, and the call fails instead of retrying.
func RateLimitWait(resp *http.Response, now time.Time) (time.Duration, bool) {
	if d, ok := httpretry.ParseRetryAfter(resp, now); ok {
		return d, true
	}
	resets := splitInts(resp.Header.Get("X-RateLimit-Reset"))
	if len(resets) == 0 {
		return 0, false
	}
	remaining := splitInts(resp.Header.Get("X-RateLimit-Remaining"))
	wait, found := int64(0), false
	for i, r := range resets {
		if i < len(remaining) && remaining[i] > 0 {
			continue
		}
		wait, found = max(wait, r), true
	}
	if !found {
		wait = resets[0]
	}
	return time.Duration(wait) * time.Second, true
}

func splitInts(h string) []int64 {
	var out []int64
	for part := range strings.SplitSeq(h, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(part), 10, 64)
		if err != nil || n < 0 {
			return nil
		}
		out = append(out, n)
	}
	return out
}

// describe reads Brave's error body: {"type": "ErrorResponse", "error":
// {"code", "detail", "meta"}}.
func describe(_ int, body []byte) string {
	var e struct {
		Error struct {
			Code   string `json:"code"`
			Detail string `json:"detail"`
			Meta   struct {
				Errors []struct {
					Loc []any  `json:"loc"`
					Msg string `json:"msg"`
				} `json:"errors"`
			} `json:"meta"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || (e.Error.Code == "" && e.Error.Detail == "") {
		return ""
	}
	msg := strings.TrimPrefix(e.Error.Code+": "+e.Error.Detail, ": ")
	for _, ve := range e.Error.Meta.Errors {
		msg += fmt.Sprintf("; %v: %s", ve.Loc, ve.Msg)
	}
	return msg
}

// classify: Brave answers a bad token with 422 (as well as 401), so the
// code in the body decides.
func classify(_ int, msg string) error {
	if strings.HasPrefix(msg, "SUBSCRIPTION_TOKEN_INVALID") {
		return enginehttp.ErrAuth
	}
	return nil
}

func hint(status int, msg string) string {
	// Brave answers a bad or missing token with 422 (not 401), so the code
	// in the body decides.
	if status == http.StatusUnauthorized || status == http.StatusForbidden ||
		strings.HasPrefix(msg, "SUBSCRIPTION_TOKEN_INVALID") || strings.Contains(msg, "x-subscription-token") {
		return "check BRAVE_API_KEY"
	}
	return ""
}
