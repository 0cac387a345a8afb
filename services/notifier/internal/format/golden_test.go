package format

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/services/notifier/internal/markdownv2"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output (review the plain ones by hand: they are the contract)")

func ptr[T any](v T) *T { return &v }

// goldenCases are rendered and compared with two files each:
// testdata/<name>.golden holds the text the user must see (the contract,
// checked by running our MarkdownV2 parser on the message) and
// testdata/<name>.md.golden the MarkdownV2 sent to Telegram.
var goldenCases = []struct {
	name   string
	alert  string
	e      *Enrichment
	failed string // when set, FormatFailed with this reason
	opt    Options
	links  []Link
}{
	{
		name:  "links",
		alert: "[FIRING] HighErrorRate (critical): 5xx > 10% on checkout-api\njob=checkout-api namespace=shop",
		links: []Link{
			{Label: "Runbook", URL: "https://runbooks.example.com/checkout/high_error_rate_(5xx)"},
			{Label: "Dashboard", URL: "https://grafana.example.com/d/abc?var-ns=shop&from=now-1h"},
			{Label: "Source", URL: "http://prometheus:9090/graph?g0.expr=rate(http_requests_total%7Bcode%3D~%225..%22%7D%5B5m%5D)"},
			{Label: "Ignored", URL: "javascript:alert(1)"},
		},
		e: &Enrichment{
			Summary: "Roll back the last checkout-api deploy, then check the payment provider's status page.",
			Citations: []Citation{
				// The snippet repeats the summary: it is left out.
				{Title: "Checkout high error rate", Snippet: "Roll back the last checkout-api deploy, then check the payment provider's status…", URL: "https://runbooks.example.com/checkout/high_error_rate_(5xx)"},
				{Title: "Payment provider status", Snippet: "Degraded performance in EU since 13:40 UTC.", URL: "https://status.payments.example/"},
			},
		},
	},
	{
		name:  "long_alert_keeps_enrichment",
		alert: "[FIRING] LogErrors (warning): error burst in payments-worker\n" + strings.Repeat("panic: runtime error: invalid memory address or nil pointer dereference [signal SIGSEGV] ", 45),
		links: []Link{{Label: "Runbook", URL: "https://runbooks.example.com/payments/worker-panics"}},
		e: &Enrichment{
			Summary: "A nil map write in the retry path panics the worker; the runbook says to pin v1.8.2 until the fix ships.",
			Citations: []Citation{
				{Title: "payments-worker panics", Snippet: "Pin v1.8.2: the retry path in v1.9.0 writes to a nil map.", URL: "https://runbooks.example.com/payments/worker-panics"},
				{Title: "Issue 4711", URL: "https://git.example.com/payments/issues/4711"},
			},
		},
	},
	{
		name:  "basic",
		alert: "[FIRING:1] HighCPU node-1.prod (92.5% > 90%)\nrunbook: https://wiki.example.com/runbooks/cpu_high#steps",
		e: &Enrichment{
			Summary:    "CPU saturation on node-1 matches a known kernel regression (v6.1.2) fixed in v6.1.4; upgrading or pinning the kworker threads resolves it.",
			Confidence: ptr(0.82),
			Citations: []Citation{
				{Title: "Kernel 6.1.2 kworker CPU regression", Snippet: "A change in the workqueue code makes kworker threads spin at 100% CPU on idle NUMA nodes.", URL: "https://lkml.example.org/2024/1/15/42"},
				{Title: "Runbook: High CPU (node_exporter)", URL: "https://wiki.example.com/runbooks/cpu_high"},
				{Title: "", Snippet: "Use `perf top` to find [hot] functions; *don't* restart blindly!", URL: "https://www.brendangregg.com/perf.html?x=1&y=a_b"},
			},
		},
	},
	{
		name:  "alert_only",
		alert: "\n  Disk usage 97% on /var/lib/postgresql\n\nhost: db-2 (eu-west-1)\n\nvalue >= threshold; see ~admin/notes.txt  \n\n",
	},
	{
		name:   "failed",
		alert:  "Backup job #4711 failed: exit code 2",
		failed: "grounding: rpc error: code = DeadlineExceeded desc = context deadline exceeded (5s)",
	},
	{
		name:  "non_ascii",
		alert: "🔥 生产环境告警：订单服务 P99 延迟 > 2s\n影响范围：华东-1 区 👨‍👩‍👧 用户\nCafé e\u0301 naïve",
		e: &Enrichment{
			Summary: "订单服务延迟升高与数据库连接池耗尽相关（最大连接数 100）。建议扩容连接池并检查慢查询。",
			Citations: []Citation{
				{Title: "数据库连接池耗尽导致服务延迟的排查与优化实践：从监控指标到根因分析的完整指南，包括连接泄漏检测、超时配置、监控告警阈值设置以及扩容策略的详细说明和生产环境中的真实案例复盘", Snippet: "连接池耗尽时，请求会排队等待空闲连接，导致 P99 延迟显著上升。", URL: "https://example.cn/blog/连接池"},
				{Title: "Ünïcödé — ✅ emoji 🇺🇦 title", Snippet: "Flags 🇺🇦🇵🇱, skin tones 👍🏽 and ZWJ 👩‍💻 survive.", URL: "https://example.com/ü"},
			},
		},
	},
	{
		name:  "cuts",
		alert: "Windows path C:\\Temp\\new is full\r\nline two\twith a tab\r\n\r\nline four",
		e: &Enrichment{
			Summary: strings.Repeat("The summary is deliberately far too long so that it has to be cut at a word boundary. ", 4),
			Citations: []Citation{
				{Title: "FTP mirror", URL: "ftp://mirror.example.com/pub"},
				{Title: "A title\nsplit over\r\nthree lines", Snippet: strings.Repeat("snippet words ", 20), URL: " https://example.com/a "},
				{Title: "Not a URL", URL: "example.com/no-scheme"},
				{Title: strings.Repeat("Long title ", 10), URL: "https://user:secret@example.org/path?q=1"},
				{Title: "No snippet", URL: "http://example.net"},
				{Title: "Fourth valid source", URL: "https://example.edu/"},
			},
		},
	},
	{
		name:  "over_limit",
		alert: "Load test alert\n" + strings.Repeat("line of alert body text\n", 40),
		e: &Enrichment{
			Summary: "A summary that has to be shortened because the limit is small.",
			Citations: []Citation{
				{Title: "First", Snippet: "kept if anything is", URL: "https://example.com/1"},
				{Title: "Second", URL: "https://example.com/2"},
			},
		},
		opt: Options{Limit: 400},
	},
	{
		name:  "summary_shortened",
		alert: "Queue depth high on orders-queue",
		e: &Enrichment{
			Summary: "Consumers stalled after the 14:02 deploy; the new version fails to acknowledge messages, so they are redelivered until the queue backs up. Rolling back restores throughput.",
			Citations: []Citation{
				{Title: "Deploy log", Snippet: "orders-consumer v2.3.0 rolled out at 14:02", URL: "https://deploy.example.com/orders/v2.3.0"},
			},
		},
		opt: Options{Limit: 230},
	},
	{
		name:  "first_line_too_long",
		alert: "CRITICAL: " + strings.Repeat("🔥", 30) + " everything is on fire\nsecond line",
		e:     &Enrichment{Summary: "Never shown: the first line alone is over the limit."},
		opt:   Options{Limit: 50},
	},
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			var r Result
			in := Input{Text: tc.alert, Links: tc.links}
			if tc.failed != "" {
				r = FormatAlertFailed(in, tc.failed, tc.opt)
			} else {
				r = FormatAlert(in, tc.e, tc.opt)
			}
			plain, _, err := markdownv2.Parse(r.Message.Text)
			if err != nil {
				t.Fatalf("Parse(message) error: %v\nmessage:\n%s", err, r.Message.Text)
			}
			if plain != r.Plain {
				t.Errorf("Result.Plain differs from the parsed message (-parsed +Plain):\n%s", cmp.Diff(plain, r.Plain))
			}
			checkGolden(t, tc.name+".golden", plain)
			checkGolden(t, tc.name+".md.golden", r.Message.Text)
			t.Logf("cuts: %q, dropped sources: %d", r.Cuts, r.DroppedSources)
		})
	}
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file: %v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s mismatch (-want +got):\n%s", path, cmp.Diff(string(want), got))
	}
}
