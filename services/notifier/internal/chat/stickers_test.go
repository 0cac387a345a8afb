package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseStickers(t *testing.T) {
	tests := []struct {
		name, spec string
		want       []Sticker
		wantErr    string
	}{
		{name: "empty", spec: ""},
		{name: "blank entries", spec: " ; ;"},
		{
			name: "two entries",
			spec: "CAACAgIAAxkBAAE1|👍|groundcrew_pack|thumbs up: done | agreed; CAACAgIAAxkBAAE2|🔥||something is on fire;",
			want: []Sticker{
				{FileID: "CAACAgIAAxkBAAE1", Emoji: "👍", Set: "groundcrew_pack", Description: "thumbs up: done | agreed"},
				{FileID: "CAACAgIAAxkBAAE2", Emoji: "🔥", Description: "something is on fire"},
			},
		},
		{name: "emoji only", spec: "abc_-1|🎉", want: []Sticker{{FileID: "abc_-1", Emoji: "🎉"}}},
		{name: "no file id", spec: "|👍|set|ok", wantErr: "entry 1: no file id"},
		{name: "not a file id", spec: "abc|👍;a b c|🔥", wantErr: `entry 2: file id "a b c" is not a Telegram file id`},
		{name: "nothing to say", spec: "abc||set|", wantErr: "give an emoji or a description"},
		{name: "duplicate", spec: "abc|👍;abc|🔥", wantErr: "entry 2: file id abc is already entry 1"},
		{name: "long description", spec: "abc|👍||" + strings.Repeat("x", 201), wantErr: "description is longer than 200"},
		{name: "long set", spec: "abc|👍|" + strings.Repeat("s", 65), wantErr: "set name is longer than 64"},
		{name: "too many", spec: manyStickers(51), wantErr: "at most 50"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseStickers(tt.spec)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseStickers: %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("stickers (-want +got):\n%s", diff)
			}
		})
	}
}

func manyStickers(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "id%d|👍;", i)
	}
	return b.String()
}

// stickerConverser answers with a fixed reply and records the requests.
type stickerConverser struct {
	reply Reply
	reqs  []ConverseRequest
}

func (c *stickerConverser) Converse(ctx context.Context, req ConverseRequest) (string, error) {
	panic("Converse called; the service must use ConverseReply")
}

func (c *stickerConverser) ConverseReply(_ context.Context, req ConverseRequest) (Reply, error) {
	c.reqs = append(c.reqs, req)
	return c.reply, nil
}

// stickerReplier records texts and stickers in the order sent.
type stickerReplier struct {
	sent       []string
	stickerErr error
	nextID     int64
}

func (r *stickerReplier) Reply(_ context.Context, chatID, replyTo int64, text string) (int64, error) {
	r.sent = append(r.sent, fmt.Sprintf("text %d→%d: %s", chatID, replyTo, text))
	r.nextID++
	return r.nextID, nil
}

func (r *stickerReplier) SendSticker(_ context.Context, chatID, replyTo int64, fileID string) (int64, error) {
	if r.stickerErr != nil {
		return 0, r.stickerErr
	}
	r.sent = append(r.sent, fmt.Sprintf("sticker %d→%d: %s", chatID, replyTo, fileID))
	r.nextID++
	return r.nextID, nil
}

// TestStickers: the curated stickers go with every request; a sticker the
// reply chooses is sent after the text, replying to the same message, and
// kept in the history; an empty text is not sent; a sticker that was not
// offered is not sent.
func TestStickers(t *testing.T) {
	curated := []Sticker{
		{FileID: "ok_1", Emoji: "👍", Set: "crew", Description: "done"},
		{FileID: "fire_2", Emoji: "🔥", Description: "on fire"},
	}
	tests := []struct {
		name       string
		reply      Reply
		stickerErr error
		wantSent   []string
		wantOut    string
		wantErr    bool
		wantOwn    []Part // the agent's messages kept, in the order sent
	}{
		{
			name:     "text and sticker",
			reply:    Reply{Text: "Rolled back.", Sticker: &Sticker{FileID: "ok_1"}},
			wantSent: []string{"text 5→1: Rolled back.", "sticker 5→1: ok_1"},
			wantOut:  Replied,
			wantOwn:  []Part{{Text: "Rolled back."}, {MediaKind: "sticker", Text: "[sticker 👍 from set crew]"}},
		},
		{
			name:     "sticker alone",
			reply:    Reply{Text: "  ", Sticker: &Sticker{FileID: "fire_2"}},
			wantSent: []string{"sticker 5→1: fire_2"},
			wantOut:  Replied,
			wantOwn:  []Part{{MediaKind: "sticker", Text: "[sticker 🔥]"}},
		},
		{
			name:     "sticker alone after a task block",
			reply:    Reply{Text: "```task\nkind: nonsense\n```", Sticker: &Sticker{FileID: "fire_2"}},
			wantSent: []string{"sticker 5→1: fire_2"},
			wantOut:  Replied,
			wantOwn:  []Part{{MediaKind: "sticker", Text: "[sticker 🔥]"}},
		},
		{
			name:     "sticker not offered",
			reply:    Reply{Text: "Hi.", Sticker: &Sticker{FileID: "elsewhere"}},
			wantSent: []string{"text 5→1: Hi."},
			wantOut:  Replied,
			wantOwn:  []Part{{Text: "Hi."}},
		},
		{
			name:    "only a sticker not offered",
			reply:   Reply{Sticker: &Sticker{FileID: "elsewhere"}},
			wantOut: Stored,
		},
		{
			name:       "sticker fails after the text",
			reply:      Reply{Text: "Hi.", Sticker: &Sticker{FileID: "ok_1"}},
			stickerErr: errors.New("telegram: 400 Bad Request: wrong file identifier"),
			wantSent:   []string{"text 5→1: Hi."},
			wantOut:    Replied,
			wantOwn:    []Part{{Text: "Hi."}},
		},
		{
			name:       "sticker alone fails",
			reply:      Reply{Sticker: &Sticker{FileID: "ok_1"}},
			stickerErr: errors.New("telegram: request timed out"),
			wantErr:    true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &memStore{msgs: map[int64]Message{}, updates: map[UpdateKey]string{}}
			conv := &stickerConverser{reply: tt.reply}
			rep := &stickerReplier{stickerErr: tt.stickerErr, nextID: 1000}
			s := New(Config{BotID: 42, AllowedChats: []int64{5}, Stickers: curated}, st, conv, rep, slog.New(slog.NewTextHandler(io.Discard, nil)))
			s.now = func() time.Time { return time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC) }

			got, err := s.Handle(context.Background(), privateMessage(1, 5, 1))
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Handle = %q, want an error", got)
				}
				return
			}
			if err != nil || got != tt.wantOut {
				t.Fatalf("Handle = %q, %v; want %q", got, err, tt.wantOut)
			}
			if len(conv.reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(conv.reqs))
			}
			if diff := cmp.Diff(curated, conv.reqs[0].Stickers); diff != "" {
				t.Errorf("request's stickers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSent, rep.sent); diff != "" {
				t.Errorf("sent (-want +got):\n%s", diff)
			}
			var own []Part
			for id := int64(1001); id <= rep.nextID; id++ {
				m, ok := st.msgs[id]
				if !ok {
					continue
				}
				if !m.IsAgent || m.ReplyToID != 1 {
					t.Errorf("message %d kept as %+v, want the agent's reply to 1", id, m)
				}
				own = append(own, m.Parts...)
			}
			if diff := cmp.Diff(tt.wantOwn, own); diff != "" {
				t.Errorf("the agent's messages in the history (-want +got):\n%s", diff)
			}
		})
	}
}

// textOnlyReplier cannot send stickers (like a delivery without them).
type textOnlyReplier struct{ sent []string }

func (r *textOnlyReplier) Reply(_ context.Context, chatID, replyTo int64, text string) (int64, error) {
	r.sent = append(r.sent, fmt.Sprintf("text %d→%d: %s", chatID, replyTo, text))
	return int64(len(r.sent)), nil
}

// TestStickerOffline: a delivery that cannot send stickers drops the
// sticker, and offline replies (id 0) keep text and sticker apart in the
// history.
func TestStickerOffline(t *testing.T) {
	curated := []Sticker{{FileID: "ok_1", Emoji: "👍"}}
	t.Run("no sticker sender", func(t *testing.T) {
		st := &memStore{msgs: map[int64]Message{}, updates: map[UpdateKey]string{}}
		rep := &textOnlyReplier{}
		s := New(Config{BotID: 42, AllowedChats: []int64{5}, Stickers: curated}, st, &stickerConverser{reply: Reply{Text: "Hi.", Sticker: &Sticker{FileID: "ok_1"}}}, rep, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if got, err := s.Handle(context.Background(), privateMessage(1, 5, 1)); err != nil || got != Replied {
			t.Fatalf("Handle = %q, %v", got, err)
		}
		if want := []string{"text 5→1: Hi."}; !cmp.Equal(want, rep.sent) {
			t.Errorf("sent %q, want %q", rep.sent, want)
		}
	})
	t.Run("offline ids", func(t *testing.T) {
		st := &memStore{msgs: map[int64]Message{}, updates: map[UpdateKey]string{}}
		s := New(Config{BotID: 42, AllowedChats: []int64{5}, Stickers: curated}, st, &stickerConverser{reply: Reply{Text: "Hi.", Sticker: &Sticker{FileID: "ok_1"}}}, offlineReplier{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
		s.now = func() time.Time { return time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC) }
		if got, err := s.Handle(context.Background(), privateMessage(1, 5, 1)); err != nil || got != Replied {
			t.Fatalf("Handle = %q, %v", got, err)
		}
		var kinds []string
		for _, m := range st.msgs {
			if m.IsAgent {
				kinds = append(kinds, m.Parts[0].MediaKind)
			}
		}
		if len(kinds) != 2 {
			t.Errorf("the agent's messages kept: %q; want the text and the sticker", kinds)
		}
	})
}

type offlineReplier struct{}

func (offlineReplier) Reply(context.Context, int64, int64, string) (int64, error) { return 0, nil }
func (offlineReplier) SendSticker(context.Context, int64, int64, string) (int64, error) {
	return 0, nil
}
