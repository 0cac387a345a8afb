package relevance

import (
	"slices"
	"testing"
)

// TestReadingWords: an acronym's plural is one word; a word glued from a
// component's name and "server", "client" or "ctl" is the component's
// name and the suffix, unless the name is a generic word; a log level, a
// time's unit, a unit written apart from its number and chat's filler
// are no topic; "timed out" is a timeout, I/O however written is one
// term; a device numbered as the kernel numbers it names where, as a
// host does.
func TestReadingWords(t *testing.T) {
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"OSDs", []string{"osd"}},
		{"PVCs", []string{"volume"}},
		{"etcdserver", []string{"etcd", "server"}},
		{"etcdctl", []string{"etcd", "ctl"}},
		{"apiserver", []string{"apiserver"}},
		{"WARN since ~20 min, 10 Gbps, 60 GB", nil},
		{"timed out", []string{"timeout"}},
		{"disk I/O, IOPS", []string{"disk", "io"}},
		{"iowait high", []string{"io", "high"}},
		{"anyone else seeing this since yesterday?", nil},
	} {
		if got := terms(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("terms(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
	s := Parse("hv-12 kernel: ixgbe eth1: NIC Link is Down on nvme0n1")
	if s.weights["eth1"] != labelWeight || s.weights["nvme0n1"] != labelWeight || s.weights["link"] != summaryWeight {
		t.Errorf("weights = %v; want eth1 at the label weight and link at the summary's", s.weights)
	}
}

// TestOwnNamesInProse: a runbook that lists its alerts in a sentence
// about alerts ("Covers the node_exporter alerts X, Y"), or in an
// "Alerts:" sentence wrapped over several lines, is for each of them;
// a sentence that names one alert beside other alerts in passing is not
// a list, and a line ending a sentence does not run into the next.
func TestOwnNamesInProse(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		want       []string
	}{
		{"a sentence about alerts", "Covers the node_exporter alerts `NodeNetworkReceiveErrs`,\n`NodeNetworkTransmitErrs` and our `NodeBondSlaveDown`.\n\nLook first.",
			[]string{"NodeNetworkReceiveErrs", "NodeNetworkTransmitErrs", "NodeBondSlaveDown"}},
		{"a wrapped Alerts: sentence", "**Alerts:** `ArgoCdAppOutOfSync` (for 30 min),\n`ArgoCdAppUnhealthy` (for 15 min).",
			[]string{"ArgoCdAppOutOfSync", "ArgoCdAppUnhealthy"}},
		{"one alert in passing", "Unlike `GroundcrewDeliveryStalled`, other alerts still arrive.", nil},
		{"blocks of the search service's text", "Alerts: `RedisDown` fires when Redis is down.\nSee PostgresTooManyConnections and PgBouncerDown for those alerts too", []string{"RedisDown", "PostgresTooManyConnections", "PgBouncerDown"}},
		{"a disclaimer", "Not this page: the alerts `KubeNodeNotReady` and `KubeletDown` go to the node runbook.", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ownNames("Some runbook", tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("ownNames() = %q, want %q", got, tt.want)
			}
		})
	}
	// Each block of the search service's text ends a sentence: an
	// "Alerts:" block does not take the next block's names.
	if got, want := ownNames("Redis", "Alerts: `RedisDown` fires when Redis is down.\nDiagnose with PostgresTooManyConnections in mind."), []string{"RedisDown"}; !slices.Equal(got, want) {
		t.Errorf("ownNames() = %q, want %q", got, want)
	}
}

// TestNameShare: a Grafana rule that words an alert name's words ("JVM GC
// pause time") holds the runbook's listed name JvmGcPauseTimeHigh almost
// whole; the name written as one word is no word the rule misses.
func TestNameShare(t *testing.T) {
	jvm := Source{Title: "JVM — heap usage high and OutOfMemoryError",
		Text: "Alerts: `JvmHeapUsageHigh` fires when old-generation heap use stays above 90%; `JvmGcPauseTimeHigh` when more than 20% of wall time is spent in GC pauses."}
	sc := Parse("[FIRING] JVM GC pause time: pricing-service spends 34% of time in GC").Score(jvm)
	if sc.Name < 0.9 || !sc.Relevant() {
		t.Errorf("Score() = %+v; want the name share at least 0.9 and the runbook relevant", sc)
	}
}

// TestPlumbing: what a network client prints of the call that failed
// (Go's "dial tcp", "read udp", an HTTP method before its URL) is no
// topic; the lookup it failed is.
func TestPlumbing(t *testing.T) {
	s := Parse(`charge failed: Post "https://payments.internal/v1/charge": dial tcp: lookup payments.internal on 10.96.0.10:53: read udp 10.2.14.7:51123->10.96.0.10:53: i/o timeout`)
	for _, w := range []string{"post", "dial", "tcp", "read", "udp"} {
		if s.weights[w] != 0 {
			t.Errorf("weight of %q = %v, want none", w, s.weights[w])
		}
	}
	if s.weights["dns"] != summaryWeight || s.weights["charge"] != summaryWeight {
		t.Errorf("weights = %v; want dns and charge at the summary's weight", s.weights)
	}
	// A TCP problem said in words stays one.
	if s := Parse("TCP retransmits high on web-3"); s.weights["tcp"] != summaryWeight {
		t.Errorf("weights = %v; want tcp", s.weights)
	}
}

// TestShellPipeline: the shell's plumbing a pasted command counts with is
// no subject: "`conntrack -L | awk '{print $3}' | sort | uniq -c`" is
// about conntrack, not about every runbook whose commands count with
// awk, sort and uniq.
func TestShellPipeline(t *testing.T) {
	fds := Prepare(Source{
		Title: "Too many open files (file descriptor exhaustion)",
		Text:  "Diagnose: `ls /proc/<pid>/fd | wc -l` and `lsof -p <pid> | awk '{print $5}' | sort | uniq -c` show whether sockets or files pile up. Mitigate: raise LimitNOFILE for the unit; find the leak.",
	})
	s := Parse("`conntrack -L | awk '{print $3}' | sort | uniq -c` gives ~240k udp vs ~9k tcp")
	for _, w := range []string{"awk", "sort", "uniq", "print"} {
		if s.weights[w] > genericWeight*summaryWeight {
			t.Errorf("weight of %q = %v, want a generic word's", w, s.weights[w])
		}
	}
	if sc := s.Score(fds); sc.Value >= 0.5 {
		t.Errorf("score of the file-descriptor runbook = %.2f, want under 0.5: it shares only the pipeline", sc.Value)
	}
}
