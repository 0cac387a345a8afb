package format

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/services/notifier/internal/markdownv2"
)

func crashLooping(n int, resolved bool) []GroupAlert {
	out := make([]GroupAlert, n)
	for i := range out {
		out[i] = GroupAlert{
			Resolved: resolved,
			Labels:   []string{fmt.Sprintf("pod=web-%d", i+1)},
			Summary:  fmt.Sprintf("Pod shop/web-%d (app) is restarting 3.5 times / 5 minutes", i+1),
		}
	}
	return out
}

var groupGoldenCases = []struct {
	name   string
	g      Group
	e      *Enrichment
	failed string
}{
	{
		name: "group_root",
		g: Group{
			Title:        "[FIRING:60] KubePodCrashLooping (warning shop)",
			CommonLabels: map[string]string{"alertname": "KubePodCrashLooping", "namespace": "shop", "severity": "warning"},
			Alerts:       crashLooping(60, false),
			ExternalURL:  "http://alertmanager.example.com:9093",
			GroupLabels:  map[string]string{"alertname": "KubePodCrashLooping"},
			Receiver:     "groundcrew",
		},
		e: &Enrichment{
			Summary: "CrashLoopBackOff across the shop deployment follows a failing readiness dependency; check the pods' last termination reason.",
			Citations: []Citation{
				{Title: "Debug running pods", URL: "https://kubernetes.io/docs/tasks/debug/debug-application/debug-running-pod/"},
				{Title: "KubePodCrashLooping runbook", URL: "https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepodcrashlooping/"},
			},
		},
	},
	{
		name: "group_root_acked_silenced",
		g: Group{
			Title:        "[FIRING:2] DiskFull (critical db_*prod*)",
			State:        []string{"🔕 silenced by @ann until 21:50 UTC", "👀 acked by @bob_the_[builder]"},
			CommonLabels: map[string]string{"alertname": "DiskFull", "env": "db_*prod*", "severity": "critical"},
			Alerts: []GroupAlert{
				{Labels: []string{"instance=db-1:9100", "mountpoint=/var/lib/postgresql"}, Summary: "Disk 97% full (> 95%)"},
				{Labels: []string{"instance=db-2:9100", "mountpoint=/"}, Summary: ""},
			},
		},
		failed: "search timed out",
	},
	{
		name: "group_reply_resolved",
		g: Group{
			Title:   "[RESOLVED] KubePodCrashLooping (warning shop)",
			Changes: "60 resolved",
			Alerts:  crashLooping(60, true),
		},
	},
}

func TestGroupGolden(t *testing.T) {
	for _, tc := range groupGoldenCases {
		t.Run(tc.name, func(t *testing.T) {
			var r Result
			if tc.failed != "" {
				r = FormatGroupFailed(tc.g, tc.failed, Options{})
			} else {
				r = FormatGroup(tc.g, tc.e, Options{})
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
		})
	}
}

func TestGroupTextLines(t *testing.T) {
	tests := []struct {
		n         int
		wantLines int
		wantMore  string
	}{
		{1, 1, ""},
		{10, 10, ""},
		{11, 10, "… and 1 more"},
		{60, 10, "… and 50 more"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			got := GroupText(Group{Title: "[FIRING] x", Alerts: crashLooping(tc.n, false)})
			if n := strings.Count(got, "\n"+FiringMark+" "); n != tc.wantLines {
				t.Errorf("GroupText lists %d alerts, want %d:\n%s", n, tc.wantLines, got)
			}
			if tc.wantMore != "" && !strings.HasSuffix(got, "\n"+tc.wantMore) {
				t.Errorf("GroupText = %q, want it to end with %q", got, tc.wantMore)
			}
			if tc.wantMore == "" && strings.Contains(got, " more") {
				t.Errorf("GroupText = %q, want no '… more' line", got)
			}
		})
	}
}

func TestGroupLink(t *testing.T) {
	tests := []struct {
		ext, receiver string
		labels        map[string]string
		want          string
	}{
		{"http://am:9093/", "team-x", map[string]string{"alertname": "A b", "job": "x"}, `http://am:9093/#/alerts?filter=%7Balertname%3D%22A+b%22%2Cjob%3D%22x%22%7D&receiver=team-x`},
		{"https://u:p@am.example.com", "", nil, "https://am.example.com/#/alerts"},
		{"", "r", nil, ""},
		{"javascript:alert(1)", "", nil, ""},
		{"am:9093", "", nil, ""},
	}
	for _, tc := range tests {
		if got := GroupLink(tc.ext, tc.receiver, tc.labels); got != tc.want {
			t.Errorf("GroupLink(%q, %q, %v) = %q, want %q", tc.ext, tc.receiver, tc.labels, got, tc.want)
		}
	}
}

func FuzzFormatGroup(f *testing.F) {
	f.Add("[FIRING:60] KubePodCrashLooping (warning shop)", "pod=web-1", "Pod is *crash* looping_", "http://am:9093", "summary", uint8(60), uint16(0))
	f.Add("", "", "", "", "", uint8(0), uint16(1))
	f.Add("🔥\r\n告警", "a\\b", "`code`", "https://x/#/[y]", "||", uint8(255), uint16(300))
	f.Fuzz(func(t *testing.T, title, label, summary, ext, esum string, n uint8, limit uint16) {
		g := Group{
			Title:        title,
			State:        []string{summary},
			CommonLabels: map[string]string{label: title, "severity": summary},
			ExternalURL:  ext,
			GroupLabels:  map[string]string{"alertname": title},
			Receiver:     label,
		}
		for i := 0; i < int(n); i++ {
			g.Alerts = append(g.Alerts, GroupAlert{Resolved: i%3 == 0, Labels: []string{label, fmt.Sprint(i)}, Summary: strings.Repeat(summary, 1+i%5)})
		}
		opt := Options{Limit: int(limit) % 5000}
		e := &Enrichment{Summary: esum, Citations: []Citation{{Title: summary, URL: "https://example.com/" + label}}}
		text := GroupText(g)
		checkInvariants(t, text, e, false, opt, FormatGroup(g, e, opt))
		checkInvariants(t, text, nil, true, opt, FormatGroupFailed(g, esum, opt))
		// Titles and state lines are put on one line, so only alert lines
		// (and a state line that happens to start with a mark) start so.
		if lines := strings.Count(text, "\n"+FiringMark) + strings.Count(text, "\n"+ResolvedMark); lines > min(int(n), MaxGroupLines)+len(g.State) {
			t.Fatalf("%d marked lines for %d alerts:\n%s", lines, n, text)
		}
	})
}
