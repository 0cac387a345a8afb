package providerfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Groq stands in for Groq's OpenAI-compatible chat completions
// (POST {base}/chat/completions with a Bearer key; base is typically
// ".../openai/v1"), streaming included, as openai-go calls it. It answers
// rag's prompt: numbered excerpts and a question. The reply opens with the
// verdict line rag asks for, then a sentence from the excerpt sharing the
// most words with the question, cited; a question sharing no words with
// any excerpt is out of scope. Fields Groq rejects (logprobs, logit_bias,
// messages[].name) are rejected here too.
type Groq struct {
	// APIKey is the key requests must carry; empty accepts any.
	APIKey string

	calls atomic.Int64
}

var _ http.Handler = (*Groq)(nil)

// Calls is how many completions were answered.
func (g *Groq) Calls() int64 { return g.calls.Load() }

type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
		Name    *string         `json:"name"`
	} `json:"messages"`
	Stream    bool            `json:"stream"`
	Logprobs  *bool           `json:"logprobs"`
	LogitBias json.RawMessage `json:"logit_bias"`
}

// ServeHTTP implements http.Handler.
func (g *Groq) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		writeOpenAIError(w, http.StatusNotFound, "invalid_request_error", "unknown_url", "Unknown request URL: "+r.Method+" "+r.URL.Path)
		return
	}
	if key, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); g.APIKey != "" && key != g.APIKey {
		writeOpenAIError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "Invalid API Key")
		return
	}
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", "", "could not parse the request body: "+err.Error())
		return
	}
	switch {
	case req.Logprobs != nil && *req.Logprobs:
		writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", "", "`logprobs` is not supported with this model")
		return
	case len(req.LogitBias) > 0 && string(req.LogitBias) != "null":
		writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", "", "`logit_bias` is not supported")
		return
	case req.Model == "" || len(req.Messages) == 0:
		writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", "", "`model` and `messages` are required")
		return
	}
	var user string
	for _, m := range req.Messages {
		if m.Name != nil {
			writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", "", "'messages.1' : for 'role:user' the following must be satisfied[('messages.1.name' : property 'name' is unsupported)]")
			return
		}
		if m.Role == "user" {
			var s string
			if json.Unmarshal(m.Content, &s) == nil {
				user = s
			}
		}
	}
	g.calls.Add(1)
	reply := ragReply(user)
	id := "chatcmpl-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if !req.Stream {
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": reply}, "finish_reason": "stop"}},
			"usage":   map[string]any{"prompt_tokens": len(user) / 4, "completion_tokens": len(reply) / 4, "total_tokens": (len(user) + len(reply)) / 4},
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	chunk := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		})
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, word := range strings.SplitAfter(reply, " ") {
		chunk(map[string]any{"content": word}, nil)
	}
	chunk(map[string]any{}, "stop")
	fmt.Fprint(w, "data: [DONE]\n\n")
}

var (
	// rag's prompt puts each excerpt and the question between delimiter
	// lines carrying the request's nonce.
	excerptBlock  = regexp.MustCompile(`(?s)<<<BEGIN (\w+) EXCERPT \[(\d+)\]>>>\n(.*?)\n<<<END (\w+)>>>`)
	questionBlock = regexp.MustCompile(`(?s)<<<BEGIN (\w+) QUESTION>>>\n(.*?)\n<<<END (\w+)>>>`)
)

// ragReply answers rag's prompt in the format its system prompt asks for.
func ragReply(prompt string) string {
	q := questionBlock.FindStringSubmatch(prompt)
	if q == nil {
		return "VERDICT: OUT_OF_SCOPE; REASON: no question was asked"
	}
	question := q[2]
	best, bestScore, bestSentence := "", 0, ""
	qTerms := termSet(question)
	for _, m := range excerptBlock.FindAllStringSubmatch(prompt, -1) {
		// The block's first line is the excerpt's title and headings.
		_, body, _ := strings.Cut(m[3], "\n")
		score := 0
		for t := range termSet(body) {
			if qTerms[t] {
				score++
			}
		}
		if score > bestScore {
			best, bestScore, bestSentence = m[2], score, BestSentence(body, question)
		}
	}
	if bestScore == 0 || bestSentence == "" {
		return "VERDICT: OUT_OF_SCOPE; REASON: the excerpts do not mention it"
	}
	return fmt.Sprintf("VERDICT: IN_SCOPE; PRIMARY: %s\n\n%s [%s].", best, strings.TrimSuffix(bestSentence, "."), best)
}

func writeOpenAIError(w http.ResponseWriter, status int, typ, code, msg string) {
	e := map[string]any{"message": msg, "type": typ}
	if code != "" {
		e["code"] = code
	}
	writeJSON(w, status, map[string]any{"error": e})
}

// GroqErrorBody is Groq's (OpenAI's) error format for a
// faultinject.Injector; 429s name the limit, as Groq's do.
func GroqErrorBody(status int, retryAfter time.Duration) (string, []byte) {
	e := map[string]any{"message": "Internal Server Error", "type": "internal_server_error"}
	switch status {
	case http.StatusTooManyRequests:
		e = map[string]any{
			"message": fmt.Sprintf("Rate limit reached for model `llama-3.3-70b-versatile` on tokens per minute (TPM): Limit 6000, Used 5990, Requested 800. Please try again in %s.", retryAfter),
			"type":    "tokens", "code": "rate_limit_exceeded",
		}
	case http.StatusServiceUnavailable:
		e = map[string]any{"message": "Service Unavailable", "type": "internal_server_error", "code": "service_unavailable"}
	case http.StatusBadGateway:
		e = map[string]any{"message": "Bad Gateway", "type": "internal_server_error"}
	}
	b, _ := json.Marshal(map[string]any{"error": e})
	return "application/json", b
}
