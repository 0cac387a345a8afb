package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitFrontMatter(t *testing.T) {
	tests := []struct {
		in       string
		wantFM   map[string]string
		wantBody string
	}{
		{"---\ntitle: A: B\nURL: https://x.example/a\n---\n\n# Body\n", map[string]string{"title": "A: B", "url": "https://x.example/a"}, "# Body\n"},
		{"# No front matter\n", map[string]string{}, "# No front matter\n"},
		{"---\nunterminated\n", map[string]string{}, "---\nunterminated\n"},
	}
	for _, tt := range tests {
		fm, body := SplitFrontMatter(tt.in)
		if diff := cmp.Diff(tt.wantFM, fm); diff != "" || body != tt.wantBody {
			t.Errorf("SplitFrontMatter(%q) = %v, %q; want %v, %q (%s)", tt.in, fm, body, tt.wantFM, tt.wantBody, diff)
		}
	}
}

func TestLoadExampleRunbooks(t *testing.T) {
	docs, err := LoadDir("../../../../examples/runbooks", "https://docs.example/")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) < 8 {
		t.Fatalf("loaded %d runbooks, want at least 8", len(docs))
	}
	for _, d := range docs {
		if d.GetTitle() == "" || d.GetText() == "" || d.GetUrl() == "" {
			t.Errorf("runbook %v lacks a title, text or url", d.GetUrl())
		}
	}
}

// TestSetCollection: -collection puts every document in the collection,
// as metadata the local index filters on; without it, none.
func TestSetCollection(t *testing.T) {
	docs, err := LoadDir("../../../../docs/runbooks", "https://docs.example/")
	if err != nil || len(docs) == 0 {
		t.Fatalf("LoadDir: %d documents, %v", len(docs), err)
	}
	SetCollection(docs, "")
	if docs[0].GetMetadata() != nil {
		t.Errorf("metadata %v without -collection", docs[0].GetMetadata())
	}
	SetCollection(docs, "groundcrew")
	for _, d := range docs {
		if got := d.GetMetadata().GetFields()["collection"].GetStringValue(); got != "groundcrew" {
			t.Errorf("%s: collection %q, want groundcrew", d.GetUrl(), got)
		}
	}
}
