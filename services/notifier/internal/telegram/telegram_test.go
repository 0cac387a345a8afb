package telegram

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/time/rate"

	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/outbound"
	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

const token = "123456:TEST-token"

func newClient(t *testing.T, srv *telegramtest.Server, perChat rate.Limit) *Client {
	t.Helper()
	hc := &http.Client{Timeout: 5 * time.Second}
	t.Cleanup(hc.CloseIdleConnections)
	c, err := New(token, Options{APIURL: srv.URL, SkipGetMe: true, HTTPClient: hc, PerChat: perChat, Overall: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSendWireFormat(t *testing.T) {
	srv := telegramtest.NewServer(t.Cleanup)
	c := newClient(t, srv, 1000)
	id, err := c.Send(context.Background(), Message{ChatID: "-100123", Text: `disk full\!`, ParseMode: "MarkdownV2", ReplyTo: 7})
	if err != nil {
		t.Fatal(err)
	}
	got := srv.Sent()
	want := []telegramtest.Sent{{
		Token: token, ChatID: "-100123", Text: `disk full\!`, ParseMode: "MarkdownV2",
		LinkPreviewOptions: map[string]any{"is_disabled": true},
		ReplyParameters:    map[string]any{"message_id": 7.0, "allow_sending_without_reply": true},
		MessageID:          id,
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sendMessage as received (-want +got):\n%s", diff)
	}
}

func TestGetMeChecksToken(t *testing.T) {
	srv := telegramtest.NewServer(t.Cleanup)
	hc := &http.Client{Timeout: 5 * time.Second}
	t.Cleanup(hc.CloseIdleConnections)
	if _, err := New(token, Options{APIURL: srv.URL, HTTPClient: hc}); err != nil {
		t.Fatalf("getMe against the fake server: %v", err)
	}
}

func TestNetworkError(t *testing.T) {
	srv := telegramtest.NewServer(t.Cleanup)
	c := newClient(t, srv, 1000)
	srv.Close()
	_, err := c.Send(context.Background(), Message{ChatID: "1", Text: "x"})
	e, ok := errors.AsType[*Error](err)
	if !ok || e.Code() != "network" || e.Permanent() {
		t.Fatalf("err = %v, want a transient network *Error", err)
	}
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestDelivererFallsBackToPlainText(t *testing.T) {
	srv := telegramtest.NewServer(t.Cleanup)
	srv.Handle(func(m telegramtest.Sent) telegramtest.Reply {
		if m.ParseMode != "" {
			return telegramtest.CantParseEntities()
		}
		return telegramtest.Reply{}
	})
	d := &Deliverer{Client: newClient(t, srv, 1000), Router: Router{Default: "-1001"}, Logger: discard()}
	a := &alert.Alert{ID: "a1", Message: &alert.Message{Text: `v2\.1`, Plain: "v2.1", ParseMode: "MarkdownV2"}}
	rec, err := d.Deliver(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	sent := srv.Sent()
	if len(sent) != 2 || sent[1].Text != "v2.1" || sent[1].ParseMode != "" {
		t.Fatalf("sent %+v; want the MarkdownV2 try then plain text", sent)
	}
	if rec.Destination != "-1001" || len(rec.MessageIDs) != 1 {
		t.Errorf("receipt %+v", rec)
	}
}

func TestDelivererRoutes(t *testing.T) {
	srv := telegramtest.NewServer(t.Cleanup)
	routes, err := ParseRoutes("severity=critical:-100123,team=db&env=prod:-100456")
	if err != nil {
		t.Fatal(err)
	}
	d := &Deliverer{Client: newClient(t, srv, 1000), Router: Router{Routes: routes}, Logger: discard()}
	msg := &alert.Message{Text: "x", Plain: "x", ParseMode: "MarkdownV2"}
	rec, err := d.Deliver(context.Background(), &alert.Alert{ID: "a", Labels: map[string]string{"severity": "critical"}, Message: msg})
	if err != nil || rec.Destination != "-100123" {
		t.Errorf("critical alert went to %q (%v)", rec.Destination, err)
	}
	_, err = d.Deliver(context.Background(), &alert.Alert{ID: "b", Labels: map[string]string{"team": "db"}, Message: msg})
	if e, ok := errors.AsType[*Error](err); !ok || !e.Permanent() {
		t.Errorf("unrouted alert without default: err = %v, want a permanent error", err)
	}
}

func TestParseRoutes(t *testing.T) {
	tests := []struct {
		spec    string
		want    []Route
		wantErr string
	}{
		{spec: "", want: nil},
		{
			spec: " severity=critical:-100123 , team=db&env=prod:@db_alerts,instance=db-1:9100:-42",
			want: []Route{
				{Match: map[string]string{"severity": "critical"}, ChatID: "-100123"},
				{Match: map[string]string{"team": "db", "env": "prod"}, ChatID: "@db_alerts"},
				{Match: map[string]string{"instance": "db-1:9100"}, ChatID: "-42"},
			},
		},
		{spec: "severity=critical", wantErr: "chat"},
		{spec: "severity:-1", wantErr: "want label=value"},
		{spec: "severity=critical:chat", wantErr: "not a chat id"},
		{spec: "a=b,", wantErr: "route 1"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			got, err := ParseRoutes(tt.spec)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("routes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRouterFirstMatchWins(t *testing.T) {
	r := Router{
		Routes: []Route{
			{Match: map[string]string{"severity": "critical"}, ChatID: "1"},
			{Match: map[string]string{"team": "db"}, ChatID: "2"},
		},
		Default: "9",
	}
	tests := []struct {
		labels map[string]string
		want   string
	}{
		{map[string]string{"severity": "critical", "team": "db"}, "1"},
		{map[string]string{"severity": "warning", "team": "db"}, "2"},
		{map[string]string{"team": "web"}, "9"},
		{nil, "9"},
	}
	for _, tt := range tests {
		if got := r.Route(tt.labels); got != tt.want {
			t.Errorf("Route(%v) = %q, want %q", tt.labels, got, tt.want)
		}
	}
}

func TestPacingPerChat(t *testing.T) {
	srv := telegramtest.NewServer(t.Cleanup)
	// 20 a second per chat with a burst of 3: 3 messages go at once, the
	// next 3 take at least 3/20 s.
	c := newClient(t, srv, 20)
	start := time.Now()
	for range 6 {
		if _, err := c.Send(context.Background(), Message{ChatID: "1", Text: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	if el := time.Since(start); el < 140*time.Millisecond {
		t.Errorf("6 messages to one chat took %v, want ≥ 150ms", el)
	}
	// Another chat has its own budget.
	start = time.Now()
	for range 3 {
		if _, err := c.Send(context.Background(), Message{ChatID: "2", Text: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("a fresh chat waited %v", el)
	}
}

// TestGroupMessageWireFormat: a group reply carries reply_parameters, an
// edit carries the MarkdownV2 text and the new keyboard (an empty one
// removes the buttons), and an edit that changes nothing is no error.
func TestGroupMessageWireFormat(t *testing.T) {
	srv := telegramtest.NewServer(t.Cleanup)
	d := &Deliverer{Client: newClient(t, srv, 1000), Router: Router{Default: "-100123"}, Logger: discard()}
	ctx := t.Context()
	msg := alert.Message{Text: `\[FIRING:2\] X`, Plain: "[FIRING:2] X", ParseMode: "MarkdownV2"}
	ack := []outbound.Button{{Text: "👀 Ack", CallbackData: "ag:g1:ack"}}
	root, err := d.SendGroupMessage(ctx, "-100123", msg, "", ack)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.SendGroupMessage(ctx, "-100123", msg, root, nil); err != nil {
		t.Fatal(err)
	}
	sent := srv.Delivered()
	if len(sent) != 2 || sent[0].ReplyMarkup != `{"inline_keyboard":[[{"text":"👀 Ack","callback_data":"ag:g1:ack"}]]}` {
		t.Fatalf("sent = %+v, want the root with its Ack button", sent)
	}
	if id, _ := sent[1].ReplyParameters["message_id"].(float64); strconv.FormatInt(int64(id), 10) != root || sent[1].ReplyParameters["allow_sending_without_reply"] != true {
		t.Errorf("reply_parameters = %v, want message_id %s and allow_sending_without_reply", sent[1].ReplyParameters, root)
	}
	resolved := alert.Message{Text: `\[RESOLVED\] X`, Plain: "[RESOLVED] X", ParseMode: "MarkdownV2"}
	for range 2 { // the second edit changes nothing: Telegram's 400 is no error
		if err := d.EditGroupMessage(ctx, "-100123", root, resolved, nil); err != nil {
			t.Fatalf("EditGroupMessage: %v", err)
		}
	}
	edits := srv.Calls("editMessageText")
	if len(edits) != 2 {
		t.Fatalf("%d edits, want 2", len(edits))
	}
	if f := edits[0].Form; f["message_id"] != root || f["chat_id"] != "-100123" || f["text"] != resolved.Text || f["parse_mode"] != "MarkdownV2" || f["reply_markup"] != `{"inline_keyboard":[]}` {
		t.Errorf("edit form = %v", f)
	}
}
