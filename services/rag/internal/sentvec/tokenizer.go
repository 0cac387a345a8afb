package sentvec

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// separator is SentencePiece's word boundary mark: a space, and the start
// of the text.
const separator = "\u2581"

// reservedPieces are the vocabulary's first entries (unknown, <s>, </s>,
// three extra ids), never produced by the segmentation.
const reservedPieces = 6

// pieceInfo is a vocabulary entry as the segmentation uses it.
type pieceInfo struct {
	score float64
	id    int32
}

// tokenizer segments text into the model's SentencePiece vocabulary the
// way the reference (the TensorFlow.js Universal Sentence Encoder's
// tokenizer) does: the most probable segmentation by the pieces' scores,
// a character no piece covers becomes the unknown id 0, and a run of
// unknowns is kept as one.
type tokenizer struct {
	pieces map[string]pieceInfo
	// utf16Len is each piece's length in UTF-16 code units: the reference
	// steps back over a chosen piece by its JavaScript string length.
	utf16Len []int
	maxRunes int
}

func newTokenizer(vocab []string, scores []float64) *tokenizer {
	t := &tokenizer{pieces: make(map[string]pieceInfo, len(vocab)), utf16Len: make([]int, len(vocab))}
	for i, p := range vocab {
		t.utf16Len[i] = len(utf16.Encode([]rune(p)))
		if i < reservedPieces {
			continue
		}
		t.pieces[p] = pieceInfo{score: scores[i], id: int32(i)}
		t.maxRunes = max(t.maxRunes, len([]rune(p)))
	}
	return t
}

// candidate is a piece that ends at some position of the text.
type candidate struct {
	start, runes int
	pieceInfo
}

// encode returns the piece ids of text.
func (t *tokenizer) encode(text string) []int32 {
	text = norm.NFKC.String(text)
	if text == "" {
		return nil
	}
	text = separator + strings.ReplaceAll(text, " ", separator)
	symbols := []rune(text)
	n := len(symbols)

	// ends[e] lists the pieces ending at e, by start then length, the
	// order in which the reference visits them.
	ends := make([][]candidate, n+1)
	var buf []byte
	for i := range n {
		found := false
		buf = buf[:0]
		for l := 1; l <= t.maxRunes && i+l <= n; l++ {
			buf = utf8.AppendRune(buf, symbols[i+l-1])
			// The map lookup of string(buf) does not allocate.
			if p, ok := t.pieces[string(buf)]; ok {
				ends[i+l] = append(ends[i+l], candidate{start: i, runes: l, pieceInfo: p})
				found = true
			}
		}
		if !found {
			ends[i+1] = append(ends[i+1], candidate{start: i, runes: 1, pieceInfo: pieceInfo{score: 0, id: 0}})
		}
	}
	best := make([]float64, n+1)
	words := make([]int32, n+1)
	for e := 0; e <= n; e++ {
		for _, c := range ends[e] {
			score := c.score + best[e-c.runes]
			// The reference treats a best score of exactly 0 as "none
			// yet"; kept so that ties resolve as they do there.
			if best[e] == 0 || score >= best[e] {
				best[e] = score
				words[e] = c.id
			}
		}
	}
	var reversed []int32
	for i := n; i > 0; i -= t.utf16Len[words[i]] {
		reversed = append(reversed, words[i])
	}
	ids := make([]int32, 0, len(reversed))
	prevUnknown := false
	for _, id := range reversed {
		if !(prevUnknown && id == 0) {
			ids = append(ids, id)
		}
		prevUnknown = id == 0
	}
	for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
		ids[i], ids[j] = ids[j], ids[i]
	}
	return ids
}
