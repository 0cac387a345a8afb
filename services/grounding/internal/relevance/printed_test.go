package relevance

import (
	"slices"
	"testing"
)

// TestPrintedStates: what Kubernetes, the kernel and systemd print is read
// as the state it names, and a resource 80% used or more as near full.
func TestPrintedStates(t *testing.T) {
	tests := []struct {
		text string
		want []string
		not  []string
	}{
		{"Warning BackOff kubelet Back-off restarting failed container api in pod web-1", []string{"restart", "crash", "loop"}, nil},
		{`Failed to pull image "registry.local/api:1.4": manifest unknown`, []string{"imagepullbackoff", "image", "pull"}, nil},
		{"0/6 nodes are available: 6 Insufficient cpu.", []string{"pending"}, nil},
		{"Node ip-10-0-3-4 status is now: NodeNotReady", []string{"notready"}, nil},
		{"The node was low on resource: memory.", []string{"evict", "memory"}, nil},
		{"Job has reached the specified backoff limit", []string{"job", "fail"}, nil},
		{"kernel: Out of memory: Killed process 4123 (python3)", []string{"oom"}, nil},
		{"bash: fork: retry: Resource temporarily unavailable", []string{"process"}, nil},
		{"systemd[1]: nginx.service: Main process exited, code=exited, status=1/FAILURE", []string{"systemd", "unit"}, nil},
		{"systemd[1]: Failed to start PostgreSQL 15 database server.", []string{"systemd", "unit", "postgres"}, nil},
		// What `systemctl status` prints of a unit that failed, and of one
		// that exited cleanly.
		{"systemctl status metrics-shipper: Main PID: 812 (code=exited, status=203/EXEC)", []string{"systemd", "unit", "fail"}, nil},
		{"journalctl -u metrics-shipper", []string{"systemd"}, nil},
		{"Main PID: 812 (code=exited, status=0/SUCCESS)", nil, []string{"systemd", "unit"}},
		{"write /data/x: ENOSPC", []string{"space", "device"}, nil},
		{"Root disk usage > 90%", []string{"disk", "full"}, nil},
		{"/ on build-7 is 96% used", []string{"full"}, nil},
		{"memory at 95%", []string{"memory", "full"}, nil},
		// Below 80%, or a share that is not of a resource used, is not
		// "full".
		{"disk usage at 45%", []string{"disk"}, []string{"full"}},
		{"5xx at 95% of the error budget burned", []string{"5xx"}, []string{"full"}},
		{"container restarted", []string{"restart"}, []string{"crash", "loop"}},
		// iostat's %util near 100 is a device saturated with I/O, not a
		// full disk.
		{"iostat shows nvme1n1 at 100% util with await around 800ms", []string{"io", "saturat"}, []string{"full"}},
		{"`iostat -x 5` on cp-2: nvme0n1 %util 98.4, await 180ms", []string{"io", "saturat"}, []string{"full"}},
		{"cpu util 45%", nil, []string{"saturat"}},
		// `df -i` or IUse% at 90% or more is a filesystem out of inodes.
		{"df -h says 38% used; `df -i` says 100%", []string{"disk", "inode"}, nil},
		{"/var IUse% 97%", []string{"disk", "inode"}, nil},
		// vmstat's si/so, a link at half duplex, a CPU at 90% or more.
		{"vmstat shows si/so in the thousands every second", []string{"swap"}, nil},
		{"`ethtool eth0` says `Duplex: Half`", []string{"interface", "error"}, nil},
		{"node_exporter has w-17 at 100% cpu since 09:40", []string{"cpu", "saturat"}, nil},
		{"every node in the pool is above 90% CPU most afternoons", []string{"cpu", "saturat"}, nil},
		{"the pool only uses ~25% cpu on average", []string{"cpu"}, []string{"saturat"}},
		{"`iostat -x 5`: sdb %util 35.2, await 4ms", []string{"iostat"}, []string{"saturat"}},
		// `chronyc tracking` of a clock that is not synchronised, and of
		// one that is.
		{"`chronyc tracking` on batch-7 says `Leap status : Not synchronised`", []string{"clock", "skew"}, nil},
		{"Leap status     : Normal", nil, []string{"skew"}},
		// What Go prints of a certificate whose names do not match.
		{"x509: certificate relies on legacy Common Name field, use SANs instead", []string{"certificate", "handshake"}, nil},
		{"x509: certificate is valid for ledger.internal, not ledger.prod.svc", []string{"certificate", "handshake"}, nil},
		{"x509: cannot validate certificate for 10.40.2.11 because it doesn't contain any IP SANs", []string{"certificate", "handshake"}, nil},
		{"the certificate is valid for 90 days", []string{"certificate"}, []string{"handshake"}},
		// `kubectl get hpa` with a target it cannot read, and one it can.
		{"every HPA shows `<unknown>/70%`", []string{"autoscaler", "metric"}, nil},
		{"TARGETS 45%/70%", nil, []string{"metric"}},
		// What people say: "throwing 500s", "a wave of 502s".
		{"checkout is throwing 500s for half the users", []string{"5xx", "checkout"}, nil},
		// Chat filler is no topic.
		{"hey guys checkout is super slow again, like half the users", []string{"checkout"}, []string{"like", "half", "super", "guys"}},
		{"a wave of 502s from the edge", []string{"5xx"}, nil},
		// Memory that is itself broken is a hardware memory error.
		{"was it the OOM killer or bad RAM", []string{"oom", "ecc"}, nil},
		{"a faulty DIMM in slot 3", []string{"ecc"}, nil},
		{"the RAM usage is high", []string{"memory"}, []string{"ecc"}},
	}
	for _, tt := range tests {
		got := terms(tt.text)
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("terms(%q) = %v, want %q among them", tt.text, got, w)
			}
		}
		for _, w := range tt.not {
			if slices.Contains(got, w) {
				t.Errorf("terms(%q) = %v, want no %q", tt.text, got, w)
			}
		}
	}
}

var (
	diskFull = Source{Title: "Node — filesystem almost full",
		Text: "Alert: HostOutOfDiskSpace fires when a filesystem has less than 10% space left.\nDiagnose\ndf -h; du -xh / | sort -h | tail.\nMitigate\nDelete old logs and images; grow the volume."}
	inodes = Source{Title: "Node — filesystem out of inodes",
		Text: "Alert: HostOutOfInodes fires when a filesystem has less than 10% inodes left.\nDiagnose\ndf -i shows IUse% near 100% while df -h shows space left.\nMitigate\nDelete the many small files."}
	crashloop = Source{Title: "Kubernetes — pod in CrashLoopBackOff",
		Text: "Alert: KubePodCrashLooping fires when a container restarts repeatedly.\nDiagnose\nkubectl logs --previous; kubectl describe pod for the exit code.\nMitigate\nRoll back the last deploy."}
	pgConns = Source{Title: "Postgres — too many connections",
		Text: "Alert: PostgresTooManyConnections fires when connections exceed 90% of max_connections.\nDiagnose\nSELECT count(*) FROM pg_stat_activity.\nMitigate\nPut a pooler in front."}
	pgBouncer = Source{Title: "PgBouncer — clients waiting for a server connection",
		Text: "Postgres connections are pooled by PgBouncer; when every server connection of a pool is in use, clients wait (cl_waiting).\nChecks\nSHOW POOLS; compare with max_connections of Postgres.\nFix\nRaise default_pool_size within max_connections."}
)

// TestKubeletEventLine: a kubelet event line, worded as the kubelet
// prints it, is about the crash-loop runbook, and a Grafana rule on a
// resource's usage is about the runbook for that resource being full.
func TestKubeletEventLine(t *testing.T) {
	for _, tt := range []struct {
		alert string
		src   Source
	}{
		{"Warning  BackOff  2m (x41 over 12m)  kubelet  Back-off restarting failed container search-api in pod search-api-59b7c6d4f-7tq2m", crashloop},
		{"[FIRING] Root disk usage > 90%: / on build-agent-07 is 96% used\nDocker images under /var/lib/docker keep growing.", diskFull},
	} {
		if sc := Parse(tt.alert).Score(tt.src); !sc.Relevant() {
			t.Errorf("%q scores %+v for %q, want relevant", tt.alert, sc, tt.src.Title)
		}
	}
}

func selected(alert string, srcs ...Source) []string {
	s := Parse(alert)
	scores := make([]Score, len(srcs))
	for i, src := range srcs {
		scores[i] = s.Score(src)
	}
	var out []string
	for _, i := range Select(scores) {
		out = append(out, srcs[i].Title)
	}
	return out
}

// TestSelectNearTopic: of two runbooks on one subject, the one whose title
// names a word the alert never says (inodes, PgBouncer) is left out when
// the other is about what the alert says, and kept when the alert says it.
func TestSelectNearTopic(t *testing.T) {
	space := "[FIRING] NodeFilesystemSpaceFillingUp (warning): Filesystem is predicted to run out of space within the next 24 hours.\nFilesystem on /dev/nvme0n1p3 has only 14% available space left and is filling up."
	if got := selected(space, inodes, diskFull); !slices.Equal(got, []string{diskFull.Title}) {
		t.Errorf("space alert selects %q, want only the disk runbook", got)
	}
	inode := "[FIRING] NodeFilesystemFilesFillingUp (warning): Filesystem on /var has only 3% inodes left.\ndf -i shows IUse% 97%."
	if got := selected(inode, inodes, diskFull); len(got) == 0 || got[0] != inodes.Title {
		t.Errorf("inode alert selects %q, want the inode runbook first", got)
	}
	conns := "[FIRING] PostgresqlHighConnections (warning): Postgresql high connections (instance app-db)\nPostgreSQL instance has more than 80% of its max_connections in use."
	if got := selected(conns, pgBouncer, pgConns); !slices.Equal(got, []string{pgConns.Title}) {
		t.Errorf("Postgres connections alert selects %q, want only the Postgres runbook", got)
	}
	pool := "[FIRING] PgbouncerPoolSaturated (warning): PgBouncer pool orders is saturated\ncl_waiting is 120 clients waiting for a server connection."
	if got := selected(pool, pgBouncer, pgConns); len(got) == 0 || got[0] != pgBouncer.Title {
		t.Errorf("PgBouncer alert selects %q, want the PgBouncer runbook first", got)
	}
}

// TestSelectBesideNamed: beside a runbook that names the alert, another
// under NearBest is cited when it quotes the alert's own message and its
// title names something the alert says the named one's does not; a near
// topic without a quote is still left out.
func TestSelectBesideNamed(t *testing.T) {
	named := Score{Value: 1, Named: true, topic: map[string]bool{"deployment": true, "rollout": true}, said: map[string]bool{"deployment": true}}
	webhook := Score{Value: 0.7, Quote: 1, topic: map[string]bool{"admission": true, "webhook": true}, said: map[string]bool{"webhook": true}}
	if got := Select([]Score{named, webhook}); !slices.Equal(got, []int{0, 1}) {
		t.Errorf("Select() = %v, want [0 1]: the webhook runbook quotes the alert and names its webhook", got)
	}
	unquoted := webhook
	unquoted.Quote = 0
	if got := Select([]Score{named, unquoted}); !slices.Equal(got, []int{0}) {
		t.Errorf("Select() = %v, want [0]: without a quote it needs NearBest", got)
	}
	sameWords := Score{Value: 0.7, Quote: 1, topic: map[string]bool{"deployment": true, "replica": true}, said: map[string]bool{"deployment": true}}
	if got := Select([]Score{named, sameWords}); !slices.Equal(got, []int{0}) {
		t.Errorf("Select() = %v, want [0]: its title says nothing of the alert the named one's does not", got)
	}
}

// TestSelectTitleSaysNothing: beside a source whose title plainly names
// the alert's subject (two of its terms), one whose title names nothing
// the alert says is not cited, however much of its text mentions it.
func TestSelectTitleSaysNothing(t *testing.T) {
	fd := Score{Value: 0.9, topic: map[string]bool{"descriptor": true, "file": true, "open": true, "process": true}, said: map[string]bool{"descriptor": true, "file": true, "open": true}}
	nginx := Score{Value: 0.78, Quote: 1, topic: map[string]bool{"ingress": true, "worker": true, "connection": true}, said: map[string]bool{}}
	if got := Select([]Score{nginx, fd}); !slices.Equal(got, []int{1}) {
		t.Errorf("Select() = %v, want [1]", got)
	}
	// Beside a title naming only one term of the alert, it stays: the
	// cause a runbook's text covers (clock skew for "certificate is not
	// yet valid") need not be in the alert's words.
	tls := Score{Value: 0.9, topic: map[string]bool{"tls": true, "handshake": true}, said: map[string]bool{"tls": true}}
	clock := Score{Value: 0.64, topic: map[string]bool{"clock": true, "skew": true}, said: map[string]bool{}}
	if got := Select([]Score{tls, clock}); !slices.Equal(got, []int{0, 1}) {
		t.Errorf("Select() = %v, want [0 1]", got)
	}
}

// TestPrintsLimit: a resource at its limit as the tools print it, not a
// share below it nor the tool named alone.
func TestPrintsLimit(t *testing.T) {
	for text, want := range map[string]bool{
		"vmstat si/so 1500-3000 every second":                true,
		"`ethtool eth0` says `Duplex: Half`":                 true,
		"node_exporter has w-17 at 100% cpu since 09:40":     true,
		"iostat shows nvme1n1 at 100% util with await 800ms": true,
		"/ on build-7 is 96% used":                           true,
		"`df -i` says 100%":                                  true,
		"the pool only uses ~25% cpu on average":             false,
		"`iostat -x 5`: sdb %util 35.2, await 4ms":           false,
		"disk usage at 45%":                                  false,
		"we ran vmstat and ethtool on the node":              false,
		"5xx at 95% of the error budget burned since 10:00":  false,
	} {
		if got := PrintsLimit(text); got != want {
			t.Errorf("PrintsLimit(%q) = %v, want %v", text, got, want)
		}
	}
}
