package relevance

import (
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, text, alertName string
		groundcrew            bool
		labels                map[string]string
	}{
		{"alertmanager", "[FIRING] RedisMemoryHigh (warning): Redis memory usage at 95% on cache-3\nused_memory is high.\ninstance=cache-3:6379 service=redis",
			"RedisMemoryHigh", false, map[string]string{"instance": "cache-3:6379", "service": "redis"}},
		{"grafana rule with spaces", "[FIRING] Redis evictions: sessions-redis evicting 4.2k keys/s", "Redis evictions", false, map[string]string{}},
		{"a group's text names the alert in its labels", "RedisMemoryHigh\nalertname=RedisMemoryHigh\nservice=redis\nRedis memory at 95%",
			"RedisMemoryHigh", false, map[string]string{"alertname": "RedisMemoryHigh", "service": "redis"}},
		{"groundcrew's own by name", "[FIRING] GroundcrewServiceDown (critical): grounding is down", "GroundcrewServiceDown", true, map[string]string{}},
		{"groundcrew's own by label", "[FIRING] TargetDown (warning): notifier is down\njob=notifier service=groundcrew", "TargetDown", true,
			map[string]string{"job": "notifier", "service": "groundcrew"}},
		{"free text", "Disk almost full on db-1: / at 96% used", "", false, map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Parse(tt.text)
			if s.AlertName != tt.alertName || s.Groundcrew() != tt.groundcrew || len(s.Labels) != len(tt.labels) {
				t.Errorf("Parse() = name %q groundcrew %v labels %v; want %q, %v, %v", s.AlertName, s.Groundcrew(), s.Labels, tt.alertName, tt.groundcrew, tt.labels)
			}
			for k, v := range tt.labels {
				if s.Labels[k] != v {
					t.Errorf("label %s = %q, want %q", k, s.Labels[k], v)
				}
			}
		})
	}
}

func TestScore(t *testing.T) {
	redis := Source{Title: "Redis — memory usage near maxmemory",
		Text: "Alerts: RedisMemoryHigh fires when used_memory is above 90% of maxmemory; RedisEvictionsHigh when keys are evicted.\nDiagnose.\nredis-cli INFO memory."}
	pg := Source{Title: "Postgres — too many connections",
		Text: "Alert: PostgresTooManyConnections fires when active connections exceed 90% of max_connections.\nMitigate.\nPut PgBouncer in front of the database."}
	pgReplica := Source{Title: "Postgres — replica lag high", Text: "Alert: PostgresReplicationLagHigh fires when a streaming replica is more than 60 seconds behind its primary. Replay lag."}
	tests := []struct {
		name     string
		alert    string
		src      Source
		named    bool
		relevant bool
	}{
		{"the runbook names the alert", "[FIRING] RedisEvictionsHigh (warning): cache-1 evicts keys", redis, true, true},
		{"worded alike", "Redis memory usage at 95% on cache-3 (maxmemory 8gb)", redis, false, true},
		{"a word or two in common is not relevance", "[FIRING] RedisMemoryHigh (warning): Redis memory usage at 95% on cache-3", pg, false, false},
		{"the same problem on another system", "[FIRING] MongodbReplicationLag (warning): MongoDB secondary mongo-1 lags 120s behind\nOplog replication lag above 60 seconds.", pgReplica, false, false},
		{"a mention in passing is not naming", "[FIRING] PgBouncerConfigReloadFailed (warning): pgbouncer-1 could not reload pgbouncer.ini", pg, false, false},
		{"nothing in common", "Printer floor-3 out of toner", redis, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := Parse(tt.alert).Score(tt.src)
			if sc.Named != tt.named || sc.Relevant() != tt.relevant || sc.Value < 0 || sc.Value > 1 {
				t.Errorf("Score() = %+v; want named %v, relevant %v, a value in [0,1]", sc, tt.named, tt.relevant)
			}
		})
	}
}

func TestSelect(t *testing.T) {
	got := Select([]Score{{Value: 0.6}, {Value: 0.2}, {Value: 0.8}, {Value: 0.5}})
	if !slices.Equal(got, []int{2, 0, 3}) {
		t.Errorf("Select() = %v, want [2 0 3]: the relevant ones, best first", got)
	}
	// Beside a source plainly about the alert, one that merely passes the
	// bar is left out: it needs NearShare of the best score.
	got = Select([]Score{{Value: 0.52}, {Value: 0.99}, {Value: 0.6}})
	if !slices.Equal(got, []int{1, 2}) {
		t.Errorf("Select() = %v, want [1 2]", got)
	}
	// Beside a source that names the alert, a near topic needs NearBest.
	got = Select([]Score{{Value: 0.6}, {Value: 1, Named: true}, {Value: 0.8}})
	if !slices.Equal(got, []int{1, 2}) {
		t.Errorf("Select() = %v, want [1 2]", got)
	}
	if got := Select(nil); len(got) != 0 {
		t.Errorf("Select(nil) = %v", got)
	}
}

func TestWords(t *testing.T) {
	got := words("KubePodCrashLooping max_connections OOMKilled")
	want := []string{"kubepodcrashlooping", "kube", "pod", "crash", "looping", "max", "connections", "oomkilled", "oom", "killed"}
	if !slices.Equal(got, want) {
		t.Errorf("words() = %q, want %q", got, want)
	}
	for w, want := range map[string]string{"PostgreSQL": "postgres", "logging": "log", "filesystems": "disk", "x509": "certificate", "the": "", "95": "", "restarting": "restart"} {
		if got := term(strings.ToLower(w)); got != want {
			t.Errorf("term(%q) = %q, want %q", w, got, want)
		}
	}
}

// TestOtherFormats: a runbook written unlike ours (no alert list, its own
// headings, a product name in its title, the symptoms as the tools print
// them) is found for a log line and for an alert that words it its own
// way, and not for another problem on the same system.
func TestOtherFormats(t *testing.T) {
	mongo := Source{Title: "MongoDB replica set member unhealthy",
		Text: "When a member of a replica set stops replicating, reads from secondaries go stale.\n" +
			"What you'll see.\n" +
			"rs.status() shows a member in RECOVERING, DOWN or STARTUP2 state.\n" +
			"The member's mongod log says it is too stale to catch up; clients log MongoServerSelectionError: connection timed out.\n" +
			"Fix.\n" +
			"Restart mongod if it hung; if it is too stale, wipe its data directory and let it do an initial sync."}
	tests := []struct {
		name     string
		alert    string
		relevant bool
	}{
		{"a log line it quotes", "mongod[812]: member mongo-2:27017 is too stale to catch up, entering RECOVERING state", true},
		{"an alert in other words", "[FIRING] MongodbReplicaMemberUnhealthy (critical): MongoDB replica member mongo-2 is unhealthy\nMember state is RECOVERING.", true},
		{"another problem on the same system", "[FIRING] MongodbTooManyConnections (warning): MongoDB too many connections (instance mongo-1)\nToo many connections (> 80%)", false},
		{"another system", "[FIRING] CassandraNodeDown (critical): Cassandra node down (instance cass-3)", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if sc := Parse(tt.alert).Score(mongo); sc.Relevant() != tt.relevant || sc.Named {
				t.Errorf("Score() = %+v; want relevant %v, not named", sc, tt.relevant)
			}
		})
	}
}

func TestOwnNamesTable(t *testing.T) {
	for _, text := range []string{
		"Covers these.\n| Alert | Severity |\n|---|---|\n| `KafkaDiskFull` | critical |\n| KafkaLogDirOffline | warning |\n\nSteps.\n1. Check.",
		// As the search service's Markdown reduction writes a table.
		"Covers these.\nAlert; Severity.\nKafkaDiskFull; critical.\nKafkaLogDirOffline; warning.\nSteps.",
	} {
		if got, want := ownNames("Kafka disk", text), []string{"KafkaDiskFull", "KafkaLogDirOffline"}; !slices.Equal(got, want) {
			t.Errorf("ownNames(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestOwnNames(t *testing.T) {
	got := ownNames("MongoDB — KubePodCrashLooping and RabbitMQ",
		"Alert: `RedisDown` fires when Redis is down.\nSee also PostgresTooManyConnections.\nAlerts.\n- NodeDiskFull: the disk is full.\n- `NodeInodesLow` when inodes run out.\nDiagnose.\n- CheckThis first.")
	want := []string{"KubePodCrashLooping", "RedisDown", "NodeDiskFull", "NodeInodesLow"}
	if !slices.Equal(got, want) {
		t.Errorf("ownNames() = %q, want %q: a product name in a title and a mention in passing are not alert names", got, want)
	}
}

func TestParseWhere(t *testing.T) {
	s := Parse("payments-api errors: dial tcp: lookup ledger.internal.svc.cluster.local on 10.96.0.10:53: no such host (pod web-3)")
	if s.AlertName != "" {
		t.Errorf("AlertName = %q for a log line", s.AlertName)
	}
	// Host names, addresses and pods say where; "no such host" says DNS.
	if s.weights["ledger"] != labelWeight || s.weights["dns"] != summaryWeight {
		t.Errorf("weights = %v; want ledger at the label weight and dns at the summary's", s.weights)
	}
}

// TestSystems: the system a runbook's title says it is for, not a layer
// everything runs on.
func TestSystems(t *testing.T) {
	for title, want := range map[string][]string{
		"Postgres — replica lag high":                            {"postgres"},
		"PostgreSQL: table and index bloat":                      {"postgres"},
		"NATS / JetStream — slow consumers and pending messages": {"nat", "jetstream"},
		"MongoDB replica set: member down, no primary":           {"mongodb"},
		"Kubernetes — pods evicted":                              nil,
		"Node — filesystem almost full":                          nil,
		"Kernel: hung tasks, soft lockups and RCU stalls":        nil,
		"SLO — error budget burning too fast":                    nil,
		"Node memory pressure and OOM kills":                     nil,
		"Redis replication lag":                                  nil,
	} {
		if got := Systems(title); !slices.Equal(got, want) {
			t.Errorf("Systems(%q) = %q, want %q", title, got, want)
		}
	}
}

// TestUnexplained: the words of a story none of whose terms the sources
// hold, in their order (a name without a word, w-31, says nothing); a
// word the sources say in another form (a plural, "PDBs") is said.
func TestUnexplained(t *testing.T) {
	drain := Source{
		Title: "Kubernetes — node drain blocked by a PodDisruptionBudget",
		Text:  "kubectl drain loops on: Cannot evict pod as it would violate the pod's disruption budget. Check the PDB's allowed disruptions.",
	}
	story := "the drain of w-31 loops on `Cannot evict pod` for vault-0; `vault status` on vault-2 says `Sealed: true`"
	if got, want := Unexplained(story, []Source{drain}), "vault-0; `vault status` vault-2 says `Sealed: true`"; got != want {
		t.Errorf("Unexplained(%q) = %q, want %q", story, got, want)
	}
	if got := Unexplained("drains loop on the PDBs", []Source{drain}); got != "" {
		t.Errorf("a story the source says in other forms leaves %q", got)
	}
}
