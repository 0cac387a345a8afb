package grounding

import "testing"

// TestRenderPart: media are described once, however the client rendered
// them; unknown kinds keep their text inside the placeholder.
func TestRenderPart(t *testing.T) {
	tests := []struct{ kind, rendered, want string }{
		{"photo", "[photo 1280×960]", "[photo 1280×960]"},
		{"photo", "[[photo 1280×960]]", "[photo 1280×960]"},
		{"photo", "a cat on a keyboard", "[photo: a cat on a keyboard]"},
		{"photo", "", "[photo]"},
		{"voice", "[voice message, 7 s]", "[voice message, 7 s]"},
		{"animation", "[GIF 480×270, 3 s]", "[GIF 480×270, 3 s]"},
		{"gif", "[GIF: cat typing]", "[GIF: cat typing]"},
		{"gif", "cat typing", "[gif: cat typing]"},
		{"video", "[video 1920×1080, 42 s]", "[video 1920×1080, 42 s]"},
		{"video_note", "[round video message, 5 s]", "[round video message, 5 s]"},
		{"sticker", "[animated sticker 👍 from set ops]", "[animated sticker 👍 from set ops]"},
		{"document", "[document runbook.pdf (application/pdf, 2 MB)]", "[document runbook.pdf (application/pdf, 2 MB)]"},
		{"document", "photographs.zip", "[document: photographs.zip]"},
		{"Photo", "  [photo   1×1] ", "[photo 1×1]"},
		{"hologram", "[hologram of a rack]", "[unsupported media hologram: hologram of a rack]"},
		{"hologram", "", "[unsupported media: hologram]"},
	}
	for _, tt := range tests {
		got := renderPart(ChatPart{Media: &Media{Kind: tt.kind, RenderedText: tt.rendered}})
		if got != tt.want {
			t.Errorf("renderPart(%s, %q) = %q, want %q", tt.kind, tt.rendered, got, tt.want)
		}
	}
}
