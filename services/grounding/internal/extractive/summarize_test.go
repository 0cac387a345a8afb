package extractive

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

func loadSources(t testing.TB, name string) []Source {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var raw []struct {
		ID               int
		URL, Title, Text string
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("parsing %s: %v", name, err)
	}
	out := make([]Source, len(raw))
	for i, r := range raw {
		out[i] = Source{ID: r.ID, URL: r.URL, Title: r.Title, Text: r.Text}
	}
	return out
}

// TestSummarizeGolden pins whole results for runbook-like evidence. Review a
// changed golden file as you would review the answer itself.
func TestSummarizeGolden(t *testing.T) {
	tests := []struct {
		name    string
		query   string
		sources string
		opt     Options
	}{
		{"crashloop", "KubePodCrashLooping payments-api pod restarting", "crashloop_sources.json", Options{}},
		{"postgres connections", "PostgresqlTooManyConnections postgres too many connections", "postgres_sources.json", Options{}},
		{"postgres small budget", "pgbouncer transaction pooling", "postgres_sources.json", Options{MaxChars: 300, MaxSentences: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Summarize(tt.query, loadSources(t, tt.sources), tt.opt)
			checkInvariants(t, got, loadSources(t, tt.sources), tt.opt)
			golden := filepath.Join("testdata", strings.ReplaceAll(tt.name, " ", "_")+".golden")
			b, err := json.MarshalIndent(got, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := os.WriteFile(golden, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			wantb, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("reading golden file (run with -update to create it): %v", err)
			}
			var want Result
			if err := json.Unmarshal(wantb, &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Summarize(%q) mismatch (-want +got):\n%s", tt.query, diff)
			}
		})
	}
}

// TestSummarizeNonASCII checks offsets with Chinese, emoji (surrogate pairs
// in UTF-16, four bytes in UTF-8), a ZWJ sequence and combining marks.
func TestSummarizeNonASCII(t *testing.T) {
	sources := []Source{
		{ID: 1, URL: "https://wiki.example.cn/db", Title: "数据库连接排查",
			Text: "数据库连接池耗尽时，应用会报告连接超时。请先检查 max_connections 参数是否过小。🚀 重启服务之前，先确认没有长事务占用连接！\n\n- 查看慢查询日志 👩‍💻\n- 增加连接池大小"},
		{ID: 2, URL: "https://example.org/pg", Title: "Postgres connection timeouts",
			Text: "Connection timeouts to Postgres usually mean the pool is exhausted (e.g. too many idle-in-transaction sessions). Raise max_connections only after checking pg_stat_activity. Cafe\u0301 owners love naïve résumés 😀."},
	}
	got := Summarize("数据库连接超时 postgres connection timeout", sources, Options{})
	checkInvariants(t, got, sources, Options{})
	// Source 2 matches only the Latin query terms, under half of what
	// source 1 matches, so it is left out; the emoji sentence still checks
	// offsets past a four-byte character.
	conf := 0.5
	want := Result{
		Text:    "数据库连接池耗尽时，应用会报告连接超时。 [1] 请先检查 max_connections 参数是否过小。 [1] 🚀 重启服务之前，先确认没有长事务占用连接！ [1]",
		Summary: "数据库连接池耗尽时，应用会报告连接超时。 请先检查 max_connections 参数是否过小。 🚀 重启服务之前，先确认没有长事务占用连接！",
		Citations: []Citation{
			{SourceID: 1, URL: "https://wiki.example.cn/db", Title: "数据库连接排查", Snippet: "数据库连接池耗尽时，应用会报告连接超时。", StartIndex: 0, EndIndex: 20, Confidence: 0.615},
			{SourceID: 1, URL: "https://wiki.example.cn/db", Title: "数据库连接排查", Snippet: "请先检查 max_connections 参数是否过小。", StartIndex: 25, EndIndex: 53, Confidence: 0.057},
			{SourceID: 1, URL: "https://wiki.example.cn/db", Title: "数据库连接排查", Snippet: "🚀 重启服务之前，先确认没有长事务占用连接！", StartIndex: 58, EndIndex: 80, Confidence: 0.069},
		},
		Confidence: &conf,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Summarize mismatch (-want +got):\n%s", diff)
	}

	// Sentences after emoji and combining marks must be cited at the right
	// place too.
	// Both sources must match comparably, or the weaker one is dropped.
	got = Summarize("重启服务 résumés naïve owners love", sources, Options{})
	checkInvariants(t, got, sources, Options{})
	var snippets []string
	for _, c := range got.Citations {
		snippets = append(snippets, c.Snippet)
	}
	// checkInvariants has checked every citation's offsets; these two
	// sentences must be among them.
	for _, want := range []string{"🚀 重启服务之前，先确认没有长事务占用连接！", "Cafe\u0301 owners love naïve résumés 😀."} {
		if !slices.Contains(snippets, want) {
			t.Errorf("snippets %q do not include %q", snippets, want)
		}
	}
}

func TestSummarizeNoMatch(t *testing.T) {
	sources := loadSources(t, "postgres_sources.json")
	for _, query := range []string{"kafka consumer rebalancing", "", "the of and", "🚀"} {
		got := Summarize(query, sources, Options{})
		zero := 0.0
		if diff := cmp.Diff(Result{Confidence: &zero}, got); diff != "" {
			t.Errorf("Summarize(%q) mismatch (-want +got):\n%s", query, diff)
		}
	}
	if got := Summarize("postgres", nil, Options{}); got.Text != "" || got.Confidence == nil || *got.Confidence != 0 {
		t.Errorf("Summarize without sources = %+v, want empty with confidence 0", got)
	}
}

func TestSummarizeOptions(t *testing.T) {
	sources := loadSources(t, "postgres_sources.json")
	const query = "postgres max_connections pool connections"
	for _, opt := range []Options{{}, {MaxChars: 200}, {MaxChars: 1200, MaxSentences: 8}, {MaxSentences: 1}, {MaxChars: 40}} {
		got := Summarize(query, sources, opt)
		checkInvariants(t, got, sources, opt)
	}
	// A budget smaller than the best sentence still yields an answer: the
	// sentence is trimmed at a word boundary.
	got := Summarize(query, sources, Options{MaxChars: 60})
	if len(got.Citations) != 1 || !strings.HasSuffix(got.Citations[0].Snippet, Ellipsis) {
		t.Errorf("Summarize with MaxChars 60 = %+v, want one trimmed sentence", got)
	}
}

// TestSummarizeTieBreak checks determinism: the same sentence in two sources
// is cited from the better-ranked one, and the output does not depend on
// anything but the input.
func TestSummarizeTieBreak(t *testing.T) {
	const s = "Restart the consumer group after the broker recovers."
	sources := []Source{
		{ID: 1, URL: "https://a.example.com", Text: "Unrelated text about caching layers and CDNs."},
		{ID: 2, URL: "https://b.example.com", Text: s},
		{ID: 3, URL: "https://c.example.com", Text: s},
	}
	first := Summarize("consumer group broker", sources, Options{})
	for range 5 {
		if again := Summarize("consumer group broker", sources, Options{}); !cmp.Equal(first, again) {
			t.Fatalf("Summarize is not deterministic:\n%+v\n%+v", first, again)
		}
	}
	var ids []int
	for _, c := range first.Citations {
		ids = append(ids, c.SourceID)
	}
	if diff := cmp.Diff([]int{2}, ids); diff != "" {
		t.Errorf("cited sources mismatch (-want +got):\n%s", diff)
	}
}

func TestSummarizeConfidenceOrdering(t *testing.T) {
	sources := loadSources(t, "postgres_sources.json")
	full := *Summarize("pgbouncer transaction pooling", sources, Options{}).Confidence
	partial := *Summarize("pgbouncer transaction pooling kubernetes operator helm", sources, Options{}).Confidence
	if !(full > partial && partial > 0) {
		t.Errorf("confidence: fully covered query %v, partly covered %v; want full > partial > 0", full, partial)
	}
}

// checkInvariants verifies what every result must satisfy.
func checkInvariants(t *testing.T, got Result, sources []Source, opt Options) {
	t.Helper()
	if got.Confidence == nil || *got.Confidence < 0 || *got.Confidence > 1 {
		t.Errorf("confidence %v not in [0,1]", got.Confidence)
	}
	maxChars := opt.MaxChars
	if maxChars <= 0 {
		maxChars = DefaultMaxChars
	}
	if n := utf8.RuneCountInString(got.Text); n > maxChars {
		t.Errorf("text has %d characters, budget %d", n, maxChars)
	}
	maxSentences := opt.MaxSentences
	if maxSentences <= 0 {
		maxSentences = DefaultMaxSentences
	}
	if len(got.Citations) > maxSentences {
		t.Errorf("%d sentences, cap %d", len(got.Citations), maxSentences)
	}
	if n := utf8.RuneCountInString(got.Summary); n > SummaryMaxChars {
		t.Errorf("summary has %d characters, want <= %d", n, SummaryMaxChars)
	}
	if n := len(sentenceSpans([]rune(got.Summary))); n > SummaryMaxSentences {
		t.Errorf("summary has %d sentences, want <= %d", n, SummaryMaxSentences)
	}
	byID := map[int]Source{}
	for _, s := range sources {
		byID[s.ID] = s
	}
	text := []rune(got.Text)
	prevEnd := 0
	for _, c := range got.Citations {
		src, ok := byID[c.SourceID]
		if !ok || src.URL != c.URL || src.Title != c.Title {
			t.Errorf("citation %+v does not point at a given source", c)
		}
		if c.StartIndex < prevEnd || c.EndIndex > len(text) || c.StartIndex >= c.EndIndex {
			t.Errorf("citation span [%d,%d) out of order or range (text %d runes)", c.StartIndex, c.EndIndex, len(text))
			continue
		}
		if s := string(text[c.StartIndex:c.EndIndex]); s != c.Snippet {
			t.Errorf("text[%d:%d] = %q, want the cited sentence %q", c.StartIndex, c.EndIndex, s, c.Snippet)
		}
		marker := " [" + strconv.Itoa(c.SourceID) + "]"
		if !strings.HasPrefix(string(text[c.EndIndex:]), marker) {
			t.Errorf("citation at [%d,%d) not followed by %q", c.StartIndex, c.EndIndex, marker)
		}
		// The snippet is evidence text, modulo white space and the full
		// stop added to list items.
		norm := strings.Join(strings.Fields(src.Text), " ")
		if !strings.Contains(norm, strings.TrimRight(strings.TrimSuffix(c.Snippet, Ellipsis), ".。")) {
			t.Errorf("snippet %q not found in source %d", c.Snippet, c.SourceID)
		}
		if c.Confidence < 0 || c.Confidence > 1 {
			t.Errorf("citation confidence %v not in [0,1]", c.Confidence)
		}
		prevEnd = c.EndIndex
	}
}

func BenchmarkSummarize(b *testing.B) {
	sources := loadSources(b, "postgres_sources.json")
	b.ReportAllocs()
	for b.Loop() {
		Summarize("PostgresqlTooManyConnections postgres too many connections", sources, Options{})
	}
}
