package telegram

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/services/notifier/internal/senderr"
	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

// errorBody reads a Bot API error body from testdata/errors, with the
// token put where a proxy echoes the request path.
func errorBody(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "errors", name))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(strings.ReplaceAll(string(data), "{{TOKEN}}", token))
}

// TestErrorCorpus sends through the client while the Bot API stand-in
// answers each recorded error body, and checks what the adapter makes of
// it and what senderr.Classify, the one classifier, decides. Every file
// of testdata/errors must be in the table.
func TestErrorCorpus(t *testing.T) {
	type errorCase struct {
		file    string
		kind    ErrorKind
		code    string
		public  string
		verdict senderr.Verdict
	}
	tests := []errorCase{
		{"400_message_is_not_modified.json", ErrNotModified, "400",
			"telegram: 400 Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
			senderr.Verdict{Action: senderr.Retry}},
		{"400_message_to_edit_not_found.json", ErrMessageGone, "400", "telegram: 400 Bad Request: message to edit not found", senderr.Verdict{Action: senderr.SendNew}},
		{"400_message_cant_be_edited.json", ErrMessageGone, "400", "telegram: 400 Bad Request: message can't be edited", senderr.Verdict{Action: senderr.SendNew}},
		{"403_bot_blocked_by_user.json", ErrChatGone, "403", "telegram: 403 Forbidden: bot was blocked by the user", senderr.Verdict{Action: senderr.GiveUp}},
		{"403_bot_kicked_from_group.json", ErrChatGone, "403", "telegram: 403 Forbidden: bot was kicked from the group chat", senderr.Verdict{Action: senderr.GiveUp}},
		{"403_bot_kicked_from_supergroup.json", ErrChatGone, "403", "telegram: 403 Forbidden: bot was kicked from the supergroup chat", senderr.Verdict{Action: senderr.GiveUp}},
		{"403_bot_not_member_of_channel.json", ErrChatGone, "403", "telegram: 403 Forbidden: bot is not a member of the channel chat", senderr.Verdict{Action: senderr.GiveUp}},
		{"403_user_deactivated.json", ErrChatGone, "403", "telegram: 403 Forbidden: user is deactivated", senderr.Verdict{Action: senderr.GiveUp}},
		{"403_cant_initiate_conversation.json", ErrChatGone, "403", "telegram: 403 Forbidden: bot can't initiate conversation with a user", senderr.Verdict{Action: senderr.GiveUp}},
		{"400_chat_not_found.json", ErrChatGone, "400", "telegram: 400 Bad Request: chat not found", senderr.Verdict{Action: senderr.GiveUp}},
		{"400_not_enough_rights.json", ErrRefused, "400", "telegram: 400 Bad Request: not enough rights to send text messages to the chat", senderr.Verdict{Action: senderr.GiveUp}},
		{"400_message_text_empty.json", ErrRefused, "400", "telegram: 400 Bad Request: message text is empty", senderr.Verdict{Action: senderr.GiveUp}},
		{"400_cant_parse_entities.json", ErrCantParse, "400",
			"telegram: 400 Bad Request: can't parse entities: Character '.' is reserved and must be escaped with the preceding '\\'",
			senderr.Verdict{Action: senderr.GiveUp}},
		{"400_group_upgraded_to_supergroup.json", ErrMigrated, "400", "telegram: 400 Bad Request: group chat was upgraded to a supergroup chat",
			senderr.Verdict{Action: senderr.Migrate, MigrateTo: "-1001987654321"}},
		{"429_too_many_requests.json", ErrRateLimited, "429", "telegram: 429 Too Many Requests: retry after 35", senderr.Verdict{Action: senderr.RetryAfter, Wait: 35 * time.Second}},
		{"401_unauthorized.json", ErrTransient, "401", "telegram: 401 Unauthorized", senderr.Verdict{Action: senderr.Retry}},
		{"404_not_found.json", ErrTransient, "404", "telegram: 404 Not Found", senderr.Verdict{Action: senderr.Retry}},
		{"409_conflict.json", ErrTransient, "409", "telegram: 409 Conflict: terminated by other getUpdates request; make sure that only one bot instance is running", senderr.Verdict{Action: senderr.Retry}},
		{"500_internal_server_error.json", ErrTransient, "500", "telegram: 500 Internal Server Error", senderr.Verdict{Action: senderr.Retry}},
		{"502_bad_gateway.json", ErrTransient, "502", "telegram: 502 Bad Gateway", senderr.Verdict{Action: senderr.Retry}},
		// A proxy in front of the Bot API answering with its own page (which
		// echoes the path, token included): no JSON to read, retried.
		{"502_proxy_echoes_path.html", ErrTransient, "network", "telegram: request failed", senderr.Verdict{Action: senderr.Retry}},
		{"400_proxy_echoes_path.json", ErrRefused, "400", "telegram: 400 Bad Request: invalid request path /bot[REDACTED]/sendMessage", senderr.Verdict{Action: senderr.GiveUp}},
	}
	files, err := os.ReadDir(filepath.Join("testdata", "errors"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !slices.ContainsFunc(tests, func(tt errorCase) bool { return tt.file == f.Name() }) {
			t.Errorf("testdata/errors/%s is not in the table", f.Name())
		}
	}
	for k := range kindNames {
		if !slices.ContainsFunc(tests, func(tt errorCase) bool { return tt.kind == k }) {
			t.Errorf("no recorded error of kind %s: every kind the adapter returns is classified here", k)
		}
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			srv := telegramtest.NewServer(t.Cleanup)
			body := errorBody(t, tt.file)
			srv.Handle(func(telegramtest.Sent) telegramtest.Reply { return telegramtest.Reply{Body: body} })
			_, err := newClient(t, srv, 1000).Send(context.Background(), Message{ChatID: "-4001", Text: "x"})
			e, ok := errors.AsType[*Error](err)
			if !ok {
				t.Fatalf("err = %v (%T), want *Error", err, err)
			}
			if e.Kind != tt.kind || e.Code() != tt.code || e.Public() != tt.public {
				t.Errorf("kind %s code %s public %q; want %s %s %q", e.Kind, e.Code(), e.Public(), tt.kind, tt.code, tt.public)
			}
			if got := senderr.Classify(err); got != tt.verdict {
				t.Errorf("Classify = %+v, want %+v", got, tt.verdict)
			}
			for _, text := range []string{err.Error(), e.Public(), e.Description} {
				if strings.Contains(text, token) || strings.Contains(text, "TEST-token") {
					t.Errorf("the token leaks: %q", text)
				}
			}
		})
	}
}

// TestEditErrors checks the edits' own handling: an edit that changes
// nothing is no error, and a plain-text outcome edit of a message that is
// gone is sent as a new message.
func TestEditErrors(t *testing.T) {
	ctx := context.Background()
	for _, file := range []string{"400_message_to_edit_not_found.json", "400_message_cant_be_edited.json"} {
		t.Run(file, func(t *testing.T) {
			srv := telegramtest.NewServer(t.Cleanup)
			body := errorBody(t, file)
			srv.HandleCall(func(c telegramtest.Call) telegramtest.Reply {
				if c.Method == "editMessageText" {
					return telegramtest.Reply{Body: body}
				}
				return telegramtest.Reply{}
			})
			c := newClient(t, srv, 1000)
			if err := c.EditText(ctx, -4001, 77, "Approved by Ana"); err != nil {
				t.Fatalf("EditText: %v; want the outcome sent as a new message", err)
			}
			if sent := srv.Delivered(); len(sent) != 1 || sent[0].ChatID != "-4001" || sent[0].Text != "Approved by Ana" {
				t.Errorf("sent %+v; want the outcome as a new message in the chat", sent)
			}
			err := c.Edit(ctx, "-4001", 77, "x", "", nil)
			if got := senderr.Classify(err); got.Action != senderr.SendNew {
				t.Errorf("Edit: Classify(%v) = %+v, want send_new", err, got)
			}
		})
	}
	t.Run("not modified", func(t *testing.T) {
		srv := telegramtest.NewServer(t.Cleanup)
		body := errorBody(t, "400_message_is_not_modified.json")
		srv.HandleCall(func(telegramtest.Call) telegramtest.Reply { return telegramtest.Reply{Body: body} })
		c := newClient(t, srv, 1000)
		if err := c.Edit(ctx, "-4001", 77, "x", "", nil); err != nil {
			t.Errorf("Edit: %v; want no error", err)
		}
		if err := c.EditText(ctx, -4001, 77, "x"); err != nil {
			t.Errorf("EditText: %v; want no error", err)
		}
	})
}
