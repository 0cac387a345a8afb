package enginehttp

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestTimeRange(t *testing.T) {
	const day = 24 * time.Hour
	tests := []struct {
		maxAge time.Duration
		want   string
	}{
		{0, ""}, {-time.Hour, ""}, {time.Hour, "day"}, {day, "day"}, {25 * time.Hour, "week"},
		{7 * day, "week"}, {30 * day, "month"}, {200 * day, "year"}, {400 * day, ""},
	}
	for _, tt := range tests {
		if got := TimeRange(tt.maxAge); got != tt.want {
			t.Errorf("TimeRange(%v) = %q, want %q", tt.maxAge, got, tt.want)
		}
	}
}

func TestParseTime(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2024-11-12T00:00:00.000Z", time.Date(2024, 11, 12, 0, 0, 0, 0, time.UTC)},
		{"2024-11-12T10:00:00+02:00", time.Date(2024, 11, 12, 8, 0, 0, 0, time.UTC)},
		{"2025-01-21T14:05:09", time.Date(2025, 1, 21, 14, 5, 9, 0, time.UTC)},
		{"2025-01-21 14:05:09", time.Date(2025, 1, 21, 14, 5, 9, 0, time.UTC)},
		{"2025-01-21", time.Date(2025, 1, 21, 0, 0, 0, 0, time.UTC)},
		{"Tue, 14 May 2024 08:12:00 GMT", time.Date(2024, 5, 14, 8, 12, 0, 0, time.UTC)},
		{"", time.Time{}},
		{"January 21, 2025", time.Time{}},
	}
	for _, tt := range tests {
		if got := ParseTime(tt.in); !got.Equal(tt.want) {
			t.Errorf("ParseTime(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestBodyExcerpt(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Too Many Requests\n", "Too Many Requests"},
		{"<html><head><title>403 Forbidden</title></head><body><h1>Forbidden</h1></body></html>", "403 Forbidden Forbidden"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := bodyExcerpt([]byte(tt.in)); got != tt.want {
			t.Errorf("bodyExcerpt(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestRedirects checks that a redirect within the provider's origin is
// followed with the key, and one to another host is not followed at all.
func TestRedirects(t *testing.T) {
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(other.Close)
	var gotKey atomic.Value
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/v2/search", http.StatusPermanentRedirect)
		case "/v2/search":
			gotKey.Store(r.Header.Get("X-Api-Key"))
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"ok":true}`))
		case "/away":
			http.Redirect(w, r, other.URL+"/collect?token=x", http.StatusFound)
		}
	}))
	t.Cleanup(provider.Close)

	c := &Caller{Engine: "test", Retry: NewRetryClient(provider.Client())}
	var out struct{ OK bool }
	err := c.Do(t.Context(), Request{Method: http.MethodPost, URL: provider.URL + "/moved",
		Header: http.Header{"X-Api-Key": {"k1"}}, Body: map[string]string{"q": "x"}}, &out)
	if err != nil || !out.OK || gotKey.Load() != "k1" {
		t.Errorf("same-origin redirect: err = %v, ok = %v, key = %v; want it followed with the key", err, out.OK, gotKey.Load())
	}

	err = c.Do(t.Context(), Request{Method: http.MethodGet, URL: provider.URL + "/away",
		Header: http.Header{"X-Api-Key": {"k1"}}}, &out)
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusFound || strings.Contains(err.Error(), "token=") {
		t.Errorf("cross-host redirect: err = %v, want a 302 StatusError without the location's query", err)
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("the other host got %d requests, want 0", n)
	}
	// The caller's client keeps its own redirect policy.
	if provider.Client().CheckRedirect != nil {
		t.Error("Do changed the caller's http.Client")
	}
}
