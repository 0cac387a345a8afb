package indexdoc

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/services/search/internal/search"
)

func TestDomainSuffixes(t *testing.T) {
	got := domainSuffixes("a.b.example.com")
	want := []string{"a.b.example.com", "b.example.com", "example.com", "com"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("domainSuffixes() mismatch (-want +got):\n%s", diff)
	}
}

func TestLanguage(t *testing.T) {
	tests := []struct {
		name, declared, text, want string
	}{
		{"declared code", "de", "irrelevant", "german"},
		{"declared region", "pt_BR", "", "portuguese"},
		{"declared name", "French", "", "french"},
		{"declared unknown falls back to the text", "tlh", "Check the disk and rotate the logs before it is full.", "english"},
		{"english text", "", "When the disk is full, PostgreSQL stops accepting writes. Free space by rotating logs and removing old WAL segments.", "english"},
		{"german text", "", "Wenn die Festplatte voll ist, nimmt PostgreSQL keine Schreibzugriffe mehr an. Logs rotieren und alte WAL-Segmente entfernen.", "simple"},
		{"japanese text", "", "ディスクが満杯になると書き込みが止まります。", "simple"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Language(tt.declared, tt.text); got != tt.want {
				t.Errorf("Language(%q, …) = %q, want %q", tt.declared, got, tt.want)
			}
		})
	}
}

func TestPrepare(t *testing.T) {
	now := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)
	p, err := Prepare(search.Document{
		URL:       "HTTPS://Runbooks.Example.com/redis?utm_source=x",
		Text:      "# Redis memory\n\n## Diagnosis\n\nRun INFO memory.\n\n## Mitigation\n\nSet an eviction policy.",
		Metadata:  map[string]string{"team": "cache", ReservedMetaPrefix + "indexed_by": "forged"},
		IndexedBy: "ops",
	}, now)
	if err != nil {
		t.Fatal(err)
	}
	want := Prepared{
		ID: "https://runbooks.example.com/redis", URL: "https://runbooks.example.com/redis",
		Domains: []string{"runbooks.example.com", "example.com", "com"},
		Title:   "Redis memory", Headings: "Diagnosis\nMitigation",
		Text:     "Diagnosis.\nRun INFO memory.\nMitigation.\nSet an eviction policy.",
		Language: "english", Date: now,
		Metadata:  map[string]string{"team": "cache", search.MetaMimeType: "text/markdown"},
		MimeType:  "text/markdown",
		IndexedBy: "ops", IndexedAt: now,
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("Prepare() mismatch (-want +got):\n%s", diff)
	}
}
