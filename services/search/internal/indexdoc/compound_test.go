package indexdoc_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/services/search/internal/indexdoc"
)

func TestSplitIdentifier(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"ResourceQuota", []string{"resource", "quota"}},
		{"KubeResourceQuotaExceeded", []string{"kube", "resource", "quota", "exceeded"}},
		{"CrashLoopBackOff", []string{"crash", "loop", "back", "off"}},
		{"PodDisruptionBudget", []string{"pod", "disruption", "budget"}},
		{"ImagePullBackOff", []string{"image", "pull", "back", "off"}},
		{"MemoryPressure", []string{"memory", "pressure"}},
		{"DiskPressure", []string{"disk", "pressure"}},
		{"OOMKilled", []string{"oom", "killed"}},
		{"HTTPServer", []string{"http", "server"}},
		{"XMLHttpRequest", []string{"xml", "http", "request"}},
		{"getHTTPResponseCode", []string{"get", "http", "response", "code"}},
		{"Http2Stream", []string{"http2", "stream"}},
		{"S3Bucket", []string{"s3", "bucket"}},
		{"IPv6Address", []string{"ipv6", "address"}},
		{"KubePVCsFull", []string{"kube", "pvcs", "full"}},
		{"NICsDown", []string{"nics", "down"}},
		{"HTTPService", []string{"http", "service"}},
		{"node_memory_MemAvailable_bytes", []string{"node", "memory", "mem", "available", "bytes"}},
		{"resource_quota", []string{"resource", "quota"}},
		{"_leading__double_", []string{"leading", "double"}},
		{"camelCase", []string{"camel", "case"}},
		// One word: nothing to split.
		{"quota", nil},
		{"Quota", nil},
		{"OOM", nil},
		{"PVCs", nil},
		{"IPv6", nil},
		{"http2", nil},
		{"crashloopbackoff", nil},
		{"_quota_", nil},
		{"", nil},
		// Not identifiers: numbers, punctuation, too long or too many words.
		{"2024_11", nil},
		{"resource-quota", nil},
		{"Resource Quota", nil},
		{"AbcdefghijAbcdefghijAbcdefghijAbcdefghijAbcdefghijAbcdefghijAbcde", nil},
		{"ABcDeFgHiJkLmNoPqR", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, indexdoc.SplitIdentifier(tt.in)); diff != "" {
			t.Errorf("SplitIdentifier(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestCompoundWords(t *testing.T) {
	got := indexdoc.CompoundWords("ResourceQuota exhausted",
		"The quota (ResourceQuota) blocks pods in CrashLoopBackOff; see node_memory_MemFree_bytes and OOM.")
	want := "resource quota\ncrash loop back off\nnode memory mem free bytes"
	if got != want {
		t.Errorf("CompoundWords() = %q, want %q", got, want)
	}
	if got := indexdoc.CompoundWords("plain words only, OOM and IPv6"); got != "" {
		t.Errorf("CompoundWords(no compounds) = %q, want \"\"", got)
	}
}

func TestQueryCompoundsAndSplitQuery(t *testing.T) {
	q := `KubeResourceQuotaExceeded: "ns" over quota, OOMKilled twice (OOMKilled)`
	wantParts := [][]string{{"kube", "resource", "quota", "exceeded"}, {"oom", "killed"}}
	if diff := cmp.Diff(wantParts, indexdoc.QueryCompounds(q)); diff != "" {
		t.Errorf("QueryCompounds(%q) (-want +got):\n%s", q, diff)
	}
	wantSplit := `kube resource quota exceeded: "ns" over quota, oom killed twice (oom killed)`
	if got := indexdoc.SplitQuery(q); got != wantSplit {
		t.Errorf("SplitQuery(%q) = %q, want %q", q, got, wantSplit)
	}
	if got := indexdoc.SplitQuery("disk full"); got != "disk full" {
		t.Errorf("SplitQuery(no compounds) = %q, want it unchanged", got)
	}
	if got := indexdoc.QueryCompounds("disk full"); got != nil {
		t.Errorf("QueryCompounds(no compounds) = %v, want nil", got)
	}
}
