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
