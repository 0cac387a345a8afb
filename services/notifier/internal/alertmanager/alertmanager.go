// Package alertmanager is the notifier's client of Alertmanager's API v2:
// it creates and expires the silences the alert group buttons ask for.
package alertmanager

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// Matcher is an equality matcher on one label.
type Matcher struct {
	Name    string `json:"name"`
	Value   string `json:"value"`
	IsRegex bool   `json:"isRegex"`
	IsEqual bool   `json:"isEqual"`
}

// Silence is a silence to create.
type Silence struct {
	Matchers  []Matcher
	StartsAt  time.Time
	EndsAt    time.Time
	CreatedBy string
	Comment   string
}

// EqualMatchers are equality matchers for labels, sorted by name.
func EqualMatchers(labels map[string]string) []Matcher {
	out := make([]Matcher, 0, len(labels))
	for k, v := range labels {
		out = append(out, Matcher{Name: k, Value: v, IsEqual: true})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Client talks to one Alertmanager.
type Client struct {
	base *url.URL
	http *http.Client
}

// New returns a Client of the Alertmanager at baseURL (its web root, e.g.
// http://alertmanager:9093); hc nil uses a client with a 10 s timeout.
func New(baseURL string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(strings.TrimSpace(baseURL), "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("ALERTMANAGER_URL %q: want an http(s) URL", baseURL)
	}
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	return &Client{base: u, http: hc}, nil
}

// Error is a failed call; Public says what went wrong in words fit for a
// chat, never the response body.
type Error struct {
	public string
	err    error
}

func (e *Error) Error() string { return "alertmanager: " + e.err.Error() }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.err }

// Public is the description safe to show.
func (e *Error) Public() string { return e.public }

// ErrUnreachable is wrapped when Alertmanager could not be reached.
var ErrUnreachable = errors.New("alertmanager unreachable")

// CreateSilence creates s (POST /api/v2/silences) and returns its id.
func (c *Client) CreateSilence(ctx context.Context, s Silence) (string, error) {
	body, err := json.Marshal(map[string]any{
		"matchers":  s.Matchers,
		"startsAt":  s.StartsAt.UTC().Format(time.RFC3339Nano),
		"endsAt":    s.EndsAt.UTC().Format(time.RFC3339Nano),
		"createdBy": s.CreatedBy,
		"comment":   s.Comment,
	})
	if err != nil {
		return "", fmt.Errorf("encoding silence: %w", err)
	}
	var out struct {
		SilenceID string `json:"silenceID"`
	}
	if err := c.do(ctx, http.MethodPost, "/api/v2/silences", body, &out); err != nil {
		return "", err
	}
	if out.SilenceID == "" {
		return "", &Error{public: "Alertmanager returned no silence id", err: errors.New("no silenceID in the answer")}
	}
	return out.SilenceID, nil
}

// ExpireSilence expires silence id (DELETE /api/v2/silence/{id}).
func (c *Client) ExpireSilence(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/api/v2/silence/"+url.PathEscape(id), nil, nil)
}

func (c *Client) do(ctx context.Context, method, path string, body []byte, out any) error {
	u := *c.base
	u.Path = strings.TrimRight(u.Path, "/") + path
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return fmt.Errorf("building request: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	res, err := c.http.Do(req)
	if err != nil {
		return &Error{public: "Alertmanager is unreachable", err: fmt.Errorf("%w: %s %s: %w", ErrUnreachable, method, path, err)}
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	if res.StatusCode/100 != 2 {
		return &Error{
			public: fmt.Sprintf("Alertmanager refused (HTTP %d)", res.StatusCode),
			err:    fmt.Errorf("%s %s: HTTP %d: %s", method, path, res.StatusCode, strings.TrimSpace(string(data))),
		}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return &Error{public: "Alertmanager answered something unexpected", err: fmt.Errorf("decoding %s %s: %w", method, path, err)}
		}
	}
	return nil
}
