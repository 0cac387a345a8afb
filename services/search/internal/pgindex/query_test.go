package pgindex

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAnyWordAndTwoWords(t *testing.T) {
	tests := []struct{ in, any, two string }{
		{"disk full", "disk or full", "disk full"},
		{`"disk full" latency -noise`, `"disk full" or latency or noise`, `"disk full" latency or "disk full" noise or latency noise`},
		{"disk OR full and more", "disk or full or more", "disk full or disk more or full more"},
		{"single", "single", "single"},
		{`" " - or`, "", ""},
		{`"unterminated disk`, "unterminated or disk", "unterminated disk"},
	}
	for _, tt := range tests {
		if got := anyWord(tt.in); got != tt.any {
			t.Errorf("anyWord(%q) = %q, want %q", tt.in, got, tt.any)
		}
		if got := twoWords(anyWord(tt.in)); got != tt.two {
			t.Errorf("twoWords(anyWord(%q)) = %q, want %q", tt.in, got, tt.two)
		}
	}
}

func TestTwoWordsPairsTheFirstWords(t *testing.T) {
	got := twoWords(anyWord("core dns errors high servfail answers"))
	want := "core dns or core errors or core high or dns errors or dns high or errors high"
	if got != want {
		t.Errorf("twoWords() = %q, want %q", got, want)
	}
}

func TestCompoundQueries(t *testing.T) {
	tests := []struct {
		in             string
		phrases, pairs []string
		words          string
	}{
		{"disk", nil, nil, ""},
		{"disk full", nil, []string{"disk:C <-> full:C"}, ""},
		{"ResourceQuota exhausted", []string{"resource <-> quota"}, []string{"resource:C <-> quota:C", "quota:C <-> exhausted:C"}, "resource:C | quota:C"},
		{"OOMKilled, OOMKilled: oom-killed", []string{"oom <-> killed"}, []string{"oom:C <-> killed:C", "killed:C <-> oom:C"}, "oom:C | killed:C"},
	}
	for _, tt := range tests {
		phrases, pairs, words := compoundQueries(tt.in)
		if words != tt.words {
			t.Errorf("compoundQueries(%q) words = %q, want %q", tt.in, words, tt.words)
		}
		if diff := cmp.Diff(tt.phrases, phrases); diff != "" {
			t.Errorf("compoundQueries(%q) phrases (-want +got):\n%s", tt.in, diff)
		}
		if diff := cmp.Diff(tt.pairs, pairs); diff != "" {
			t.Errorf("compoundQueries(%q) pairs (-want +got):\n%s", tt.in, diff)
		}
	}
}
