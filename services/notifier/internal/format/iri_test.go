package format

import (
	"strings"
	"testing"
)

// TestSourcesShowReadableIRIs checks that sources are shown as people read
// them: an encoded IRI or punycode host in its Unicode form, an ASCII
// address unchanged.
func TestSourcesShowReadableIRIs(t *testing.T) {
	tests := []struct {
		name, url, want string
	}{
		{"encoded path", "https://de.wikipedia.org/wiki/%C3%9Cberwachung_(Informatik)", "Wiki — https://de.wikipedia.org/wiki/Überwachung_(Informatik)"},
		{"IRI as given", "https://de.wikipedia.org/wiki/Überwachung_(Informatik)", "Wiki — https://de.wikipedia.org/wiki/Überwachung_(Informatik)"},
		{"punycode host", "https://xn--bcher-kva.example/k%C3%BCche", "Wiki — https://bücher.example/küche"},
		{"ASCII unchanged", "https://Example.com/a%20b", "Wiki — https://Example.com/a%20b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Format("alert", &Enrichment{Summary: "s", Citations: []Citation{{Title: "Wiki", URL: tt.url}}}, Options{})
			plain := parseOK(t, r)
			if !strings.Contains(plain, "\n- "+tt.want+"\n") && !strings.HasSuffix(plain, "\n- "+tt.want) {
				t.Errorf("message %q does not list the source as %q", plain, tt.want)
			}
		})
	}
	r := Format("alert", &Enrichment{Summary: "s", Citations: []Citation{{URL: "https://xn--bcher-kva.example/"}}}, Options{})
	if plain := parseOK(t, r); !strings.Contains(plain, "- bücher.example — https://bücher.example/") {
		t.Errorf("untitled IDN source shown as %q, want its Unicode domain as title", plain)
	}
}
