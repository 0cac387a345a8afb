package embedder

import (
	"context"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAnalyze(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"What happens when you send on a closed channel?", []string{"send", "close", "channel"}},
		{"Goroutines and channels", []string{"goroutin", "channel"}},
		{"x := <-ch", []string{"x", ":=", "<-", "ch"}},
		{"int64 and uint8_t", []string{"int64", "uint8_t"}},
		{"Ünïcode WORDS", []string{"ünïcode", "word"}},
		{"~int | ~string", []string{"~", "int", "~", "string"}},
		{"the of and", nil},
	}
	for _, tt := range tests {
		got := Analyze(tt.in)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Analyze(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

func cosine(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestHashingVectors(t *testing.T) {
	h := NewHashing(0)
	if got, want := h.Name(), "local-hash-v1-384"; got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}
	texts := []string{
		"A send on a closed channel proceeds by causing a run-time panic.",
		"What happens when you send on a closed channel?",
		"Bake the sourdough bread for forty minutes.",
		"",
	}
	vs, err := h.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("got %d vectors for %d texts", len(vs), len(texts))
	}
	for i, v := range vs[:3] {
		if len(v) != h.Dimensions() {
			t.Errorf("vector %d has %d dimensions, want %d", i, len(v), h.Dimensions())
		}
		if n := math.Sqrt(cosine(v, v)); math.Abs(n-1) > 1e-5 {
			t.Errorf("vector %d has norm %v, want 1", i, n)
		}
	}
	if n := cosine(vs[3], vs[3]); n != 0 {
		t.Errorf("empty text has norm² %v, want the zero vector", n)
	}
	related, unrelated := cosine(vs[0], vs[1]), cosine(vs[0], vs[2])
	if related < 0.3 || related < 3*unrelated {
		t.Errorf("cos(statement, question) = %.3f, cos(statement, recipe) = %.3f: related texts should be far closer", related, unrelated)
	}
}

func TestHashingDeterministic(t *testing.T) {
	text := "The zero value of a map is nil; a nil map has no keys and cannot be written to."
	a := NewHashing(0).EmbedText(text)
	// A second instance and a batch call must give the same bits: stored
	// vectors are compared with query vectors made much later.
	vs, err := NewHashing(0).Embed(context.Background(), []string{"other text first", text})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, vs[1]); diff != "" {
		t.Errorf("embedding changed between calls (-first +second):\n%s", diff)
	}
}

func TestHashingCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewHashing(64).Embed(ctx, []string{"a"}); err == nil {
		t.Error("Embed with a cancelled context succeeded, want an error")
	}
}

func BenchmarkHashing(b *testing.B) {
	h := NewHashing(0)
	text := "A slice is a descriptor for a contiguous segment of an underlying array and provides access to a numbered sequence of elements from that array. A slice type denotes the set of all slices of arrays of its element type. The number of elements is called the length of the slice and is never negative. The value of an uninitialized slice is nil. The length of a slice s can be discovered by the built-in function len; unlike with arrays it may change during execution."
	for b.Loop() {
		h.EmbedText(text)
	}
}
