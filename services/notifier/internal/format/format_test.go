package format

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/groundcrew/groundcrew/services/notifier/internal/markdownv2"
)

func TestFormatContract(t *testing.T) {
	tests := []struct {
		name        string
		alert       string
		e           *Enrichment
		opt         Options
		wantPlain   string
		wantDropped int
		wantCuts    []string
	}{
		{
			name:      "nil enrichment is the alert alone",
			alert:     "a.b\n\nc",
			wantPlain: "a.b\n\nc",
		},
		{
			name:      "no usable source: the note, not the summary",
			alert:     "alert",
			e:         &Enrichment{Summary: "uncited", Citations: []Citation{{URL: "mailto:x@example.com"}}},
			wantPlain: "alert\n\nEnrichment unavailable: no sources found", wantDropped: 1,
			wantCuts: []string{
				"source 1 skipped: URL is not an absolute http(s) URL of at most 2048 bytes",
				`enrichment without a usable source: sent the alert with the note "no sources found"`,
			},
		},
		{
			name:      "summary without sources: the note",
			alert:     "alert",
			e:         &Enrichment{Summary: "  two\nlines  "},
			wantPlain: "alert\n\nEnrichment unavailable: no sources found",
			wantCuts:  []string{`enrichment without a usable source: sent the alert with the note "no sources found"`},
		},
		{
			name:      "empty enrichment: the note",
			alert:     "alert",
			e:         &Enrichment{},
			wantPlain: "alert\n\nEnrichment unavailable: no sources found",
			wantCuts:  []string{`enrichment without a usable source: sent the alert with the note "no sources found"`},
		},
		{
			name:  "five sources with MaxSources 5: all shown, none dropped",
			alert: "alert",
			e: &Enrichment{Summary: "s", Citations: []Citation{
				{Title: "1", URL: "https://1.example/"}, {Title: "2", URL: "https://2.example/"}, {Title: "3", URL: "https://3.example/"},
				{Title: "4", URL: "https://4.example/"}, {Title: "5", URL: "https://5.example/"},
			}},
			opt: Options{MaxSources: 5},
			wantPlain: "alert\n\n--- Enriched Context ---\nSummary: s\nSources:\n- 1 — https://1.example/\n- 2 — https://2.example/\n" +
				"- 3 — https://3.example/\n- 4 — https://4.example/\n- 5 — https://5.example/",
		},
		{
			name:  "five sources by default: three shown",
			alert: "alert",
			e: &Enrichment{Summary: "s", Citations: []Citation{
				{Title: "1", URL: "https://1.example/"}, {Title: "2", URL: "https://2.example/"}, {Title: "3", URL: "https://3.example/"},
				{Title: "4", URL: "https://4.example/"}, {Title: "5", URL: "https://5.example/"},
			}},
			wantPlain:   "alert\n\n--- Enriched Context ---\nSummary: s\nSources:\n- 1 — https://1.example/\n- 2 — https://2.example/\n- 3 — https://3.example/",
			wantDropped: 2,
			wantCuts:    []string{"source 4 dropped: more than 3 sources", "source 5 dropped: more than 3 sources"},
		},
		{
			name:      "sources only",
			alert:     "alert",
			e:         &Enrichment{Citations: []Citation{{Title: "T", Snippet: "S", URL: "https://x.example/"}}},
			wantPlain: "alert\n\n--- Enriched Context ---\nSources:\n- T — S — https://x.example/",
		},
		{
			name:  "missing title uses the domain",
			alert: "alert",
			e: &Enrichment{Citations: []Citation{
				{URL: "HTTPS://WWW.Example.COM/Path"},
				{Title: " \n ", URL: "http://sub.example.org:8080/"},
			}},
			wantPlain: "alert\n\n--- Enriched Context ---\nSources:\n- example.com — HTTPS://WWW.Example.COM/Path\n- sub.example.org — http://sub.example.org:8080/",
		},
		{
			name:  "credentials and spaces in URLs",
			alert: "alert",
			e: &Enrichment{Citations: []Citation{
				{Title: "T", URL: "https://bob:hunter2@example.com/a b"},
			}},
			wantPlain: "alert\n\n--- Enriched Context ---\nSources:\n- T — https://example.com/a%20b",
		},
		{
			name:  "non-http sources are skipped and the cap counts usable ones",
			alert: "alert",
			e: &Enrichment{Citations: []Citation{
				{Title: "1", URL: "javascript:alert(1)"},
				{Title: "2", URL: "https://2.example/"},
				{Title: "3", URL: "/relative"},
				{Title: "4", URL: "https://4.example/"},
				{Title: "5", URL: "https://5.example/"},
				{Title: "6", URL: "https://6.example/"},
			}},
			wantPlain:   "alert\n\n--- Enriched Context ---\nSources:\n- 2 — https://2.example/\n- 4 — https://4.example/\n- 5 — https://5.example/",
			wantDropped: 3,
			wantCuts: []string{
				"source 1 skipped: URL is not an absolute http(s) URL of at most 2048 bytes",
				"source 3 skipped: URL is not an absolute http(s) URL of at most 2048 bytes",
				"source 6 dropped: more than 3 sources",
			},
		},
		{
			name:  "title cut at a word boundary",
			alert: "alert",
			e: &Enrichment{Citations: []Citation{
				{Title: "The quick brown fox jumps over the lazy dog", URL: "https://x.example/"},
			}},
			opt:       Options{MaxTitle: 20},
			wantPlain: "alert\n\n--- Enriched Context ---\nSources:\n- The quick brown fox… — https://x.example/",
			wantCuts:  []string{"source 1 title truncated to 20 characters"},
		},
		{
			name:  "chinese title cut between characters",
			alert: "alert",
			e: &Enrichment{Citations: []Citation{
				{Title: "数据库连接池耗尽导致服务延迟", URL: "https://x.example/"},
			}},
			opt:       Options{MaxTitle: 6},
			wantPlain: "alert\n\n--- Enriched Context ---\nSources:\n- 数据库连接… — https://x.example/",
			wantCuts:  []string{"source 1 title truncated to 6 characters"},
		},
		{
			name:      "sources dropped last first but one, then the summary shortened",
			alert:     "alert",
			e:         &Enrichment{Summary: "one two three four five six seven eight nine ten", Citations: []Citation{{Title: "A", URL: "https://a.example/"}, {Title: "B", URL: "https://b.example/"}}},
			opt:       Options{Limit: 100},
			wantPlain: "alert\n\n--- Enriched Context ---\nSummary: one two three four five…\nSources:\n- A — https://a.example/",
			// 5 + 2 + 24 + 1 + 9 = 41 units before the summary, 1 + 8 +
			// 1 + 24 = 34 after it: 25 left.
			wantDropped: 1,
			wantCuts: []string{
				"source 2 dropped: message over 100 UTF-16 units",
				"summary shortened to 25 UTF-16 units to fit the message limit",
			},
		},
		{
			name:        "a summary that cannot keep its source goes with it",
			alert:       "alert",
			e:           &Enrichment{Summary: "one two three four five six seven eight nine ten", Citations: []Citation{{Title: "A", URL: "https://a.example/"}, {Title: "B", URL: "https://b.example/"}}},
			opt:         Options{Limit: 70},
			wantPlain:   "alert\n\nEnrichment unavailable: alert too long to show it in one…",
			wantDropped: 2,
			wantCuts: []string{
				"source 2 dropped: message over 70 UTF-16 units",
				"enrichment dropped to fit the message limit",
				"enrichment note shortened to fit the message limit",
			},
		},
		{
			name:      "fits exactly",
			alert:     strings.Repeat("🔥", 2048),
			wantPlain: strings.Repeat("🔥", 2048),
		},
		{
			name:      "one unit over: the first line is cut as a last resort",
			alert:     strings.Repeat("🔥", 2048) + "x",
			wantPlain: strings.Repeat("🔥", 2047) + "…",
			wantCuts:  []string{"alert first line truncated to 4096 UTF-16 units"},
		},
		{
			name:      "alert body cut, first line kept, and a note says so",
			alert:     "first line stays\n" + strings.Repeat("second line goes away entirely ", 3),
			opt:       Options{Limit: 80},
			wantPlain: "first line stays\nsecond line…\n" + AlertCutNote,
			wantCuts:  []string{"alert text after the first line truncated to fit the message limit"},
		},
		{
			name:      "no room for the note: the first line and an ellipsis",
			alert:     "first line stays\nsecond line goes away entirely",
			opt:       Options{Limit: 30},
			wantPlain: "first line stays\n…",
			wantCuts:  []string{"alert text after the first line dropped to fit the message limit, without the note"},
		},
		{
			name:      "blank alert",
			alert:     " \r\n\u200b\t",
			wantPlain: EmptyAlert,
			wantCuts:  []string{`alert text empty: sent "(empty alert)"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Format(tt.alert, tt.e, tt.opt)
			plain := parseOK(t, r)
			if diff := cmp.Diff(tt.wantPlain, plain); diff != "" {
				t.Errorf("rendered text = %q, want %q (-want +got):\n%s", plain, tt.wantPlain, diff)
			}
			if r.DroppedSources != tt.wantDropped {
				t.Errorf("DroppedSources = %d, want %d", r.DroppedSources, tt.wantDropped)
			}
			if diff := cmp.Diff(tt.wantCuts, r.Cuts, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Cuts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFormatDefaultLimits(t *testing.T) {
	e := &Enrichment{
		Summary:   strings.Repeat("summary ", 100),
		Citations: []Citation{{Title: strings.Repeat("title ", 50), Snippet: strings.Repeat("snippet ", 50), URL: "https://x.example/"}},
	}
	r := Format("alert", e, Options{})
	plain := parseOK(t, r)
	_, summary, _ := strings.Cut(plain, "\nSummary: ")
	summary, line, _ := strings.Cut(summary, "\nSources:\n- ")
	title, rest, _ := strings.Cut(line, separator)
	snippet, _, _ := strings.Cut(rest, separator)
	got := []int{utf8.RuneCountInString(summary), utf8.RuneCountInString(title), utf8.RuneCountInString(snippet)}
	// Each is cut at the last space that fits, so it is at most one word
	// shorter than its limit, ellipsis included.
	for i, limit := range []int{DefaultMaxSummary, DefaultMaxTitle, DefaultMaxSnippet} {
		if got[i] > limit || got[i] < limit-len("snippet ") {
			t.Errorf("field %d is %d characters, want at most %d and near it", i, got[i], limit)
		}
	}
	for _, f := range []string{summary, title, snippet} {
		if !strings.HasSuffix(f, Ellipsis) {
			t.Errorf("cut field %q does not end with %q", f, Ellipsis)
		}
	}
}

func TestFormatFailed(t *testing.T) {
	tests := []struct {
		name      string
		alert     string
		reason    string
		opt       Options
		wantPlain string
		wantText  string
	}{
		{
			name: "reason escaped", alert: "Job failed.", reason: "rpc error: code = Unavailable (retry_after=5s)\nsecond line",
			wantPlain: "Job failed.\n\nEnrichment unavailable: rpc error: code = Unavailable (retry_after=5s) second line",
			wantText:  "Job failed\\.\n\n_Enrichment unavailable: rpc error: code \\= Unavailable \\(retry\\_after\\=5s\\) second line_",
		},
		{
			name: "no reason", alert: "Job failed", reason: " ",
			wantPlain: "Job failed\n\nEnrichment unavailable",
			wantText:  "Job failed\n\n_Enrichment unavailable_",
		},
		{
			name: "note shortened before the alert", alert: "Job failed\nbody", reason: "a very long reason that will not fit",
			opt:       Options{Limit: 60},
			wantPlain: "Job failed\nbody\n\nEnrichment unavailable: a very long reason…",
			wantText:  "Job failed\nbody\n\n_Enrichment unavailable: a very long reason…_",
		},
		{
			name: "only the reason dropped", alert: "Job failed\nbody", reason: "a very long reason that will not fit",
			opt:       Options{Limit: 50},
			wantPlain: "Job failed\nbody\n\nEnrichment unavailable",
			wantText:  "Job failed\nbody\n\n_Enrichment unavailable_",
		},
		{
			name: "note dropped when even the alert does not fit", alert: strings.Repeat("x", 30), reason: "r",
			opt:       Options{Limit: 40},
			wantPlain: strings.Repeat("x", 30),
			wantText:  strings.Repeat("x", 30),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := FormatFailed(tt.alert, tt.reason, tt.opt)
			plain := parseOK(t, r)
			if diff := cmp.Diff(tt.wantPlain, plain); diff != "" {
				t.Errorf("rendered text (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantText, r.Message.Text); diff != "" {
				t.Errorf("MarkdownV2 text (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCleanText(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{in: "plain — text…", want: "plain — text…"},
		{in: "a\r\nb\rc\n", want: "a\nb\nc\n"},
		{in: "tab\there\x00\x1f", want: "tab here  "},
		{in: "line\u2028sep\u2029para", want: "line\nsep\npara"},
		{in: "bidi\u202ex\u202a", want: "bidix"},
		{in: "A\u030a x\u0333", want: "A x"},
		{in: "\u200e\u200f\u200ex", want: "\u200c\u200c\u200ex"},
		{in: "bad\xffutf8", want: "bad\ufffdutf8"},
	}
	for _, tt := range tests {
		if got := cleanText(tt.in); got != tt.want {
			t.Errorf("cleanText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		limit  int
		m      measure
		want   string
		wantOK bool
	}{
		{name: "fits", in: "short", limit: 5, m: runes, want: "short"},
		{name: "word boundary", in: "alpha beta gamma", limit: 12, m: runes, want: "alpha beta…", wantOK: true},
		{name: "no near space: hard cut", in: "a supercalifragilistic", limit: 10, m: runes, want: "a superca…", wantOK: true},
		{name: "limit 1", in: "abc", limit: 1, m: runes, want: "…", wantOK: true},
		{name: "limit 0", in: "abc", limit: 0, m: runes, want: "", wantOK: true},
		{name: "emoji counts two units", in: "🔥🔥🔥", limit: 4, m: utf16s, want: "🔥…", wantOK: true},
		{name: "emoji counts one character", in: "🔥🔥🔥", limit: 2, m: runes, want: "🔥…", wantOK: true},
		{name: "combining mark stays with its letter", in: "cafe\u0301s", limit: 5, m: runes, want: "caf…", wantOK: true},
		{name: "zwj sequence not split", in: "ab👨‍👩‍👧", limit: 5, m: runes, want: "ab…", wantOK: true},
		{name: "skin tone not split", in: "ab👍🏽c", limit: 4, m: runes, want: "ab…", wantOK: true},
		{name: "flag not split", in: "ab🇺🇦🇵🇱", limit: 4, m: runes, want: "ab…", wantOK: true},
		{name: "whole flags kept", in: "ab🇺🇦🇵🇱", limit: 5, m: runes, want: "ab🇺🇦…", wantOK: true},
		{name: "keycap kept whole", in: "x1\ufe0f\u20e3y", limit: 4, m: runes, want: "x…", wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := truncate(tt.in, tt.limit, tt.m)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("truncate(%q, %d) = %q, %v; want %q, %v", tt.in, tt.limit, got, ok, tt.want, tt.wantOK)
			}
			if n := tt.m.len(got); n > tt.limit {
				t.Errorf("truncate(%q, %d) = %q is %d long", tt.in, tt.limit, got, n)
			}
		})
	}
}

// parseOK runs the message through our MarkdownV2 parser, fails the test if
// Telegram would refuse it, and returns the text the user would see.
func parseOK(t testing.TB, r Result) string {
	t.Helper()
	if r.Message.ParseMode != "MarkdownV2" || !r.Message.DisableWebPagePreview {
		t.Fatalf("Message = %+v, want MarkdownV2 without web page preview", r.Message)
	}
	plain, _, err := markdownv2.Parse(r.Message.Text)
	if err != nil {
		t.Fatalf("Parse(message) error: %v\nmessage: %q", err, r.Message.Text)
	}
	if plain != r.Plain {
		t.Fatalf("Result.Plain = %q, but the message parses to %q", r.Plain, plain)
	}
	return plain
}

// checkInvariants checks what must hold for any input: the message parses,
// fits the limit, keeps the alert's first line unless that alone is too long,
// accounts for every citation, and contains nothing Telegram would change.
func checkInvariants(t testing.TB, alert string, e *Enrichment, failed bool, opt Options, r Result) {
	t.Helper()
	plain := parseOK(t, r)
	limit := opt.withDefaults().Limit
	if n := markdownv2.UTF16Len(plain); n > limit {
		t.Fatalf("rendered text is %d UTF-16 units, over the limit of %d", n, limit)
	}
	if cleanText(plain) != plain {
		t.Fatalf("rendered text %q contains characters Telegram would change", plain)
	}
	if plain != strings.TrimSpace(plain) || plain == "" {
		t.Fatalf("rendered text %q is empty or has white space Telegram would trim", plain)
	}

	cleaned := strings.TrimSpace(cleanText(alert))
	if strings.TrimFunc(cleaned, isBlank) == "" {
		cleaned = EmptyAlert
	}
	first, _, _ := strings.Cut(cleaned, "\n")
	if markdownv2.UTF16Len(first) <= limit {
		// Alone, the first line is the whole message and loses the white
		// space at its end, which Telegram would trim (" \r" in the alert).
		alone := plain == strings.TrimRightFunc(first, unicode.IsSpace)
		if !alone && (!strings.HasPrefix(plain, first) || (len(plain) > len(first) && plain[len(first)] != '\n')) {
			t.Fatalf("first line %q of the alert is not the first line of %q", first, plain)
		}
	} else if want, _ := truncate(strings.TrimRightFunc(first, unicode.IsSpace), limit, utf16s); plain != want {
		t.Fatalf("over-long first line rendered as %q, want %q", plain, want)
	}

	rendered := 0
	if i := strings.LastIndex(plain, "\n\n"+Header+"\n"); i >= 0 && e != nil {
		_, sources, ok := strings.Cut(plain[i:], "\n"+sourcesLine+"\n")
		if ok {
			rendered = strings.Count(sources, "\n"+sourcePrefix) + 1
		}
	}
	if e != nil && !failed {
		if rendered+r.DroppedSources != len(e.Citations) {
			t.Fatalf("%d sources rendered + %d dropped != %d citations\n%s", rendered, r.DroppedSources, len(e.Citations), plain)
		}
		if rendered > opt.withDefaults().MaxSources {
			t.Fatalf("%d sources rendered, over the cap", rendered)
		}
	}
}

// randomField returns text that is hard on the formatter: reserved
// characters, backslashes, CRLF, emoji, CJK, combining marks, sometimes huge.
func randomField(r *rand.Rand) string {
	pieces := []string{
		"_*[]()~`>#+-=|{}.!", `\`, `\\`, "\r\n", "\n", "\n\n", "\t", " ", "word ", "longerword ",
		"中文字符", "🔥", "👨‍👩‍👧", "👍🏽", "🇺🇦", "e\u0301", "\u200b", "\u2028", "\x00", "…", "—",
		"https://example.com/a_b", "||", "**>", "```",
	}
	var b strings.Builder
	n := r.IntN(12)
	if r.IntN(10) == 0 {
		n = 500 + r.IntN(3000) // huge
	}
	for range n {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

func randomURL(r *rand.Rand) string {
	switch r.IntN(6) {
	case 0:
		return "ftp://example.com/" + randomField(r)
	case 1:
		return randomField(r)
	case 2:
		return "https://" + strings.Repeat("long", r.IntN(1000)) + ".example/"
	default:
		return "https://example.com/" + strings.ReplaceAll(randomField(r), " ", "")
	}
}

func TestFormatProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 3000 {
		alert := randomField(r)
		if r.IntN(5) == 0 {
			alert = strings.Repeat(alert+"\n", 1+r.IntN(50))
		}
		var opt Options
		if r.IntN(3) == 0 {
			opt.Limit = 1 + r.IntN(600)
		}
		if r.IntN(4) == 0 {
			res := FormatFailed(alert, randomField(r), opt)
			checkInvariants(t, alert, nil, true, opt, res)
			continue
		}
		var e *Enrichment
		if r.IntN(6) != 0 {
			e = &Enrichment{Summary: randomField(r)}
			for range r.IntN(6) {
				e.Citations = append(e.Citations, Citation{Title: randomField(r), Snippet: randomField(r), URL: randomURL(r)})
			}
		}
		checkInvariants(t, alert, e, false, opt, Format(alert, e, opt))
	}
}

func FuzzFormat(f *testing.F) {
	f.Add("High CPU on node-1.prod (92.5%)", "Summary.", "Title", "Snippet", "https://example.com/a_b", uint8(0), uint16(0))
	f.Add("🔥 告警\r\n\r\nbody", "中文摘要", "", "", "https://www.example.cn/", uint8(3), uint16(100))
	f.Add("a\\b", "*_[", "x\ny", "||", "ftp://x", uint8(200), uint16(4096))
	f.Add("", "", "", "", "", uint8(1), uint16(1))
	f.Fuzz(func(t *testing.T, alert, summary, title, snippet, link string, repeat uint8, limit uint16) {
		alert = strings.Repeat(alert, 1+int(repeat)%64)
		opt := Options{Limit: int(limit) % 5000}
		e := &Enrichment{Summary: summary, Citations: []Citation{
			{Title: title, Snippet: snippet, URL: link},
			{Title: snippet, URL: "https://example.com/" + title},
			{Title: title, Snippet: strings.Repeat(snippet, 1+int(repeat)), URL: link},
			{Title: summary, URL: "https://example.org/"},
		}}
		checkInvariants(t, alert, e, false, opt, Format(alert, e, opt))
		checkInvariants(t, alert, nil, false, opt, Format(alert, nil, opt))
		checkInvariants(t, alert, nil, true, opt, FormatFailed(alert, summary, opt))
		if !utf8.ValidString(Format(alert, e, opt).Message.Text) {
			t.Fatal("message is not valid UTF-8")
		}
	})
}

func BenchmarkFormat(b *testing.B) {
	alert := "[FIRING:1] HighCPU node-1.prod (instance=10.0.0.1:9100, job=node)\n" +
		"CPU usage is 92.5% (threshold 90%) for more than 5 minutes.\n" +
		"runbook: https://wiki.example.com/runbooks/cpu_high"
	e := &Enrichment{
		Summary: "CPU saturation on node-1 matches a known kernel regression (v6.1.2) fixed in v6.1.4; upgrading or pinning the kworker threads resolves it.",
		Citations: []Citation{
			{Title: "Kernel 6.1.2 kworker CPU regression", Snippet: "A change in the workqueue code makes kworker threads spin at 100% CPU on idle NUMA nodes; the fix landed in 6.1.4.", URL: "https://lkml.example.org/2024/1/15/42"},
			{Title: "Runbook: High CPU (node_exporter)", Snippet: "Check top, then perf; look for kworker, ksoftirqd and noisy neighbours before scaling.", URL: "https://wiki.example.com/runbooks/cpu_high"},
			{Title: "", Snippet: "Use perf top to find hot functions.", URL: "https://www.brendangregg.com/perf.html"},
		},
	}
	b.ReportAllocs()
	for b.Loop() {
		Format(alert, e, Options{})
	}
}
