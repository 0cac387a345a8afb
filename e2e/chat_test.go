package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/e2e/providerfake"
	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

// TestChatAgentCitesOnlyItsSources asks the Gemini chat agent a question
// in a private chat, as Telegram delivers it, with the team's runbooks
// indexed: the reply is grounded on the runbooks the search service finds
// and lists them; with a Gemini that invents citation markers, no marker
// without its source reaches the chat.
func TestChatAgentCitesOnlyItsSources(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole stack")
	}
	web := loadWeb(t)
	for _, inventing := range []bool{false, true} {
		t.Run(map[bool]string{false: "gemini", true: "gemini inventing markers"}[inventing], func(t *testing.T) {
			var gemini http.Handler = &providerfake.Gemini{Web: web, APIKey: "gemini-key"}
			if inventing {
				gemini = inventMarkers(gemini)
			}
			g := httptest.NewServer(gemini)
			t.Cleanup(g.Close)
			tg := telegramtest.NewServer(t.Cleanup)
			const secret = "e2e-chat-secret"
			s := startStack(t, map[string]string{
				"GEMINI_API_KEY": "gemini-key", "GEMINI_MODEL": "gemini-test", "GOOGLE_GEMINI_BASE_URL": g.URL,
				"TELEGRAM_BOT_TOKEN": "7100000002:AAE-e2e-chat", "TELEGRAM_WEBHOOK_SECRET": secret, "TELEGRAM_API_URL": tg.URL,
				"TELEGRAM_CHAT_ID": "-1001987654321", "TELEGRAM_ALLOWED_CHATS": "-1001987654321,84211",
				"TELEGRAM_BOT_USERNAME":           "groundcrew_bot",
				"NOTIFIER_TELEGRAM_RATE_PER_CHAT": "1000", "NOTIFIER_TELEGRAM_RATE_OVERALL": "1000",
			}, "")
			if _, err := call(t.Context(), "POST", s.GatewayURL+"/v1/search/documents", map[string]any{"documents": runbookDocs(t)}, nil); err != nil {
				t.Fatal(err)
			}
			update := map[string]any{
				"update_id": 824417101,
				"message": map[string]any{
					"message_id": 91,
					"from":       map[string]any{"id": 84211, "is_bot": false, "first_name": "Ana", "username": "anasilva", "language_code": "en"},
					"chat":       map[string]any{"id": 84211, "first_name": "Ana", "username": "anasilva", "type": "private"},
					"date":       time.Now().Unix(),
					"text":       "The disk is almost full on the database volume, what do I do?",
				},
			}
			body, _ := json.Marshal(update)
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.GatewayURL+"/v1/telegram/webhook", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			answer, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode/100 != 2 {
				t.Fatalf("webhook answered %d %s", resp.StatusCode, answer)
			}
			var reply string
			for _, m := range tg.WaitDelivered(1, 30*time.Second) {
				if m.ChatID == "84211" {
					reply = m.Text
				}
			}
			if reply == "" {
				t.Fatalf("no reply in the private chat among %+v", tg.Delivered())
			}
			t.Logf("reply:\n%s", reply)
			checkChatCitations(t, reply)
			if !strings.Contains(reply, "runbooks.groundcrew.example/") {
				t.Errorf("the reply cites no runbook:\n%s", reply)
			}
		})
	}
}

// TestChatAgentOffline asks the chat agent without a language model
// through the gateway (POST /v1/converse), with the team's runbooks and
// groundcrew's own indexed as make run indexes them, plus a long
// ClickHouse runbook whose overview shares no word with the server log
// line it quotes further down: the pasted log line is answered with that
// runbook's first diagnostic step and mitigation, cited; a disk question
// cites the disk runbook and no groundcrew operational runbook; a
// question no runbook is about says so and what to do, citing nothing.
func TestChatAgentOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole stack")
	}
	docs := runbookCorpusJSON(t, filepath.Join("services", "grounding", "internal", "grounding", "testdata", "runbooks"))
	s := startStack(t, map[string]string{}, "")
	if _, err := call(t.Context(), "POST", s.GatewayURL+"/v1/search/documents", map[string]any{"documents": docs}, nil); err != nil {
		t.Fatalf("indexing the runbooks: %v", err)
	}
	const (
		offlineLabel = "(No language model is configured; this answer is extracted from search results.)\n"
		nothingFound = "I found no runbook or document about that. Ask again naming the system or service, or paste the exact error message or alert."
		groundcrew   = "github.com/groundcrew/groundcrew/blob/main/docs/runbooks/"
	)
	tests := []struct {
		name, message string
		cites         string   // the one runbook URL cited; "" for none
		says          []string // in the reply, in this order
	}{
		{
			name: "a pasted server log line",
			message: "2026.11.26 03:14:52.117921 [ 4127 ] {} <Error> executeQuery: Code: 252. DB::Exception: Too many parts (3012 with average size of 48.21 KiB) " +
				"in table 'events.page_views'. Merges are processing significantly slower than inserts. (TOO_MANY_PARTS) (version 24.8.4.13 (official build))",
			cites: "https://wiki.example.com/ops/clickhouse-too-many-parts",
			says:  []string{"SELECT table, partition, count() FROM system.parts", "Make the writers batch"},
		},
		{
			name:    "a disk question",
			message: "Disk almost full on db-1: / at 96% used, what should I do?",
			cites:   "https://runbooks.groundcrew.example/node-disk-full",
		},
		{
			name:    "nothing is about it",
			message: "MongoDB replica set rs0: member mongo-2 has been in RECOVERING state for 10 minutes. Any idea?",
			says:    []string{nothingFound},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var resp struct {
				Text      string
				Citations []struct {
					URL                  string `json:"url"`
					Snippet              string
					StartIndex, EndIndex int
				}
			}
			req := map[string]any{
				"history": []map[string]any{{"id": "1", "speaker": "Ana", "speakerId": "84211", "sendTime": time.Now().UTC().Format(time.RFC3339),
					"parts": []map[string]any{{"text": tt.message}}}},
				"targetMessageId": "1",
			}
			if _, err := call(t.Context(), "POST", s.GatewayURL+"/v1/converse", req, &resp); err != nil {
				t.Fatal(err)
			}
			t.Logf("reply:\n%s", resp.Text)
			if !strings.HasPrefix(resp.Text, offlineLabel) {
				t.Errorf("the reply is not labelled offline:\n%s", resp.Text)
			}
			at := 0
			for _, w := range tt.says {
				i := strings.Index(resp.Text[at:], w)
				if i < 0 {
					t.Fatalf("the reply lacks %q (after offset %d):\n%s", w, at, resp.Text)
				}
				at += i + len(w)
			}
			if tt.cites == "" {
				if len(resp.Citations) != 0 || strings.Contains(resp.Text, "Sources:") {
					t.Errorf("citations %+v; want none:\n%s", resp.Citations, resp.Text)
				}
				return
			}
			checkChatCitations(t, resp.Text)
			runes := []rune(resp.Text)
			for _, c := range resp.Citations {
				if c.URL != tt.cites {
					t.Errorf("cites %s; want only %s", c.URL, tt.cites)
				}
				if c.StartIndex < 0 || c.EndIndex > len(runes) || c.StartIndex >= c.EndIndex || string(runes[c.StartIndex:c.EndIndex]) != c.Snippet {
					t.Errorf("citation [%d,%d) is not its snippet %q", c.StartIndex, c.EndIndex, c.Snippet)
				}
			}
			if len(resp.Citations) == 0 || strings.Contains(resp.Text, groundcrew) {
				t.Errorf("citations %+v; want %s and no groundcrew runbook:\n%s", resp.Citations, tt.cites, resp.Text)
			}
		})
	}
}

var (
	chatMarker = regexp.MustCompile(`\[(\d+)\]`)
	chatSource = regexp.MustCompile(`(?m)^\[(\d+)\] .+ — https?://\S+$`)
)

// checkChatCitations: every [n] in the reply's text names a source listed
// under "Sources:", and every listed source is cited.
func checkChatCitations(t *testing.T, reply string) {
	t.Helper()
	text, list, ok := strings.Cut(reply, "\n\nSources:\n")
	if !ok {
		t.Fatalf("the reply lists no sources:\n%s", reply)
	}
	listed := map[string]bool{}
	for _, m := range chatSource.FindAllStringSubmatch(list, -1) {
		listed[m[1]] = true
	}
	cited := map[string]bool{}
	for _, m := range chatMarker.FindAllStringSubmatch(text, -1) {
		cited[m[1]] = true
		if !listed[m[1]] {
			t.Errorf("marker [%s] has no source in the list:\n%s", m[1], reply)
		}
	}
	for n := range listed {
		if !cited[n] {
			t.Errorf("source [%s] is listed but not cited:\n%s", n, reply)
		}
	}
	if len(cited) == 0 {
		t.Errorf("no citation in the reply:\n%s", reply)
	}
}

// inventMarkers makes a Gemini stand-in add citation markers for sources
// it was not given to every answer it writes from evidence.
func inventMarkers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		var resp map[string]any
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &resp) != nil {
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
			return
		}
		if cands, ok := resp["candidates"].([]any); ok && len(cands) > 0 {
			c := cands[0].(map[string]any)
			if _, grounded := c["groundingMetadata"]; !grounded {
				parts := c["content"].(map[string]any)["parts"].([]any)
				p := parts[0].(map[string]any)
				if text := p["text"].(string); chatMarker.MatchString(text) {
					p["text"] = text + fmt.Sprintf(" Also restart the host [%d][%d].", 7, 42)
				}
			}
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_ = json.NewEncoder(w).Encode(resp)
	})
}
