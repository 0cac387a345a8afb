package providerfake

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Gemini stands in for the Gemini API's generateContent
// (POST /v1beta/models/{model}:generateContent with x-goog-api-key), as
// google.golang.org/genai calls it. It answers the three kinds of request
// groundcrew's grounding service makes:
//
//   - structured output whose schema has a "query" property (DeriveQuery):
//     a JSON {"query", "terms"} made of the input's most telling words;
//   - a request with the googleSearch tool (native grounding): sentences
//     from the fake web's best pages, with groundingMetadata whose
//     supports carry UTF-8 byte offsets, as Gemini reports them, and whose
//     chunks are what the real service sends: redirect links
//     (/grounding-api-redirect/… on the stand-in's own host, answered with
//     a 302 to the page, as vertexaisearch.cloud.google.com does) titled
//     with the page's bare domain;
//   - anything else (grounding over supplied evidence, chat replies): a
//     sentence from each source the prompt delimits as
//     "<<<BEGIN tag SOURCE [n]>>> … <<<END tag>>>" (title line, URL line,
//     text), cited as [n].
type Gemini struct {
	// Web is where "Google Search" finds pages.
	Web *Web
	// APIKey is the key requests must carry; empty accepts any.
	APIKey string

	calls atomic.Int64
}

var _ http.Handler = (*Gemini)(nil)

// Calls is how many generateContent requests were answered.
func (g *Gemini) Calls() int64 { return g.calls.Load() }

type geminiPart struct {
	Text string `json:"text,omitempty"`
}

type geminiContent struct {
	Role  string       `json:"role,omitempty"`
	Parts []geminiPart `json:"parts"`
}

type geminiRequest struct {
	Contents          []geminiContent `json:"contents"`
	SystemInstruction *geminiContent  `json:"systemInstruction"`
	GenerationConfig  struct {
		ResponseMIMEType string `json:"responseMimeType"`
		ResponseSchema   struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"responseSchema"`
	} `json:"generationConfig"`
	Tools []struct {
		GoogleSearch *struct{} `json:"googleSearch"`
	} `json:"tools"`
}

var (
	// delimiters are the lines grounding wraps untrusted text in
	// ("<<<BEGIN tag TEXT>>>", "<<<END tag>>>", "<<<MSG tag from …>>>"):
	// not words of the text.
	delimiters   = regexp.MustCompile(`(?m)^<<<[^\n]*>>>$`)
	geminiPath   = regexp.MustCompile(`^/v1beta/models/([^/:]+):generateContent$`)
	redirectPath = regexp.MustCompile(`^/grounding-api-redirect/([0-9]+)-[A-Za-z0-9_-]+$`)
)

// ServeHTTP implements http.Handler.
func (g *Gemini) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if rm := redirectPath.FindStringSubmatch(r.URL.Path); rm != nil && r.Method == http.MethodGet {
		docs := g.Web.Docs()
		if i, err := strconv.Atoi(rm[1]); err == nil && i < len(docs) {
			http.Redirect(w, r, docs[i].URL, http.StatusFound)
			return
		}
		http.NotFound(w, r)
		return
	}
	m := geminiPath.FindStringSubmatch(r.URL.Path)
	if r.Method != http.MethodPost || m == nil {
		writeGeminiError(w, http.StatusNotFound, "NOT_FOUND", "Requested entity was not found.")
		return
	}
	key := r.Header.Get("x-goog-api-key")
	if key == "" {
		key = r.URL.Query().Get("key")
	}
	if g.APIKey != "" && key != g.APIKey {
		writeGeminiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.")
		return
	}
	var req geminiRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeGeminiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid JSON payload received. "+err.Error())
		return
	}
	var user strings.Builder
	system := ""
	if req.SystemInstruction != nil {
		for _, p := range req.SystemInstruction.Parts {
			system += p.Text + "\n"
		}
	}
	for _, c := range req.Contents {
		if c.Role == "" || c.Role == "user" {
			for _, p := range c.Parts {
				user.WriteString(p.Text)
				user.WriteString("\n")
			}
		}
	}
	input := delimiters.ReplaceAllString(user.String(), "")
	if strings.TrimSpace(user.String()) == "" {
		writeGeminiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "* GenerateContentRequest.contents: contents is not specified")
		return
	}
	g.calls.Add(1)

	var candidate map[string]any
	switch {
	case req.GenerationConfig.ResponseMIMEType == "application/json":
		candidate = textCandidate(structured(input, req.GenerationConfig.ResponseSchema.Properties))
	case searches(req):
		candidate = g.grounded("http://"+r.Host, input)
	default:
		candidate = textCandidate(fromEvidence(system+user.String(), input))
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"candidates":    []any{candidate},
		"usageMetadata": map[string]any{"promptTokenCount": len(input) / 4, "candidatesTokenCount": 40, "totalTokenCount": len(input)/4 + 40},
		"modelVersion":  m[1],
		"responseId":    strconv.FormatInt(time.Now().UnixNano(), 36),
	})
}

func searches(req geminiRequest) bool {
	for _, t := range req.Tools {
		if t.GoogleSearch != nil {
			return true
		}
	}
	return false
}

func textCandidate(text string) map[string]any {
	return map[string]any{
		"content":      map[string]any{"role": "model", "parts": []any{map[string]any{"text": text}}},
		"finishReason": "STOP",
	}
}

// structured answers a JSON-mode request. Only the query schema is known;
// other schemas get an empty object, which callers must reject as they
// would a model that ignored the schema.
func structured(input string, props map[string]json.RawMessage) string {
	if _, ok := props["query"]; !ok {
		return "{}"
	}
	terms := keyTerms(input, 6)
	b, _ := json.Marshal(map[string]any{"query": strings.Join(terms, " "), "terms": terms})
	return string(b)
}

// keyTerms are up to n distinct words of s worth searching for, in order.
func keyTerms(s string, n int) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z') && !(r >= '0' && r <= '9') && r != '-'
	}) {
		f = strings.Trim(f, "-")
		if len(f) < 3 || stop[f] || seen[f] || strings.IndexFunc(f, func(r rune) bool { return r >= 'a' && r <= 'z' }) < 0 {
			continue
		}
		seen[f] = true
		out = append(out, f)
		if len(out) == n {
			break
		}
	}
	return out
}

// grounded answers as Gemini does with Google Search: one sentence per
// page found, each supported by its page, which the chunk names by a
// redirect link through base titled with the page's domain.
func (g *Gemini) grounded(base, input string) map[string]any {
	index := map[string]int{}
	for i, d := range g.Web.Docs() {
		index[d.URL] = i
	}
	hits := g.Web.Search(input, 3)
	if len(hits) == 0 {
		return textCandidate("I could not find anything about that.")
	}
	var text strings.Builder
	var chunks, supports []any
	for i, h := range hits {
		if i > 0 {
			text.WriteString(" ")
		}
		start := text.Len()
		text.WriteString(h.Sentence)
		chunks = append(chunks, map[string]any{"web": map[string]any{
			"uri":   fmt.Sprintf("%s/grounding-api-redirect/%d-%s", base, index[h.URL], redirectToken(h.URL)),
			"title": bareDomain(h.URL),
		}})
		supports = append(supports, map[string]any{
			// Byte offsets into the UTF-8 text, as Gemini reports them.
			"segment":               map[string]any{"startIndex": start, "endIndex": text.Len(), "text": h.Sentence},
			"groundingChunkIndices": []int{i},
		})
	}
	c := textCandidate(text.String())
	c["groundingMetadata"] = map[string]any{
		"webSearchQueries":  []string{strings.Join(keyTerms(input, 6), " ")},
		"groundingChunks":   chunks,
		"groundingSupports": supports,
	}
	return c
}

// redirectToken is an opaque-looking tail for a redirect link, as the
// real ones are (the stand-in finds the page by the index before it).
func redirectToken(u string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(u))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)) + "AUZIYQ"
}

// bareDomain is u's host without "www.": the title Gemini gives chunks.
func bareDomain(u string) string {
	pu, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(pu.Hostname(), "www.")
}

// sourceBlock matches a source as grounding delimits it in prompts: the
// title (— domain) line, the URL line, then the text.
var sourceBlock = regexp.MustCompile(`(?s)<<<BEGIN \S+ SOURCE \[(\d+)\]>>>\n(.*?)\n<<<END \S+>>>`)

// fromEvidence answers from the delimited sources in prompt, citing them,
// or says there is none; question is what the sentences are chosen for.
func fromEvidence(prompt, question string) string {
	blocks := sourceBlock.FindAllStringSubmatch(prompt, -1)
	if len(blocks) == 0 {
		return "I have no sources for that; please share more detail."
	}
	var parts []string
	for _, b := range blocks[:min(len(blocks), 2)] {
		lines := strings.SplitN(b[2], "\n", 3)
		if len(lines) < 3 {
			continue
		}
		s := BestSentence(lines[2], question)
		if s == "" {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s [%s]", strings.TrimSuffix(s, "."), b[1])+".")
	}
	if len(parts) == 0 {
		return "The sources do not say."
	}
	return strings.Join(parts, " ")
}

func writeGeminiError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": msg, "status": code}})
}

// GeminiErrorBody is Gemini's error format for a faultinject.Injector:
// google.rpc.Status JSON, with a RetryInfo detail on 429s.
func GeminiErrorBody(status int, retryAfter time.Duration) (string, []byte) {
	st, msg := "INTERNAL", "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting"
	switch status {
	case http.StatusTooManyRequests:
		st, msg = "RESOURCE_EXHAUSTED", "You exceeded your current quota, please check your plan and billing details."
	case http.StatusServiceUnavailable:
		st, msg = "UNAVAILABLE", "The model is overloaded. Please try again later."
	case http.StatusBadGateway:
		st, msg = "UNAVAILABLE", "Bad Gateway"
	}
	e := map[string]any{"code": status, "message": msg, "status": st}
	if status == http.StatusTooManyRequests {
		e["details"] = []any{map[string]any{
			"@type":      "type.googleapis.com/google.rpc.RetryInfo",
			"retryDelay": fmt.Sprintf("%ds", int(retryAfter/time.Second)),
		}}
	}
	b, _ := json.Marshal(map[string]any{"error": e})
	return "application/json; charset=UTF-8", b
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
