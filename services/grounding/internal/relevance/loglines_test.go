package relevance

import (
	"slices"
	"strings"
	"testing"
)

// TestLogLineWords: what a log line is made of besides what went wrong —
// its timestamp, its record's numbered fields, quantities with units —
// says nothing of the topic; the inflections of -ise, -ize and -ate verbs
// are one term; a daemon is read as what it keeps.
func TestLogLineWords(t *testing.T) {
	for _, pair := range [][2]string{{"synchronise", "synchronised"}, {"synchronize", "synchronizing"}, {"rotate", "rotated"}} {
		if a, b := terms(pair[0]), terms(pair[1]); !slices.Equal(a, b) {
			t.Errorf("terms(%q) = %v, terms(%q) = %v, want the same", pair[0], a, pair[1], b)
		}
	}
	// Short words and synonym groups' own terms keep their e.
	for w, want := range map[string]string{"state": "state", "certificates": "certificate"} {
		if got := terms(w); len(got) == 0 || got[0] != want {
			t.Errorf("terms(%q) = %v, want %q first", w, got, want)
		}
	}
	for _, tt := range []struct {
		text string
		want []string
		not  []string
	}{
		{"[Thu Nov 26 03:14:07 2026] Out of memory", []string{"oom", "memory"}, []string{"thu", "nov"}},
		{"rss 0kB, took 250ms", []string{"rss", "took"}, []string{"0kb", "250m"}},
		{"chronyd[812]: System clock wrong by 3.2 seconds", []string{"clock", "skew"}, nil},
		{"curl: (60) SSL certificate problem: unable to get local issuer certificate", []string{"handshake", "certificate", "tls", "ca"}, nil},
		{"Time on db-7 is not synchronised", []string{"time"}, []string{"skew"}},
	} {
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
	// A record's numbered fields weigh as labels: where and how much, not
	// what.
	s := Parse("Out of memory: Killed process 21877 (python3) total-vm:14820112kB, anon-rss:12501124kB, oom_score_adj:0")
	for _, w := range []string{"vm", "anon", "rss", "score", "adj"} {
		if got := s.weights[w]; got != labelWeight {
			t.Errorf("weight of %q = %v, want the label weight %v", w, got, labelWeight)
		}
	}
	if got := s.weights["oom"]; got != summaryWeight {
		t.Errorf("weight of oom = %v, want %v", got, summaryWeight)
	}
}

var (
	nodeMemory = Source{Title: "Node memory pressure and OOM kills",
		Text: "Alerts: `NodeOOMKillDetected` fires when the kernel OOM killer ended a process on the node.\nDiagnose\n`dmesg -T | grep -i \"killed process\"` names what the kernel OOM killer ended.\nMitigate\nSet memory requests to the real working set."}
	clockSkew = Source{Title: "Node — clock skew and NTP not synchronised",
		Text: "Alerts: `NodeClockSkewDetected` fires when a node's clock is more than 0.05 s off.\nDiagnose\n`chronyc tracking`: check `System clock synchronized` and the current offset.\n`chronyc sources -v`: unreachable sources mean UDP 123 is blocked.\nMitigate\nRestart chrony and force a step: `chronyc makestep`."}
	tlsHandshake = Source{Title: "TLS handshake failures between services",
		Text: "Alert: `TLSHandshakeErrorsHigh` fires when more than 5% of TLS handshakes fail.\nDiagnose\nRead the client error: `x509: certificate signed by unknown authority` means the client lacks the issuing CA.\nMitigate\nServe the full chain."}
)

// TestLogLinesScore: log lines worded unlike any runbook title — the
// kernel's OOM killer, chronyd, curl — are about the runbook whose
// symptoms they print, and not about the others.
func TestLogLinesScore(t *testing.T) {
	for _, tt := range []struct {
		line string
		want Source
	}{
		{"[Thu Nov 26 03:14:07 2026] Out of memory: Killed process 21877 (python3) total-vm:14820112kB, anon-rss:12501124kB, file-rss:0kB, shmem-rss:0kB, UID:1001 pgtables:24812kB oom_score_adj:0 (host etl-vm-04)", nodeMemory},
		{"chronyd[812]: System clock wrong by 3.218744 seconds; Can't synchronise: no selectable sources (host kafka-2)", clockSkew},
		{"Synthetic check 'payments-gw TLS' FAILED from 3 locations: curl: (60) SSL certificate problem: unable to get local issuer certificate", tlsHandshake},
	} {
		s := Parse(tt.line)
		for _, src := range []Source{nodeMemory, clockSkew, tlsHandshake} {
			sc := s.Score(src)
			if want := src.Title == tt.want.Title; sc.Relevant() != want {
				t.Errorf("%q scores %+v for %q, want relevant %v", tt.line, sc, src.Title, want)
			}
		}
	}
}

var (
	portsText = "Every outbound TCP connection needs a unique source port; a closed connection keeps its port in TIME_WAIT for 60 seconds.\nWhat you see:\n- Applications fail to connect with `connect: cannot assign requested address` (EADDRNOTAVAIL).\nConfirm:\nss -s; node_exporter exposes `node_sockstat_TCP_tw`.\nFixing it:\n1. Reuse connections."
	ports     = Source{Title: "Out of ephemeral ports (cannot assign requested address)", Text: portsText}
)

// TestCodesQuoted: an identifier the alert quotes as code writes it (an
// errno name, a metric, a setting) found in a runbook is evidence that
// the runbook is about what printed it.
func TestCodesQuoted(t *testing.T) {
	alert := "[FIRING] TCP TIME_WAIT sockets high: batch-worker-5 has 27,944 sockets in TIME_WAIT\nnode_sockstat_TCP_tw above 25000; nearly all toward 10.8.0.30:6432; jobs fail with EADDRNOTAVAIL.\ninstance=batch-worker-5:9100"
	s := Parse(alert)
	for _, c := range []string{"eaddrnotavail", "node_sockstat_tcp_tw"} {
		if !s.codes[c] {
			t.Errorf("codes = %v, want %q among them", s.codes, c)
		}
	}
	sc := s.Score(ports)
	if sc.Code != 1 || !sc.Relevant() {
		t.Errorf("score %+v, want the codes found and relevant", sc)
	}
	plain := Source{Title: ports.Title, Text: strings.NewReplacer("EADDRNOTAVAIL", "", "node_sockstat_TCP_tw", "").Replace(portsText)}
	if got := s.Score(plain); got.Code != 0 || got.Value >= sc.Value {
		t.Errorf("without the codes: score %+v, want no code and less than %v", got, sc.Value)
	}
	// The alert's own name is a name, not a quoted code.
	if s := Parse("[FIRING] KubeJobNotCompleted (warning): Job reports/nightly did not complete"); len(s.codes) != 0 {
		t.Errorf("codes = %v, want none", s.codes)
	}
}

var alertmanagerText = "This is the alert about the alerting pipeline itself.\n## Symptoms\n- `AlertmanagerFailedToSendAlerts`: the share of notifications failed for an integration (slack, pagerduty, webhook).\n- Alertmanager logs `msg=\"Notify for alerts failed\"`.\n## Resolution\n1. Find the failing integration and receiver.\n2. Read the error in the logs."

// TestNameQuotedWhole: a runbook that quotes the alert's name whole (in a
// list of symptoms, not a list of alerts) is not another problem on the
// alert's system, whatever its title says.
func TestNameQuotedWhole(t *testing.T) {
	alert := "[FIRING] AlertmanagerFailedToSendAlerts (warning): An Alertmanager instance failed to send notifications.\nAlertmanager monitoring/alertmanager-main-1 failed to send 100% of notifications to pagerduty.\nnamespace=monitoring pod=alertmanager-main-1"
	s := Parse(alert)
	src := Source{Title: "Alertmanager cannot deliver notifications", Text: alertmanagerText}
	if sc := s.Score(src); !sc.Relevant() {
		t.Errorf("score %+v, want relevant", sc)
	}
	unnamed := Source{Title: src.Title, Text: strings.ReplaceAll(alertmanagerText, "`AlertmanagerFailedToSendAlerts`", "Notifications failing")}
	if sc := s.Score(unnamed); sc.Relevant() {
		t.Errorf("without the name: score %+v, want another problem on Alertmanager, under the bar", sc)
	}
}

// TestKeywords: the words that say what an alert is about, as written:
// its name's words split, the specific words of its summary and
// description; not its labels, names of things or words that only say
// something is wrong.
func TestKeywords(t *testing.T) {
	for _, tt := range []struct {
		text string
		want string
	}{
		{"[FIRING] IstioHighRequestFailures (warning): High 5xx rate from cart to inventory\n7.4% of requests from cart to inventory.shop.svc.cluster.local return 503 (response_flags UC) over 5 minutes.\nnamespace=shop",
			"istio high request failures 5xx cart inventory return"},
		{"chronyd[812]: System clock wrong by 3.218744 seconds; Can't synchronise: no selectable sources (host kafka-2)",
			"chronyd wrong synchronise selectable sources"},
	} {
		s := Parse(tt.text)
		if got := strings.Join(s.Keywords(tt.text), " "); got != tt.want {
			t.Errorf("Keywords(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// TestCodesAndNames: a package and class (redis.exceptions.ConnectionError)
// is code, not a host name, and its words count; a host under a common
// domain (orders-db.internal) is a name; "ERROR" is no errno, HY000 is a
// SQLSTATE; Go's "server misbehaving" from a lookup is DNS.
func TestCodesAndNames(t *testing.T) {
	s := Parse("redis.exceptions.ConnectionError: Error 111 connecting to redis-master:6379. Connection refused.")
	if got := s.weights["redis"]; got != summaryWeight {
		t.Errorf("weight of redis = %v, want %v: a code path's words are what the line says", got, summaryWeight)
	}
	s = Parse("dial tcp: lookup orders-db.internal on 10.96.0.10:53: server misbehaving")
	if got := s.weights["order"]; got != labelWeight {
		t.Errorf("weight of orders = %v, want the label weight %v", got, labelWeight)
	}
	if s.weights["dns"] == 0 {
		t.Errorf("weights %v, want dns", s.weights)
	}
	s = Parse("ERROR 1040 (HY000): Too many connections")
	if !s.codes["hy000"] || s.codes["error"] {
		t.Errorf("codes = %v, want hy000 and not error", s.codes)
	}
}

// TestSelectByCode: of runbooks whose titles all say what a terse error
// says ("too many connections"), the one quoting its code (ERROR 1040
// (HY000), MySQL's) is cited, and one whose title names another system
// the alert never names is not.
func TestSelectByCode(t *testing.T) {
	mysql := Source{Title: "MySQL — too many connections",
		Text: "Symptoms\nApplications log `ERROR 1040 (HY000): Too many connections`.\nCheck\nSHOW STATUS LIKE 'Threads_connected'; compare with max_connections.\nFix\nLower the pools' sizes."}
	if got := selected("ERROR 1040 (HY000): Too many connections", pgConns, mysql); !slices.Equal(got, []string{mysql.Title}) {
		t.Errorf("selects %q, want only the MySQL runbook", got)
	}
	// Without the code, both titles say as much of it: both stay.
	plain := Source{Title: mysql.Title, Text: strings.ReplaceAll(mysql.Text, "ERROR 1040 (HY000): ", "")}
	if got := selected("ERROR 1040 (HY000): Too many connections", pgConns, plain); len(got) != 2 {
		t.Errorf("selects %q, want both", got)
	}
}

// TestQuoteWithOtherNames: a runbook quoting the message with its own
// example names (filer-1) quotes the alert's (nas-01) all the same.
func TestQuoteWithOtherNames(t *testing.T) {
	nfs := Source{Title: "NFS mounts hung or returning Stale file handle",
		Text: "Server not responding: with hard mounts every process touching the mount hangs; the kernel logs\n`nfs: server filer-1 not responding, still trying` and later `OK`.\nFix the server or network first."}
	sc := Parse("kernel: nfs: server nas-01 not responding, still trying").Score(nfs)
	if sc.Quote != 1 || !sc.Relevant() {
		t.Errorf("score %+v, want the message quoted and relevant", sc)
	}
}

// TestDisclaimed: a runbook that says what it is not about ("Not this
// page: queries timing out → Loki query runbook") scores half for an
// alert about that, and is unaffected for one about what it covers.
func TestDisclaimed(t *testing.T) {
	text := "Alerts: LokiRequestErrors (ingest path)\n- Confirm it is rate limiting: sum by (tenant, reason) (rate(loki_discarded_samples_total[5m])).\n- Agents log `429 Too Many Requests: Ingestion rate limit exceeded`; raise ingestion_rate_mb for the tenant.\n"
	loki := Source{Title: "Loki ingestion rate limited — checklist", Text: text + "Not this page: queries timing out or slow (read path) → Loki query runbook."}
	// The same words, not as a disclaimer.
	plain := Source{Title: loki.Title, Text: text + "Also: queries timing out or slow (read path) → Loki query runbook."}
	query := Parse("[FIRING] Loki query p99 > 30s: Loki query_range p99 latency 41s\nQueriers saturated; dashboards time out. Ingestion is normal.")
	with, without := query.Score(loki), query.Score(plain)
	if with.Value > without.Value/2+0.001 {
		t.Errorf("query alert scores %v with the disclaimer, %v without; want half", with.Value, without.Value)
	}
	ingest := Parse("[FIRING] LokiIngestionRateLimited (warning): Loki is discarding samples: ingestion rate limit exceeded for tenant fake")
	if a, b := ingest.Score(loki), ingest.Score(plain); a.Value != b.Value {
		t.Errorf("ingestion alert scores %v with the disclaimer, %v without; want the same", a.Value, b.Value)
	}
}
