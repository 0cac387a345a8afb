package chat

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRender(t *testing.T) {
	tests := []struct {
		m    Media
		want string
	}{
		{Media{Kind: "photo", Width: 1280, Height: 720}, "[photo 1280×720]"},
		{Media{Kind: "sticker", Emoji: "🔥", SetName: "HotCherry", Animated: true}, "[animated sticker 🔥 from set HotCherry]"},
		{Media{Kind: "sticker", VideoSticker: true}, "[video sticker]"},
		{Media{Kind: "voice", Duration: 7}, "[voice message, 7 s]"},
		{Media{Kind: "audio", Performer: "Daft Punk", Title: "Aerodynamic", Duration: 212}, "[audio: Daft Punk – Aerodynamic, 212 s]"},
		{Media{Kind: "audio", FileName: "call.mp3"}, "[audio: call.mp3]"},
		{Media{Kind: "video", Width: 1920, Height: 1080, Duration: 12}, "[video 1920×1080, 12 s]"},
		{Media{Kind: "video_note", Duration: 9}, "[round video message, 9 s]"},
		{Media{Kind: "animation", Width: 320, Height: 240, Duration: 3}, "[GIF 320×240, 3 s]"},
		{Media{Kind: "document", FileName: "postmortem.pdf", MimeType: "application/pdf", Size: 123456}, "[document postmortem.pdf (application/pdf, 120 KB)]"},
		{Media{Kind: "location", Latitude: 52.52, Longitude: 13.405}, "[location 52.52000, 13.40500]"},
		{Media{Kind: "venue", Title: "Data centre FRA-2", Address: "Hanauer Landstraße 300"}, "[venue: Data centre FRA-2, Hanauer Landstraße 300]"},
		{Media{Kind: "contact", Name: "Ana Silva"}, "[contact: Ana Silva]"},
		{Media{Kind: "poll", Question: "Roll back?"}, "[poll: Roll back?]"},
		{Media{Kind: "dice", Emoji: "🎲", Value: 4}, "[dice 🎲 rolled 4]"},
		{Media{Kind: "giveaway"}, "[giveaway]"},
		{Media{}, "[unsupported media]"},
	}
	for _, tt := range tests {
		if got := Render(tt.m); got != tt.want {
			t.Errorf("Render(%+v) = %q, want %q", tt.m, got, tt.want)
		}
	}
}

func TestShouldAnswer(t *testing.T) {
	s := New(Config{BotID: 42, BotUsername: "@groundcrew_bot"}, nil, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	group := Chat{ID: -1, Type: "supergroup"}
	bot := &User{ID: 42, IsBot: true}
	tests := []struct {
		name string
		in   Incoming
		want bool
	}{
		{"private", Incoming{Chat: Chat{ID: 5, Type: "private"}, Text: "hi"}, true},
		{"group chatter", Incoming{Chat: group, Text: "hi all"}, false},
		{"mention", Incoming{Chat: group, Text: "ping @GroundCrew_Bot", Entities: []Entity{{Type: "mention", Offset: 5, Length: 15}}}, true},
		{"mention after emoji", Incoming{Chat: group, Text: "🔥 @groundcrew_bot", Entities: []Entity{{Type: "mention", Offset: 3, Length: 15}}}, true},
		{"other mention", Incoming{Chat: group, Text: "@someone_else", Entities: []Entity{{Type: "mention", Offset: 0, Length: 13}}}, false},
		{"text mention", Incoming{Chat: group, Text: "Crew?", Entities: []Entity{{Type: "text_mention", Offset: 0, Length: 4, User: bot}}}, true},
		{"command", Incoming{Chat: group, Text: "/status@groundcrew_bot", Entities: []Entity{{Type: "bot_command", Offset: 0, Length: 22}}}, true},
		{"reply to bot", Incoming{Chat: group, Text: "and now?", ReplyTo: &Incoming{From: bot}}, true},
		{"channel", Incoming{Chat: Chat{ID: -2, Type: "channel"}, Text: "@groundcrew_bot"}, false},
		{"bad entity", Incoming{Chat: group, Text: "x", Entities: []Entity{{Type: "mention", Offset: 5, Length: 15}}}, false},
	}
	for _, tt := range tests {
		if got := s.shouldAnswer(&tt.in); got != tt.want {
			t.Errorf("%s: shouldAnswer = %v, want %v", tt.name, got, tt.want)
		}
	}
}

type memStore struct {
	msgs    map[int64]Message
	updates map[UpdateKey]string
}

func (m *memStore) UpdateOutcome(_ context.Context, id UpdateKey) (string, bool, error) {
	o, ok := m.updates[id]
	return o, ok, nil
}

func (m *memStore) RecordUpdate(_ context.Context, id UpdateKey, o string, _ time.Time) (bool, error) {
	if _, ok := m.updates[id]; ok {
		return false, nil
	}
	m.updates[id] = o
	return true, nil
}

func (m *memStore) SaveChatMessage(_ context.Context, msg Message) error {
	m.msgs[msg.MessageID] = msg
	return nil
}

func (m *memStore) SaveChatMessageIfAbsent(_ context.Context, msg Message) error {
	if _, ok := m.msgs[msg.MessageID]; !ok {
		m.msgs[msg.MessageID] = msg
	}
	return nil
}

func (m *memStore) ChatHistory(context.Context, int64, int) ([]Message, error) {
	var out []Message
	for _, msg := range m.msgs {
		out = append(out, msg)
	}
	return out, nil
}

type failingConverser struct{}

func (failingConverser) Converse(context.Context, ConverseRequest) (string, error) {
	return "", context.DeadlineExceeded
}

func TestFailedReplyIsRetried(t *testing.T) {
	st := &memStore{msgs: map[int64]Message{}, updates: map[UpdateKey]string{}}
	s := New(Config{BotID: 42, AllowedChats: []int64{5}}, st, failingConverser{}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	u := Update{ID: 9, Message: &Incoming{MessageID: 1, Chat: Chat{ID: 5, Type: "private"}, Text: "hi"}}
	if _, err := s.Handle(context.Background(), u); err == nil {
		t.Fatal("no error when the reply could not be written")
	}
	if _, ok := st.updates[UpdateKey{BotID: 42, ChatID: 5, UpdateID: 9}]; ok {
		t.Error("a failed update was recorded as handled; Telegram's retry would be dropped")
	}
	if _, err := s.Handle(context.Background(), Update{ID: 0}); err == nil {
		t.Error("update_id 0 accepted")
	}
}

type echoConverser struct{ calls int }

func (c *echoConverser) Converse(context.Context, ConverseRequest) (string, error) {
	c.calls++
	return "an answer", nil
}

type recordingReplier struct{ replies []string }

func (r *recordingReplier) Reply(_ context.Context, chatID, _ int64, text string) (int64, error) {
	r.replies = append(r.replies, fmt.Sprintf("%d: %s", chatID, text))
	return int64(1000 + len(r.replies)), nil
}

type countingRefusals map[string]int

func (c countingRefusals) Refuse(reason string) { c[reason]++ }

func privateMessage(updateID, chatID, messageID int64) Update {
	return Update{ID: updateID, Message: &Incoming{MessageID: messageID, From: &User{ID: chatID, FirstName: "Ana"}, Chat: Chat{ID: chatID, Type: "private"}, Text: "hi"}}
}

// TestAllowedChatsAndBudget: the agent answers only in allowed chats and
// within each chat's budget; refusals are counted, and a spent budget is
// said once, not on every message.
func TestAllowedChatsAndBudget(t *testing.T) {
	st := &memStore{msgs: map[int64]Message{}, updates: map[UpdateKey]string{}}
	conv, rep, refusals := &echoConverser{}, &recordingReplier{}, countingRefusals{}
	s := New(Config{BotID: 42, AllowedChats: []int64{5}, ChatRate: Rate{N: 2, Per: time.Hour}, Refusals: refusals},
		st, conv, rep, slog.New(slog.NewTextHandler(io.Discard, nil)))
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }

	steps := []struct {
		u    Update
		want string
	}{
		{privateMessage(1, 777, 7771), Refused}, // not an allowed chat
		{privateMessage(2, 5, 1), Replied},
		{privateMessage(3, 5, 2), Replied},
		{privateMessage(4, 5, 3), Refused}, // budget spent: told once
		{privateMessage(5, 5, 4), Refused}, // and not again
	}
	for _, st := range steps {
		got, err := s.Handle(context.Background(), st.u)
		if err != nil || got != st.want {
			t.Fatalf("update %d: %q, %v; want %q", st.u.ID, got, err, st.want)
		}
	}
	wantReplies := []string{"5: an answer", "5: an answer", "5: " + textRateLimited}
	if diff := cmp.Diff(wantReplies, rep.replies); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}
	if conv.calls != 2 {
		t.Errorf("model asked %d times, want 2", conv.calls)
	}
	if _, ok := st.msgs[7771]; ok {
		t.Error("a message from a chat that is not allowed was stored")
	}
	if want := (countingRefusals{ReasonChatNotAllowed: 1, ReasonRateLimited: 2}); !cmp.Equal(want, refusals) {
		t.Errorf("refusals %v, want %v", refusals, want)
	}
	// An hour later the budget is back.
	now = now.Add(time.Hour)
	if got, err := s.Handle(context.Background(), privateMessage(6, 5, 5)); err != nil || got != Replied {
		t.Fatalf("after an hour: %q, %v; want %q", got, err, Replied)
	}
}

// TestUpdatesDeduplicatedPerChat: the same update id in another chat is a
// different update (ids are not trusted), the same in the same chat a
// repeat.
func TestUpdatesDeduplicatedPerChat(t *testing.T) {
	st := &memStore{msgs: map[int64]Message{}, updates: map[UpdateKey]string{}}
	s := New(Config{BotID: 42, AllowedChats: []int64{5, 6}}, st, &echoConverser{}, &recordingReplier{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, tt := range []struct {
		u    Update
		want string
	}{
		{privateMessage(100, 5, 1), Replied},
		{privateMessage(100, 5, 1), Duplicate},
		{privateMessage(100, 6, 1), Replied},
		{privateMessage(99, 5, 2), Replied}, // a lower id is not taken for old
	} {
		if got, err := s.Handle(context.Background(), tt.u); err != nil || got != tt.want {
			t.Errorf("update %d in chat %d: %q, %v; want %q", tt.u.ID, tt.u.Message.Chat.ID, got, err, tt.want)
		}
	}
}

func TestParseRate(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Rate
		ok   bool
	}{
		{"20/h", Rate{20, time.Hour}, true}, {" 5 / m ", Rate{5, time.Minute}, true}, {"100/d", Rate{100, 24 * time.Hour}, true},
		{"off", Rate{}, true}, {"", Rate{}, true},
		{"0/h", Rate{}, false}, {"20", Rate{}, false}, {"20/w", Rate{}, false}, {"x/h", Rate{}, false},
	} {
		got, err := ParseRate(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

type callbackFunc func(Callback) (string, error)

func (f callbackFunc) HandleCallback(_ context.Context, c Callback) (string, error) { return f(c) }

func TestCallbackChain(t *testing.T) {
	var asked []string
	h := func(name, prefix, outcome string) CallbackHandler {
		return callbackFunc(func(c Callback) (string, error) {
			asked = append(asked, name)
			if len(c.Data) >= len(prefix) && c.Data[:len(prefix)] == prefix {
				return outcome, nil
			}
			return Ignored, nil
		})
	}
	chain := CallbackChain{h("approvals", "approval:", Decided), h("groups", "group:", "acked")}
	for _, tt := range []struct {
		data, want string
		asked      []string
	}{
		{"approval:x:approve", Decided, []string{"approvals"}},
		{"group:abc", "acked", []string{"approvals", "groups"}},
		{"other", Ignored, []string{"approvals", "groups"}},
	} {
		asked = nil
		got, err := chain.HandleCallback(context.Background(), Callback{Data: tt.data})
		if err != nil || got != tt.want || !cmp.Equal(asked, tt.asked) {
			t.Errorf("%q: %q, %v, asked %v; want %q, asked %v", tt.data, got, err, asked, tt.want, tt.asked)
		}
	}
}
