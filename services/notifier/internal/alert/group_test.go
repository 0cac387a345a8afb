package alert

import (
	"testing"
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
