package extractive

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTrimSummary(t *testing.T) {
	tests := []struct {
		name         string
		s            string
		maxChars     int
		maxSentences int
		want         string
	}{
		{"fits unchanged", "Short summary.", 250, 3, "Short summary."},
		{"surrounding space removed", "  padded text.  \n", 250, 3, "padded text."},
		{"no limits", "One. Two. Three. Four.", 0, 0, "One. Two. Three. Four."},
		{"exactly at the limit", "Exactly ten", 11, 1, "Exactly ten"},
		{"sentence limit", "One. Two. Three. Four.", 250, 3, "One. Two. Three."},
		{"sentence limit ignores abbreviations", "Use e.g. PgBouncer. Then scale. Then sleep.", 0, 2, "Use e.g. PgBouncer. Then scale."},
		{"quotes stay with their sentence", `He said "stop!" Then left. Done.`, 0, 1, `He said "stop!"`},
		{"char limit cuts at a sentence end without ellipsis", "First sentence here. Second sentence is longer.", 25, 3, "First sentence here."},
		{"first sentence too long is cut at a word", "The database connection pool is exhausted because of idle transactions.", 30, 3, "The database connection pool…"},
		{"dangling comma dropped before the ellipsis", "Restart the pod, then check the logs carefully.", 18, 3, "Restart the pod…"},
		{"text without terminator", "disk usage above ninety percent on the primary", 20, 3, "disk usage above…"},
		{"chinese sentences", "重启服务。检查日志！然后扩容。", 0, 2, "重启服务。检查日志！"},
		{"chinese prefers punctuation", "数据库连接池耗尽时，应用会报告连接超时。", 12, 3, "数据库连接池耗尽时…"},
		{"chinese between characters", "数据库连接池耗尽时应用会报告连接超时并且重试多次", 10, 0, "数据库连接池耗尽时…"},
		{"chinese fits by sentence", "连接超时。请检查数据库连接池配置是否正确。", 10, 3, "连接超时。"},
		{"emoji before the cut", "Deploy 🚀 failed on node seven.", 9, 3, "Deploy 🚀…"},
		{"zwj sequence kept whole at a space", "👩\u200d💻 fixes the bug", 5, 3, "👩\u200d💻…"},
		{"zwj sequences without spaces never split", "👩\u200d💻👩\u200d💻👩\u200d💻", 5, 3, "👩\u200d💻…"},
		{"combining mark stays on its letter", "Cafe\u0301 Cafe\u0301 Cafe\u0301", 7, 3, "Cafe\u0301…"},
		{"combining marks without spaces", "e\u0301e\u0301e\u0301e\u0301", 4, 3, "e\u0301…"},
		{"long url cut at a character", "https://example.com/a/very/long/path", 12, 3, "https://exa…"},
		{"no room for anything", "Hello world", 1, 3, ""},
		{"room for one letter", "Hello world", 2, 3, "H…"},
		{"empty", "   ", 10, 1, ""},
		{"accented latin at the boundary", "Überprüfung der Verbindung fehlgeschlagen wegen Zeitüberschreitung", 30, 1, "Überprüfung der Verbindung…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TrimSummary(tt.s, tt.maxChars, tt.maxSentences)
			if got != tt.want {
				t.Errorf("TrimSummary(%q, %d, %d) = %q, want %q", tt.s, tt.maxChars, tt.maxSentences, got, tt.want)
			}
		})
	}
}

func FuzzTrimSummary(f *testing.F) {
	for _, s := range []string{"One. Two. Three.", "数据库连接池耗尽时，应用会报告连接超时。", "👩\u200d💻 fixes e\u0301", "https://x.example/a.b", "e.g. f. G. h"} {
		f.Add(s, 20, 2)
	}
	f.Fuzz(func(t *testing.T, s string, maxChars, maxSentences int) {
		if !utf8.ValidString(s) {
			return
		}
		maxChars, maxSentences = maxChars%300, maxSentences%5
		got := TrimSummary(s, maxChars, maxSentences)
		if maxChars > 0 && utf8.RuneCountInString(got) > maxChars {
			t.Fatalf("TrimSummary(%q, %d, %d) = %q: too long", s, maxChars, maxSentences, got)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("TrimSummary(%q, %d, %d) = %q: invalid UTF-8", s, maxChars, maxSentences, got)
		}
		body, cut := strings.CutSuffix(got, Ellipsis)
		trimmed := strings.TrimSpace(s)
		if !strings.HasPrefix(trimmed, body) {
			t.Fatalf("TrimSummary(%q, %d, %d) = %q: not a prefix of the input", s, maxChars, maxSentences, got)
		}
		if !cut && maxSentences > 0 {
			if n := len(sentenceSpans([]rune(got))); n > maxSentences {
				t.Fatalf("TrimSummary(%q, %d, %d) = %q: %d sentences", s, maxChars, maxSentences, got, n)
			}
		}
	})
}
