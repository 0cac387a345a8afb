package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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
