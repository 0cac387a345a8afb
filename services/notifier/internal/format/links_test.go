package format

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/services/notifier/internal/markdownv2"
)

// TestLinksAreLinks: each of the alert's links is a text link entity
// whose target is the URL as given (a ')' or '\' in it escaped only as a
// link URL needs), covering the URL shown.
func TestLinksAreLinks(t *testing.T) {
	links := []Link{
		{Label: "Runbook", URL: "https://wiki.example.com/Disk_(full)#step-2"},
		{Label: "Source", URL: `http://prom:9090/graph?g0.expr=node_filesystem_avail_bytes{mountpoint="/"}\`},
		{Label: "Dashboard", URL: "https://user:pw@grafana.example.com/d/x"},
	}
	r := FormatAlert(Input{Text: "Disk almost full on db-1", Links: links}, nil, Options{})
	plain, entities, err := markdownv2.Parse(r.Message.Text)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, r.Message.Text)
	}
	if plain != r.Plain {
		t.Fatalf("parsed %q, Plain %q", plain, r.Plain)
	}
	var got []string
	for _, e := range entities {
		if e.Type != markdownv2.TextLink {
			continue
		}
		if shown := markdownv2.SliceUTF16(plain, e.Offset, e.Length); shown != strings.TrimPrefix(e.URL, "https://user:pw@") && !strings.Contains(e.URL, "grafana") {
			t.Errorf("link text %q for target %q", shown, e.URL)
		}
		got = append(got, e.URL)
	}
	want := []string{links[0].URL, links[1].URL, "https://grafana.example.com/d/x"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("link targets (-want +got):\n%s", diff)
	}
	if strings.Contains(r.Plain, "pw@") || strings.Contains(r.Message.Text, "pw@") {
		t.Errorf("credentials in a link reached the message: %q", r.Message.Text)
	}
	if !strings.HasPrefix(plain, "Disk almost full on db-1\n🔗 Runbook: https://wiki.example.com/Disk_(full)#step-2 · Source: ") {
		t.Errorf("links line not right under the alert text:\n%s", plain)
	}
}

// TestLongAlertKeepsEnrichment is issue 24's case: an alert near the
// text limit keeps its enrichment; its body is cut, with a note.
func TestLongAlertKeepsEnrichment(t *testing.T) {
	text := "[FIRING] Big (warning): long alert\n" + strings.Repeat("word ", 800)
	e := &Enrichment{Summary: "Do the thing.", Citations: []Citation{{Title: "Runbook", URL: "https://r.example/big"}}}
	r := FormatAlert(Input{Text: text}, e, Options{})
	plain := parseOK(t, r)
	for _, want := range []string{"[FIRING] Big (warning): long alert\n", "…\n" + AlertCutNote + "\n\n" + Header, "Summary: Do the thing.", "- Runbook — https://r.example/big"} {
		if !strings.Contains(plain, want) {
			t.Errorf("message lacks %q:\n%s", want, plain)
		}
	}
	if r.Unavailable != "" || r.DroppedSources != 0 {
		t.Errorf("Unavailable %q, dropped %d; want the enrichment whole", r.Unavailable, r.DroppedSources)
	}
}

// TestEnrichmentDroppedSaysWhy: when even the first line leaves no room
// for the enrichment, the note says why and Unavailable tells the caller.
func TestEnrichmentDroppedSaysWhy(t *testing.T) {
	first := strings.Repeat("x", 4000)
	e := &Enrichment{Summary: "A summary of some length.", Citations: []Citation{{Title: "Runbook", URL: "https://r.example/" + strings.Repeat("p", 200)}}}
	r := FormatAlert(Input{Text: first + "\nbody"}, e, Options{})
	plain := parseOK(t, r)
	if r.Unavailable != ReasonTooLong {
		t.Errorf("Unavailable = %q, want %q", r.Unavailable, ReasonTooLong)
	}
	if !strings.HasPrefix(plain, first) || !strings.Contains(plain, FailedNote) {
		t.Errorf("message does not keep the first line and say the enrichment is unavailable:\n%s", plain[3990:])
	}
}

func TestRepeats(t *testing.T) {
	tests := []struct {
		snippet, summary string
		want             bool
	}{
		{"Roll back the deploy.", "Roll back the deploy. Then check the provider.", true},
		{"roll back the DEPLOY, then check the provider's status…", "Roll back the deploy, then check the provider's status page.", true},
		{"The first step is to check the connection pool size and the slow query log.", "The first step is to check disk usage on the primary.", false},
		{"Degraded performance in EU since 13:40 UTC.", "Roll back the deploy.", false},
	}
	for _, tt := range tests {
		if got := repeats(tt.snippet, tt.summary); got != tt.want {
			t.Errorf("repeats(%q, %q) = %v, want %v", tt.snippet, tt.summary, got, tt.want)
		}
	}
}
