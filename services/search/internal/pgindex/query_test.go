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
		in   string
		want []string
	}{
		{"disk", nil},
		{"disk full", []string{"disk:C <-> full:C"}},
		{"ResourceQuota exhausted", []string{"resource <-> quota", "resource:C <-> quota:C", "quota:C <-> exhausted:C"}},
		{"OOMKilled, OOMKilled: oom-killed", []string{"oom <-> killed", "oom:C <-> killed:C", "killed:C <-> oom:C"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, compoundQueries(tt.in)); diff != "" {
			t.Errorf("compoundQueries(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}
