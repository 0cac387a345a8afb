// Package telegramtest is a local stand-in for the Telegram Bot API for
// tests (the notifier's own, and the whole-stack tests in e2e/): an HTTP server that speaks the wire format github.com/go-telegram/bot
// uses (multipart form posts to /bot<token>/<method>, JSON answers
// {"ok":…,"result":…} or {"ok":false,"error_code":…,"description":…,
// "parameters":{"retry_after":…,"migrate_to_chat_id":…}}) and records every
// sendMessage, and every other call it answers (answerCallbackQuery,
// editMessageText, sendSticker) as a Call.
// Like Telegram it refuses an editMessageText that changes neither the text
// nor the inline keyboard ("message is not modified"). Handle and HandleCall
// script other answers: every error the Bot API returns, with its exact
// description and parameters (the constructors below, or a recorded body
// with Body).
package telegramtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Sent is one sendMessage call as the server parsed it.
type Sent struct {
	Token              string
	ChatID             string
	Text               string
	ParseMode          string
	LinkPreviewOptions map[string]any // decoded link_preview_options
	ReplyParameters    map[string]any // decoded reply_parameters
	ReplyMarkup        string         // reply_markup as sent (JSON)
	MessageThreadID    string         // message_thread_id as sent ("" for none)
	MessageID          int64          // the id answered; 0 when refused
}

// Reply is how the server answers one call.
type Reply struct {
	// Status is the HTTP status; 0 means 200, or ErrorCode when set.
	Status int
	// ErrorCode makes the answer an error ({"ok":false,…}).
	ErrorCode   int
	Description string
	RetryAfter  int   // parameters.retry_after
	MigrateTo   int64 // parameters.migrate_to_chat_id
	// Body, when set, is the whole answer as recorded from the Bot API
	// (an error body, or a proxy's page); Status, or the body's
	// error_code, is its HTTP status.
	Body []byte
}

// failed reports whether the reply refuses the call.
func (r Reply) failed() bool { return r.ErrorCode != 0 || len(r.Body) > 0 }

// TooManyRequests is Telegram's 429 answer.
func TooManyRequests(retryAfter int) Reply {
	return Reply{ErrorCode: 429, Description: fmt.Sprintf("Too Many Requests: retry after %d", retryAfter), RetryAfter: retryAfter}
}

// CantParseEntities is Telegram's 400 answer to malformed MarkdownV2.
func CantParseEntities() Reply {
	return Reply{ErrorCode: 400, Description: "Bad Request: can't parse entities: Character '.' is reserved and must be escaped with the preceding '\\'"}
}

// BlockedByUser is Telegram's answer to a message for a user who blocked
// the bot.
func BlockedByUser() Reply {
	return Reply{ErrorCode: 403, Description: "Forbidden: bot was blocked by the user"}
}

// KickedFromGroup is Telegram's answer to a message for a group the bot
// was removed from.
func KickedFromGroup() Reply {
	return Reply{ErrorCode: 403, Description: "Forbidden: bot was kicked from the group chat"}
}

// ChatNotFound is Telegram's answer to a message for a chat id it does not
// know (or the bot never joined).
func ChatNotFound() Reply {
	return Reply{ErrorCode: 400, Description: "Bad Request: chat not found"}
}

// MessageToEditNotFound is Telegram's answer to an edit of a deleted
// message.
func MessageToEditNotFound() Reply {
	return Reply{ErrorCode: 400, Description: "Bad Request: message to edit not found"}
}

// MessageCantBeEdited is Telegram's answer to an edit of a message the bot
// may no longer edit.
func MessageCantBeEdited() Reply {
	return Reply{ErrorCode: 400, Description: "Bad Request: message can't be edited"}
}

// UpgradedToSupergroup is Telegram's answer to a message for a group that
// became the supergroup newChatID.
func UpgradedToSupergroup(newChatID int64) Reply {
	return Reply{ErrorCode: 400, Description: "Bad Request: group chat was upgraded to a supergroup chat", MigrateTo: newChatID}
}

// Server is a fake Bot API server. Set Handle before the first call to
// script answers; by default every sendMessage succeeds.
type Server struct {
	*httptest.Server

	mu     sync.Mutex
	sent   []Sent
	nextID int64
	// Handle picks the answer to a parsed sendMessage; nil answers ok.
	handle func(Sent) Reply
	// handleCall picks the answer to any other recorded call; nil answers
	// as Telegram does on success.
	handleCall func(Call) Reply
	notify     chan struct{}
	calls      []Call
	// shown is each message's current content (text, parse mode and
	// reply markup) by "chat/message id", for editMessageText's "message
	// is not modified".
	shown map[string]string
}

// Call is a Bot API call other than sendMessage and getMe: its method and
// form fields.
type Call struct {
	Method string
	Form   map[string]string
	// MessageID is the id of the message a sendSticker made.
	MessageID int64
}

// Calls returns the calls of method received so far.
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// WaitCalls waits until at least n calls of method arrived, or the deadline
// passes, and returns them.
func (s *Server) WaitCalls(method string, n int, timeout time.Duration) []Call {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		if got := s.Calls(method); len(got) >= n {
			return got
		}
		select {
		case <-s.notify:
		case <-deadline.C:
			return s.Calls(method)
		}
	}
}

// NewServer starts a server on a loopback :0 listener and closes it when
// the test ends (via cleanup, e.g. t.Cleanup).
func NewServer(cleanup func(func())) *Server {
	s := &Server{nextID: 100, notify: make(chan struct{}, 1), shown: map[string]string{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	cleanup(s.Close)
	return s
}

// Changed delivers after the server records a call (one signal pending
// at most; WaitCalls and WaitDelivered take them too), for waits such as
// platform/waitfor.Signalled.
func (s *Server) Changed() <-chan struct{} { return s.notify }

// Handler is the Bot API itself, for serving it behind something else
// (a fault injector, say) while Sent and Delivered still see every call
// that gets through.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serve) }

// Handle sets the function that scripts answers.
func (s *Server) Handle(f func(Sent) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handle = f
}

// HandleCall sets the function that scripts answers to the calls other
// than sendMessage and getMe (editMessageText, answerCallbackQuery,
// sendSticker); a call it refuses is still recorded.
func (s *Server) HandleCall(f func(Call) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handleCall = f
}

// Sent returns the sendMessage calls received so far, refused ones
// included.
func (s *Server) Sent() []Sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sent(nil), s.sent...)
}

// Delivered returns the accepted sendMessage calls.
func (s *Server) Delivered() []Sent {
	var out []Sent
	for _, m := range s.Sent() {
		if m.MessageID != 0 {
			out = append(out, m)
		}
	}
	return out
}

// WaitDelivered waits until at least n messages were accepted, or the
// deadline passes, and returns the accepted messages.
func (s *Server) WaitDelivered(n int, timeout time.Duration) []Sent {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		if got := s.Delivered(); len(got) >= n {
			return got
		}
		select {
		case <-s.notify:
		case <-deadline.C:
			return s.Delivered()
		}
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	// Paths are /bot<token>/<method>.
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || r.Method != http.MethodPost {
		writeJSON(w, http.StatusNotFound, map[string]any{"ok": false, "error_code": 404, "description": "Not Found"})
		return
	}
	switch method {
	case "getMe":
		id, _, _ := strings.Cut(token, ":")
		n, _ := strconv.ParseInt(id, 10, 64)
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "result": map[string]any{"id": n, "is_bot": true, "first_name": "Groundcrew", "username": "groundcrew_bot"}})
	case "sendMessage":
		s.sendMessage(w, r, token)
	case "answerCallbackQuery", "editMessageText":
		s.record(w, r, method)
	case "sendSticker":
		s.sendSticker(w, r)
	default:
		writeJSON(w, http.StatusNotFound, map[string]any{"ok": false, "error_code": 404, "description": "Not Found: method not found"})
	}
}

func (s *Server) sendMessage(w http.ResponseWriter, r *http.Request, token string) {
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: " + err.Error()})
		return
	}
	m := Sent{
		Token:           token,
		ChatID:          r.FormValue("chat_id"),
		Text:            r.FormValue("text"),
		ParseMode:       r.FormValue("parse_mode"),
		ReplyMarkup:     r.FormValue("reply_markup"),
		MessageThreadID: r.FormValue("message_thread_id"),
	}
	if m.MessageThreadID == "0" {
		m.MessageThreadID = "" // no thread
	}
	if v := r.FormValue("link_preview_options"); v != "" {
		_ = json.Unmarshal([]byte(v), &m.LinkPreviewOptions)
	}
	if v := r.FormValue("reply_parameters"); v != "" {
		_ = json.Unmarshal([]byte(v), &m.ReplyParameters)
	}
	if m.ChatID == "" || m.Text == "" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: message text is empty"})
		return
	}
	s.mu.Lock()
	var reply Reply
	if s.handle != nil {
		reply = s.handle(m)
	}
	if !reply.failed() {
		s.nextID++
		m.MessageID = s.nextID
		s.shown[m.ChatID+"/"+strconv.FormatInt(m.MessageID, 10)] = content(m.Text, m.ParseMode, m.ReplyMarkup)
	}
	s.sent = append(s.sent, m)
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}

	if reply.failed() {
		writeError(w, reply)
		return
	}
	chatID, _ := strconv.ParseInt(m.ChatID, 10, 64)
	result := map[string]any{
		"message_id": m.MessageID,
		"date":       time.Now().Unix(),
		"chat":       map[string]any{"id": chatID, "type": "supergroup", "title": "Alerts"},
		"from":       map[string]any{"id": 1, "is_bot": true, "first_name": "Groundcrew", "username": "groundcrew_bot"},
		"text":       m.Text,
	}
	writeJSON(w, cmpOr(reply.Status, http.StatusOK), map[string]any{"ok": true, "result": result})
}

// sendSticker keeps a sendSticker call by file id (the form field
// "sticker"; uploads are not supported) and answers with the sticker
// message, as Telegram does.
func (s *Server) sendSticker(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: " + err.Error()})
		return
	}
	c := Call{Method: "sendSticker", Form: map[string]string{}}
	for k := range r.MultipartForm.Value {
		c.Form[k] = r.FormValue(k)
	}
	switch {
	case c.Form["chat_id"] == "":
		writeJSON(w, http.StatusBadRequest, map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: chat_id is empty"})
		return
	case c.Form["sticker"] == "":
		writeJSON(w, http.StatusBadRequest, map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: there is no sticker in the request"})
		return
	}
	s.mu.Lock()
	var reply Reply
	if s.handleCall != nil {
		reply = s.handleCall(c)
	}
	if !reply.failed() {
		s.nextID++
		c.MessageID = s.nextID
	}
	s.calls = append(s.calls, c)
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
	if reply.failed() {
		writeError(w, reply)
		return
	}
	chatID, _ := strconv.ParseInt(c.Form["chat_id"], 10, 64)
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "result": map[string]any{
		"message_id": c.MessageID,
		"date":       time.Now().Unix(),
		"chat":       map[string]any{"id": chatID, "type": "supergroup", "title": "Alerts"},
		"from":       map[string]any{"id": 1, "is_bot": true, "first_name": "Groundcrew", "username": "groundcrew_bot"},
		"sticker": map[string]any{"file_id": c.Form["sticker"], "file_unique_id": "u" + strconv.FormatInt(c.MessageID, 10),
			"type": "regular", "width": 512, "height": 512, "is_animated": false, "is_video": false},
	}})
}

// record keeps a call and answers it as Telegram would on success.
func (s *Server) record(w http.ResponseWriter, r *http.Request, method string) {
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: " + err.Error()})
		return
	}
	c := Call{Method: method, Form: map[string]string{}}
	for k := range r.MultipartForm.Value {
		c.Form[k] = r.FormValue(k)
	}
	s.mu.Lock()
	s.calls = append(s.calls, c)
	var reply Reply
	if s.handleCall != nil {
		reply = s.handleCall(c)
	}
	unchanged := false
	if method == "editMessageText" && !reply.failed() {
		// Telegram refuses an edit that changes nothing, text and inline
		// keyboard alike.
		key := c.Form["chat_id"] + "/" + c.Form["message_id"]
		now := content(c.Form["text"], c.Form["parse_mode"], c.Form["reply_markup"])
		if prev, ok := s.shown[key]; ok && prev == now {
			unchanged = true
		}
		s.shown[key] = now
	}
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
	if reply.failed() {
		writeError(w, reply)
		return
	}
	if unchanged {
		writeJSON(w, http.StatusBadRequest, map[string]any{"ok": false, "error_code": 400,
			"description": "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message"})
		return
	}
	var result any = true
	if method == "editMessageText" {
		chatID, _ := strconv.ParseInt(c.Form["chat_id"], 10, 64)
		id, _ := strconv.ParseInt(c.Form["message_id"], 10, 64)
		result = map[string]any{"message_id": id, "date": time.Now().Unix(), "text": c.Form["text"],
			"chat": map[string]any{"id": chatID, "type": "supergroup", "title": "Alerts"}}
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "result": result})
}

// content is what Telegram compares to find an edit that changes nothing;
// no inline keyboard and an empty one are the same.
func content(text, parseMode, markup string) string {
	if markup == `{"inline_keyboard":[]}` {
		markup = ""
	}
	return text + "\x00" + parseMode + "\x00" + markup
}

// writeError writes a refusal as the Bot API does: the recorded body, or
// {"ok":false,"error_code":…,"description":…,"parameters":{…}}.
func writeError(w http.ResponseWriter, r Reply) {
	if len(r.Body) > 0 {
		status := r.Status
		if status == 0 {
			var b struct {
				ErrorCode int `json:"error_code"`
			}
			_ = json.Unmarshal(r.Body, &b)
			status = cmpOr(b.ErrorCode, http.StatusBadGateway)
		}
		ct := "application/json"
		if !json.Valid(r.Body) {
			ct = "text/html"
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(status)
		_, _ = w.Write(r.Body)
		return
	}
	body := map[string]any{"ok": false, "error_code": r.ErrorCode, "description": r.Description}
	params := map[string]any{}
	if r.RetryAfter > 0 {
		params["retry_after"] = r.RetryAfter
	}
	if r.MigrateTo != 0 {
		params["migrate_to_chat_id"] = r.MigrateTo
	}
	if len(params) > 0 {
		body["parameters"] = params
	}
	writeJSON(w, cmpOr(r.Status, r.ErrorCode), body)
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
