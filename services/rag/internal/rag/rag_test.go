package rag

import (
	"context"
	"errors"
	"testing"
)

func TestDocumentTitle(t *testing.T) {
	tests := []struct {
		name, title, text, url, want string
	}{
		{"own title", " Runbook ", "first line", "https://x/a.txt", "Runbook"},
		{"first line of text", "", "\n\n  Rotate   credentials\nevery 90 days", "https://x/a.txt", "Rotate credentials"},
		{"markdown heading marks dropped", "", "## Disk full ##\nbody", "https://x/a.md", "Disk full"},
		{"file name", "", "", "https://wiki.example.com/ops/c%C3%A9.txt", "cé.txt"},
		{"host", "", " \n", "https://wiki.example.com/", "wiki.example.com"},
		{"long first line cut", "", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "https://x/", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DocumentTitle(tt.title, tt.text, tt.url); got != tt.want {
				t.Errorf("DocumentTitle(%q, %q, %q) = %q, want %q", tt.title, tt.text, tt.url, got, tt.want)
			}
		})
	}
}

func TestQueryNormalize(t *testing.T) {
	tests := []struct {
		name  string
		q     Query
		want  int // TopK after defaults
		valid bool
	}{
		{"defaults", Query{Text: "x"}, DefaultTopK, true},
		{"blank", Query{Text: " \t"}, 0, false},
		{"too many", Query{Text: "x", TopK: MaxTopK + 1}, 0, false},
		{"negative score", Query{Text: "x", MinScore: -0.1}, 0, false},
		{"unknown mode", Query{Text: "x", Mode: Mode(9)}, 0, false},
		{"max", Query{Text: "x", TopK: MaxTopK, Mode: ModeBM25}, MaxTopK, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.q.Normalize()
			if (err == nil) != tt.valid || (err != nil && !errors.Is(err, ErrInvalidArgument)) {
				t.Fatalf("Normalize(%+v) error %v, want valid %v", tt.q, err, tt.valid)
			}
			if tt.valid && got.TopK != tt.want {
				t.Errorf("TopK = %d, want %d", got.TopK, tt.want)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	l := Limits{MaxCollections: 2, MaxDocuments: 10, MaxChunks: 100}
	tests := []struct {
		name  string
		err   error
		limit string
	}{
		{"collections fit", l.CheckCollections("c", 1), ""},
		{"collections over", l.CheckCollections("c", 2), "collections"},
		{"documents fit", l.CheckDocuments("c", 10), ""},
		{"documents over", l.CheckDocuments("c", 11), "documents"},
		{"chunks over", l.CheckChunks("c", 101), "chunks"},
		{"unlimited", Limits{}.CheckChunks("c", 1<<30), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var qe *QuotaError
			switch {
			case tt.limit == "" && tt.err != nil:
				t.Errorf("error %v, want none", tt.err)
			case tt.limit != "" && (!errors.As(tt.err, &qe) || qe.Limit != tt.limit || !errors.Is(tt.err, ErrQuota) || qe.Public() == ""):
				t.Errorf("error %v, want a %s QuotaError", tt.err, tt.limit)
			}
		})
	}
}

// countingEmbedder returns n vectors whatever it is asked, or err.
type countingEmbedder struct {
	n   int
	err error
}

func (e countingEmbedder) Embed(_ context.Context, _ []string) ([][]float32, error) {
	if e.err != nil {
		return nil, e.err
	}
	return make([][]float32, e.n), nil
}
func (countingEmbedder) Dimensions() int { return 1 }
func (countingEmbedder) Name() string    { return "counting" }

func TestEmbedChunksHoldsTheEmbedderToOneVectorPerText(t *testing.T) {
	boom := errors.New("boom")
	texts := []string{"a", "b", "c"}
	tests := []struct {
		name    string
		e       countingEmbedder
		wantLen int
		wantErr bool
		is      error
	}{
		{"one per text", countingEmbedder{n: 3}, 3, false, nil},
		{"too few", countingEmbedder{n: 2}, 0, true, nil},
		{"too many", countingEmbedder{n: 4}, 0, true, nil},
		{"embedder fails", countingEmbedder{err: boom}, 0, true, boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EmbedChunks(t.Context(), tt.e, texts)
			if (err != nil) != tt.wantErr || len(got) != tt.wantLen {
				t.Fatalf("EmbedChunks() = %d vectors, %v; want %d, error %v", len(got), err, tt.wantLen, tt.wantErr)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("EmbedChunks() error = %v, want it to wrap %v", err, tt.is)
			}
		})
	}
}
