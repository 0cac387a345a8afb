package pgindex

import "testing"

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
