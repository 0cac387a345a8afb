package answer

import (
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	tests := []struct {
		question string
		want     []string // each is in the expansion
	}{
		{"How do I write a hex float?", []string{"hexadecimal", "floating-point"}},
		{"What does the underscore mean in a for loop?", []string{"blank identifier"}},
		{"what happens if I dereference a nil ptr", []string{"pointer indirection", "pointer"}},
		{"Is x += 2 allowed?", []string{"assignment operation"}},
		{"Does && short-circuit?", []string{"conditionally evaluated"}},
		{"Can I leave out the type?", []string{"omitted"}},
		{"How many entries does a map have?", []string{"elements", "length"}},
		{"Are Go strings mutable?", []string{"immutable"}},
		{"Which identifiers are visible from another package?", []string{"exported"}},
		{"Does a switch case fall through?", []string{"fallthrough"}},
		{"How do I write a function with a variable number of arguments?", []string{"variadic"}},
		{"What is the default value of a struct field?", []string{"zero value"}},
		{"What does the any type stand for?", []string{"empty interface"}},
	}
	for _, tt := range tests {
		got := Expand(tt.question)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("Expand(%q) = %q, want it to contain %q", tt.question, got, w)
			}
		}
	}
	for _, q := range []string{"What is a type assertion?", "How does the select statement choose a case?"} {
		if got := Expand(q); got != "" {
			t.Errorf("Expand(%q) = %q; the question already speaks the specification's words", q, got)
		}
	}
}

// TestForeignExpansion: only a phrase using a word the collection never
// uses may change the scope check's verdict.
func TestForeignExpansion(t *testing.T) {
	df := func(t string) int {
		switch t {
		case "mutabl", "tild":
			return 0
		}
		return 3
	}
	tests := []struct{ question, want string }{
		{"Are Go strings mutable?", "immutable"},
		{"What does the tilde mean?", "underlying type ~T"},
		// "capital" and "recover" are words of the collection, in
		// another sense than these questions'.
		{"What is the capital of Australia?", ""},
		{"How do I recover a deleted photo?", ""},
	}
	for _, tt := range tests {
		if got := foreignExpansion(tt.question, df); got != tt.want {
			t.Errorf("foreignExpansion(%q) = %q, want %q", tt.question, got, tt.want)
		}
	}
}

// TestAskInTheProgrammersWords: questions in a programmer's words, not the
// specification's, are answered with the rule the specification states
// in its own (these phrasings are in none of the evaluation sets).
func TestAskInTheProgrammersWords(t *testing.T) {
	st := goSpec(t)
	a := NewAsker(st, Options{})
	tests := []struct {
		question string
		want     string // the answer contains it
	}{
		{"Is a Go string mutable?", "immutable"},
		{"What is the underscore for on the left of an assignment?", "blank identifier"},
		{"What happens if you dereference a nil pointer?", "run-time panic"},
	}
	for _, tt := range tests {
		t.Run(tt.question, func(t *testing.T) {
			r, err := a.Ask(t.Context(), Request{Collection: "gospec", Question: tt.question})
			if err != nil {
				t.Fatal(err)
			}
			if r.IsOutOfScope {
				t.Fatalf("out of scope: %s", r.OutOfScopeReason)
			}
			if !strings.Contains(r.Answer, tt.want) {
				t.Errorf("answer %q does not contain %q", r.Answer, tt.want)
			}
			if HasRepeats(r.Answer) {
				t.Errorf("answer states a fact twice: %s", r.Answer)
			}
		})
	}
}
