package answer

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCite(t *testing.T) {
	tests := []struct {
		name string
		text string
		n    int
		want Citations
	}{
		{"renumbered in order of first use", "B holds [3]. A holds [1]. B again [3].", 3,
			Citations{Text: "B holds [1]. A holds [2]. B again [1].", Cited: []int{2, 0}}},
		{"invented and zero removed with their space", "It panics [7]. It is closed [0].", 3,
			Citations{Text: "It panics. It is closed.", Dropped: 2}},
		{"repeats in a group collapse", "Both [2][2][1] and [1, 2, 2].", 2,
			Citations{Text: "Both [1][2] and [2][1].", Cited: []int{1, 0}, Dropped: 2}},
		{"spaces inside brackets", "See [ 2 ].", 2, Citations{Text: "See [1].", Cited: []int{1}}},
		{"fenced code untouched", "Use it [1]:\n```go\nx := a[2]\ny := b[9]\n```\nDone [9].", 1,
			Citations{Text: "Use it [1]:\n```go\nx := a[2]\ny := b[9]\n```\nDone.", Cited: []int{0}, Dropped: 1}},
		{"unclosed fence is code to the end", "See [1].\n```\na[5]", 1,
			Citations{Text: "See [1].\n```\na[5]", Cited: []int{0}}},
		{"inline code untouched", "Index `s[4]` as shown [1].", 1,
			Citations{Text: "Index `s[4]` as shown [1].", Cited: []int{0}}},
		{"a lone backtick is text", "It's a ` mark [5] here [1].", 1,
			Citations{Text: "It's a ` mark here [1].", Cited: []int{0}, Dropped: 1}},
		{"leading marker", "[4] Only this.", 2, Citations{Text: "Only this.", Dropped: 1}},
		{"no markers", "Nothing cited.", 2, Citations{Text: "Nothing cited."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Cite(tt.text, tt.n)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Cite(%q, %d) (-want +got):\n%s", tt.text, tt.n, diff)
			}
		})
	}
}

// TestCiterMatchesCite: however the answer is cut into streamed pieces,
// what the Citer passes on adds up to Cite's text, and no piece ever
// carries a marker that Cite removes.
func TestCiterMatchesCite(t *testing.T) {
	texts := []string{
		"Sending panics [2][2][7]. Close first [0]: `close(ch)` and [1].",
		"Lead [3].\n```go\nv := m[1]\n```\nThen `a[2]` [1, 4] and [2] done.",
		"  It is [5] nothing [1]  ",
		"No citations at all, only `code[1]` and text.",
		"Trailing marker [1]",
		"Broken [1 and [2] marker [",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, text := range texts {
		want := Cite(text, 3)
		for range 200 {
			c := NewCiter(3)
			var out strings.Builder
			rest := text
			for rest != "" {
				k := 1 + rng.IntN(min(len(rest), 6))
				piece := c.Write(rest[:k])
				if strings.Contains(piece, "[7]") || strings.Contains(piece, "[0]") || strings.Contains(piece, "[5]") {
					t.Fatalf("piece %q of %q carries an invented marker", piece, text)
				}
				out.WriteString(piece)
				rest = rest[k:]
			}
			last, all := c.Finish()
			out.WriteString(last)
			if out.String() != want.Text {
				t.Fatalf("pieces of %q add up to %q, want %q", text, out.String(), want.Text)
			}
			if diff := cmp.Diff(want, all); diff != "" {
				t.Fatalf("Finish(%q) (-want +got):\n%s", text, diff)
			}
		}
	}
}
