package server_test

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/testing/protocmp"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/services/notifier/server"
	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

// stickerGrounding is a grounding stand-in whose agent picks, from the
// request's stickers, the one whose emoji the target message contains, and
// answers with the text after "say:" in it (none without).
type stickerGrounding struct {
	groundingv1.UnimplementedGroundingServiceServer
	mu   sync.Mutex
	reqs []*groundingv1.ConverseRequest
}

func (g *stickerGrounding) Converse(_ context.Context, req *groundingv1.ConverseRequest) (*groundingv1.ConverseResponse, error) {
	g.mu.Lock()
	g.reqs = append(g.reqs, req)
	g.mu.Unlock()
	var target string
	for _, m := range req.GetHistory() {
		if m.GetId() == req.GetTargetMessageId() {
			for _, p := range m.GetParts() {
				target += p.GetText()
			}
		}
	}
	resp := &groundingv1.ConverseResponse{ReplyToMessageId: req.GetTargetMessageId()}
	if _, say, ok := strings.Cut(target, "say:"); ok {
		resp.Text = strings.TrimSpace(say)
	}
	for _, s := range req.GetStickers() {
		if strings.Contains(target, s.GetEmoji()) {
			resp.Sticker = s
			break
		}
	}
	return resp, nil
}

func (g *stickerGrounding) requests() []*groundingv1.ConverseRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]*groundingv1.ConverseRequest(nil), g.reqs...)
}

// TestChatStickers goes through the running service and the Telegram
// stand-in: the curated stickers of TELEGRAM_STICKERS go with every
// Converse request; a reply with text and a sticker is sent as the text,
// then the sticker (sendSticker), both replying to the message asked
// about; a sticker-only reply sends no empty text; the sticker the agent
// sent is in the history the model sees next.
func TestChatStickers(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &stickerGrounding{}
	srv := grpc.NewServer()
	groundingv1.RegisterGroundingServiceServer(srv, g)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	tg := telegramtest.NewServer(t.Cleanup)
	const chatID = 84212
	n := runNotifier(t, map[string]string{
		"DATA_DIR":                        t.TempDir(),
		"NOTIFIER_LISTEN_ADDR":            "127.0.0.1:0",
		"NOTIFIER_ADMIN_ADDR":             "127.0.0.1:0",
		"GROUNDING_ADDR":                  lis.Addr().String(),
		"TELEGRAM_BOT_TOKEN":              secToken,
		"TELEGRAM_WEBHOOK_SECRET":         secSecret,
		"TELEGRAM_API_URL":                tg.URL,
		"TELEGRAM_ALLOWED_CHATS":          "84212",
		"TELEGRAM_BOT_USERNAME":           "groundcrew_bot",
		"NOTIFIER_TELEGRAM_RATE_PER_CHAT": "1000",
		"NOTIFIER_TELEGRAM_RATE_OVERALL":  "1000",
		"GRACE_PERIOD":                    "2s",
		"TELEGRAM_STICKERS":               "CAACAgIAAxkBAAEOk1|👍|groundcrew_pack|thumbs up: done, agreed ; CAACAgIAAxkBAAEOk2|🔥||something is on fire",
	})
	e := secEnv{n: n, c: dial(t, n.grpcAddr), tg: tg}
	wantStickers := []*groundingv1.Sticker{
		{FileId: "CAACAgIAAxkBAAEOk1", Emoji: "👍", SetName: "groundcrew_pack", Description: "thumbs up: done, agreed"},
		{FileId: "CAACAgIAAxkBAAEOk2", Emoji: "🔥", Description: "something is on fire"},
	}

	steps := []struct {
		name        string
		msgID       int64
		text        string
		wantTexts   []string // sendMessage texts, in order
		wantSticker string   // sendSticker's file id
	}{
		{"text and sticker", 601, "deployed? 👍 say: Yes, it is out.", []string{"Yes, it is out."}, "CAACAgIAAxkBAAEOk1"},
		{"sticker only", 602, "the disk is full 🔥", nil, "CAACAgIAAxkBAAEOk2"},
		{"text only", 603, "and now? say: Now it is quiet.", []string{"Now it is quiet."}, ""},
	}
	var texts, stickers int
	for _, st := range steps {
		if out, err := e.post(t, secSecret, privateText(st.msgID, chatID, st.text)); err != nil || out != "replied" {
			t.Fatalf("%s: update: %q, %v; want replied", st.name, out, err)
		}
		// HandleTelegramUpdate returns once the reply is sent.
		sent, calls := tg.Sent()[texts:], tg.Calls("sendSticker")[stickers:]
		texts, stickers = texts+len(sent), stickers+len(calls)
		var got []string
		for _, m := range sent {
			got = append(got, m.Text)
			if m.ChatID != "84212" || m.ReplyParameters["message_id"] != float64(st.msgID) {
				t.Errorf("%s: %q went to chat %s replying to %v; want chat 84212, a reply to %d", st.name, m.Text, m.ChatID, m.ReplyParameters["message_id"], st.msgID)
			}
		}
		if diff := cmp.Diff(st.wantTexts, got); diff != "" {
			t.Errorf("%s: texts sent (-want +got):\n%s", st.name, diff)
		}
		if st.wantSticker == "" {
			if len(calls) != 0 {
				t.Errorf("%s: stickers sent %+v, want none", st.name, calls)
			}
			continue
		}
		if len(calls) != 1 {
			t.Fatalf("%s: %d sendSticker calls, want 1: %+v", st.name, len(calls), calls)
		}
		c := calls[0]
		var reply map[string]any
		if err := json.Unmarshal([]byte(c.Form["reply_parameters"]), &reply); err != nil {
			t.Errorf("%s: reply_parameters %q: %v", st.name, c.Form["reply_parameters"], err)
		}
		if c.Form["chat_id"] != "84212" || c.Form["sticker"] != st.wantSticker || reply["message_id"] != float64(st.msgID) {
			t.Errorf("%s: sendSticker %v; want sticker %s in chat 84212 replying to %d", st.name, c.Form, st.wantSticker, st.msgID)
		}
		for _, m := range sent {
			if m.MessageID > c.MessageID {
				t.Errorf("%s: the sticker (message %d) went before the text (message %d)", st.name, c.MessageID, m.MessageID)
			}
		}
	}

	reqs := g.requests()
	if len(reqs) != len(steps) {
		t.Fatalf("%d Converse requests, want %d", len(reqs), len(steps))
	}
	for i, r := range reqs {
		if diff := cmp.Diff(wantStickers, r.GetStickers(), protocmp.Transform()); diff != "" {
			t.Errorf("request %d: stickers (-want +got):\n%s", i, diff)
		}
	}
	// The last request's history has the stickers the agent sent, as
	// replies to the messages they answered.
	var agentStickers []string
	for _, m := range reqs[len(reqs)-1].GetHistory() {
		for _, p := range m.GetParts() {
			if m.GetIsAgent() && p.GetMedia().GetMediaKind() == "sticker" {
				agentStickers = append(agentStickers, m.GetReplyToId()+" "+p.GetMedia().GetRenderedText())
			}
		}
	}
	want := []string{"601 [sticker 👍 from set groundcrew_pack]", "602 [sticker 🔥]"}
	if diff := cmp.Diff(want, agentStickers); diff != "" {
		t.Errorf("the agent's stickers in the history (-want +got):\n%s", diff)
	}
}

// TestStickersConfigRefused: a TELEGRAM_STICKERS the notifier cannot use
// stops it at start with an error naming the variable and the entry.
func TestStickersConfigRefused(t *testing.T) {
	for _, tt := range []struct{ spec, want string }{
		{"CAAC1|👍|set|ok;not a file id|🔥", "entry 2"},
		{"CAAC1||set|", "give an emoji or a description"},
		{"CAAC1|👍;CAAC1|🔥", "already entry 1"},
	} {
		_, err := config.Load[server.Config](config.MapLookup(map[string]string{"DATA_DIR": t.TempDir(), "TELEGRAM_STICKERS": tt.spec}))
		if err == nil || !strings.Contains(err.Error(), "TELEGRAM_STICKERS") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("TELEGRAM_STICKERS=%q: %v; want an error naming TELEGRAM_STICKERS and %q", tt.spec, err, tt.want)
		}
	}
}
