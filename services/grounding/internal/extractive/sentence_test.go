package extractive

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitSentences(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{
			name: "decimals abbreviations and urls",
			text: "The pod restarts every 5.2 minutes, e.g. after a deploy. See https://example.com/a.b?c=d for details.",
			want: []string{"The pod restarts every 5.2 minutes, e.g. after a deploy.", "See https://example.com/a.b?c=d for details."},
		},
		{
			name: "initials titles and etc",
			text: "Ask Dr. Smith or J. Doe. They know postgres, redis, etc. The rest is in Fig. 3 of the doc.",
			want: []string{"Ask Dr. Smith or J. Doe.", "They know postgres, redis, etc.", "The rest is in Fig. 3 of the doc."},
		},
		{
			name: "lower-case and identifier sentence starts",
			text: "The disk is full. please check it. It ran for six months. max_connections was 100.",
			want: []string{"The disk is full.", "please check it.", "It ran for six months.", "max_connections was 100."},
		},
		{
			name: "quotes ellipsis and repeated terminators",
			text: `He said "stop!" Then left. Back-off grows (10s, 20s, …) until five minutes. Really?! Yes...`,
			want: []string{`He said "stop!"`, "Then left.", "Back-off grows (10s, 20s, …) until five minutes.", "Really?!", "Yes..."},
		},
		{
			name: "markdown headings bullets and numbered lists",
			text: "## Diagnosis\n- Check pod events\n* Check logs\n1. Scale down\n2) Scale up\n• Done",
			want: []string{"Diagnosis", "Check pod events", "Check logs", "Scale down", "Scale up", "Done"},
		},
		{
			name: "hard-wrapped paragraph is joined, headings are not",
			text: "Meaning\nPod is in CrashLoop which means the app dies or is unresponsive and\nkubernetes tries to restart it automatically.\n\nImpact\nService degradation.",
			want: []string{"Meaning", "Pod is in CrashLoop which means the app dies or is unresponsive and kubernetes tries to restart it automatically.", "Impact", "Service degradation."},
		},
		{
			name: "lead-in line ending in a colon",
			text: "Run the following command to see every event in order:\nkubectl get events",
			want: []string{"Run the following command to see every event in order:", "kubectl get events"},
		},
		{
			name: "chinese without spaces and wrapped lines",
			text: "数据库连接池耗尽时，应用会报告连接超时。请检查配置！为什么？因为连接数不够用了，需要扩容并且检查\n长事务。",
			want: []string{"数据库连接池耗尽时，应用会报告连接超时。", "请检查配置！", "为什么？", "因为连接数不够用了，需要扩容并且检查长事务。"},
		},
		{
			name: "emoji zwj and combining marks",
			text: "🚀 Deploy done. 👩\u200d💻 Café e\u0301t\u00e9 ok! Next.",
			want: []string{"🚀 Deploy done.", "👩\u200d💻 Café e\u0301t\u00e9 ok!", "Next."},
		},
		{
			name: "windows line endings and blank input",
			text: "First line is long enough to be running text here.\r\nSecond.\r\n\r\n   ",
			want: []string{"First line is long enough to be running text here.", "Second."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := splitSentences(tt.text)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("splitSentences(%q) mismatch (-want +got):\n%s", tt.text, diff)
			}
		})
	}
}

func TestTokenize(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"The pods are restarting", []string{"pod", "restart"}},
		{"KubePodCrashLooping", []string{"kubepodcrashloop", "kube", "pod", "crash", "loop"}},
		{"OOMKilled max_connections", []string{"oomkill", "oom", "kill", "max", "connection"}},
		{"数据库超时", []string{"数据", "据库", "库超", "超时"}},
		{"重启 🚀 Café", []string{"重启", "café"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tokenize(tt.text)); diff != "" {
			t.Errorf("tokenize(%q) mismatch (-want +got):\n%s", tt.text, diff)
		}
	}
}
