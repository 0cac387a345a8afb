package store

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/groundcrew/groundcrew/services/grounding/internal/grounding"
)

// redactAll is Redact without its pre-tests: every pattern over the whole
// text. Redact must always give the same result, only faster.
func redactAll(s string) string {
	s = emailRE.ReplaceAllString(s, redacted)
	s = bearerRE.ReplaceAllString(s, "$1 "+redacted)
	for _, tr := range tokenREs {
		s = tr.re.ReplaceAllString(s, redacted)
	}
	return assignRE.ReplaceAllString(s, "${1}"+redacted)
}

var redactSeeds = []string{
	"",
	"plain text about disk usage",
	`{"apiKey": "AIzaSyA-1234567890abcdefghijklmnopqrstu"}`,
	"Authorization: Bearer abcdefghijklmnop",
	"token=abcdef123456 and password: 'hunter22!'",
	"bot 123456789:AAE-abcdefghijklmnopqrstuvwxyz0123456 sent",
	"AKIAABCDEFGHIJKLMNOP and asiaabcdefghijklmnop",
	"ghp_abcdefghijklmnopqrstuvwxyz and gho_x",
	"eyJhbGciOi.eyJzdWIiOiIx.SflKxwRJSMeKKF2QT4",
	"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----",
	"ſecret=abcdefgh and baſic abcdefghijkl",
	"\u212Aey: value1234",
	`"promptTokenCount": 120, "key": "x", "tokens": 3`,
	"mail ops@example.com about https://example.com:8443/a:b",
	"sk-abcdefghijklmnopqrstuvwx gsk_abcdefghijklmnopqrst xoxb-1234567890-abc",
	"disk-abcdefghijklmnopqrstuvwx x.sk-abcdefghijklmnopqrstuvwx _sk-abcdefghijklmnopqrstuvwx",
}

func FuzzRedact(f *testing.F) {
	for _, s := range redactSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Redact(s), redactAll(s); got != want {
			t.Errorf("Redact(%q)\n = %q\nwant (every pattern) %q", s, got, want)
		}
	})
}

// artifact is a raw offline-round artifact like those stored under load:
// the query, three runbook sources and the summary, as JSON.
func artifact(tb testing.TB) string {
	tb.Helper()
	var evidence []map[string]any
	for _, name := range []string{"disk-full.md", "postgres-connections.md", "checkout-5xx.md"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "examples", "runbooks", name))
		if err != nil {
			tb.Fatal(err)
		}
		evidence = append(evidence, map[string]any{"URL": "https://runbooks.groundcrew.example/" + name, "Title": name,
			"SourceDomain": "runbooks.groundcrew.example", "Snippet": string(b), "Score": 0.8})
	}
	b, _ := json.Marshal(map[string]any{"method": "extractive", "query": "disk full database volume",
		"evidence": evidence, "result": map[string]any{"Summary": "Free space on the data volume.", "Confidence": 0.7}})
	return string(b)
}

func TestRedactArtifactMatchesEveryPattern(t *testing.T) {
	a := artifact(t)
	if got, want := Redact(a), redactAll(a); got != want {
		t.Errorf("Redact differs from every pattern on a real artifact")
	}
	if !strings.Contains(a, "sk-") || !strings.Contains(a, ":") {
		t.Fatal("the artifact should hold what used to trigger the patterns (disk-, colons)")
	}
}

func BenchmarkRedact(b *testing.B) {
	a := artifact(b)
	b.SetBytes(int64(len(a)))
	b.Run("pretested", func(b *testing.B) {
		for b.Loop() {
			Redact(a)
		}
	})
	b.Run("every-pattern", func(b *testing.B) {
		for b.Loop() {
			redactAll(a)
		}
	})
}

// TestRedactTextKeepsOffsets: a cited answer that echoes a secret is
// stored redacted with its citation spans and parsed offsets moved so
// they cover the same words.
func TestRedactTextKeepsOffsets(t *testing.T) {
	arts, err := NewArtifacts(t.TempDir() + "/artifacts")
	if err != nil {
		t.Fatal(err)
	}
	s := &Store{artifacts: arts}
	text := "Login as ops@example.com failed [1]. The pool is full [2]."
	r := []rune(text)
	span := func(sub string) (int, int) {
		i := strings.Index(text, sub)
		return len([]rune(text[:i])), len([]rune(text[:i])) + len([]rune(sub))
	}
	s1, e1 := span("Login as ops@example.com failed")
	s2, e2 := span("The pool is full")
	m := &grounding.Message{
		Text: string(r),
		Citations: []grounding.Citation{
			{StartIndex: s1, EndIndex: e1}, {StartIndex: s2, EndIndex: e2},
		},
		Parsed: map[string]any{"markers": []any{map[string]any{"offset": float64(e2 + 1), "start": float64(s2), "end": float64(e2)}}},
	}
	s.redactText(m)
	if want := "Login as [REDACTED] failed [1]. The pool is full [2]."; m.Text != want {
		t.Fatalf("text = %q, want %q", m.Text, want)
	}
	got := []rune(m.Text)
	for i, want := range []string{"Login as [REDACTED] failed", "The pool is full"} {
		c := m.Citations[i]
		if s := string(got[c.StartIndex:c.EndIndex]); s != want {
			t.Errorf("citation %d covers %q, want %q", i, s, want)
		}
	}
	mk := m.Parsed["markers"].([]any)[0].(map[string]any)
	if s := string(got[int(mk["start"].(float64)):int(mk["end"].(float64))]); s != "The pool is full" {
		t.Errorf("parsed span covers %q", s)
	}
	if s := string(got[int(mk["offset"].(float64)):]); !strings.HasPrefix(s, "[2]") {
		t.Errorf("parsed marker offset points at %q", s)
	}
}
