package sentvec

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// reference is testdata/reference.json: what the reference implementation
// (TensorFlow.js, testdata/reference.js) gives each sentence.
type reference struct {
	Source    string `json:"source"`
	Sentences []struct {
		Text   string    `json:"text"`
		IDs    []int32   `json:"ids"`
		Vector []float64 `json:"vector"`
	} `json:"sentences"`
}

var (
	loadOnce   sync.Once
	testModel  *Model
	errLoading error
)

// model loads the embedded model once for all tests of the package.
func model(tb testing.TB) *Model {
	tb.Helper()
	loadOnce.Do(func() { testModel, errLoading = Load() })
	if errLoading != nil {
		tb.Fatalf("Load: %v", errLoading)
	}
	return testModel
}

func readReference(t *testing.T) reference {
	t.Helper()
	raw, err := os.ReadFile("testdata/reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref reference
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Sentences) < 20 {
		t.Fatalf("reference has %d sentences, want at least 20", len(ref.Sentences))
	}
	return ref
}

func cosine(a []float32, b []float64) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * b[i]
		na += float64(a[i]) * float64(a[i])
		nb += b[i] * b[i]
	}
	return dot / math.Sqrt(na*nb)
}

func dot(a, b []float32) float64 {
	var d float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
	}
	return d
}

func TestTokenizerMatchesReference(t *testing.T) {
	m := model(t)
	for _, s := range readReference(t).Sentences {
		if diff := cmp.Diff(s.IDs, m.tok.encode(s.Text)); diff != "" {
			t.Errorf("encode(%q) differs from the reference (-reference +got):\n%s", s.Text, diff)
		}
	}
}

func TestEmbedMatchesReference(t *testing.T) {
	m := model(t)
	ref := readReference(t)
	texts := make([]string, len(ref.Sentences))
	for i, s := range ref.Sentences {
		texts[i] = s.Text
	}
	got := m.Embed(texts)
	if len(got) != len(texts) {
		t.Fatalf("Embed returned %d vectors for %d texts", len(got), len(texts))
	}
	worst := 1.0
	for i, s := range ref.Sentences {
		if len(got[i]) != Dimensions {
			t.Fatalf("vector %d has %d dimensions, want %d", i, len(got[i]), Dimensions)
		}
		c := cosine(got[i], s.Vector)
		worst = min(worst, c)
		if c < 0.99 {
			t.Errorf("cosine(%q) to the reference = %.4f, want ≥ 0.99", s.Text, c)
		}
		if n := math.Sqrt(dot(got[i], got[i])); math.Abs(n-1) > 1e-4 {
			t.Errorf("vector of %q has length %.6f, want 1", s.Text, n)
		}
	}
	t.Logf("lowest cosine to the reference over %d sentences: %.5f", len(texts), worst)
}

// TestEmbedIsPerText checks that a text's vector does not depend on the
// texts embedded with it.
func TestEmbedIsPerText(t *testing.T) {
	m := model(t)
	texts := []string{"A short one.", "A much longer sentence about channels, goroutines and the select statement."}
	both := m.Embed(texts)
	for i, text := range texts {
		alone := m.Embed([]string{text})[0]
		if !slices.Equal(alone, both[i]) {
			t.Errorf("vector of %q alone differs from its vector in a batch", text)
		}
	}
}

func TestRelatedSentencesScoreHigher(t *testing.T) {
	m := model(t)
	tests := []struct {
		query, related, unrelated string
	}{
		{"How do goroutines communicate with each other?",
			"Channels provide a mechanism for concurrently executing functions to communicate by sending and receiving values.",
			"Canberra is the capital city of Australia."},
		{"Can I compare two slices with ==?",
			"Slice, map, and function values are not comparable.",
			"The quick brown fox jumps over the lazy dog."},
		{"When does a deferred call run?",
			"A defer statement invokes a function whose execution is deferred to the moment the surrounding function returns.",
			"The predeclared identifier iota represents successive untyped integer constants."},
		{"Are strings mutable in Go?",
			"Strings are immutable: once created, it is impossible to change the contents of a string.",
			"Slice, map, and function values are not comparable."},
		{"What is the capital of Australia?",
			"Canberra is the capital city of Australia.",
			"Channels provide a mechanism for concurrently executing functions to communicate by sending and receiving values."},
		{"Redis memory usage at 95% on cache-3",
			"The cache server is running out of memory.",
			"The TLS certificate expires in three days."},
	}
	for _, tt := range tests {
		v := m.Embed([]string{tt.query, tt.related, tt.unrelated})
		rel, unrel := dot(v[0], v[1]), dot(v[0], v[2])
		if rel <= unrel {
			t.Errorf("%q: related %.3f ≤ unrelated %.3f", tt.query, rel, unrel)
		}
	}
}

func TestEmbedEdgeCases(t *testing.T) {
	m := model(t)
	if got := m.Embed(nil); len(got) != 0 {
		t.Errorf("Embed(nil) = %d vectors, want 0", len(got))
	}
	v := m.Embed([]string{"", " ", "🚀🚀🚀"})
	for i, vec := range v {
		if n := math.Sqrt(dot(vec, vec)); math.Abs(n-1) > 1e-4 || math.IsNaN(n) {
			t.Errorf("vector %d has length %v, want 1", i, n)
		}
	}
	// Past MaxPieces pieces a text is read no further.
	long := ""
	for range MaxPieces {
		long += "word "
	}
	a := m.Embed([]string{long + "tail about channels", long + "tail about maps"})
	if !slices.Equal(a[0], a[1]) {
		t.Error("texts that differ only after the first 128 pieces got different vectors")
	}
}

func BenchmarkEmbed(b *testing.B) {
	m := model(b)
	// Sentences of the lengths the Go specification's have (10–40 words).
	texts := []string{
		"Channels provide a mechanism for concurrently executing functions to communicate by sending and receiving values of a specified element type.",
		"A \"defer\" statement invokes a function whose execution is deferred to the moment the surrounding function returns, either because the surrounding function executed a return statement, reached the end of its function body, or because the corresponding goroutine is panicking.",
		"Slice, map, and function values are not comparable.",
		"The iteration order over maps is not specified and is not guaranteed to be the same from one iteration to the next.",
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		m.Embed(texts)
	}
	b.ReportMetric(float64(b.N*len(texts))/b.Elapsed().Seconds(), "sentences/s")
}

func BenchmarkLoad(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(); err != nil {
			b.Fatal(err)
		}
	}
}
