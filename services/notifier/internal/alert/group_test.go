package alert

import (
	"strings"
	"testing"
	"time"
)

func TestGroupTitle(t *testing.T) {
	crash := map[string]string{"alertname": "KubePodCrashLooping", "severity": "warning", "namespace": "shop"}
	tests := []struct {
		name string
		g    Group
		want string
	}{
		{"alertmanager convention", Group{Status: GroupFiring, Firing: 60, GroupLabels: map[string]string{"alertname": "KubePodCrashLooping"}, CommonLabels: crash}, "[FIRING:60] KubePodCrashLooping (shop warning)"},
		{"resolved", Group{Status: GroupResolved, GroupLabels: map[string]string{"alertname": "KubePodCrashLooping"}, CommonLabels: crash}, "[RESOLVED] KubePodCrashLooping (shop warning)"},
		{"no group labels", Group{Status: GroupFiring, Firing: 2, CommonLabels: crash}, "[FIRING:2] KubePodCrashLooping (shop warning)"},
		{"nothing common", Group{Status: GroupFiring, Firing: 3, GroupLabels: map[string]string{"job": "api", "alertname": "Down"}, CommonLabels: map[string]string{"alertname": "Down", "job": "api"}}, "[FIRING:3] Down api"},
		{"empty", Group{Status: GroupFiring, Firing: 1}, "[FIRING:1]"},
		{"multi-line values", Group{Status: GroupFiring, Firing: 1, GroupLabels: map[string]string{"alertname": "A\nB"}}, "[FIRING:1] A B"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.g.Title(); got != tc.want {
				t.Errorf("Title() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestGroupTallyAndDistinguishing(t *testing.T) {
	g := Group{}
	g.Tally([]*Alert{{AlertStatus: Firing}, {AlertStatus: Resolved}, {AlertStatus: Firing}})
	if g.Firing != 2 || g.Resolved != 1 || g.Status != GroupFiring {
		t.Errorf("Tally: firing %d, resolved %d, status %s; want 2, 1, FIRING", g.Firing, g.Resolved, g.Status)
	}
	g.Tally([]*Alert{{AlertStatus: Resolved}})
	if g.Status != GroupResolved {
		t.Errorf("Tally of resolved alerts: status %s, want RESOLVED", g.Status)
	}
	a := &Alert{Labels: map[string]string{"alertname": "X", "pod": "web-1", "namespace": "other"}}
	got := Distinguishing(a, map[string]string{"alertname": "X", "namespace": "shop"})
	if want := []string{"namespace=other", "pod=web-1"}; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Distinguishing = %q, want %q", got, want)
	}
}

func TestGroupCallbackData(t *testing.T) {
	const id = "01a21185-5735-7192-a4fa-24cb880d7b1f"
	for _, act := range []GroupAction{ActionAck, ActionSilence1h, ActionSilence1d, ActionExpire} {
		data := GroupCallbackData(id, act)
		if len(data) > 64 {
			t.Errorf("%q is %d bytes, over Telegram's 64", data, len(data))
		}
		gotID, gotAct, ok := ParseGroupCallback(data)
		if !ok || gotID != id || gotAct != act {
			t.Errorf("ParseGroupCallback(%q) = %q, %q, %v", data, gotID, gotAct, ok)
		}
	}
	for _, data := range []string{"", "ag:", "ag::ack", "ag:" + id, "ag:" + id + ":delete", "approval:" + id + ":approve", "AG:" + id + ":ack", "ag:" + strings.Repeat("x", 65) + ":ack"} {
		if _, _, ok := ParseGroupCallback(data); ok {
			t.Errorf("ParseGroupCallback(%q) accepted", data)
		}
	}
	if ActionSilence1h.Duration() != time.Hour || ActionSilence1d.Duration() != 24*time.Hour || ActionAck.Duration() != 0 {
		t.Error("action durations are wrong")
	}
}
