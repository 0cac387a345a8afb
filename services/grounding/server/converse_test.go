package server

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/timestamppb"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
)

// TestConverseStickerOverAPI: curated stickers given to Converse reach the
// model's system instruction, and the one the model picks comes back as
// the response's sticker (what the notifier sends), its tag gone from the
// text.
func TestConverseStickerOverAPI(t *testing.T) {
	g, url := newGeminiRecorder(t, "Resized, all green.\n[sticker 2]")
	c, _, _ := runGrounding(t, map[string]string{"GEMINI_API_KEY": "k-123456", "GEMINI_MODEL": "gemini-test", "GOOGLE_GEMINI_BASE_URL": url})
	stickers := []*groundingv1.Sticker{
		{SetName: "ops_pack", Emoji: "🔥", Description: "something is on fire", FileId: "CAAD-fire"},
		{SetName: "ops_pack", Emoji: "👍", Description: "thumbs up, for a done task", FileId: "CAAD-thumbs"},
	}
	resp, err := c.Converse(t.Context(), &groundingv1.ConverseRequest{
		History: []*groundingv1.ChatMsg{{Id: "1", Speaker: "Ana", SendTime: timestamppb.Now(), Parts: []*groundingv1.ChatPart{
			{Part: &groundingv1.ChatPart_Text{Text: "did the pool resize work?"}},
		}}},
		TargetMessageId: "1",
		Stickers:        stickers,
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetText() != "Resized, all green." || resp.GetSticker().GetFileId() != "CAAD-thumbs" || resp.GetSticker().GetEmoji() != "👍" {
		t.Errorf("reply text %q sticker %v; want the text without its tag and the thumbs-up sticker", resp.GetText(), resp.GetSticker())
	}
	systems, _ := g.prompts()
	if len(systems) != 1 || !strings.Contains(systems[0], "[sticker 1] something is on fire 🔥 (set ops_pack)") ||
		!strings.Contains(systems[0], "[sticker 2] thumbs up, for a done task 👍 (set ops_pack)") {
		t.Errorf("system instruction does not list the stickers:\n%v", systems)
	}
}
