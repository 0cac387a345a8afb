package wordvec

import (
	"encoding/binary"
	"math"
	"testing"
)

// TestDefault reads the embedded table: every word it holds has a
// vector, and words of like meaning are closer than unrelated ones.
func TestDefault(t *testing.T) {
	tb := Default()
	if tb.Len() < 30000 || tb.Dimensions() != 100 {
		t.Fatalf("%d words of %d dimensions, want at least 30000 of 100", tb.Len(), tb.Dimensions())
	}
	word := func(w string) Word {
		t.Helper()
		v, ok := tb.Lookup(w)
		if !ok {
			t.Fatalf("no vector for %q", w)
		}
		return v
	}
	if _, ok := tb.Lookup("qwzxv"); ok {
		t.Error("a word GloVe never saw has a vector")
	}
	// The most frequent words come first.
	if the, channel := word("the"), word("channel"); the.Rank() != 0 || channel.Rank() <= the.Rank() {
		t.Errorf("ranks: the %d, channel %d", the.Rank(), channel.Rank())
	}
	// A word of the Go specification beyond the most frequent 30,000.
	word("iota")
	if c := Cosine(word("unique"), word("unique")); math.Abs(c-1) > 1e-6 {
		t.Errorf("a word's cosine with itself is %v, want 1", c)
	}
	for _, p := range [][3]string{
		{"start", "begin", "banana"},
		{"same", "identical", "weather"},
		{"error", "mistake", "guitar"},
	} {
		near, far := Cosine(word(p[0]), word(p[1])), Cosine(word(p[0]), word(p[2]))
		if near <= far+0.15 {
			t.Errorf("cos(%s, %s) = %.2f is not well above cos(%s, %s) = %.2f", p[0], p[1], near, p[0], p[2], far)
		}
	}
	if c := Cosine(Word{}, word("same")); c != 0 {
		t.Errorf("the zero Word's cosine is %v, want 0", c)
	}
}

// TestParse reads a small file and refuses broken ones.
func TestParse(t *testing.T) {
	file := []byte(magic)
	file = binary.LittleEndian.AppendUint32(file, 2)
	file = binary.LittleEndian.AppendUint16(file, 2)
	file = append(file, 1, 'a', 2, 'b', 'c')
	file = append(file, 127, 0, 0xff, 0) // a = (127, 0), bc = (-1, 0)
	tb, err := Parse(file)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := tb.Lookup("a")
	bc, ok := tb.Lookup("bc")
	if !ok || bc.Rank() != 1 {
		t.Fatalf("bc: %v, rank %d", ok, bc.Rank())
	}
	if c := Cosine(a, bc); math.Abs(c+1) > 1e-6 {
		t.Errorf("cos(a, bc) = %v, want -1", c)
	}
	acc := make([]float32, 2)
	bc.AddTo(acc, 2)
	if acc[0] != -2 || acc[1] != 0 {
		t.Errorf("2·bc = %v, want [-2 0]", acc)
	}
	for name, b := range map[string][]byte{
		"empty":     nil,
		"magic":     append([]byte("XXXX"), file[4:]...),
		"truncated": file[:len(file)-1],
		"words cut": file[:12],
	} {
		if _, err := Parse(b); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

// TestMean: a text's mean vector is of unit length, its rare words
// weigh more than its frequent ones, and a text without known words has
// none.
func TestMean(t *testing.T) {
	tb := Default()
	acc := make([]float32, tb.Dimensions())
	if tb.Mean([]string{"qwzxv"}, 3e-4, acc) {
		t.Error("a text of unknown words has a mean")
	}
	if !tb.Mean([]string{"the", "goroutine", "channel"}, 3e-4, acc) {
		t.Fatal("no mean")
	}
	var norm float64
	for _, x := range acc {
		norm += float64(x) * float64(x)
	}
	if math.Abs(norm-1) > 1e-5 {
		t.Errorf("squared norm %v, want 1", norm)
	}
	cos := func(w string) float64 {
		v, _ := tb.Lookup(w)
		u := make([]float32, tb.Dimensions())
		v.AddTo(u, 1)
		var s float64
		for i := range u {
			s += float64(u[i]) * float64(acc[i])
		}
		return s
	}
	if the, channel := cos("the"), cos("channel"); the >= channel {
		t.Errorf("the mean is closer to 'the' (%.2f) than to 'channel' (%.2f)", the, channel)
	}
}

// BenchmarkParse measures the start-up cost of the embedded table: the
// first call to Default reads it.
func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(vectorsFile); err != nil {
			b.Fatal(err)
		}
	}
}
