package providerfake

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// Exa stands in for Exa's search API (POST /search with x-api-key),
// answering from the fake web with highlights, as groundcrew's exa engine
// asks for them.
type Exa struct {
	Web *Web
	// APIKey is the key requests must carry; empty accepts any.
	APIKey string

	calls atomic.Int64
}

var _ http.Handler = (*Exa)(nil)

// Calls is how many searches were answered.
func (e *Exa) Calls() int64 { return e.calls.Load() }

// ServeHTTP implements http.Handler.
func (e *Exa) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/search" {
		writeExaError(w, http.StatusNotFound, "NOT_FOUND", "Route not found")
		return
	}
	if e.APIKey != "" && r.Header.Get("x-api-key") != e.APIKey {
		writeExaError(w, http.StatusUnauthorized, "INVALID_API_KEY", "Invalid API key")
		return
	}
	var req struct {
		Query      string `json:"query"`
		NumResults int    `json:"numResults"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Query == "" {
		writeExaError(w, http.StatusBadRequest, "INVALID_REQUEST_BODY", "query is required")
		return
	}
	e.calls.Add(1)
	n := req.NumResults
	if n <= 0 {
		n = 10
	}
	results := []any{}
	for i, h := range e.Web.Search(req.Query, n) {
		results = append(results, map[string]any{
			"id": h.URL, "url": h.URL, "title": h.Title, "score": h.Score,
			"publishedDate": "2026-10-01T00:00:00.000Z", "author": nil,
			"highlights": []string{h.Sentence}, "highlightScores": []float64{h.Score - float64(i)*0.01},
		})
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"requestId": strconv.FormatInt(time.Now().UnixNano(), 16), "resolvedSearchType": "neural", "results": results,
	})
}

func writeExaError(w http.ResponseWriter, status int, tag, msg string) {
	writeJSON(w, status, map[string]any{"requestId": strconv.FormatInt(time.Now().UnixNano(), 16), "error": msg, "tag": tag})
}

// ExaErrorBody is Exa's error format for a faultinject.Injector.
func ExaErrorBody(status int, _ time.Duration) (string, []byte) {
	msg, tag := "Internal server error", "INTERNAL_ERROR"
	if status == http.StatusTooManyRequests {
		msg, tag = "You have exceeded your rate limit", "RATE_LIMIT_EXCEEDED"
	}
	b, _ := json.Marshal(map[string]any{"requestId": strconv.FormatInt(time.Now().UnixNano(), 16), "error": msg, "tag": tag})
	return "application/json", b
}

// TelegramErrorBody is the Bot API's error format for a
// faultinject.Injector: {"ok":false,…} with parameters.retry_after on 429s.
func TelegramErrorBody(status int, retryAfter time.Duration) (string, []byte) {
	body := map[string]any{"ok": false, "error_code": status, "description": http.StatusText(status)}
	if status == http.StatusTooManyRequests {
		secs := max(int(retryAfter/time.Second), 1)
		body["description"] = "Too Many Requests: retry after " + strconv.Itoa(secs)
		body["parameters"] = map[string]any{"retry_after": secs}
	}
	b, _ := json.Marshal(body)
	return "application/json", b
}
