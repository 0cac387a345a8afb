package grounding

import "testing"

func TestOnePerSource(t *testing.T) {
	in := []Citation{
		{URL: "https://a.example/1", StartIndex: 0, EndIndex: 10, ConfidenceScore: 0.4},
		{URL: "https://b.example/2", StartIndex: 11, EndIndex: 20, ConfidenceScore: 0.9},
		{URL: "https://a.example/1", StartIndex: 21, EndIndex: 30, ConfidenceScore: 0.7},
		{URL: "https://a.example/1", StartIndex: 31, EndIndex: 40, ConfidenceScore: 0.7},
	}
	got := onePerSource(in)
	if len(got) != 2 || got[0].URL != "https://a.example/1" || got[0].StartIndex != 21 || got[1].URL != "https://b.example/2" {
		t.Errorf("onePerSource() = %+v, want a.example's strongest span (21) then b.example", got)
	}
}
